package httpapi

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/encode"
)

// statusOf maps each application error code to its HTTP status; it is the
// only place where that mapping lives.
var statusOf = map[string]int{
	posgate.EINVALID:      http.StatusBadRequest,
	posgate.EUNAUTHORIZED: http.StatusUnauthorized,
	posgate.EFORBIDDEN:    http.StatusForbidden,
	posgate.ENOTFOUND:     http.StatusNotFound,
	posgate.ECONFLICT:     http.StatusConflict,
	posgate.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	posgate.EUNSUPPORTED:  http.StatusUnsupportedMediaType,
	posgate.EINTERNAL:     http.StatusInternalServerError,

	// A reused Idempotency-Key (docs/api.md §14).
	posgate.EUNPROCESSABLE: http.StatusUnprocessableEntity,

	// The database cannot be reached (docs/api.md §2.6).
	posgate.EUNAVAILABLE: http.StatusServiceUnavailable,
}

// problemTypes holds the RFC 9110 section of each status, used as the
// problem "type" the way ASP.NET-based POS services do.
var problemTypes = map[int]string{
	400: "https://tools.ietf.org/html/rfc9110#section-15.5.1",
	401: "https://tools.ietf.org/html/rfc9110#section-15.5.2",
	403: "https://tools.ietf.org/html/rfc9110#section-15.5.4",
	404: "https://tools.ietf.org/html/rfc9110#section-15.5.5",
	405: "https://tools.ietf.org/html/rfc9110#section-15.5.6",
	409: "https://tools.ietf.org/html/rfc9110#section-15.5.10",
	413: "https://tools.ietf.org/html/rfc9110#section-15.5.14",
	415: "https://tools.ietf.org/html/rfc9110#section-15.5.16",
	422: "https://tools.ietf.org/html/rfc9110#section-15.5.21",
	429: "https://tools.ietf.org/html/rfc6585#section-4",
	500: "https://tools.ietf.org/html/rfc9110#section-15.6.1",
	503: "https://tools.ietf.org/html/rfc9110#section-15.6.4",
}

var problemTitles = map[int]string{
	400: "Bad Request",
	401: "Unauthorized",
	403: "Forbidden",
	404: "Not Found",
	405: "Method Not Allowed",
	409: "Conflict",
	413: "Content Too Large",
	415: "Unsupported Media Type",
	422: "Unprocessable Content",
	429: "Too Many Requests",
	500: "An error occurred while processing your request.",
	503: "Service Unavailable",
}

