package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Sentinel errors for errors.Is: an *Error matches the one of its status.
var (
	// ErrValidation is a 400: the request is malformed or invalid; the
	// *Error's Errors says which fields (docs/api.md §2.6).
	ErrValidation = errors.New("posgate: validation failed")
	// ErrUnauthorized is a 401: no token, or one posgate does not accept.
	ErrUnauthorized = errors.New("posgate: unauthorized")
	// ErrForbidden is a 403: the token lacks the scope or belongs to
	// another POS system, or the feature is switched off.
	ErrForbidden = errors.New("posgate: forbidden")
	// ErrNotFound is a 404: an unknown (or hidden) location, terminal,
	// company, coupon, ….
	ErrNotFound = errors.New("posgate: not found")
	// ErrConflict is a 409: a duplicate, a state change not allowed, other
	// content under a recorded transaction id.
	ErrConflict = errors.New("posgate: conflict")
	// ErrIdempotencyKeyReused is a 422: the Idempotency-Key was used for
	// another request.
	ErrIdempotencyKeyReused = errors.New("posgate: idempotency key reused")
	// ErrRateLimited is a 429: the client's rate limit is used up.
	ErrRateLimited = errors.New("posgate: rate limited")
	// ErrUnavailable is a 503: the instance shed the request.
	ErrUnavailable = errors.New("posgate: unavailable")
)

var statusSentinel = map[int]error{
	http.StatusBadRequest:          ErrValidation,
	http.StatusUnauthorized:        ErrUnauthorized,
	http.StatusForbidden:           ErrForbidden,
	http.StatusNotFound:            ErrNotFound,
	http.StatusConflict:            ErrConflict,
	http.StatusUnprocessableEntity: ErrIdempotencyKeyReused,
	http.StatusTooManyRequests:     ErrRateLimited,
	http.StatusServiceUnavailable:  ErrUnavailable,
}

// Error is an error answer of posgate: a problem document (docs/api.md
// §2.6), or an OAuth error of the token endpoint (§3.3).
type Error struct {
	// Method and Path are the request's.
	Method, Path string
	// StatusCode is the HTTP status.
	StatusCode int
	// Type, Title, Detail and TraceID are the problem document's; TraceID
	// finds the request in posgate's log.
	Type, Title, Detail, TraceID string
	// Errors maps each invalid property ("$" for the whole body, a query
	// parameter's name) to its messages, for validation errors.
	Errors map[string][]string
	// OAuthError and OAuthDescription are the token endpoint's error and
	// error_description.
	OAuthError, OAuthDescription string
	// RetryAfter is the wait Retry-After asked for, if any.
	RetryAfter time.Duration
	// Header and Body are the answer as received.
	Header http.Header
	Body   []byte
}

// Error implements error.
func (e *Error) Error() string {
	msg := e.Detail
	if e.OAuthError != "" {
		msg = e.OAuthError + ": " + e.OAuthDescription
	}
	if msg == "" {
		msg = strings.TrimSpace(string(e.Body))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
	}
	return fmt.Sprintf("posgate: %s %s: %d %s", e.Method, e.Path, e.StatusCode, msg)
}

// Is matches the sentinel of e's status (ErrNotFound for a 404, …).
func (e *Error) Is(target error) bool {
	s, ok := statusSentinel[e.StatusCode]
	return ok && s == target
}

// newError reads an error answer.
func newError(method, path string, status int, h http.Header, body []byte) *Error {
	e := &Error{Method: method, Path: path, StatusCode: status, Header: h, Body: body, RetryAfter: retryAfter(h)}
	var doc struct {
		Type             string              `json:"type"`
		Title            string              `json:"title"`
		Detail           string              `json:"detail"`
		TraceID          string              `json:"traceId"`
		Errors           map[string][]string `json:"errors"`
		Error            string              `json:"error"`
		ErrorDescription string              `json:"error_description"`
	}
	if json.Unmarshal(body, &doc) == nil {
		e.Type, e.Title, e.Detail, e.TraceID, e.Errors = doc.Type, doc.Title, doc.Detail, doc.TraceID, doc.Errors
		e.OAuthError, e.OAuthDescription = doc.Error, doc.ErrorDescription
	}
	return e
}
