package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// TestClientLimiterRefresh: the rule is asked once per refresh, a changed
// limit keeps the bucket's tokens (no fresh burst), and forget asks at once.
func TestClientLimiterRefresh(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	limit := posgate.RateLimit{RequestsPerSecond: 1, Burst: 5}
	var asked atomic.Int64
	rule := func(context.Context, *posgate.Principal) (*posgate.RateLimit, error) {
		asked.Add(1)
		l := limit
		return &l, nil
	}
	l := newClientLimiter(rule, time.Second, func() time.Time { return now })
	p := &posgate.Principal{ClientID: "c"}
	for i := range 3 {
		d, err := l.check(context.Background(), p)
		if err != nil || !d.allowed || d.remaining != 4-i {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
	if asked.Load() != 1 {
		t.Fatalf("rule asked %d times within the refresh, want 1", asked.Load())
	}
	limit = posgate.RateLimit{RequestsPerSecond: 1, Burst: 10}
	now = now.Add(time.Second) // one token back: 3
	d, _ := l.check(context.Background(), p)
	if asked.Load() != 2 || d.remaining != 2 || d.st.policy[0] != `"client";q=10;w=10` || d.reset != 8 {
		t.Fatalf("after the refresh: asked %d, %+v", asked.Load(), d)
	}
	l.forget("c")
	d, _ = l.check(context.Background(), p)
	if asked.Load() != 3 || d.remaining != 9 {
		t.Fatalf("after forget: asked %d, remaining %d", asked.Load(), d.remaining)
	}
}

// BenchmarkRateLimit measures the limiter's cost on every authenticated
// request: the bucket's lookup and check and the two RateLimit fields.
func BenchmarkRateLimit(b *testing.B) {
	limit := &posgate.RateLimit{RequestsPerSecond: 1e9, Burst: 1e9} // never refuses: the check, not the 429
	s := &Server{limiter: newClientLimiter(func(context.Context, *posgate.Principal) (*posgate.RateLimit, error) { return limit, nil },
		time.Second, time.Now), obs: nopObserver{}}
	req := httptest.NewRequest(http.MethodPost, "/pos/clover/startInteraction", nil)
	b.Run("one client", func(b *testing.B) {
		p := &posgate.Principal{ClientID: "demo-pos"}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := httptest.NewRecorder()
			for pb.Next() {
				if !s.rateLimit(w, req, p) {
					b.Fatal("limited")
				}
			}
		})
	})
	b.Run("1000 clients", func(b *testing.B) {
		ps := make([]*posgate.Principal, 1000)
		for i := range ps {
			ps[i] = &posgate.Principal{ClientID: "client-" + strconv.Itoa(i)}
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := httptest.NewRecorder()
			i := 0
			for pb.Next() {
				s.rateLimit(w, req, ps[i%len(ps)])
				i++
			}
		})
	})
}

// BenchmarkRateLimitSerial is BenchmarkRateLimit on one goroutine.
func BenchmarkRateLimitSerial(b *testing.B) {
	limit := &posgate.RateLimit{RequestsPerSecond: 1e9, Burst: 1e9} // never refuses: the check, not the 429
	s := &Server{limiter: newClientLimiter(func(context.Context, *posgate.Principal) (*posgate.RateLimit, error) { return limit, nil },
		time.Second, time.Now), obs: nopObserver{}}
	req := httptest.NewRequest(http.MethodPost, "/pos/clover/startInteraction", nil)
	p := &posgate.Principal{ClientID: "demo-pos"}
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		s.rateLimit(w, req, p)
	}
}
