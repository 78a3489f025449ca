package posgate

import (
	"slices"
	"time"
)

// Principal is who a request acts for: the API client a verified access
// token names, or the operator at the command line (LocalOperator). Every
// use case of internal/service takes one and refuses to act without it, so
// that access is closed by default (docs/decisions.md, "One place for every
// rule"). A Principal may be shared between requests: treat it as read-only.
type Principal struct {
	ClientID string
	// PersonID names the person a token was issued to through a browser
	// flow (docs/api.md §21); empty for a client acting for itself.
	PersonID string
	Scopes   []string
	// POSSystemID binds the principal to one POS system; empty for an
	// operator that may act on every POS system.
	POSSystemID string
	// CompanyIDs, when not empty, restricts the principal to these companies
	// of its POS system: the others answer as if they did not exist.
	CompanyIDs []string
	// LocationIDs, when not empty, restricts the principal to these
	// locations of its POS system (a location manager): every company-wide
	// object (the companies themselves, their coupons, promotions,
	// catalogue, slides…) is hidden from it, and so are other locations.
	LocationIDs []string
	ExpiresAt   time.Time
}

// HasScope reports whether the principal was granted scope s.
func (p *Principal) HasScope(s string) bool { return p != nil && slices.Contains(p.Scopes, s) }

// CanSeeCompany reports whether the principal may see a company of a POS
// system. A nil principal sees nothing: a caller that forgot to pass one gets
// "absent", never another tenant's data.
func (p *Principal) CanSeeCompany(posSystemID, companyID string) bool {
	if p == nil || (p.POSSystemID != "" && p.POSSystemID != posSystemID) || !p.SeesCompanies() {
		return false
	}
	return len(p.CompanyIDs) == 0 || slices.Contains(p.CompanyIDs, companyID)
}

// SeesCompanies reports whether the principal may see companies at all: a
// principal restricted to some locations sees none, nor anything that
// belongs to a company as a whole (coupons, slides, webhooks …).
func (p *Principal) SeesCompanies() bool { return p != nil && len(p.LocationIDs) == 0 }

// CanSeeLocation reports whether the principal may see a location (of
// company companyID) of a POS system: one of its locations for a
// location-restricted principal, else any location of a company it sees.
func (p *Principal) CanSeeLocation(posSystemID, companyID, locationID string) bool {
	if p == nil || (p.POSSystemID != "" && p.POSSystemID != posSystemID) {
		return false
	}
	if len(p.LocationIDs) > 0 {
		return slices.Contains(p.LocationIDs, locationID)
	}
	return p.CanSeeCompany(posSystemID, companyID)
}

// CanSeePOSSystem reports whether the principal may see a POS system at all.
func (p *Principal) CanSeePOSSystem(posSystemID string) bool {
	return p != nil && (p.POSSystemID == "" || p.POSSystemID == posSystemID)
}

// Unrestricted reports whether the principal reaches every POS system and
// company, as the operator routes that act on the whole installation
// (POS systems, API clients, signing keys) require.
func (p *Principal) Unrestricted() bool {
	return p != nil && p.POSSystemID == "" && len(p.CompanyIDs) == 0 && len(p.LocationIDs) == 0
}

// LocalOperator is the principal of posgate's command line: whoever can open
// the database file or URL already holds every right over it, so the CLI
// acts as an unrestricted operator through the same use cases as the
// operator API.
func LocalOperator() *Principal {
	return &Principal{ClientID: localOperatorClientID, Scopes: []string{ScopeAdmin}}
}

// localOperatorClientID is LocalOperator's client id, by which the audit
// log tells the command line's operator from an API client (ActorOf).
const localOperatorClientID = "posgate-cli"
