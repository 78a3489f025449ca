package posgate

import (
	"context"
	"time"
)

// Event types of the terminal channel (docs/api.md §25): what a till
// connected to its Server-Sent Events stream is told.
const (
	// TerminalSettingsChanged: something a till reads at start changed
	// for its location (feature switches, the company's or location's
	// state, content, the loyalty program, promotions, the catalogue).
	TerminalSettingsChanged = "SettingsChanged"
	// TerminalCouponIssued: a coupon was issued to the customer of the
	// terminal's open session.
	TerminalCouponIssued = "CouponIssued"
	// TerminalDisabled: an operator disabled the terminal.
	TerminalDisabled = "TerminalDisabled"
	// TerminalResync is sent instead of the events a resuming till can no
	// longer be given (older than TerminalEventRetention, or from another
	// database): the till reads its settings afresh.
	TerminalResync = "Resync"
)

// TerminalEventRetention is how long the terminal channel's log keeps an
// event: a till that reconnects within it misses nothing.
const TerminalEventRetention = 7 * 24 * time.Hour

// TerminalEvent is one entry of the terminal channel's log, for the tills
// of a company, of one of its locations or of one terminal.
type TerminalEvent struct {
	// ID orders the log: the store gives it, increasing in the order the
	// events were committed.
	ID          int64
	POSSystemID string
	CompanyID   string
	// LocationID is "" for every location of the company, TerminalID ""
	// for every terminal of the location.
	LocationID string
	TerminalID string
	// UserID is the loyalty user a CouponIssued is for; it reaches only
	// the terminals whose open session is that user's.
	UserID string
	Type   string
	// Data is the event's data, JSON.
	Data []byte
	Time time.Time
}

// For reports whether e concerns the terminal (before the open session's
// customer is considered).
func (e *TerminalEvent) For(locationID, terminalID string) bool {
	return (e.LocationID == "" || e.LocationID == locationID) && (e.TerminalID == "" || e.TerminalID == terminalID)
}

// TerminalCustomer is the customer a startInteraction named for its
// session: the terminal's CouponIssued events are that customer's until the
// session expires or a transaction links it.
type TerminalCustomer struct {
	POSSystemID string
	LocationID  string
	TerminalID  string
	SessionID   string
	UserID      string
	ExpiresAt   time.Time
}

// TerminalEventStore holds the terminal channel's log.
type TerminalEventStore interface {
	// AppendTerminalEvents adds events to the log, giving each its ID.
	// Inside Atomic it joins the transaction; ids increase in commit
	// order, so a reader that has seen id n never later finds a new event
	// below n. On PostgreSQL it notifies every instance at the commit
	// (NOTIFY posgate_terminal_events with "posSystemId/companyId").
	AppendTerminalEvents(ctx context.Context, evs []*TerminalEvent) error
	// TerminalEvents returns up to limit events of the company after id
	// after, in id order, that concern the terminal (TerminalEvent.For).
	TerminalEvents(ctx context.Context, posSystemID, companyID, locationID, terminalID string, after int64, limit int) ([]*TerminalEvent, error)
	// TerminalEventsAfter returns up to limit events of every company
	// after id after, in id order: what an instance's watcher reads to
	// wake the streams of the companies concerned.
	TerminalEventsAfter(ctx context.Context, after int64, limit int) ([]*TerminalEvent, error)
	// TerminalEventHorizon returns the newest id given (0: none yet) and
	// the newest id the retention deleted (0: none).
	TerminalEventHorizon(ctx context.Context) (last, deleted int64, err error)
	// DeleteTerminalEventsBefore deletes the events made before t.
	DeleteTerminalEventsBefore(ctx context.Context, t time.Time) (int64, error)
	// SetTerminalCustomer records the customer of a terminal's newest
	// session that named one, replacing the previous.
	SetTerminalCustomer(ctx context.Context, c *TerminalCustomer) error
	// FindTerminalCustomer returns it; ENOTFOUND when there is none.
	FindTerminalCustomer(ctx context.Context, posSystemID, locationID, terminalID string) (*TerminalCustomer, error)
}
