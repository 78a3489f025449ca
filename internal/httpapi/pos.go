package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
)

// startInteractionRequest is StartInteractionDto (interface.md §2.8). Unknown
// properties are ignored, but names are case-sensitive: the guide's
// "terminalID" is not "terminalId".
type startInteractionRequest struct {
	TerminalID    *string `json:"terminalId"`
	PosLocationID *string `json:"posLocationId"`
}

// Validate requires both ids, non-empty.
func (q *startInteractionRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "terminalId", q.TerminalID)
	required(v, "posLocationId", q.PosLocationID)
	return v.Err()
}

func required(v posgate.ValidationError, field string, s *string) {
	if s == nil || *s == "" {
		v.Add(field, "The "+field+" field is required.")
	}
}

type startInteractionResult struct {
	TerminalID    string            `json:"terminalId"`
	PosLocationID string            `json:"posLocationId"`
	SessionID     *string           `json:"sessionId"`
	PosStatus     posgate.PosStatus `json:"posStatus"`
}

// startInteraction is endpoint 1: a session for a registered, active
// terminal; Disabled and no session where the company, location or terminal
// is disabled or the company's transactions feature is off (contract.md §4).
func (s *Server) startInteraction(r *http.Request, req *startInteractionRequest) (int, any, error) {
	ctx := r.Context()
	posSystemID := r.PathValue("posSystemId")
	loc, term, status, err := s.findTerminal(ctx, posSystemID, *req.PosLocationID, *req.TerminalID, posgate.FeatureTransactions)
	if err != nil {
		return 0, nil, err
	}
	out := startInteractionResult{TerminalID: term.ID, PosLocationID: loc.ID, PosStatus: posgate.PosDisabled}
	if status == posgate.PosAccepted {
		now := s.now()
		sess := &posgate.Session{
			ID:          uuid.NewString(),
			POSSystemID: posSystemID,
			CompanyID:   loc.CompanyID,
			LocationID:  loc.ID,
			TerminalID:  term.ID,
			CreatedAt:   now,
			ExpiresAt:   now.Add(s.cfg.SessionTTL),
		}
		if err := s.store.CreateSession(ctx, sess); err != nil {
			return 0, nil, err
		}
		out.SessionID = &sess.ID
		out.PosStatus = posgate.PosAccepted
	}
	return http.StatusOK, envelope{out}, nil
}

// findLocation finds a location the caller may see; a location of a company
// the client is restricted away from is as absent as an unknown one.
func (s *Server) findLocation(ctx context.Context, posSystemID, locationID string) (*posgate.Location, error) {
	loc, err := s.store.FindLocation(ctx, posSystemID, locationID)
	if err == nil && !canSee(principal(ctx), loc.CompanyID) {
		err = posgate.ErrNotFound
	}
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, posgate.Errorf(posgate.ENOTFOUND, "Location '%s' is not registered.", locationID)
	}
	return loc, err
}

// findTerminal finds a terminal at a location the caller may see (404s
// that name what is missing) and the place's status for feature f:
// Accepted only when company, location and terminal are active and f is on.
func (s *Server) findTerminal(ctx context.Context, posSystemID, locationID, terminalID string, f posgate.Feature) (*posgate.Location, *posgate.Terminal, posgate.PosStatus, error) {
	loc, err := s.findLocation(ctx, posSystemID, locationID)
	if err != nil {
		return nil, nil, "", err
	}
	term, err := s.store.FindTerminal(ctx, posSystemID, loc.ID, terminalID)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, nil, "", posgate.Errorf(posgate.ENOTFOUND, "Terminal '%s' is not registered at location '%s'.", terminalID, loc.ID)
	} else if err != nil {
		return nil, nil, "", err
	}
	status := placeStatus(loc, f)
	if term.Status != posgate.StatusActive {
		status = posgate.PosDisabled
	}
	return loc, term, status, nil
}

// placeStatus is the posStatus of a location for a feature, before anything
// feature-specific (contract.md §4): Disabled when the company or location is
// disabled or the feature is off, else Accepted.
func placeStatus(loc *posgate.Location, f posgate.Feature) posgate.PosStatus {
	c := loc.Company
	if c == nil || c.Status != posgate.StatusActive || loc.Status != posgate.StatusActive || !c.Features.Enabled(f) {
		return posgate.PosDisabled
	}
	return posgate.PosAccepted
}
