package posgate

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Event types (docs/api.md §19.2). EventTest is only ever sent to the one
// endpoint an operator tests; endpoints cannot subscribe to it.
const (
	EventInteractionStarted    = "interaction.started"
	EventTransactionRecorded   = "transaction.recorded"
	EventTransactionRefunded   = "transaction.refunded"
	EventCouponRedeemed        = "coupon.redeemed"
	EventCouponIssued          = "coupon.issued"
	EventLoyaltyBalanceChanged = "loyalty.balance_changed"
	EventPromotionsImported    = "promotions.imported"
	EventCatalogueImported     = "catalogue.imported"
	EventCouponOfflineConflict = "coupon.offline_conflict"
	EventTest                  = "webhook.test"
)

// EventTypes lists the types an endpoint may subscribe to, in the order
// docs/api.md §19.2 gives them.
var EventTypes = []string{EventInteractionStarted, EventTransactionRecorded, EventTransactionRefunded,
	EventCouponRedeemed, EventCouponIssued, EventLoyaltyBalanceChanged, EventPromotionsImported, EventCatalogueImported,
	EventCouponOfflineConflict}

// Delivery statuses: Pending until a 2xx (Delivered) or until retries run
// out (Dead); an operator's redelivery makes a dead one Pending again.
const (
	DeliveryPending   = "Pending"
	DeliveryDelivered = "Delivered"
	DeliveryDead      = "Dead"
)

// MaxWebhookEndpoints bounds a company's endpoints: every event of the
// company is written once per subscribed endpoint, in the transaction of
// its change.
const MaxWebhookEndpoints = 10

// MaxWebhookResponse is how much of a receiver's answer a delivery keeps.
const MaxWebhookResponse = 1024

// SecretRotationOverlap is how long the previous secret of a rotated
// endpoint still signs (beside the new one), so that receivers can switch
// without losing a delivery.
const SecretRotationOverlap = 24 * time.Hour

// WebhookEndpoint is where a company's events are sent (docs/api.md
// §19.1). Secret signs every delivery; it is returned to the operator only
// when it is generated (creation and rotation).
type WebhookEndpoint struct {
	ID          string   `json:"id"`
	POSSystemID string   `json:"posSystemId"`
	CompanyID   string   `json:"posCompanyId"`
	URL         string   `json:"url"`
	EventTypes  []string `json:"eventTypes"`
	Enabled     bool     `json:"enabled"`
	// DisabledReason says why posgate disabled the endpoint itself (a 410
	// answer); "" when enabled or disabled by an operator.
	DisabledReason string `json:"disabledReason"`
	// Secret and PreviousSecret ("whsec_" + base64 of 24 random bytes) are
	// never serialized; PreviousSecretUntil is when the previous stops
	// signing.
	Secret              string     `json:"-"`
	PreviousSecret      string     `json:"-"`
	PreviousSecretUntil *time.Time `json:"previousSecretUntil"`
	CreatedAt           time.Time  `json:"createdAt"`
	UpdatedAt           time.Time  `json:"updatedAt"`
}

// Subscribes reports whether e takes events of type t.
func (e *WebhookEndpoint) Subscribes(t string) bool { return slices.Contains(e.EventTypes, t) }

// Secrets returns the secrets that sign a delivery at now: the current one
// and, within the overlap after a rotation, the previous one.
func (e *WebhookEndpoint) Secrets(now time.Time) []string {
	out := []string{e.Secret}
	if e.PreviousSecret != "" && e.PreviousSecretUntil != nil && now.Before(*e.PreviousSecretUntil) {
		out = append(out, e.PreviousSecret)
	}
	return out
}

// ValidateWebhookURL checks an endpoint URL's form: absolute http or https
// with a host, no credentials, at most 2,000 characters. Whether its host
// may be reached (private and loopback addresses) is the sender's check
// (internal/webhook), which also applies it when it connects.
func ValidateWebhookURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("The url field is required.")
	}
	if len(raw) > 2000 {
		return fmt.Errorf("The url must be at most 2000 characters.")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("The url must be an absolute http or https URL.")
	}
	if u.User != nil {
		return fmt.Errorf("The url must not carry credentials.")
	}
	if u.Fragment != "" {
		return fmt.Errorf("The url must not have a fragment.")
	}
	return nil
}

