package posgate

import (
	"context"
	"encoding/json"
	"time"
)

// AuditChannel is how an operator write reached posgate: the operator API,
// the command line or (later) the web portal. The same principal may write
// through several, and a reader of the log wants to tell them apart.
type AuditChannel string

// The channels of an operator write.
const (
	ChannelAPI    AuditChannel = "api"
	ChannelCLI    AuditChannel = "cli"
	ChannelPortal AuditChannel = "portal"
)

// Valid reports whether c is one of the known channels.
func (c AuditChannel) Valid() bool {
	return c == ChannelAPI || c == ChannelCLI || c == ChannelPortal
}

// Actor kinds: an API client holding a token, the local operator of the
// command line (LocalOperator), or a person who signed in (their token,
// or their portal session), whose subject is the person's id.
const (
	ActorClient = "client"
	ActorLocal  = "local"
	ActorPerson = "person"
)

// AuditActor is who made a change, as far as the principal tells: its
// subject and kind, and the API client it acted through.
type AuditActor struct {
	Subject  string `json:"subject"`
	Kind     string `json:"kind"`
	ClientID string `json:"clientId"`
}

// ActorOf is the actor a principal stands for. It is the one place that
// maps a principal to its audit identity, so that when principals carry a
// person's subject, every write records it the same way.
func ActorOf(p *Principal) AuditActor {
	if p == nil {
		return AuditActor{}
	}
	if p.PersonID != "" {
		return AuditActor{Subject: p.PersonID, Kind: ActorPerson, ClientID: p.ClientID}
	}
	kind := ActorClient
	if p.ClientID == localOperatorClientID {
		kind = ActorLocal
	}
	return AuditActor{Subject: p.ClientID, Kind: kind, ClientID: p.ClientID}
}

// AuditTarget is what a change was made to: its type and id, and the POS
// system, company and location it belongs to ("" for what belongs to the
// whole installation, POS system or company), by which the log is filtered
// to what a reader reaches.
type AuditTarget struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	POSSystemID string `json:"posSystemId"`
	CompanyID   string `json:"posCompanyId"`
	LocationID  string `json:"posLocationId"`
}

// AuditEntry is one operator write as the audit log keeps it
// (docs/api.md §22). Before and After are the changed resource as JSON
// (null for what did not exist before or does not exist after); secrets are
// never part of them.
type AuditEntry struct {
	ID        string          `json:"id"`
	Time      time.Time       `json:"time"`
	Actor     AuditActor      `json:"actor"`
	Channel   AuditChannel    `json:"channel"`
	Action    string          `json:"action"`
	Target    AuditTarget     `json:"target"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
	TraceID   string          `json:"traceId"`
	UserAgent string          `json:"userAgent"`
	// Seq is the store's order of the entries, the cursor of ListAudit.
	Seq int64 `json:"-"`
}

// AuditQuery selects audit entries, newest first. Empty fields do not
// filter.
type AuditQuery struct {
	// Actor matches the actor's subject or client id.
	Actor      string
	Action     string
	TargetType string
	TargetID   string
	// POSSystemID, CompanyID and LocationID filter by the target's place.
	POSSystemID string
	CompanyID   string
	LocationID  string
	// From and To bound the time: From <= time < To.
	From, To time.Time
	// ReachPOSSystemID and ReachCompanyIDs are the reader's reach: when
	// set, only entries of that POS system (and of those companies) are
	// selected, so an entry of the whole installation is left out too.
	ReachPOSSystemID string
	ReachCompanyIDs  []string
	// ReachLocationIDs, when set, selects only the entries of those
	// locations (a location manager's reach).
	ReachLocationIDs []string
	// BeforeSeq is the cursor: only entries older than the one with this
	// Seq; 0 starts at the newest.
	BeforeSeq int64
	Limit     int
}

// AuditStore keeps the audit log and runs a write together with its entry.
type AuditStore interface {
	// Atomic runs fn in one write transaction. Every write of the store that
	// fn makes with the context it is given joins that transaction, so an
	// operator's change and its audit entry commit together or not at all;
	// an error from fn rolls everything back. A nested Atomic joins the
	// outer one.
	Atomic(ctx context.Context, fn func(ctx context.Context) error) error
	// AppendAudit records e (in the transaction of Atomic when ctx is
	// one of its contexts).
	AppendAudit(ctx context.Context, e *AuditEntry) error
	// ListAudit returns at most q.Limit entries, newest first.
	ListAudit(ctx context.Context, q AuditQuery) ([]*AuditEntry, error)
}

// AuditOrigin is what the adapter that received a write knows about it
// beyond the principal: the channel, the request's trace id and the
// caller's User-Agent.
type AuditOrigin struct {
	Channel   AuditChannel
	TraceID   string
	UserAgent string
}

type originKey struct{}

// WithAuditOrigin returns ctx carrying o, for the use cases to record with
// every write. The HTTP adapter and the command line set it.
func WithAuditOrigin(ctx context.Context, o AuditOrigin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// AuditOriginFrom returns the origin ctx carries (the zero value when none).
func AuditOriginFrom(ctx context.Context) AuditOrigin {
	o, _ := ctx.Value(originKey{}).(AuditOrigin)
	return o
}
