package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/posgate/posgate"
)

type ctxKey int

const (
	principalKey ctxKey = iota // the request's *principalBox, which holds its trace id too
	leaseKey                   // a route's own Idempotency-Key lease (withLease)
)

// msgNoToken is the detail of a 401 without any credentials; it is also how
// bearerChallenge knows to leave out the error code.
const msgNoToken = "No access token: send Authorization: Bearer <ACCESS_TOKEN>."

// traceID returns the request's trace id ("" outside a request).
func traceID(ctx context.Context) string {
	if b, ok := ctx.Value(principalKey).(*principalBox); ok {
		return b.traceID
	}
	return ""
}

// traceIDFrom returns the request's trace id: a W3C traceparent's trace id
// and flags with a span id of posgate's own, when the client sent a valid
// one (so that posgate's log lines and problems join the caller's trace),
// else a new one.
func traceIDFrom(traceparent string) string {
	if !validTraceparent(traceparent) {
		return newTraceID()
	}
	var span [8]byte
	rand.Read(span[:])
	var out [55]byte
	copy(out[:36], "00-"+traceparent[3:35]+"-")
	hex.Encode(out[36:52], span[:])
	out[52] = '-'
	copy(out[53:], traceparent[53:55])
	return string(out[:])
}

// validTraceparent checks a traceparent header of version 00 (W3C Trace
// Context §3.2): lower-case hex, non-zero trace and parent ids. Later
// versions may append fields; their first 55 characters read the same.
func validTraceparent(v string) bool {
	if len(v) < 55 || (len(v) > 55 && (v[:2] == "00" || v[55] != '-')) || v[:2] == "ff" ||
		v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return false
	}
	for _, part := range []string{v[:2], v[3:35], v[36:52], v[53:55]} {
		for i := range len(part) {
			if c := part[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return strings.Trim(v[3:35], "0") != "" && strings.Trim(v[36:52], "0") != ""
}

// newTraceID returns a W3C traceparent-shaped id, the form POS integrators
// know from ASP.NET problem documents, so it can be quoted in support tickets.
func newTraceID() string {
	var b [24]byte
	rand.Read(b[:])
	var out [55]byte
	copy(out[:3], "00-")
	hex.Encode(out[3:35], b[:16])
	out[35] = '-'
	hex.Encode(out[36:52], b[16:])
	copy(out[52:], "-00")
	return string(out[:])
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe gives every request a trace id, recovers panics as 500 problems
// and writes one structured log line per request. The line holds method,
// path, status, duration and client id: never a header, query or body, so no
// token or secret can reach the log.
//
// It also feeds the metrics (by the ServeMux pattern, never the raw path),
// and during a drain asks every client to close its connection.
func (s *Server) observe(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := traceIDFrom(r.Header.Get("Traceparent"))
		// The box is filled in by the auth wrappers so the log line can name
		// the client without re-reading the token.
		// One context value carries the trace id and the box: a second
		// WithValue (and the string boxed for it) cost two allocations per
		// request.
		box := &principalBox{traceID: id}
		ctx := context.WithValue(r.Context(), principalKey, box)
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				err := fmt.Errorf("panic: %v", v)
				if clientGone(r) { // writeError would log it at debug only
					s.log.ErrorContext(ctx, "internal error", slog.String("traceId", id), slog.Any("err", err))
				}
				s.writeError(sw, r, err)
			}
			if sw.status == 0 && clientGone(r) {
				sw.status = StatusClientClosedRequest
			}
			pattern := r.Pattern
			if pattern == "" { // shed before routing
				_, pattern = mux.Handler(r)
			}
			s.obs.Request(pattern, sw.status, time.Since(start))
			level := slog.LevelInfo
			if box.shed {
				s.shedLog.add()
				level = slog.LevelDebug
			}
			if !s.log.Enabled(ctx, level) {
				return
			}
			client := ""
			if box.p != nil {
				client = box.p.ClientID
			}
			s.log.LogAttrs(ctx, level, "request",
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", sw.status),
				slog.Int("bytes", sw.bytes),
				slog.Duration("duration", time.Since(start)),
				slog.String("clientId", client),
				slog.String("traceId", id),
			)
		}()
		next.ServeHTTP(sw, r)
	})
}

// principalBox is the request's state that the wrappers share: its trace
// id, the authenticated caller, and the in-flight slot it holds (nil when
// none, or when an import gave it back).
type principalBox struct {
	traceID string
	p       *posgate.Principal
	slot    *slots
	shed    bool // answered 503 by the load shedding: logged at DEBUG (shedLog)
}

// principal returns the authenticated caller of the request; nil before
// authentication, which every use case refuses.
func principal(ctx context.Context) *posgate.Principal {
	if b, ok := ctx.Value(principalKey).(*principalBox); ok {
		return b.p
	}
	return nil
}

// authenticate checks the bearer token and returns whom it speaks for.
func (s *Server) authenticate(r *http.Request) (*posgate.Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, posgate.Errorf(posgate.EUNAUTHORIZED, msgNoToken)
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
		return nil, posgate.Errorf(posgate.EUNAUTHORIZED, "The Authorization header must be 'Bearer <ACCESS_TOKEN>'.")
	}
	p, err := s.auth.Verify(r.Context(), tok)
	if err != nil {
		return nil, err
	}
	if b, ok := r.Context().Value(principalKey).(*principalBox); ok {
		b.p = p
	}
	return p, nil
}

// pos guards a POS route: the token must be valid, the client within its
// rate limit (docs/api.md §16.1), and the service's access
// rule for the path's POS system is applied before the body is read, so that
// a request that cannot succeed is not read for nothing. The use case
// applies it again itself (closed by default). A POST with an
// Idempotency-Key then goes through idempotent.
func (s *Server) pos(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err == nil && !s.rateLimit(w, r, p) {
			return
		}
		if err == nil {
			err = s.svc.AuthorizePOS(p, r.PathValue("posSystemId"))
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.guarded(w, r, next)
	}
}

// admin guards an operator route the same way, with the operator rule.
func (s *Server) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err == nil && !s.rateLimit(w, r, p) {
			return
		}
		if err == nil {
			err = s.svc.AuthorizeOperator(p)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		r = r.WithContext(posgate.WithAuditOrigin(r.Context(), posgate.AuditOrigin{Channel: posgate.ChannelAPI,
			TraceID: traceID(r.Context()), UserAgent: truncate(r.UserAgent(), maxAuditUserAgent)}))
		s.guarded(w, r, next)
	}
}

// maxAuditUserAgent is how much of a User-Agent the audit log keeps
// (docs/api.md §22): enough to name a client and its version, not a place
// to store a request's worth of text.
const maxAuditUserAgent = 256

// truncate cuts s to at most n bytes, at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
