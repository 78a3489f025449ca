package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/service"
)

// withLease gives the requests of a route that may run longer than the
// server's ordinary timeouts (the promotion import) a claim lease that
// outlasts them, so that their keys are not taken over while they run.
func withLease(r *http.Request, lease time.Duration) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), leaseKey, lease))
}

// guarded runs next for an authorised request of the POS or operator API:
// a POST that carries an Idempotency-Key goes through idempotent, anything
// else straight to next. A POST without the header costs one map lookup.
func (s *Server) guarded(w http.ResponseWriter, r *http.Request, next http.HandlerFunc) {
	if r.Method == http.MethodPost {
		if keys := r.Header[service.IdempotencyKeyHeader]; keys != nil {
			s.idempotent(w, r, keys, next)
			return
		}
	}
	next(w, r)
}

// idempotent runs a POST with an Idempotency-Key (docs/api.md §14). The
// service decides (claim, replay, store or release); this only moves bytes:
// it hands the handler a body that is fingerprinted as it is read, records
// the handler's answer, reads what the handler left of the body (within the
// ordinary body cap) so that the whole body is fingerprinted, has the answer
// settled and only then sends it, so that a retry sent the moment the answer
// arrives finds it stored.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, keys []string, next http.HandlerFunc) {
	ctx := r.Context()
	lease, _ := ctx.Value(leaseKey).(time.Duration)
	call, err := s.svc.BeginIdempotent(ctx, principal(ctx), &service.IdempotentRequest{
		Keys:        keys,
		Method:      r.Method,
		Target:      r.URL.RequestURI(),
		ContentType: r.Header.Get("Content-Type"),
		Lease:       lease,
	})
	if err == nil && call.Replayed() {
		var a *posgate.IdempotentAnswer
		if a, err = call.Replay(r.Body); err == nil {
			w.Header().Set(service.IdempotentReplayedHeader, "true")
			writeAnswer(w, a.Status, a.Header, a.Body)
			return
		} else if errors.Is(err, service.ErrBodyRead) {
			err = codec.ReadError(err)
		}
	}
	if err != nil {
		if errors.Is(err, service.ErrIdempotencyInFlight) {
			w.Header().Set("Retry-After", strconv.Itoa(service.IdempotencyRetryAfter))
		}
		s.writeError(w, r, err)
		return
	}

	settled := false
	defer func() {
		// The handler panicked: give the key up, so that a retry runs.
		if !settled {
			if err := call.Release(ctx); err != nil {
				s.log.WarnContext(ctx, "idempotency key: release", slog.String("traceId", traceID(ctx)), slog.Any("err", err))
			}
		}
	}()
	r.Body = call.Body(r.Body)
	rec := &answerRecorder{ResponseWriter: w, header: make(http.Header)}
	next(rec, r)
	io.CopyN(io.Discard, r.Body, s.cfg.MaxBodyBytes+1)
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	kept := make(map[string]string, len(service.IdempotencyReplayedHeaders))
	for _, name := range service.IdempotencyReplayedHeaders {
		if v := rec.header.Get(name); v != "" {
			kept[name] = v
		}
	}
	settled = true
	answer := &posgate.IdempotentAnswer{Status: status, Header: kept, Body: rec.body}
	if rec.replaced {
		// The answer carries a secret: its record keeps the body the
		// handler gave in its place, or nothing.
		answer.Body = rec.kept
	}
	if rec.replaced && rec.kept == nil {
		err = call.Release(ctx)
	} else {
		err = call.Finish(ctx, answer)
	}
	if err != nil {
		// The request took effect and is answered; its key stays in
		// flight until its lease ends.
		s.log.WarnContext(ctx, "idempotency key: store the answer", slog.String("traceId", traceID(ctx)), slog.Any("err", err))
	}
	h := w.Header()
	for name, vs := range rec.header {
		h[name] = vs
	}
	writeAnswer(w, status, nil, rec.body)
}

// writeAnswer sends a recorded or replayed answer.
func writeAnswer(w http.ResponseWriter, status int, header map[string]string, body []byte) {
	h := w.Header()
	for name, v := range header {
		h.Set(name, v)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// answerRecorder holds a handler's answer until it is settled. Unwrap lets
// http.ResponseController reach the connection (deadlines).
type answerRecorder struct {
	http.ResponseWriter
	header http.Header
	status int
	body   []byte
	// replaced is set when the handler's answer must not be kept as sent
	// (it carries a secret): kept is then the body to keep for replay.
	replaced bool
	kept     []byte
}

// Header implements http.ResponseWriter.
func (a *answerRecorder) Header() http.Header { return a.header }

// WriteHeader implements http.ResponseWriter.
func (a *answerRecorder) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

// Write implements http.ResponseWriter.
func (a *answerRecorder) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	a.body = append(a.body, b...)
	return len(b), nil
}

// Unwrap implements the interface http.ResponseController looks for.
func (a *answerRecorder) Unwrap() http.ResponseWriter { return a.ResponseWriter }