// ValidateEventTypes checks an endpoint's subscriptions: one or more known
// types, none twice.
func ValidateEventTypes(types []string) error {
	if len(types) == 0 {
		return fmt.Errorf("At least one event type is required (known: %s).", strings.Join(EventTypes, ", "))
	}
	seen := map[string]bool{}
	for _, t := range types {
		if !slices.Contains(EventTypes, t) {
			return fmt.Errorf("Unknown event type '%s' (known: %s).", t, strings.Join(EventTypes, ", "))
		}
		if seen[t] {
			return fmt.Errorf("Event type '%s' is given twice.", t)
		}
		seen[t] = true
	}
	return nil
}

// Event is one change to report (docs/api.md §19.2). The store gives it
// its id and writes it once per subscribed endpoint, in the transaction of
// the change.
type Event struct {
	Type        string
	POSSystemID string
	CompanyID   string
	// UserID is the loyalty user the event concerns, "" for none: the
	// events of one user reach an endpoint in order.
	UserID string
	Time   time.Time
	// Data is the event's "data" object, marshalled as JSON.
	Data any
}

// EventBody is what a receiver gets (Standard Webhooks' payload shape).
type EventBody struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// WebhookDelivery is one event on its way to one endpoint, as the operator
// sees it (docs/api.md §19.3).
type WebhookDelivery struct {
	ID             int64      `json:"id"`
	EndpointID     string     `json:"endpointId"`
	EventID        string     `json:"eventId"`
	EventType      string     `json:"eventType"`
	UserID         string     `json:"userId"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	LastAttemptAt  *time.Time `json:"lastAttemptAt"`
	LastStatusCode int        `json:"lastStatusCode"`
	LastError      string     `json:"lastError"`
	LastResponse   string     `json:"lastResponse"`
	CreatedAt      time.Time  `json:"createdAt"`
}

// DeliveryTask is a delivery the sender has leased: what it sends, where
// and signed with which secrets.
type DeliveryTask struct {
	ID        int64
	EventID   string
	EventType string
	Payload   []byte
	Attempts  int // before this one
	// RetryFrom is when the delivery's retries began (its creation, or
	// the operator's redelivery): retries end RetryFor after it.
	RetryFrom time.Time
	Endpoint  *WebhookEndpoint
}

// DeliveryResult is the outcome of one attempt: Status is Delivered, Dead
// or Pending (then retried at NextAttemptAt). DisableEndpoint is set for a
// 410 answer.
type DeliveryResult struct {
	ID              int64
	Status          string
	At              time.Time
	NextAttemptAt   time.Time
	StatusCode      int
	Error           string
	Response        string
	DisableEndpoint bool
}

// WebhookDeliveryQuery selects an endpoint's deliveries, newest first.
type WebhookDeliveryQuery struct {
	POSSystemID, CompanyID, EndpointID string
	Status                             string // "" for any
	Limit, Offset                      int
}

// WebhookStore keeps webhook endpoints and the outbox of their deliveries
// (docs/api.md §19). Events are written by the stores' own writes (a sale,
// a session, an import) in the same transaction; these methods are the
// operator's and the sender's.
type WebhookStore interface {
	// CreateWebhookEndpoint stores e (ENOTFOUND for an unknown company,
	// ECONFLICT beyond MaxWebhookEndpoints).
	CreateWebhookEndpoint(ctx context.Context, e *WebhookEndpoint) error
	FindWebhookEndpoint(ctx context.Context, posSystemID, companyID, id string) (*WebhookEndpoint, error)
	ListWebhookEndpoints(ctx context.Context, posSystemID, companyID string) ([]*WebhookEndpoint, error)
	// UpdateWebhookEndpoint stores e's URL, types, enabled state, reason
	// and secrets.
	UpdateWebhookEndpoint(ctx context.Context, e *WebhookEndpoint) error
	// DeleteWebhookEndpoint removes an endpoint and its deliveries.
	DeleteWebhookEndpoint(ctx context.Context, posSystemID, companyID, id string) error
	// EmitTestEvent writes an event for endpoint id alone, and returns its
	// event id.
	EmitTestEvent(ctx context.Context, e *WebhookEndpoint, ev *Event) (string, error)
	// ClaimDeliveries leases up to limit due deliveries for owner until
	// now+lease: Pending, due, unleased (or the lease expired), of an
	// enabled endpoint, and the first pending one of its (endpoint, user).
	ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*DeliveryTask, error)
	// RecordDelivery stores an attempt's outcome if owner still holds the
	// lease (false otherwise: another instance took it over).
	RecordDelivery(ctx context.Context, owner string, r *DeliveryResult) (bool, error)
	// RecordDeliveries stores attempts' outcomes in one transaction, each
	// as RecordDelivery does, and returns how many were stored. A delivery
	// that ends (Delivered or Dead) makes the next one of its (endpoint,
	// user) due.
	RecordDeliveries(ctx context.Context, owner string, rs []*DeliveryResult) (int, error)
	// ReleaseWaiting makes due, at now, every waiting delivery (one written
	// behind an earlier Pending one of its endpoint and user) that no
	// longer has an earlier Pending one: RecordDeliveries does this for
	// the next delivery, and this sweep catches one written beside a
	// concurrent recording that could not see it.
	ReleaseWaiting(ctx context.Context, now time.Time) (int, error)
	// SweepWebhookDeliveries deletes the deliveries (and so their events)
	// whose last attempt was before deliveredBefore and that were
	// Delivered, or before deadBefore and that are Dead, and returns how
	// many. It goes through the outbox in id order, batch rows at a time,
	// each batch a statement of its own, so that it never holds a long
	// lock, and stops at the first batch created after both limits.
	SweepWebhookDeliveries(ctx context.Context, deliveredBefore, deadBefore time.Time, batch int) (int64, error)
	// WebhookBacklog counts the Pending deliveries (the outbox's backlog).
	WebhookBacklog(ctx context.Context) (int64, error)
	ListWebhookDeliveries(ctx context.Context, q WebhookDeliveryQuery) ([]*WebhookDelivery, int, error)
	// RedeliverWebhooks makes dead deliveries of an endpoint Pending and due
	// at now: delivery id, or every dead one when id is 0. It returns how
	// many.
	RedeliverWebhooks(ctx context.Context, posSystemID, companyID, endpointID string, id int64, now time.Time) (int, error)
	// HasEnabledWebhook reports whether a company has an enabled endpoint
	// (settings/lookup's channel).
	HasEnabledWebhook(ctx context.Context, posSystemID, companyID string) (bool, error)
	// NotifyWebhooks sets the function the store calls after committing
	// events (the sender's wake-up); nil for none.
	NotifyWebhooks(f func())
}

// SessionEventData is interaction.started's data: the session a POS opened
// when its customer checked in (docs/api.md §19.2).
type SessionEventData struct {
	SessionID   string    `json:"sessionId"`
	POSSystemID string    `json:"posSystemId"`
	CompanyID   string    `json:"posCompanyId"`
	LocationID  string    `json:"posLocationId"`
	TerminalID  string    `json:"terminalId"`
	CreatedAt   time.Time `json:"createdAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// SessionEvent is the interaction.started event of s.
func SessionEvent(s *Session) *Event {
	return &Event{Type: EventInteractionStarted, POSSystemID: s.POSSystemID, CompanyID: s.CompanyID, Time: s.CreatedAt,
		Data: SessionEventData{SessionID: s.ID, POSSystemID: s.POSSystemID, CompanyID: s.CompanyID, LocationID: s.LocationID,
			TerminalID: s.TerminalID, CreatedAt: Timestamp(s.CreatedAt), ExpiresAt: Timestamp(s.ExpiresAt)}}
}

// TransactionEventData is transaction.recorded's and
// transaction.refunded's data: the transaction and what it did.
type TransactionEventData struct {
	ID                    string              `json:"id"`
	TransactionID         string              `json:"transactionId"`
	POSSystemID           string              `json:"posSystemId"`
	CompanyID             string              `json:"posCompanyId"`
	LocationID            string              `json:"posLocationId"`
	TerminalID            string              `json:"terminalId"`
	SessionID             string              `json:"sessionId"`
	TransactionType       TransactionType     `json:"transactionType"`
	TransactionAmount     Amount              `json:"transactionAmount"`
	TransactionDate       time.Time           `json:"transactionDate"`
	OriginalTransactionID string              `json:"originalTransactionId"`
	Loyalty               *TransactionLoyalty `json:"loyalty"`
	Coupons               []TransactionCoupon `json:"coupons"`
	// Settlement is the answer's (docs/api.md §13.9): left out when the
	// answer has none.
	Settlement *TransactionSettlement `json:"settlement,omitempty"`
}

// CouponEventData is coupon.redeemed's and coupon.issued's data.
type CouponEventData struct {
	Code        string `json:"code"`
	POSSystemID string `json:"posSystemId"`
	CompanyID   string `json:"posCompanyId"`
	// LocationID and TransactionID are where and by which transaction
	// (the POS's id) a coupon was redeemed; "" for an issue.
	LocationID    string `json:"posLocationId"`
	TransactionID string `json:"transactionId"`
	// UserID is the coupon's owner, "" for none.
	UserID string    `json:"userId"`
	At     time.Time `json:"at"`
}

// BalanceEventData is loyalty.balance_changed's data: the new balances,
// the change, and the user's sequence number of balance changes (1, 2, …),
// assigned in the transaction of the change.
type BalanceEventData struct {
	POSSystemID   string `json:"posSystemId"`
	CompanyID     string `json:"posCompanyId"`
	UserID        string `json:"userId"`
	Points        int32  `json:"points"`
	Stamps        int32  `json:"stamps"`
	PointsDelta   int32  `json:"pointsDelta"`
	StampsDelta   int32  `json:"stampsDelta"`
	Sequence      int64  `json:"sequence"`
	TransactionID string `json:"transactionId"`
}

// ImportEventData is promotions.imported's and catalogue.imported's data:
// what an import stored (Kind: promotions, products or productCategories).
type ImportEventData struct {
	POSSystemID string `json:"posSystemId"`
	CompanyID   string `json:"posCompanyId"`
	Kind        string `json:"kind"`
	Count       int    `json:"count"`
}

// ImportEvent is the event of an import that stored count items of kind
// (promotions: promotions.imported; products or productCategories:
// catalogue.imported).
func ImportEvent(posSystemID, companyID, kind string, count int, at time.Time) *Event {
	typ := EventCatalogueImported
	if kind == "promotions" {
		typ = EventPromotionsImported
	}
	return &Event{Type: typ, POSSystemID: posSystemID, CompanyID: companyID, Time: at,
		Data: ImportEventData{POSSystemID: posSystemID, CompanyID: companyID, Kind: kind, Count: count}}
}

// CouponIssuedEvent is the event of a coupon created Issued (by an
// operator or an import).
func CouponIssuedEvent(c *Coupon, at time.Time) *Event {
	return &Event{Type: EventCouponIssued, POSSystemID: c.POSSystemID, CompanyID: c.CompanyID, UserID: c.UserID, Time: at,
		Data: CouponEventData{Code: c.Code, POSSystemID: c.POSSystemID, CompanyID: c.CompanyID, UserID: c.UserID, At: at.UTC()}}
}

// BalanceAdjustedEvent is the event of an operator's change to u's
// balances by points and stamps (u holds the new ones): as a sale's, with
// no transaction.
func BalanceAdjustedEvent(u *LoyaltyUser, points, stamps int32, seq int64, at time.Time) *Event {
	return &Event{Type: EventLoyaltyBalanceChanged, POSSystemID: u.POSSystemID, CompanyID: u.CompanyID, UserID: u.ID, Time: at,
		Data: BalanceEventData{POSSystemID: u.POSSystemID, CompanyID: u.CompanyID, UserID: u.ID, Points: u.Points, Stamps: u.Stamps,
			PointsDelta: points, StampsDelta: stamps, Sequence: seq}}
}
