package httpapi

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/posgate/posgate"
)

// DefaultRateLimitRefresh is how often a client's rate limit is asked of
// the rule again: the longest (beyond --cache-ttl) that an operator's change
// made on another instance or in the CLI takes to apply here.
const DefaultRateLimitRefresh = time.Second

// RateLimitRule says how much a client may send (internal/service's
// RateLimitOf): nil for no limit.
type RateLimitRule func(ctx context.Context, p *posgate.Principal) (*posgate.RateLimit, error)

// clientLimiter holds one token bucket per API client on this instance
// (docs/api.md §16.1). The rule is asked when a client is first seen and
// then at most every refresh; between, a request costs a map read, an
// atomic load and the bucket's own lock.
type clientLimiter struct {
	rule    RateLimitRule
	refresh time.Duration
	now     func() time.Time

	mu      sync.RWMutex
	buckets map[string]*bucket
}

type bucket struct {
	next  atomic.Int64 // when to ask the rule again, Unix ns
	state atomic.Pointer[bucketState]
}

// bucketState is a client's limit and what follows from it; replaced whole
// when the limit changes.
type bucketState struct {
	limit  posgate.RateLimit
	lim    *rate.Limiter // nil: not limited
	policy []string      // the RateLimit-Policy field, shared by every answer
}

func newClientLimiter(rule RateLimitRule, refresh time.Duration, now func() time.Time) *clientLimiter {
	return &clientLimiter{rule: rule, refresh: refresh, now: now, buckets: make(map[string]*bucket)}
}

// rateDecision is the outcome of one check.
type rateDecision struct {
	st        *bucketState
	allowed   bool
	remaining int           // whole requests left in the bucket
	reset     int           // seconds until the bucket is full again
	retry     time.Duration // until the next request would be admitted (when not allowed)
}

// check takes one request from p's bucket.
func (l *clientLimiter) check(ctx context.Context, p *posgate.Principal) (rateDecision, error) {
	now := l.now()
	b, err := l.bucket(ctx, p, now)
	if err != nil {
		return rateDecision{}, err
	}
	st := b.state.Load()
	d := rateDecision{st: st, allowed: true}
	if st.lim == nil {
		return d, nil
	}
	d.allowed = st.lim.AllowN(now, 1)
	tokens := max(0, st.lim.TokensAt(now))
	rps := st.limit.RequestsPerSecond
	d.remaining = int(tokens)
	d.reset = int(math.Ceil((float64(st.limit.Burst) - tokens) / rps))
	if !d.allowed {
		d.retry = time.Duration((1 - tokens) / rps * float64(time.Second))
	}
	return d, nil
}

// bucket returns p's bucket, asking the rule when it is new or due.
func (l *clientLimiter) bucket(ctx context.Context, p *posgate.Principal, now time.Time) (*bucket, error) {
	l.mu.RLock()
	b := l.buckets[p.ClientID]
	l.mu.RUnlock()
	if b == nil {
		limit, err := l.rule(ctx, p)
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if b = l.buckets[p.ClientID]; b == nil {
			b = &bucket{}
			b.state.Store(newBucketState(limit, nil, now))
			b.next.Store(now.Add(l.refresh).UnixNano())
			l.buckets[p.ClientID] = b
		}
		l.mu.Unlock()
		return b, nil
	}
	// One request per refresh asks the rule again; the others go on with
	// the limit they have. A failed ask keeps the old limit.
	if next := b.next.Load(); now.UnixNano() >= next && b.next.CompareAndSwap(next, now.Add(l.refresh).UnixNano()) {
		if limit, err := l.rule(ctx, p); err == nil {
			if old := b.state.Load(); !sameLimit(old, limit) {
				b.state.Store(newBucketState(limit, old.lim, now))
			}
		}
	}
	return b, nil
}

// forget drops a client's bucket so that the next request asks the rule at
// once: an operator's change on this instance applies to the next request.
func (l *clientLimiter) forget(clientID string) {
	l.mu.Lock()
	delete(l.buckets, clientID)
	l.mu.Unlock()
}

func sameLimit(st *bucketState, limit *posgate.RateLimit) bool {
	if limit == nil || st.lim == nil {
		return (limit == nil) == (st.lim == nil)
	}
	return *limit == st.limit
}

// newBucketState builds the state for limit, keeping the tokens of the
// client's old bucket (a new limit is no fresh burst).
func newBucketState(limit *posgate.RateLimit, old *rate.Limiter, now time.Time) *bucketState {
	if limit == nil {
		return &bucketState{}
	}
	st := &bucketState{limit: *limit, policy: []string{policyValue(*limit)}}
	if old != nil {
		old.SetLimitAt(now, rate.Limit(limit.RequestsPerSecond))
		old.SetBurstAt(now, limit.Burst)
		st.lim = old
	} else {
		st.lim = rate.NewLimiter(rate.Limit(limit.RequestsPerSecond), limit.Burst)
	}
	return st
}

// policyName names posgate's one quota policy in the RateLimit fields.
const policyName = `"client"`

// policyValue is the RateLimit-Policy field of a limit
// (draft-ietf-httpapi-ratelimit-headers-11 §3): the bucket's size as the
// quota, over the time the bucket takes to fill, rounded up: a window that
// is never shorter than the truth, so a client pacing itself by it is
// never refused.
func policyValue(l posgate.RateLimit) string {
	w := max(1, int(math.Ceil(float64(l.Burst)/l.RequestsPerSecond)))
	return policyName + ";q=" + strconv.Itoa(l.Burst) + ";w=" + strconv.Itoa(w)
}

// setRateLimitHeaders writes the RateLimit-Policy and RateLimit fields of
// a decision (§4 of the draft): r, the whole requests left, and t, the
// seconds until the bucket is full again.
func setRateLimitHeaders(h http.Header, d rateDecision) {
	if d.st == nil || d.st.lim == nil {
		return
	}
	var buf [64]byte
	b := append(buf[:0], policyName...)
	b = append(b, ";r="...)
	b = strconv.AppendInt(b, int64(d.remaining), 10)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, int64(d.reset), 10)
	h["Ratelimit-Policy"] = d.st.policy
	h["Ratelimit"] = []string{string(b)}
}

// rateLimit applies p's rate limit to the request: it sets the RateLimit
// fields and, beyond the limit, answers 429 with Retry-After and returns
// false.
func (s *Server) rateLimit(w http.ResponseWriter, r *http.Request, p *posgate.Principal) bool {
	if s.limiter == nil {
		return true
	}
	d, err := s.limiter.check(r.Context(), p)
	if err != nil {
		s.writeError(w, r, err)
		return false
	}
	setRateLimitHeaders(w.Header(), d)
	if d.allowed {
		return true
	}
	s.obs.RateLimited("client")
	secs := retryAfterSeconds(d.retry)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeProblem(w, r, http.StatusTooManyRequests, "This client's rate limit is "+
		strconv.FormatFloat(d.st.limit.RequestsPerSecond, 'g', -1, 64)+" requests per second in bursts of up to "+
		strconv.Itoa(d.st.limit.Burst)+"; retry after "+strconv.Itoa(secs)+" s.", nil)
	return false
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1, as
// Retry-After counts them.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}
