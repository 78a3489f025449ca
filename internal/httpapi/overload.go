package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/posgate/posgate/internal/codec/encode"
)

// Defaults of the load shedding (docs/api.md §16.3), sized for the 2-core
// machine posgate is measured on: 64 requests in flight keep both cores
// and the store's connections busy (the POS routes take tens to hundreds
// of microseconds of CPU each), 64 more may wait, each at most 50 ms. The
// wait is what an admitted request may lose to the queue, so it stays well
// under the 100 ms that the POS routes' p99 is held to under overload; it
// is long enough to ride out a burst or a collector pause without a 503.
const (
	DefaultMaxInFlight = 64
	DefaultQueueWait   = 50 * time.Millisecond
	DefaultMaxImports  = 2
)

// shedRetryAfter is the Retry-After of a shed request: a second is long
// against a queue that empties in milliseconds, so a client (or a load
// balancer) that honours it moves the load elsewhere or away.
const shedRetryAfter = "1"

// slots bounds how many requests run at once. A request that finds every
// slot taken waits at most wait, and only while fewer than maxWaiting
// others wait: beyond those the answer is an immediate 503, so that under
// overload the admitted requests stay fast and the others learn it at once
// instead of timing out in a queue.
type slots struct {
	ch         chan struct{}
	waiting    atomic.Int64
	maxWaiting int64
	wait       time.Duration
}

func newSlots(n, maxWaiting int, wait time.Duration) *slots {
	if n <= 0 {
		return nil
	}
	return &slots{ch: make(chan struct{}, n), maxWaiting: int64(maxWaiting), wait: wait}
}

