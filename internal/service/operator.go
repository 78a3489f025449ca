package service

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// The operator's tenancy use cases (docs/api.md §10): POS systems,
// companies, locations, terminals and sessions. What an operator principal
// reaches is narrowed by its POS system and companies: anything beyond
// answers as if absent (404, lists filtered), except the installation-wide
// POS system creation, which a restricted principal is refused (403).

// FeaturePatch names feature switches to change; nil leaves one as it is.
// The operator API's company bodies and the CLI's --enable/--disable lists
// both become one, so that a switch not named is never reset by accident.
type FeaturePatch struct {
	Coupons          *bool `json:"coupons"`
	ReceiptPromotion *bool `json:"receiptPromotion"`
	Carousel         *bool `json:"carousel"`
	PromotionImport  *bool `json:"promotionImport"`
	Transactions     *bool `json:"transactions"`
	ProductsImport   *bool `json:"productsImport"`
}

// Apply returns f with the patch's switches applied; a nil patch changes
// nothing, so that an absent "features" property is harmless.
func (p *FeaturePatch) Apply(f posgate.Features) posgate.Features {
	if p == nil {
		return f
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&f.Coupons, p.Coupons)
	set(&f.ReceiptPromotion, p.ReceiptPromotion)
	set(&f.Carousel, p.Carousel)
	set(&f.PromotionImport, p.PromotionImport)
	set(&f.Transactions, p.Transactions)
	set(&f.ProductsImport, p.ProductsImport)
	return f
}

// Set records that feature name is to be switched on or off; an unknown
// name is the domain's error, which names the known features.
func (p *FeaturePatch) Set(name posgate.Feature, on bool) error {
	var dst **bool
	switch name {
	case posgate.FeatureCoupons:
		dst = &p.Coupons
	case posgate.FeatureReceiptPromotion:
		dst = &p.ReceiptPromotion
	case posgate.FeatureCarousel:
		dst = &p.Carousel
	case posgate.FeaturePromotionImport:
		dst = &p.PromotionImport
	case posgate.FeatureTransactions:
		dst = &p.Transactions
	case posgate.FeatureProductsImport:
		dst = &p.ProductsImport
	default:
		var f posgate.Features
		return f.Set(name, on)
	}
	*dst = &on
	return nil
}

// FeaturesPatch returns the patch that sets every switch as f has it, for a
// caller that states the whole set (the CLI's --features list).
func FeaturesPatch(f posgate.Features) *FeaturePatch {
	p := &FeaturePatch{}
	for _, name := range posgate.AllFeatures {
		p.Set(name, f.Enabled(name))
	}
	return p
}

// CreatePOSSystemRequest is a new POS system.
type CreatePOSSystemRequest struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// CreatePOSSystem registers a POS system. It acts on the whole
// installation, so a principal restricted to some POS systems or companies
// is refused (EFORBIDDEN).
func (s *Service) CreatePOSSystem(ctx context.Context, p *posgate.Principal, req *CreatePOSSystemRequest) (*posgate.POSSystem, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	ps := &posgate.POSSystem{ID: req.ID, Name: req.Name}
	if err := ps.Validate(); err != nil {
		return nil, err
	}
	err := s.audited(ctx, p, "pos-system.create", func(ctx context.Context, c *change) error {
		c.target = posgate.AuditTarget{Type: "pos-system", ID: ps.ID, POSSystemID: ps.ID}
		c.after = ps
		return s.store.CreatePOSSystem(ctx, ps)
	})
	if err != nil {
		return nil, err
	}
	return ps, nil
}

// ListPOSSystems lists the POS systems p reaches: all of them, or only its
// own for a principal bound to one.
func (s *Service) ListPOSSystems(ctx context.Context, p *posgate.Principal) ([]*posgate.POSSystem, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	all, err := s.store.ListPOSSystems(ctx)
	if err != nil {
		return nil, err
	}
	return visible(all, func(ps *posgate.POSSystem) bool { return p.CanSeePOSSystem(ps.ID) }), nil
}

// FindPOSSystem returns a POS system p reaches; another is as absent as an
// unknown one.
func (s *Service) FindPOSSystem(ctx context.Context, p *posgate.Principal, posSystemID string) (*posgate.POSSystem, error) {
	return s.operatorPOSSystem(ctx, p, posSystemID)
}

// CreateCompanyRequest is a new company; status defaults to Active and
// every feature switch the request does not name is on.
type CreateCompanyRequest struct {
	ID       string          `json:"posCompanyId"`
	Name     string          `json:"name"`
	Status   *posgate.Status `json:"status"`
	Features *FeaturePatch   `json:"features"`
	// TimeZone is the IANA zone of its locations without one; "" for none.
	TimeZone string `json:"timeZone"`
}

