package service

import (
	"context"
	"slices"

	"github.com/posgate/posgate"
)

// Messages of refused principals. The HTTP adapter checks the same rules
// before it reads a request body (AuthorizePOS, AuthorizeOperator), so these
// are what a client sees.
const (
	msgNoPrincipal        = "This operation needs an authenticated caller."
	msgPOSScope           = "The access token lacks the scope this operation needs (" + posgate.ScopePOSIntegration + " or " + posgate.ScopeServiceAPI + ")."
	msgAdminScope         = "The access token lacks the scope this operation needs (" + posgate.ScopeAdmin + ")."
	msgOtherPOS           = "The access token belongs to POS system '%s'; this path is of POS system '%s'."
	msgInstallation       = "This operation acts on the whole installation; your access is limited to some POS systems, companies or locations."
	msgCompanyRestricted  = "Your access is limited to some companies: you cannot register other companies."
	msgLocationRestricted = "Your access is limited to some locations: you cannot register companies."
)

// AuthorizePOS reports whether p may call the POS API of a POS system: a
// token with a POS scope, bound to that POS system (docs/api.md §3.6). Every
// POS use case checks it itself; the HTTP adapter also calls it before
// reading a body, so that a request that cannot succeed is not read.
func (s *Service) AuthorizePOS(p *posgate.Principal, posSystemID string) error {
	switch {
	case p == nil:
		return posgate.Errorf(posgate.EUNAUTHORIZED, msgNoPrincipal)
	case !p.HasScope(posgate.ScopePOSIntegration) && !p.HasScope(posgate.ScopeServiceAPI):
		return posgate.Errorf(posgate.EFORBIDDEN, msgPOSScope)
	case !p.CanSeePOSSystem(posSystemID):
		// An admin person's token (docs/api.md §21.1) names no POS system
		// and reaches all; a client with a POS scope is always bound to one
		// (Client.Validate).
		return posgate.Errorf(posgate.EFORBIDDEN, msgOtherPOS, p.POSSystemID, posSystemID)
	}
	return nil
}

// AuthorizeOperator reports whether p may use the operator API at all: a
// token with the admin scope. What it may see there is narrowed further by
// its POS system and companies (operatorCompany, installation).
func (s *Service) AuthorizeOperator(p *posgate.Principal) error {
	switch {
	case p == nil:
		return posgate.Errorf(posgate.EUNAUTHORIZED, msgNoPrincipal)
	case !p.HasScope(posgate.ScopeAdmin):
		return posgate.Errorf(posgate.EFORBIDDEN, msgAdminScope)
	}
	return nil
}

// AuthorizeRecordings lets an operator bound to no POS system or company
// read and clear a demo server's recordings of its POS clients' calls
// (docs/api.md §20.3), which the HTTP layer keeps itself.
func (s *Service) AuthorizeRecordings(_ context.Context, p *posgate.Principal) error {
	return s.installation(p)
}

// installation is the check of the operator routes that act on the whole
// installation (POS systems, API clients, signing keys): only an
// unrestricted operator may use them.
func (s *Service) installation(p *posgate.Principal) error {
	if err := s.AuthorizeOperator(p); err != nil {
		return err
	}
	if !p.Unrestricted() {
		return posgate.Errorf(posgate.EFORBIDDEN, msgInstallation)
	}
	return nil
}

// companyNotFound is the answer for a company that is absent or hidden
// from the caller: the two must not be told apart (docs/api.md §3.7).
func companyNotFound(companyID string) error {
	return posgate.NotFound("company", companyID)
}

// posSystemNotFound is the answer for a POS system that is absent or
// hidden from the caller.
func posSystemNotFound(posSystemID string) error {
	return posgate.NotFound("POS system", posSystemID)
}

// operatorPOSSystem checks that p may act as an operator on a POS system
// and that it exists.
func (s *Service) operatorPOSSystem(ctx context.Context, p *posgate.Principal, posSystemID string) (*posgate.POSSystem, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	if !p.CanSeePOSSystem(posSystemID) {
		return nil, posSystemNotFound(posSystemID)
	}
	return s.store.FindPOSSystem(ctx, posSystemID)
}

// operatorCompany checks that p may act as an operator on a company and
// returns it; a company p is restricted away from is as absent as an
// unknown one.
func (s *Service) operatorCompany(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) (*posgate.Company, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	// The store is read for a hidden company too, so that it takes the time
	// an unknown one takes.
	c, err := s.store.FindCompany(ctx, posSystemID, companyID)
	if (err == nil || posgate.ErrorCode(err) == posgate.ENOTFOUND) && !p.CanSeeCompany(posSystemID, companyID) {
		return nil, companyNotFound(companyID)
	}
	return c, err
}

