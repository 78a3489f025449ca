package storekit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/encode"
)

// SubscriptionTTL is how long a store reuses a company's list of enabled
// webhook endpoints before it reads it again: the longest an endpoint
// created, changed or disabled by another instance (or the CLI) goes
// unseen by this one's writes. Changes made through the store itself are
// seen at once.
const SubscriptionTTL = 5 * time.Second

// OutboxRow is one outbox row: an event for one endpoint.
type OutboxRow struct {
	EndpointID  string
	EventID     string
	EventType   string
	UserID      string
	Payload     string
	CreatedAt   time.Time
	POSSystemID string
	CompanyID   string
}

// EndpointLoader reads a company's enabled webhook endpoints.
type EndpointLoader func(ctx context.Context, posSystemID, companyID string) ([]*posgate.WebhookEndpoint, error)

// Outbox is the part of the webhook outbox both stores share: which
// endpoints take an event (a cached read, so that a sale of a company
// without webhooks pays one map lookup), the rows an event becomes, and the
// wake-up of the sender after a commit.
type Outbox struct {
	load    EndpointLoader
	now     func() time.Time
	mu      sync.Mutex
	subs    map[[2]string]subscriptions
	gen     uint64 // bumped by Invalidate, so that a read in flight is not cached
	notify  atomic.Pointer[func()]
	pending atomic.Bool
}

type subscriptions struct {
	endpoints []*posgate.WebhookEndpoint
	at        time.Time
}

// NewOutbox returns an outbox that reads endpoints through load and
// dates its cache by now.
func NewOutbox(load EndpointLoader, now func() time.Time) *Outbox {
	return &Outbox{load: load, now: now, subs: map[[2]string]subscriptions{}}
}

// Invalidate forgets every cached subscription; the store calls it after
// each change to an endpoint.
func (o *Outbox) Invalidate() {
	o.mu.Lock()
	o.subs = map[[2]string]subscriptions{}
	o.gen++
	o.mu.Unlock()
}

// endpoints returns the company's enabled endpoints.
func (o *Outbox) endpoints(ctx context.Context, posSystemID, companyID string, load EndpointLoader) ([]*posgate.WebhookEndpoint, error) {
	key := [2]string{posSystemID, companyID}
	now := o.now()
	o.mu.Lock()
	s, ok := o.subs[key]
	gen := o.gen
	o.mu.Unlock()
	if ok && now.Sub(s.at) < SubscriptionTTL && !now.Before(s.at) {
		return s.endpoints, nil
	}
	if load == nil {
		load = o.load
	}
	eps, err := load(ctx, posSystemID, companyID)
	if err != nil {
		return nil, fmt.Errorf("webhook subscriptions: %w", err)
	}
	o.mu.Lock()
	if o.gen == gen {
		o.subs[key] = subscriptions{endpoints: eps, at: now}
	}
	o.mu.Unlock()
	return eps, nil
}

// Rows returns the outbox rows of ev: one per enabled endpoint of its
// company subscribed to its type, none when there is none (the common
// case, which costs no allocation beyond the cached read).
//
// load, when not nil, reads the endpoints on a cache miss instead of the
// outbox's loader: a PostgreSQL transaction reads them on its own
// connection, for waiting on a second one from the pool while holding one
// can exhaust the pool under load.
func (o *Outbox) Rows(ctx context.Context, ev *posgate.Event, load EndpointLoader) ([]OutboxRow, error) {
	eps, err := o.endpoints(ctx, ev.POSSystemID, ev.CompanyID, load)
	if err != nil {
		return nil, err
	}
	var rows []OutboxRow
	for _, e := range eps {
		if !e.Subscribes(ev.Type) {
			continue
		}
		if rows == nil {
			r, err := EventRow(ev)
			if err != nil {
				return nil, err
			}
			rows = append(rows, r)
			rows[0].EndpointID = e.ID
			continue
		}
		r := rows[0]
		r.EndpointID = e.ID
		rows = append(rows, r)
	}
	return rows, nil
}

// EventRow is ev as an outbox row without its endpoint: a new event id and
// the payload.
func EventRow(ev *posgate.Event) (OutboxRow, error) {
	if ev.Time.IsZero() {
		return OutboxRow{}, fmt.Errorf("event %s has no time", ev.Type)
	}
	ev.Time = posgate.Timestamp(ev.Time)
	b, err := encode.JSON(posgate.EventBody{Type: ev.Type, Timestamp: ev.Time.UTC(), Data: ev.Data})
	if err != nil {
		return OutboxRow{}, fmt.Errorf("event %s: %w", ev.Type, err)
	}
	return OutboxRow{EventID: NewEventID(), EventType: ev.Type, UserID: ev.UserID, Payload: string(b), CreatedAt: ev.Time,
		POSSystemID: ev.POSSystemID, CompanyID: ev.CompanyID}, nil
}

// NewEventID returns a new event id (Standard Webhooks' webhook-id):
// "msg_" and a time-ordered UUID.
func NewEventID() string {
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	return "msg_" + id.String()
}

// SetNotify sets the function Notify calls.
func (o *Outbox) SetNotify(f func()) {
	if f == nil {
		o.notify.Store(nil)
		return
	}
	o.notify.Store(&f)
}

// Notify tells the sender that events were committed; stores call it after
// each commit that wrote outbox rows.
func (o *Outbox) Notify() {
	if f := o.notify.Load(); f != nil {
		(*f)()
	}
}

// HasEnabled reports whether a company has an enabled endpoint (cached as
// the subscriptions are).
func (o *Outbox) HasEnabled(ctx context.Context, posSystemID, companyID string) (bool, error) {
	eps, err := o.endpoints(ctx, posSystemID, companyID, nil)
	return len(eps) > 0, err
}

// MarkPending records that a transaction wrote outbox rows; Committed,
// called after a commit, then wakes the sender. The SQLite store, whose
// transactions run one at a time, uses the pair; PostgreSQL tracks each
// transaction itself and calls Notify.
func (o *Outbox) MarkPending() { o.pending.Store(true) }

// Committed wakes the sender when rows were written since the last call.
func (o *Outbox) Committed() {
	if o.pending.Load() && o.pending.Swap(false) {
		o.Notify()
	}
}

// Later returns the later of a and b: the outbox sweep reads no row
// created after both of its limits.
func Later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
