package service

import (
	"context"

	"github.com/posgate/posgate"
)

// StartInteractionRequest is StartInteractionDto (docs/api.md §4.1).
// Unknown properties are ignored, but names are case-sensitive: the
// integration guide's "terminalID" is not "terminalId".
type StartInteractionRequest struct {
	TerminalID    *string `json:"terminalId"`
	PosLocationID *string `json:"posLocationId"`
	// Loyalty is posgate's addition: the session's customer, whose coupons
	// issued while the session is open reach the terminal's channel
	// (docs/api.md §25.3).
	Loyalty *EvaluateLoyalty `json:"loyalty"`
}

// Validate requires both ids, non-empty, and a customer's card number, when
// given, that is an id.
func (q *StartInteractionRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "terminalId", q.TerminalID)
	required(v, "posLocationId", q.PosLocationID)
	if card := q.customer(); card != "" && !posgate.ValidKey(card) {
		v.Add("loyalty.cardNumber", posgate.KeyMessage("loyalty.cardNumber"))
	}
	return v.Err()
}

// customer is the card number the request names, "" for none.
func (q *StartInteractionRequest) customer() string {
	if q.Loyalty == nil {
		return ""
	}
	return value(q.Loyalty.CardNumber)
}

// Interaction is startInteraction's answer: the session id is null when the
// place is Disabled.
type Interaction struct {
	TerminalID    string            `json:"terminalId"`
	PosLocationID string            `json:"posLocationId"`
	SessionID     *string           `json:"sessionId"`
	PosStatus     posgate.PosStatus `json:"posStatus"`
}

// StartInteraction starts a customer interaction at a registered terminal:
// a new session when company, location and terminal are active and the
// company's transactions feature is on, else posStatus Disabled and no
// session. An unknown (or hidden) location or terminal is ENOTFOUND.
func (s *Service) StartInteraction(ctx context.Context, p *posgate.Principal, posSystemID string, req *StartInteractionRequest) (*Interaction, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	loc, term, status, err := s.posTerminal(ctx, p, posSystemID, *req.PosLocationID, *req.TerminalID, posgate.FeatureTransactions)
	if err != nil {
		return nil, err
	}
	out := &Interaction{TerminalID: term.ID, PosLocationID: loc.ID, PosStatus: posgate.PosDisabled}
	if status != posgate.PosAccepted {
		return out, nil
	}
	now := s.now()
	sess := &posgate.Session{
		ID:          newTimeOrderedUUID(),
		POSSystemID: posSystemID,
		CompanyID:   loc.CompanyID,
		LocationID:  loc.ID,
		TerminalID:  term.ID,
		CreatedAt:   now,
		ExpiresAt:   now.Add(s.cfg.SessionTTL),
	}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return nil, err
	}
	if card := req.customer(); card != "" {
		if err := s.store.SetTerminalCustomer(ctx, &posgate.TerminalCustomer{POSSystemID: posSystemID, LocationID: loc.ID,
			TerminalID: term.ID, SessionID: sess.ID, UserID: card, ExpiresAt: sess.ExpiresAt}); err != nil {
			return nil, err
		}
	}
	out.SessionID, out.PosStatus = &sess.ID, posgate.PosAccepted
	return out, nil
}

// required records a message for a string field that is absent or empty.
func required(v posgate.ValidationError, field string, s *string) {
	if s == nil || *s == "" {
		v.Add(field, "The "+field+" field is required.")
	}
}