// operatorLocation checks that p may act as an operator on a location (that
// is, on its company) and returns it.
func (s *Service) operatorLocation(ctx context.Context, p *posgate.Principal, posSystemID, locationID string) (*posgate.Location, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	if !p.CanSeePOSSystem(posSystemID) {
		return nil, posgate.NotFound("location", locationID)
	}
	loc, err := s.store.FindLocation(ctx, posSystemID, locationID)
	if err == nil && !p.CanSeeLocation(posSystemID, loc.CompanyID, loc.ID) {
		return nil, posgate.NotFound("location", locationID)
	}
	return loc, err
}

// posLocation finds a location for a POS use case: p must be allowed the
// POS system, and a location of a company p is restricted away from is as
// absent as an unknown one.
func (s *Service) posLocation(ctx context.Context, p *posgate.Principal, posSystemID, locationID string) (*posgate.Location, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if len(p.LocationIDs) > 0 && !slices.Contains(p.LocationIDs, locationID) {
		// Hidden or unknown, answered alike and after the store read an
		// unknown id costs ("/" is never part of an id, so the read finds
		// nothing and no cache answers it).
		if _, err := s.store.FindLocation(ctx, posSystemID, locationID+"/"); err != nil && posgate.ErrorCode(err) != posgate.ENOTFOUND {
			return nil, err
		}
		return nil, posgate.Errorf(posgate.ENOTFOUND, "Location '%s' is not registered.", locationID)
	}
	var loc *posgate.Location
	var err error
	if vf, ok := s.store.(visibleLocationFinder); ok && len(p.CompanyIDs) > 0 {
		loc, err = vf.FindVisibleLocation(ctx, posSystemID, locationID, p.CompanyIDs)
	} else {
		loc, err = s.store.FindLocation(ctx, posSystemID, locationID)
	}
	if err == nil && !p.CanSeeLocation(posSystemID, loc.CompanyID, loc.ID) {
		err = posgate.ErrNotFound
	}
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, posgate.Errorf(posgate.ENOTFOUND, "Location '%s' is not registered.", locationID)
	}
	return loc, err
}

// visibleLocationFinder is implemented by a store with a lookup cache
// (internal/storecache). A cache answers a found location from memory but
// an absent one from the store, so a location hidden from a restricted
// client would answer faster than an unknown one: a timing oracle. Its
// FindVisibleLocation reads the store for a hidden location too, so that
// both take the same store call (docs/api.md §3.7). Without a cache,
// FindLocation already reads the store for both.
type visibleLocationFinder interface {
	FindVisibleLocation(ctx context.Context, posSystemID, locationID string, companyIDs []string) (*posgate.Location, error)
}

// posTerminal finds a terminal at a location p may see (404s that name what
// is missing) and the place's posStatus for feature f.
func (s *Service) posTerminal(ctx context.Context, p *posgate.Principal, posSystemID, locationID, terminalID string, f posgate.Feature) (*posgate.Location, *posgate.Terminal, posgate.PosStatus, error) {
	loc, err := s.posLocation(ctx, p, posSystemID, locationID)
	if err != nil {
		return nil, nil, "", err
	}
	term, err := s.store.FindTerminal(ctx, posSystemID, loc.ID, terminalID)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, nil, "", posgate.Errorf(posgate.ENOTFOUND, "Terminal '%s' is not registered at location '%s'.", terminalID, loc.ID)
	} else if err != nil {
		return nil, nil, "", err
	}
	return loc, term, terminalStatus(loc, term, f), nil
}

// activeStatus is the posStatus of a place before any feature switch
// (docs/api.md §1.5): Disabled when the company, the location or the
// terminal (when not nil) is disabled, else Accepted. Every posStatus of a
// place is decided here.
func activeStatus(loc *posgate.Location, term *posgate.Terminal) posgate.PosStatus {
	c := loc.Company
	if c == nil || c.Status != posgate.StatusActive || loc.Status != posgate.StatusActive || (term != nil && term.Status != posgate.StatusActive) {
		return posgate.PosDisabled
	}
	return posgate.PosAccepted
}

// placeStatus is the posStatus of a location for a feature before anything
// feature-specific (docs/api.md §1.5): activeStatus, and Disabled when the
// feature is off for the company.
func placeStatus(loc *posgate.Location, f posgate.Feature) posgate.PosStatus {
	return terminalStatus(loc, nil, f)
}

// terminalStatus is placeStatus with the terminal's own status (nil: none):
// a disabled terminal is Disabled too.
func terminalStatus(loc *posgate.Location, term *posgate.Terminal, f posgate.Feature) posgate.PosStatus {
	if activeStatus(loc, term) != posgate.PosAccepted || !loc.Company.Features.Enabled(f) {
		return posgate.PosDisabled
	}
	return posgate.PosAccepted
}