// MayRegisterCompanies reports whether p's restrictions let it register
// companies (CreateCompany's checks): not when restricted to some
// companies or locations.
func MayRegisterCompanies(p *posgate.Principal) bool {
	return p != nil && len(p.LocationIDs) == 0 && len(p.CompanyIDs) == 0
}

// CreateCompany registers a company under a POS system p reaches. A
// principal restricted to some companies may not add others (EFORBIDDEN,
// whether the company exists or not, so nothing is disclosed): a company it
// created would be hidden from it at once.
func (s *Service) CreateCompany(ctx context.Context, p *posgate.Principal, posSystemID string, req *CreateCompanyRequest) (*posgate.Company, error) {
	if _, err := s.operatorPOSSystem(ctx, p, posSystemID); err != nil {
		return nil, err
	}
	if len(p.LocationIDs) > 0 {
		return nil, posgate.Errorf(posgate.EFORBIDDEN, msgLocationRestricted)
	}
	if len(p.CompanyIDs) > 0 {
		return nil, posgate.Errorf(posgate.EFORBIDDEN, msgCompanyRestricted)
	}
	c := &posgate.Company{POSSystemID: posSystemID, ID: req.ID, Name: req.Name, Status: statusOr(req.Status),
		Features: req.Features.Apply(posgate.AllFeaturesOn()), TimeZone: req.TimeZone}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	err := s.audited(ctx, p, "company.create", func(ctx context.Context, ch *change) error {
		ch.target, ch.after = companyTarget("company", c.ID, posSystemID, c.ID), c
		return s.store.CreateCompany(ctx, c)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ListCompanies lists the companies of a POS system that p reaches; an
// unknown (or hidden) POS system is ENOTFOUND rather than an empty list.
func (s *Service) ListCompanies(ctx context.Context, p *posgate.Principal, posSystemID string) ([]*posgate.Company, error) {
	if _, err := s.operatorPOSSystem(ctx, p, posSystemID); err != nil {
		return nil, err
	}
	all, err := s.store.ListCompanies(ctx, posSystemID)
	if err != nil {
		return nil, err
	}
	return visible(all, func(c *posgate.Company) bool { return p.CanSeeCompany(posSystemID, c.ID) }), nil
}

// FindCompany returns a company p reaches.
func (s *Service) FindCompany(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) (*posgate.Company, error) {
	return s.operatorCompany(ctx, p, posSystemID, companyID)
}

// UpdateCompanyRequest changes the fields it names; the feature switches it
// does not name stay as they are.
type UpdateCompanyRequest struct {
	Name     *string         `json:"name"`
	Status   *posgate.Status `json:"status"`
	Features *FeaturePatch   `json:"features"`
	// TimeZone sets the company's zone; "" removes it.
	TimeZone *string `json:"timeZone"`
}

// Validate checks the status and the time zone, the fields with a closed
// set of values.
func (q *UpdateCompanyRequest) Validate() error { return validStatusZone(q.Status, q.TimeZone) }

// UpdateCompany changes a company p reaches.
func (s *Service) UpdateCompany(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *UpdateCompanyRequest) (*posgate.Company, error) {
	c, err := s.operatorCompany(ctx, p, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var out *posgate.Company
	err = s.audited(ctx, p, "company.update", func(ctx context.Context, ch *change) error {
		// The company as this transaction finds it: its switches are the
		// base of the patch, and the entry's "before".
		if c, err = s.store.FindCompany(ctx, posSystemID, companyID); err != nil {
			return err
		}
		upd := posgate.CompanyUpdate{Name: req.Name, Status: req.Status, TimeZone: req.TimeZone}
		if req.Features != nil {
			f := req.Features.Apply(c.Features)
			upd.Features = &f
		}
		ch.target, ch.before = companyTarget("company", companyID, posSystemID, companyID), c
		out, err = s.store.UpdateCompany(ctx, posSystemID, companyID, upd)
		ch.after = out
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreateLocationRequest is a new location of a company; status defaults to
// Active.
type CreateLocationRequest struct {
	ID        string          `json:"posLocationId"`
	CompanyID string          `json:"posCompanyId"`
	Name      string          `json:"name"`
	Status    *posgate.Status `json:"status"`
	// TimeZone is the IANA zone of the location's local time; "" for its
	// company's.
	TimeZone string `json:"timeZone"`
}

// CreateLocation registers a location of a company p reaches. The company
// comes from the body, so it is checked after the body: a hidden company is
// as absent as an unknown one.
func (s *Service) CreateLocation(ctx context.Context, p *posgate.Principal, posSystemID string, req *CreateLocationRequest) (*posgate.Location, error) {
	if _, err := s.operatorPOSSystem(ctx, p, posSystemID); err != nil {
		return nil, err
	}
	l := &posgate.Location{POSSystemID: posSystemID, ID: req.ID, CompanyID: req.CompanyID, Name: req.Name, Status: statusOr(req.Status),
		TimeZone: req.TimeZone}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if _, err := s.operatorCompany(ctx, p, posSystemID, l.CompanyID); err != nil {
		return nil, err
	}
	err := s.audited(ctx, p, "location.create", func(ctx context.Context, c *change) error {
		c.target, c.after = locationTarget("location", l.ID, posSystemID, l.CompanyID, l.ID), l
		return s.store.CreateLocation(ctx, l)
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// ListLocations lists the locations of a POS system p reaches, of one
// company when companyID is not empty; locations of hidden companies are
// left out, as those of unknown ones are.
func (s *Service) ListLocations(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) ([]*posgate.Location, error) {
	if _, err := s.operatorPOSSystem(ctx, p, posSystemID); err != nil {
		return nil, err
	}
	all, err := s.store.ListLocations(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	return visible(all, func(l *posgate.Location) bool { return p.CanSeeLocation(posSystemID, l.CompanyID, l.ID) }), nil
}

// FindLocation returns a location of a company p reaches.
func (s *Service) FindLocation(ctx context.Context, p *posgate.Principal, posSystemID, locationID string) (*posgate.Location, error) {
	return s.operatorLocation(ctx, p, posSystemID, locationID)
}

// UpdateLocationRequest changes the fields it names.
type UpdateLocationRequest struct {
	Name   *string         `json:"name"`
	Status *posgate.Status `json:"status"`
	// TimeZone sets the location's zone; "" removes it (its company's
	// applies again).
	TimeZone *string `json:"timeZone"`
}

// Validate checks the status and the time zone, the fields with a closed
// set of values.
func (q *UpdateLocationRequest) Validate() error { return validStatusZone(q.Status, q.TimeZone) }

// UpdateLocation changes a location p reaches (the CLI's enable and
// disable too).
func (s *Service) UpdateLocation(ctx context.Context, p *posgate.Principal, posSystemID, locationID string, req *UpdateLocationRequest) (*posgate.Location, error) {
	if _, err := s.operatorLocation(ctx, p, posSystemID, locationID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var out *posgate.Location
	err := s.audited(ctx, p, "location.update", func(ctx context.Context, c *change) error {
		before, err := s.store.FindLocation(ctx, posSystemID, locationID)
		if err != nil {
			return err
		}
		c.target, c.before = locationTarget("location", locationID, posSystemID, before.CompanyID, locationID), before
		out, err = s.store.UpdateLocation(ctx, posSystemID, locationID, posgate.LocationUpdate{Name: req.Name, Status: req.Status, TimeZone: req.TimeZone})
		c.after = out
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreateTerminalRequest is a new terminal; status defaults to Active.
type CreateTerminalRequest struct {
	ID     string          `json:"terminalId"`
	Name   string          `json:"name"`
	Status *posgate.Status `json:"status"`
}

// CreateTerminal registers a terminal at a location p reaches.
func (s *Service) CreateTerminal(ctx context.Context, p *posgate.Principal, posSystemID, locationID string, req *CreateTerminalRequest) (*posgate.Terminal, error) {
	loc, err := s.operatorLocation(ctx, p, posSystemID, locationID)
	if err != nil {
		return nil, err
	}
	t := &posgate.Terminal{POSSystemID: posSystemID, LocationID: locationID, ID: req.ID, Name: req.Name, Status: statusOr(req.Status)}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	err = s.audited(ctx, p, "terminal.create", func(ctx context.Context, c *change) error {
		c.target, c.after = locationTarget("terminal", locationID+"/"+t.ID, posSystemID, loc.CompanyID, locationID), t
		return s.store.CreateTerminal(ctx, t)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ListTerminals lists the terminals of a location p reaches (an unknown or
// hidden location is ENOTFOUND, not an empty list); with locationID empty,
// those of every location of the POS system p reaches.
func (s *Service) ListTerminals(ctx context.Context, p *posgate.Principal, posSystemID, locationID string) ([]*posgate.Terminal, error) {
	if locationID != "" {
		if _, err := s.operatorLocation(ctx, p, posSystemID, locationID); err != nil {
			return nil, err
		}
		return s.store.ListTerminals(ctx, posSystemID, locationID)
	}
	locations, err := s.ListLocations(ctx, p, posSystemID, "")
	if err != nil {
		return nil, err
	}
	reach := make(map[string]bool, len(locations))
	for _, l := range locations {
		reach[l.ID] = true
	}
	all, err := s.store.ListTerminals(ctx, posSystemID, "")
	if err != nil {
		return nil, err
	}
	return visible(all, func(t *posgate.Terminal) bool { return reach[t.LocationID] }), nil
}

// FindTerminal returns a terminal at a location p reaches.
func (s *Service) FindTerminal(ctx context.Context, p *posgate.Principal, posSystemID, locationID, terminalID string) (*posgate.Terminal, error) {
	if _, err := s.operatorLocation(ctx, p, posSystemID, locationID); err != nil {
		return nil, err
	}
	return s.store.FindTerminal(ctx, posSystemID, locationID, terminalID)
}

// SetTerminalStatus enables or disables a terminal at a location p
// reaches; a disabled terminal answers Disabled to the POS at once.
func (s *Service) SetTerminalStatus(ctx context.Context, p *posgate.Principal, posSystemID, locationID, terminalID string, status posgate.Status) (*posgate.Terminal, error) {
	loc, err := s.operatorLocation(ctx, p, posSystemID, locationID)
	if err != nil {
		return nil, err
	}
	if err := validStatus(&status); err != nil {
		return nil, err
	}
	action := "terminal.enable"
	if status == posgate.StatusDisabled {
		action = "terminal.disable"
	}
	var out *posgate.Terminal
	err = s.audited(ctx, p, action, func(ctx context.Context, c *change) error {
		before, err := s.store.FindTerminal(ctx, posSystemID, locationID, terminalID)
		if err != nil {
			return err
		}
		c.target, c.before = locationTarget("terminal", locationID+"/"+terminalID, posSystemID, loc.CompanyID, locationID), before
		out, err = s.store.UpdateTerminal(ctx, posSystemID, locationID, terminalID, posgate.TerminalUpdate{Status: &status})
		c.after = out
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindSession returns a POS session, for support: a session of a company p
// does not reach is as absent as an unknown one.
func (s *Service) FindSession(ctx context.Context, p *posgate.Principal, sessionID string) (*posgate.Session, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	sess, err := s.store.FindSession(ctx, sessionID)
	if err == nil && !p.CanSeeLocation(sess.POSSystemID, sess.CompanyID, sess.LocationID) {
		return nil, posgate.NotFound("session", sessionID)
	}
	return sess, err
}

// statusOr returns *s, or Active when the request left status out.
func statusOr(s *posgate.Status) posgate.Status {
	if s == nil {
		return posgate.StatusActive
	}
	return *s
}

// validStatus refuses a status outside Active and Disabled.
func validStatus(st *posgate.Status) error {
	if st != nil && !st.Valid() {
		return invalid("status", fmt.Sprintf("The status field must be %s or %s.", posgate.StatusActive, posgate.StatusDisabled))
	}
	return nil
}

// validStatusZone checks an update's status and time zone (nil: not
// changed), reporting both when both are wrong.
func validStatusZone(st *posgate.Status, zone *string) error {
	v := posgate.ValidationError{}
	if st != nil && !st.Valid() {
		v.Add("status", fmt.Sprintf("The status field must be %s or %s.", posgate.StatusActive, posgate.StatusDisabled))
	}
	if zone != nil {
		posgate.CheckTimeZone(v, "timeZone", *zone)
	}
	return v.Err()
}

// visible keeps the items p may see, never returning nil, so that an empty
// list encodes as [].
func visible[T any](xs []T, keep func(T) bool) []T {
	out := make([]T, 0, len(xs))
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// randomID returns 16 lower-case base32 characters (80 bits), for the ids
// that operators may leave out.
func randomID() string {
	var b [10]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}

// invalid is a validation error of one field.
func invalid(field, msg string) error {
	v := posgate.ValidationError{}
	v.Add(field, msg)
	return v.Err()
}

// InteractionsPerHour counts the interactions (startInteraction sessions)
// of a company p reaches that began at or after from and before to, by
// UTC hour (the portal's dashboard). Sessions are kept until they expire,
// so it sees back as far as the session TTL (default 24 hours).
func (s *Service) InteractionsPerHour(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, from, to time.Time) (map[time.Time]int, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	return s.store.SessionsPerHour(ctx, posSystemID, companyID, from.UTC(), to.UTC())
}
