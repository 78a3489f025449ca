// Package posgate holds posgate's domain: the tenancy types, their validation,
// the application error type and the Store interface that every storage
// adapter (internal/sqlite, internal/postgres) implements. It imports no
// adapter, so that the domain can be read and tested on its own.
package posgate

import (
	"errors"
	"fmt"
)

// Error codes. They are few on purpose: each maps to one HTTP status in
// internal/httpapi, and stores return them so callers never parse driver
// errors.
const (
	EINVALID      = "invalid"      // bad input: 400
	ENOTFOUND     = "not_found"    // absent, or another tenant's: 404
	ECONFLICT     = "conflict"     // uniqueness violated: 409
	EUNAUTHORIZED = "unauthorized" // no or bad credentials: 401
	EFORBIDDEN    = "forbidden"    // authenticated but not allowed: 403
	ETOOLARGE     = "too_large"    // body or item count over the cap: 413
	EUNSUPPORTED  = "unsupported"  // content type not accepted: 415
	EINTERNAL     = "internal"     // anything else: 500, details only in logs
	// EUNPROCESSABLE is a well-formed request that cannot be applied as
	// sent (an Idempotency-Key reused for another request): 422.
	EUNPROCESSABLE = "unprocessable"
	// EUNAVAILABLE is a store that cannot be reached or lost the
	// connection mid-request (a database failover, a restarting pooler):
	// 503 with Retry-After, so that clients retry with the same
	// Idempotency-Key.
	EUNAVAILABLE = "unavailable"
)

// Error is posgate's application error. Message is safe to show to a client;
// Fields carries per-property validation messages (property → messages).
type Error struct {
	Code    string
	Message string
	Fields  map[string][]string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("posgate error: code=%s message=%s", e.Code, e.Message)
}

// Is makes errors.Is(err, ErrNotFound) true for any *Error with the same code,
// so stores can attach a message and callers still match the sentinel.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Sentinel errors for matching with errors.Is; stores return *Error values
// with these codes (and a message).
var (
	ErrNotFound = &Error{Code: ENOTFOUND}
	ErrConflict = &Error{Code: ECONFLICT}
	ErrInvalid  = &Error{Code: EINVALID}
)

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound is the ENOTFOUND error for an absent object, e.g. `company "acme"
// not found`. Both stores and the service build it here, so that a client
// reads the same message whichever store answers, and an object hidden from
// a restricted caller reads exactly like an absent one.
func NotFound(thing, id string) *Error {
	return Errorf(ENOTFOUND, "%s %q not found", thing, id)
}

// AlreadyExists is the ECONFLICT error for a duplicate key, e.g. `coupon
// "X1" already exists`, worded here for both stores.
func AlreadyExists(thing, id string) *Error {
	return Errorf(ECONFLICT, "%s %q already exists", thing, id)
}

// ErrorCode returns the code of the *Error in err's chain, EINTERNAL for any
// other non-nil error and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err: the *Error's message,
// or "Internal error." for anything else.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// ValidationError collects per-field messages and becomes an EINVALID *Error.
type ValidationError map[string][]string

// Add records msg for field.
func (v ValidationError) Add(field, msg string) { v[field] = append(v[field], msg) }

// Err returns nil when nothing was recorded, else an EINVALID *Error carrying
// the fields.
func (v ValidationError) Err() error {
	if len(v) == 0 {
		return nil
	}
	return &Error{Code: EINVALID, Message: "One or more validation errors occurred.", Fields: v}
}