// Problem is an RFC 9457 problem document as posgate writes it.
type Problem struct {
	Type    string              `json:"type"`
	Title   string              `json:"title"`
	Status  int                 `json:"status"`
	Detail  string              `json:"detail"`
	TraceID string              `json:"traceId"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// envelope is the {"data": …} wrapper of docs/api.md §2.5.
type envelope struct {
	Data any `json:"data"`
}

// jsonAppender is an answer that writes its own JSON, as encoding/json
// would (service.Evaluation: encoding/json re-reads every byte a
// MarshalJSON method writes, which for an evaluation's breakdown was the
// endpoint's largest cost).
type jsonAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// appenderData returns the data of an envelope that writes its own JSON.
func appenderData(v any) (jsonAppender, bool) {
	if e, ok := v.(envelope); ok {
		a, ok := e.Data.(jsonAppender)
		return a, ok
	}
	return nil, false
}

// enveloped answers 200 with out in the data envelope, or the error.
func enveloped[T any](out *T, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{out}, nil
}

// plain answers 200 with out as it is (answers whose data, page and
// posStatus stand at the top level), or the error.
func plain[T any](out *T, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

// rawEndpoint adapts a handler that writes its own successful answer (an
// image, a page): its errors come back the same way as every other
// handler's and are answered by writeError, so no path can forget to stop
// after one.
func (s *Server) rawEndpoint(fn func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// secretBearer is an answer that carries a secret, shown once: WithoutSecret
// is what a replay of it answers instead (docs/api.md §14).
type secretBearer interface{ WithoutSecret() any }

// withSecret answers status with out, a view that carries a secret, in the
// data envelope, or the error. Under an Idempotency-Key the answer kept for
// replay is out.WithoutSecret(), so that the secret is never stored.
func withSecret[T secretBearer](status int, out T, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return status, secretAnswer{shown: envelope{out}, kept: envelope{out.WithoutSecret()}}, nil
}

// secretAnswer is an answer whose replay differs from it: shown is sent,
// kept is what the Idempotency-Key's record holds.
type secretAnswer struct{ shown, kept any }

// keepForReplay hands the answerRecorder under w (when the request runs
// under an Idempotency-Key) the body to keep in place of the one sent.
func keepForReplay(w http.ResponseWriter, kept any) {
	for w != nil {
		if rec, ok := w.(*answerRecorder); ok {
			// A body that cannot be encoded (nil) is kept by no record:
			// the key is released instead.
			rec.kept, _ = encode.JSON(kept)
			rec.replaced = true
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// writeJSON writes v as the response. Accept: text/json or text/plain gets
// the same JSON under that media type (docs/api.md §2.5).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	if h, ok := v.(withHeader); ok {
		for k, vs := range h.header {
			w.Header()[k] = vs
		}
		v = h.body
	}
	if a, ok := v.(secretAnswer); ok {
		keepForReplay(w, a.kept)
		v = a.shown
	}
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer putEncodeBuffer(buf)
	var b []byte
	var err error
	if a, ok := appenderData(v); ok {
		if b, err = a.AppendJSON(append(buf.Bytes()[:0], `{"data":`...)); err == nil {
			b = append(b, '}')
		}
	} else {
		b, err = encode.JSONInto(buf, v)
	}
	if err != nil {
		// Only a programming error (an unmarshalable type) gets here.
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", responseType(r.Header.Get("Accept")))
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// encodeBuffers recycles the buffers answers are encoded into: the body is
// copied into the connection's writer by Write, so its buffer is free once
// the handler returns, and no answer grows a buffer of its own from
// nothing.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putEncodeBuffer returns buf to encodeBuffers, unless a large answer made
// it too big to keep.
func putEncodeBuffer(buf *bytes.Buffer) {
	if buf.Cap() > 64<<10 {
		return
	}
	buf.Reset()
	encodeBuffers.Put(buf)
}

// responseType picks the first of the JSON media types the client names in
// Accept, application/json when it names none of them.
func responseType(accept string) string {
	for accept != "" {
		var part string
		part, accept, _ = strings.Cut(accept, ",")
		mt, _, _ := strings.Cut(part, ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "application/json":
			return "application/json; charset=utf-8"
		case "text/json":
			return "text/json; charset=utf-8"
		case "text/plain":
			return "text/plain; charset=utf-8"
		}
	}
	return "application/json; charset=utf-8"
}

// writeProblem writes a problem document with the given status and detail.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, detail string, fields map[string][]string) {
	p := Problem{
		Type:    problemTypes[status],
		Title:   problemTitles[status],
		Status:  status,
		Detail:  detail,
		TraceID: traceID(r.Context()),
		Errors:  fields,
	}
	if len(fields) > 0 {
		p.Title = "One or more validation errors occurred."
	}
	b, _ := encode.JSON(p)
	h := w.Header()
	h.Set("Content-Type", "application/problem+json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// StatusClientClosedRequest is the status the request log records for a
// request whose client went away before its answer (nginx's 499): nothing is
// written, and it is neither an error of posgate nor a 500.
const StatusClientClosedRequest = 499

// clientGone reports whether r's client went away: the server cancels the
// request's context when the connection closes. (A deadline of posgate's
// own, such as the import timeout, is not the client going away.)
func clientGone(r *http.Request) bool {
	return errors.Is(r.Context().Err(), context.Canceled)
}

// writeError turns err into a problem response. Internal errors are logged
// with the trace id and shown only as "Internal error.". When the client has
// gone away, whatever failed (typically a store call with "context
// canceled") is answered to nobody: nothing is written and observe records
// the request as 499 at INFO.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if clientGone(r) {
		s.log.DebugContext(r.Context(), "client went away", slog.String("traceId", traceID(r.Context())), slog.Any("err", err))
		return
	}
	code := posgate.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	var fields map[string][]string
	var e *posgate.Error
	if errors.As(err, &e) {
		fields = e.Fields
	}
	detail := posgate.ErrorMessage(err)
	if status == http.StatusInternalServerError {
		s.log.ErrorContext(r.Context(), "internal error", slog.String("traceId", traceID(r.Context())),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		detail = "Internal error."
		fields = nil
	} else if len(fields) > 0 {
		detail = summarize(fields)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", bearerChallenge(detail))
	}
	if code == posgate.EUNAVAILABLE {
		s.log.WarnContext(r.Context(), "store unavailable", slog.String("traceId", traceID(r.Context())),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		w.Header().Set("Retry-After", "1")
	}
	writeProblem(w, r, status, detail, fields)
}

// summarize joins validation messages into one line for "detail", so that a
// client that only logs detail still sees what was wrong. A message given
// for several fields ("One of code, email and phone is required." under
// each of the three) is said once: the fields stay in "errors".
func summarize(fields map[string][]string) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	said := make(map[string]bool)
	for _, k := range keys {
		for _, m := range fields[k] {
			if said[m] {
				continue
			}
			said[m] = true
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(m)
		}
	}
	return b.String()
}

// bearerChallenge builds the RFC 6750 §3 WWW-Authenticate value. A request
// without credentials gets no error code, as the RFC asks.
func bearerChallenge(detail string) string {
	if detail == msgNoToken {
		return `Bearer realm="posgate"`
	}
	return `Bearer realm="posgate", error="invalid_token", error_description="` + strings.ReplaceAll(detail, `"`, `'`) + `"`
}