// acquire takes a slot, waiting as described; false: shed the request.
func (s *slots) acquire(ctx context.Context) bool {
	select {
	case s.ch <- struct{}{}:
		return true
	default:
	}
	if s.waiting.Add(1) > s.maxWaiting || s.wait <= 0 {
		s.waiting.Add(-1)
		return false
	}
	defer s.waiting.Add(-1)
	t := time.NewTimer(s.wait)
	defer t.Stop()
	select {
	case s.ch <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (s *slots) release() { <-s.ch }

// inUse is the number of slots taken.
func (s *slots) inUse() int {
	if s == nil {
		return 0
	}
	return len(s.ch)
}

// exempt reports whether a request bypasses the in-flight bound: the
// health routes, which a load balancer must reach most when the instance is
// busiest.
func exempt(r *http.Request) bool {
	return r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
}

// shed bounds the requests in flight (docs/api.md §16.3): beyond the bound
// and the short wait, 503 with Retry-After.
func (s *Server) shed(next http.Handler) http.Handler {
	if s.inFlight == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if exempt(r) {
			next.ServeHTTP(w, r)
			return
		}
		if !s.inFlight.acquire(r.Context()) {
			s.obs.Shed("in_flight")
			markShed(r)
			s.overloaded(w, r, "posgate is at capacity; retry in a second.")
			return
		}
		box, _ := r.Context().Value(principalKey).(*principalBox)
		if box != nil {
			box.slot = s.inFlight
		}
		defer func() {
			if box == nil || box.slot != nil {
				s.inFlight.release()
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// markShed tells the request log that r was shed (see shedLog).
func markShed(r *http.Request) {
	if box, _ := r.Context().Value(principalKey).(*principalBox); box != nil {
		box.shed = true
	}
}

// shedLogWindow is how long the shed requests are counted before their
// sum is logged.
const shedLogWindow = time.Second

// shedLog sums the shed requests up in one WARN line a second while the
// instance sheds (docs/api.md §16.3), instead of the INFO line of each:
// under overload they are tens of thousands a second, and a line each cost
// a tenth of posgate's CPU exactly when it had none to spare. Each is still logged at DEBUG and
// counted by posgate_http_requests_shed_total. The first shed request
// after a sum starts the next second's count.
type shedLog struct {
	log    *slog.Logger
	window time.Duration
	n      atomic.Int64
}

// add counts one shed request (nothing on a nil shedLog: a Server not
// made by New).
func (l *shedLog) add() {
	if l == nil {
		return
	}
	if l.n.Add(1) == 1 {
		time.AfterFunc(l.window, l.flush)
	}
}

// flush logs the count and starts a new one.
func (l *shedLog) flush() {
	if n := l.n.Swap(0); n > 0 {
		l.log.Warn("requests shed", slog.Int64("count", n), slog.Duration("window", l.window))
	}
}

// importSlot caps the imports running at once (promotion import, coupon
// batch): they hold memory and the store's writer for seconds, so beyond the
// cap a new one is refused at once rather than made to wait. An admitted
// import gives its ordinary slot back, so that long imports never hold the
// capacity of the short POS requests.
func (s *Server) importSlot(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.imports == nil {
			next(w, r)
			return
		}
		if !s.imports.acquire(r.Context()) {
			s.obs.Shed("imports")
			markShed(r)
			s.overloaded(w, r, "Too many imports are running on this instance; retry in a second.")
			return
		}
		defer s.imports.release()
		giveSlotBack(r)
		next(w, r)
	}
}

// giveSlotBack releases the in-flight slot r holds (if any) before r is
// done: for what runs long under a bound of its own (imports, the terminal
// channel's streams), so that it never holds the capacity of the short
// requests.
func giveSlotBack(r *http.Request) {
	if box, _ := r.Context().Value(principalKey).(*principalBox); box != nil && box.slot != nil {
		box.slot.release()
		box.slot = nil
	}
}

// overloaded answers 503 with Retry-After; on the token endpoint in its own
// error shape (RFC 6749 §5.2), elsewhere as a problem.
func (s *Server) overloaded(w http.ResponseWriter, r *http.Request, detail string) {
	h := w.Header()
	h.Set("Retry-After", shedRetryAfter)
	if r.URL.Path == "/connect/token" {
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		b, _ := encode.JSON(map[string]string{"error": "temporarily_unavailable", "error_description": detail})
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(b)
		return
	}
	// The shed answer is the one posgate writes most under overload (tens
	// of thousands a second in the overload row), so its body is built from
	// a prefix encoded once per detail, not encoded per request; it is the
	// body writeProblem would write.
	id := traceID(r.Context())
	prefix := shedPrefix(detail)
	b := make([]byte, 0, len(prefix)+len(id)+2)
	b = append(append(append(b, prefix...), id...), `"}`...)
	h.Set("Content-Type", "application/problem+json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write(b)
}

// shedPrefixes holds, by detail, the 503 problem document up to its trace
// id's value: trace ids are hex digits and dashes (traceIDFrom), which JSON
// needs no escape for.
var shedPrefixes sync.Map

func shedPrefix(detail string) []byte {
	if p, ok := shedPrefixes.Load(detail); ok {
		return p.([]byte)
	}
	b, _ := encode.JSON(Problem{Type: problemTypes[http.StatusServiceUnavailable], Title: problemTitles[http.StatusServiceUnavailable],
		Status: http.StatusServiceUnavailable, Detail: detail})
	p := bytes.TrimSuffix(b, []byte(`"}`))
	shedPrefixes.Store(detail, p)
	return p
}

// StartDrain begins the graceful drain of SIGTERM (docs/api.md §16.4):
// /readyz answers 503 from now on, so that load balancers take the instance
// out, while every route keeps serving; answers carry Connection: close, so
// that clients open their next connection elsewhere. The terminal
// channel's streams end at once, so that their tills reconnect elsewhere.
func (s *Server) StartDrain() {
	s.draining.Store(true)
	s.cfg.TerminalFeed.Close()
}

// Draining reports whether StartDrain was called.
func (s *Server) Draining() bool { return s.draining.Load() }
