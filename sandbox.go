package posgate

import (
	"context"
	"sync/atomic"
	"time"
)

// MaxSandboxOffset is how far ahead of the real time a sandbox clock may
// run: a century covers every expiry an integrator tests (a coupon valid
// until 2099 included) and keeps every time well inside the year range the
// stores and JSON accept.
const MaxSandboxOffset = 100 * 365 * 24 * time.Hour

// SandboxClock is the clock of a demo server (`posgate serve --demo`,
// docs/api.md §20): the real time plus an offset the operator sets or
// advances through the operator API, so that an integrator can test expiry
// (coupons, sessions, tokens, carousel links) without waiting. It is the
// one injected clock of every component whose rules are about time: its Now
// is what token issuance and verification, sessions, coupons and the store's
// timestamps read. Set and Advance only move it forward: caches that trust
// an entry for a while (the token cache) would otherwise trust it for as
// long as the clock went back. The one way back is Restart, for a reset of
// the demo data, after which the server forgets what it remembered by that
// clock (docs/api.md §20.1).
type SandboxClock struct {
	real   func() time.Time
	offset atomic.Int64 // nanoseconds ahead of real, never negative
}

// NewSandboxClock returns a sandbox clock at real's time (time.Now when nil).
func NewSandboxClock(real func() time.Time) *SandboxClock {
	if real == nil {
		real = time.Now
	}
	return &SandboxClock{real: real}
}

// Now is the sandbox time, in UTC.
func (c *SandboxClock) Now() time.Time {
	return c.real().Add(time.Duration(c.offset.Load())).UTC()
}

// Real is the real time the sandbox time is offset from, in UTC.
func (c *SandboxClock) Real() time.Time { return c.real().UTC() }

// Offset is how far the sandbox time runs ahead of the real time.
func (c *SandboxClock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// Set moves the clock forward to t. A t before the sandbox's current time is
// ECONFLICT (the clock never goes back), one more than MaxSandboxOffset
// ahead of the real time is EINVALID; either leaves the clock as it was.
func (c *SandboxClock) Set(t time.Time) (time.Time, error) {
	for {
		old := c.offset.Load()
		real := c.real()
		now := real.Add(time.Duration(old))
		if t.Before(now) {
			return time.Time{}, Errorf(ECONFLICT, "The sandbox clock only moves forward: %s is before its time, %s.",
				t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
		}
		off := t.Sub(real)
		if off > MaxSandboxOffset {
			return time.Time{}, invalidNow()
		}
		if c.offset.CompareAndSwap(old, int64(off)) {
			return real.Add(off).UTC(), nil
		}
	}
}

// Advance moves the clock forward by d (> 0); beyond MaxSandboxOffset ahead
// of the real time is EINVALID and leaves the clock as it was.
func (c *SandboxClock) Advance(d time.Duration) (time.Time, error) {
	if d <= 0 {
		return time.Time{}, (ValidationError{"seconds": {"The seconds field must be a positive integer."}}).Err()
	}
	for {
		old := c.offset.Load()
		if d > MaxSandboxOffset-time.Duration(old) {
			return time.Time{}, (ValidationError{"seconds": {"The sandbox clock runs at most 100 years ahead of the real time."}}).Err()
		}
		if c.offset.CompareAndSwap(old, old+int64(d)) {
			return c.real().Add(time.Duration(old + int64(d))).UTC(), nil
		}
	}
}

// Restart sets the offset to zero: the sandbox time is the real time again.
func (c *SandboxClock) Restart() { c.offset.Store(0) }

// SandboxMarks is a store that keeps a mark per running demo server, so
// that a demo server sees a reset of the demo data that another process made
// (posgate demo reset, serve --demo --reset): the reset deletes every mark
// (the table is not KeptOnReset), and the server, which wrote its own at
// start, finds it gone. Both stores implement it.
type SandboxMarks interface {
	// PutSandboxMark records the mark id (again).
	PutSandboxMark(ctx context.Context, id string) error
	// HasSandboxMark reports whether the mark id is recorded.
	HasSandboxMark(ctx context.Context, id string) (bool, error)
}

func invalidNow() error {
	return (ValidationError{"now": {"The sandbox clock runs at most 100 years ahead of the real time."}}).Err()
}
