// Package storecache keeps the tenancy lookups of the hot paths in memory
// for a short time: every startInteraction (and every other POS route) reads
// a location with its company and a terminal, every token request reads a
// client, and every coupon search without a location lists the POS system's
// companies, although these change rarely. The POS reads of a company's
// configuration are cached the same way: the carousel settings (every
// carousel request), the effective receipt promotion (every receipt),
// whether it has an enabled webhook endpoint (every settings lookup); and
// a company's active coupons, which every active coupon list filters by
// location (emptied by every coupon write through the cache). The
// company itself is not cached: the operator routes read it for a company
// the caller may not see too, so that a hidden company takes the time an
// unknown one takes (internal/service, operatorCompany), which a cached
// company would undo. It wraps a posgate.Store; every other method passes straight
// through.
//
// Correctness rules, in order of importance:
//   - Only found objects are cached, never "not found": a terminal or client
//     that was just created is usable at once (docs/api.md §1.3), on every
//     instance.
//   - A company list is a found answer too, so it can miss a company just
//     created elsewhere for up to the TTL; a company created through this
//     Store empties the cache, so that this instance lists it at once.
//   - So is the absence of a company's carousel template or receipt
//     promotion (the built-in carousel, no promotion): configuration that
//     an operator sets and that, like a change of it, shows within the TTL
//     when set elsewhere, and at once when set through this Store.
//   - Every update made through this Store (the operator API of this
//     instance) empties the cache before it returns, and a lookup that was
//     already in flight when an update happened does not put its (possibly
//     old) answer in the cache: a terminal disabled here answers Disabled
//     at once here.
//   - An update made elsewhere (the CLI, another instance on the same
//     PostgreSQL database) is seen once the cached entry expires: after at
//     most the TTL.
package storecache

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/posgate/posgate"
)

// DefaultTTL is how long a found object is reused; it is also the longest
// that a change made by another process stays unseen.
const DefaultTTL = time.Second

// DefaultMaxEntries bounds each of the tables, so that a fleet of
// many terminals cannot grow the process without bound.
const DefaultMaxEntries = 50_000

// Options tunes New.
type Options struct {
	TTL        time.Duration    // default DefaultTTL
	MaxEntries int              // per table; default DefaultMaxEntries
	Now        func() time.Time // the expiry clock; default time.Now
}

// Store is a posgate.Store whose FindLocation, FindTerminal, FindClient and
// ListCompanies answers, a company's POS configuration and FindPOSCompany's
// answers are cached. It is safe for concurrent use.
type Store struct {
	posgate.Store
	ttl time.Duration
	max int
	now func() time.Time

	mu        sync.RWMutex
	gen       uint64 // bumped by every update; a lookup begun before one may not fill
	locations map[[2]string]entry[posgate.Location]
	terminals map[[3]string]entry[posgate.Terminal]
	clients   map[string]entry[posgate.Client]
	people    map[string]entry[posgate.Person]
	companies map[string]entry[companyList]        // by POS system
	posCos    map[[2]string]entry[posgate.Company] // FindPOSCompany's, by POS system and company
	carousels map[[2]string]entry[maybe[posgate.CarouselSettings]]
	receipts  map[[3]string]entry[maybe[posgate.ReceiptPromotion]] // by POS system, company, location
	webhooked map[[2]string]entry[bool]
	redirects map[string]entry[[]string] // a client's redirect URIs

	active      map[[2]string]*activeSet // by POS system and company
	activeLoads map[[2]string]*activeLoad
	activeGen   uint64 // bumped by every coupon write
	activeCount int    // coupons held by active
}

// companyList is a cached ListCompanies answer.
type companyList struct{ list []*posgate.Company }

type entry[V any] struct {
	v   *V
	exp time.Time
}

// New wraps st.
func New(st posgate.Store, o Options) *Store {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Store{
		Store: st, ttl: o.TTL, max: o.MaxEntries, now: o.Now,
		locations:   map[[2]string]entry[posgate.Location]{},
		terminals:   map[[3]string]entry[posgate.Terminal]{},
		clients:     map[string]entry[posgate.Client]{},
		people:      map[string]entry[posgate.Person]{},
		companies:   map[string]entry[companyList]{},
		posCos:      map[[2]string]entry[posgate.Company]{},
		carousels:   map[[2]string]entry[maybe[posgate.CarouselSettings]]{},
		receipts:    map[[3]string]entry[maybe[posgate.ReceiptPromotion]]{},
		webhooked:   map[[2]string]entry[bool]{},
		redirects:   map[string]entry[[]string]{},
		active:      map[[2]string]*activeSet{},
		activeLoads: map[[2]string]*activeLoad{},
	}
}

// lookup answers from m when it holds a live entry for k, else calls load
// and caches what it found unless an update happened meanwhile. The cached
// value is never handed out: callers get a copy.
func lookup[K comparable, V any](s *Store, m map[K]entry[V], k K, load func() (*V, error), clone func(*V) *V) (*V, error) {
	now := s.now()
	s.mu.RLock()
	e, ok := m[k]
	gen := s.gen
	s.mu.RUnlock()
	if ok && now.Before(e.exp) {
		return clone(e.v), nil
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.gen == gen {
		makeRoom(m, now, 1, s.max)
		m[k] = entry[V]{v: clone(v), exp: now.Add(s.ttl)}
	}
	s.mu.Unlock()
	return v, nil
}

// makeRoom makes room for n entries in m, which holds at most max: it drops
// the entries expired at now and, when that is not enough, all of them.
// The caller holds s.mu.
func makeRoom[K comparable, V any](m map[K]entry[V], now time.Time, n, max int) {
	if len(m)+n <= max {
		return
	}
	for k, e := range m {
		if !now.Before(e.exp) {
			delete(m, k)
		}
	}
	if len(m)+n > max {
		clear(m)
	}
}

// invalidate empties every table and makes lookups in flight skip filling.
func (s *Store) invalidate() {
	s.mu.Lock()
	s.gen++
	clear(s.locations)
	clear(s.terminals)
	clear(s.clients)
	clear(s.people)
	clear(s.companies)
	clear(s.posCos)
	clear(s.carousels)
	clear(s.receipts)
	clear(s.webhooked)
	clear(s.redirects)
	s.activeGen++
	clear(s.active)
	s.activeCount = 0
	s.mu.Unlock()
}

// maybe is a configuration lookup's answer: the value, or the store's
// ENOTFOUND error for its absence.
type maybe[V any] struct {
	v   *V
	err error
}

// lookupMaybe is lookup for a value whose absence is cached too (the
// store's ENOTFOUND error, answered as it was); other errors are not.
func lookupMaybe[K comparable, V any](s *Store, m map[K]entry[maybe[V]], k K, load func() (*V, error)) (*V, error) {
	a, err := lookup(s, m, k, func() (*maybe[V], error) {
		v, err := load()
		if err != nil && !errors.Is(err, posgate.ErrNotFound) {
			return nil, err
		}
		return &maybe[V]{v: v, err: err}, nil
	}, func(a *maybe[V]) *maybe[V] {
		if a.v == nil {
			return a
		}
		return &maybe[V]{v: shallow(a.v)}
	})
	if err != nil {
		return nil, err
	}
	return a.v, a.err
}

// shallow copies a value whose fields hold no slice, map or pointer.
func shallow[V any](v *V) *V {
	c := *v
	return &c
}

func cloneLocation(l *posgate.Location) *posgate.Location {
	c := *l
	if l.Company != nil {
		co := *l.Company
		c.Company = &co
	}
	return &c
}

func cloneTerminal(t *posgate.Terminal) *posgate.Terminal {
	c := *t
	return &c
}

func cloneCompanies(l *companyList) *companyList {
	c := &companyList{list: make([]*posgate.Company, len(l.list))}
	for i, co := range l.list {
		cp := *co
		c.list[i] = &cp
	}
	return c
}

func cloneClient(cl *posgate.Client) *posgate.Client {
	c := *cl
	c.SecretHash = slices.Clone(cl.SecretHash)
	c.Scopes = slices.Clone(cl.Scopes)
	c.CompanyIDs = slices.Clone(cl.CompanyIDs)
	return &c
}

// FindLocation returns the location with its company, cached.
func (s *Store) FindLocation(ctx context.Context, posSystemID, locationID string) (*posgate.Location, error) {
	if inAtomic(ctx) {
		return s.Store.FindLocation(ctx, posSystemID, locationID)
	}
	return lookup(s, s.locations, [2]string{posSystemID, locationID}, func() (*posgate.Location, error) {
		return s.Store.FindLocation(ctx, posSystemID, locationID)
	}, cloneLocation)
}

// FindVisibleLocation is FindLocation for a caller restricted to
// companyIDs, who must not tell a location of another company from an
// absent one, not even by the time the answer takes: a location of another
// company is ENOTFOUND after a read of the store, as an absent one is (an
// absent one is never cached). A visible one is answered from the cache.
func (s *Store) FindVisibleLocation(ctx context.Context, posSystemID, locationID string, companyIDs []string) (*posgate.Location, error) {
	k := [2]string{posSystemID, locationID}
	now := s.now()
	s.mu.RLock()
	e, ok := s.locations[k]
	s.mu.RUnlock()
	if ok && now.Before(e.exp) {
		if slices.Contains(companyIDs, e.v.CompanyID) {
			return cloneLocation(e.v), nil
		}
		// Exactly the store read an unknown id costs: the same query for an
		// id that cannot be registered ("/" is never part of one,
		// docs/api.md §1.4), so that it finds no row either.
		if _, err := s.Store.FindLocation(ctx, posSystemID, locationID+"/"); err != nil && !errors.Is(err, posgate.ErrNotFound) {
			return nil, err
		}
		return nil, posgate.NotFound("location", locationID)
	}
	loc, err := s.FindLocation(ctx, posSystemID, locationID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(companyIDs, loc.CompanyID) {
		return nil, posgate.NotFound("location", locationID)
	}
	return loc, nil
}

// FindTerminal returns the terminal, cached. A miss reads every terminal
// of its location (ListTerminals) and caches them together (only it when
// there are more than maxLocationTerminals): the tills of a shop are busy together, and
// a fleet of many terminals, each used a few times a second, would
// otherwise miss on most requests once the TTL is shorter than the time
// between a till's requests. A terminal the list does not hold is read on
// its own, as before (an absent one is never cached).
func (s *Store) FindTerminal(ctx context.Context, posSystemID, locationID, terminalID string) (*posgate.Terminal, error) {
	if inAtomic(ctx) {
		return s.Store.FindTerminal(ctx, posSystemID, locationID, terminalID)
	}
	k := [3]string{posSystemID, locationID, terminalID}
	now := s.now()
	s.mu.RLock()
	e, ok := s.terminals[k]
	gen := s.gen
	s.mu.RUnlock()
	if ok && now.Before(e.exp) {
		return cloneTerminal(e.v), nil
	}
	list, err := s.Store.ListTerminals(ctx, posSystemID, locationID)
	var found *posgate.Terminal
	if err == nil {
		for _, t := range list {
			if t.POSSystemID == posSystemID && t.LocationID == locationID && t.ID == terminalID {
				found = t
			}
		}
	}
	if found == nil {
		return lookup(s, s.terminals, k, func() (*posgate.Terminal, error) {
			return s.Store.FindTerminal(ctx, posSystemID, locationID, terminalID)
		}, cloneTerminal)
	}
	if len(list) > min(maxLocationTerminals, s.max) {
		list = []*posgate.Terminal{found}
	}
	s.mu.Lock()
	if s.gen == gen {
		makeRoom(s.terminals, now, len(list), s.max)
		for _, t := range list {
			if t.POSSystemID == posSystemID && t.LocationID == locationID {
				s.terminals[[3]string{posSystemID, locationID, t.ID}] = entry[posgate.Terminal]{v: cloneTerminal(t), exp: now.Add(s.ttl)}
			}
		}
	}
	s.mu.Unlock()
	return found, nil
}

// maxLocationTerminals is the most terminals of one location that a
// FindTerminal miss caches together.
const maxLocationTerminals = 256

// FindClient returns the client, cached (the token endpoint reads it for
// every token).
func (s *Store) FindClient(ctx context.Context, id string) (*posgate.Client, error) {
	if inAtomic(ctx) {
		return s.Store.FindClient(ctx, id)
	}
	return lookup(s, s.clients, id, func() (*posgate.Client, error) {
		return s.Store.FindClient(ctx, id)
	}, cloneClient)
}

// ClientDisabled reports whether the client is disabled (ENOTFOUND when
// it is not registered), from the same cached entry as FindClient but
// without copying it: verifying the access token of every request asks
// this (internal/auth), so that disabling a client reaches its tokens
// within the TTL.
func (s *Store) ClientDisabled(ctx context.Context, id string) (bool, error) {
	now := s.now()
	s.mu.RLock()
	e, ok := s.clients[id]
	s.mu.RUnlock()
	if ok && now.Before(e.exp) {
		return e.v.Disabled, nil
	}
	c, err := s.FindClient(ctx, id)
	if err != nil {
		return false, err
	}
	return c.Disabled, nil
}

// FindPOSCompany is FindCompany, cached, for the POS settings lookup only
// (service.LookupSettings asks for it after the principal's reach is
// checked). FindCompany itself stays uncached: the operator routes read
// a company the caller may not see so that it takes an unknown one's
// time, and a cached company would answer it from memory. Here only
// companies the caller may see are asked for, and whether one exists is
// the answer itself. An unknown company is read from the store each time,
// so unknown ids cannot fill the cache.
func (s *Store) FindPOSCompany(ctx context.Context, posSystemID, companyID string) (*posgate.Company, error) {
	if inAtomic(ctx) {
		return s.Store.FindCompany(ctx, posSystemID, companyID)
	}
	return lookup(s, s.posCos, [2]string{posSystemID, companyID}, func() (*posgate.Company, error) {
		return s.Store.FindCompany(ctx, posSystemID, companyID)
	}, shallow[posgate.Company])
}

// ListCompanies returns the POS system's companies, cached (a coupon search
// without a location reads them for every request).
func (s *Store) ListCompanies(ctx context.Context, posSystemID string) ([]*posgate.Company, error) {
	if inAtomic(ctx) {
		return s.Store.ListCompanies(ctx, posSystemID)
	}
	l, err := lookup(s, s.companies, posSystemID, func() (*companyList, error) {
		list, err := s.Store.ListCompanies(ctx, posSystemID)
		if err != nil {
			return nil, err
		}
		return &companyList{list: list}, nil
	}, cloneCompanies)
	if err != nil {
		return nil, err
	}
	return l.list, nil
}

// CreateCompany creates the company, then empties the cache, so that the
// company lists of this instance hold it at once.
func (s *Store) CreateCompany(ctx context.Context, c *posgate.Company) error {
	defer s.invalidate()
	return s.Store.CreateCompany(ctx, c)
}

// UpdateCompany updates the company, then empties the cache (locations
// carry their company's status and switches).
func (s *Store) UpdateCompany(ctx context.Context, posSystemID, companyID string, upd posgate.CompanyUpdate) (*posgate.Company, error) {
	defer s.invalidate()
	return s.Store.UpdateCompany(ctx, posSystemID, companyID, upd)
}

// UpdateLocation updates the location, then empties the cache.
func (s *Store) UpdateLocation(ctx context.Context, posSystemID, locationID string, upd posgate.LocationUpdate) (*posgate.Location, error) {
	defer s.invalidate()
	return s.Store.UpdateLocation(ctx, posSystemID, locationID, upd)
}

// UpdateTerminal updates the terminal, then empties the cache.
func (s *Store) UpdateTerminal(ctx context.Context, posSystemID, locationID, terminalID string, upd posgate.TerminalUpdate) (*posgate.Terminal, error) {
	defer s.invalidate()
	return s.Store.UpdateTerminal(ctx, posSystemID, locationID, terminalID, upd)
}

// UpdateClient updates the client, then empties the cache.
func (s *Store) UpdateClient(ctx context.Context, id string, upd posgate.ClientUpdate) (*posgate.Client, error) {
	defer s.invalidate()
	return s.Store.UpdateClient(ctx, id, upd)
}

// Atomic runs fn in the store's transaction, then empties the cache: the
// writes inside empty it as they are made, but a lookup between such a
// write and the commit would fill it again with what the commit replaces.
//
// Reads inside fn skip the cache: they are the "before" of a change and
// the state its rules are checked against, which must be the store's, not
// up to a TTL old.
func (s *Store) Atomic(ctx context.Context, fn func(ctx context.Context) error) error {
	defer s.invalidate()
	return s.Store.Atomic(ctx, func(ctx context.Context) error {
		return fn(context.WithValue(ctx, inAtomicKey{}, true))
	})
}

type inAtomicKey struct{}

// inAtomic reports whether ctx is one of Atomic's, whose reads skip the
// cache.
func inAtomic(ctx context.Context) bool {
	v, _ := ctx.Value(inAtomicKey{}).(bool)
	return v
}

func clonePerson(p *posgate.Person) *posgate.Person {
	c := *p
	c.CompanyIDs = slices.Clone(p.CompanyIDs)
	c.LocationIDs = slices.Clone(p.LocationIDs)
	return &c
}

// FindPerson returns the person, cached: every request with a person's
// token or sign-in cookie reads it (internal/auth), so that disabling a
// person reaches their tokens and sessions within the TTL (docs/api.md §21.4).
func (s *Store) FindPerson(ctx context.Context, id string) (*posgate.Person, error) {
	return lookup(s, s.people, id, func() (*posgate.Person, error) {
		return s.Store.FindPerson(ctx, id)
	}, clonePerson)
}

// UpdatePerson updates the person, then empties the cache.
func (s *Store) UpdatePerson(ctx context.Context, id string, upd posgate.PersonUpdate) (*posgate.Person, error) {
	defer s.invalidate()
	return s.Store.UpdatePerson(ctx, id, upd)
}

// FindCarouselSettings returns the company's carousel settings, cached,
// and so is their absence (every carousel request reads them, and most
// companies never set a template).
func (s *Store) FindCarouselSettings(ctx context.Context, posSystemID, companyID string) (*posgate.CarouselSettings, error) {
	if inAtomic(ctx) {
		return s.Store.FindCarouselSettings(ctx, posSystemID, companyID)
	}
	return lookupMaybe(s, s.carousels, [2]string{posSystemID, companyID}, func() (*posgate.CarouselSettings, error) {
		return s.Store.FindCarouselSettings(ctx, posSystemID, companyID)
	})
}

// PutCarouselSettings stores the settings, then empties the cache.
func (s *Store) PutCarouselSettings(ctx context.Context, c *posgate.CarouselSettings) error {
	defer s.invalidate()
	return s.Store.PutCarouselSettings(ctx, c)
}

// EffectiveReceiptPromotion returns the location's receipt promotion or
// the company default, cached, and so is their absence (every receipt
// request reads it).
func (s *Store) EffectiveReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*posgate.ReceiptPromotion, error) {
	if inAtomic(ctx) {
		return s.Store.EffectiveReceiptPromotion(ctx, posSystemID, companyID, locationID)
	}
	return lookupMaybe(s, s.receipts, [3]string{posSystemID, companyID, locationID}, func() (*posgate.ReceiptPromotion, error) {
		return s.Store.EffectiveReceiptPromotion(ctx, posSystemID, companyID, locationID)
	})
}

// PutReceiptPromotion stores the promotion, then empties the cache.
func (s *Store) PutReceiptPromotion(ctx context.Context, p *posgate.ReceiptPromotion) error {
	defer s.invalidate()
	return s.Store.PutReceiptPromotion(ctx, p)
}

// DeleteReceiptPromotion removes the promotion, then empties the cache.
func (s *Store) DeleteReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*posgate.ReceiptPromotion, error) {
	defer s.invalidate()
	return s.Store.DeleteReceiptPromotion(ctx, posSystemID, companyID, locationID)
}

// HasEnabledWebhook reports whether the company has an enabled webhook
// endpoint, cached (every settings lookup asks). Both answers are cached:
// an endpoint created or disabled through this Store empties the cache,
// one changed elsewhere shows within the TTL, as any other change.
func (s *Store) HasEnabledWebhook(ctx context.Context, posSystemID, companyID string) (bool, error) {
	if inAtomic(ctx) {
		return s.Store.HasEnabledWebhook(ctx, posSystemID, companyID)
	}
	v, err := lookup(s, s.webhooked, [2]string{posSystemID, companyID}, func() (*bool, error) {
		ok, err := s.Store.HasEnabledWebhook(ctx, posSystemID, companyID)
		return &ok, err
	}, shallow)
	if err != nil {
		return false, err
	}
	return *v, nil
}

// CreateWebhookEndpoint creates the endpoint, then empties the cache.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, e *posgate.WebhookEndpoint) error {
	defer s.invalidate()
	return s.Store.CreateWebhookEndpoint(ctx, e)
}

// UpdateWebhookEndpoint updates the endpoint, then empties the cache.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, e *posgate.WebhookEndpoint) error {
	defer s.invalidate()
	return s.Store.UpdateWebhookEndpoint(ctx, e)
}

// DeleteWebhookEndpoint removes the endpoint, then empties the cache.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, posSystemID, companyID, id string) error {
	defer s.invalidate()
	return s.Store.DeleteWebhookEndpoint(ctx, posSystemID, companyID, id)
}

// RecordDelivery stores a delivery attempt; one that disables its endpoint
// (a 410, docs/api.md §19) then empties the cache.
func (s *Store) RecordDelivery(ctx context.Context, owner string, r *posgate.DeliveryResult) (bool, error) {
	if r.DisableEndpoint {
		defer s.invalidate()
	}
	return s.Store.RecordDelivery(ctx, owner, r)
}

// RecordDeliveries stores delivery attempts; when one disables its
// endpoint, the cache is emptied afterwards.
func (s *Store) RecordDeliveries(ctx context.Context, owner string, rs []*posgate.DeliveryResult) (int, error) {
	if slices.ContainsFunc(rs, func(r *posgate.DeliveryResult) bool { return r.DisableEndpoint }) {
		defer s.invalidate()
	}
	return s.Store.RecordDeliveries(ctx, owner, rs)
}

// ClientRedirectURIs returns the client's redirect URIs, cached: the token
// endpoint asks for every client credentials token whether the client is
// one of the browser flows' (internal/auth), which was a fifth of a token's
// CPU as a store read. A change through this Store empties the cache; one
// made elsewhere is seen within the TTL, as a client's disabling is.
func (s *Store) ClientRedirectURIs(ctx context.Context, clientID string) ([]string, error) {
	if inAtomic(ctx) {
		return s.Store.ClientRedirectURIs(ctx, clientID)
	}
	v, err := lookup(s, s.redirects, clientID, func() (*[]string, error) {
		uris, err := s.Store.ClientRedirectURIs(ctx, clientID)
		return &uris, err
	}, func(v *[]string) *[]string {
		c := slices.Clone(*v)
		return &c
	})
	if err != nil {
		return nil, err
	}
	return *v, nil
}

// SetClientRedirectURIs replaces the client's redirect URIs, then empties
// the cache.
func (s *Store) SetClientRedirectURIs(ctx context.Context, clientID string, uris []string) error {
	defer s.invalidate()
	return s.Store.SetClientRedirectURIs(ctx, clientID, uris)
}

// Active coupon lists (docs/api.md §15.2) are answered from a company's
// whole set of active coupons, read once per TTL with a location of ""
// and filtered here by location, expiry and page: every location of a
// company shares one entry, so that a POS fleet polling its locations'
// lists costs one store read per company per TTL. The bounds keep memory
// predictable: a company with more than maxActivePerCompany active coupons
// is read from the store on every request (and that it is too large is
// remembered for the TTL), and the table holds at most maxActiveCoupons
// coupons in all.
const (
	maxActivePerCompany = 2_000
	maxActiveCoupons    = 20_000
)

// activeSet is a company's active coupons at loadedAt, in the store's order
// (by folded code); nil coupons with tooMany set marks a company whose set
// is not kept.
type activeSet struct {
	coupons  []*posgate.Coupon
	loadedAt time.Time
	tooMany  bool
	exp      time.Time

	anywhere []int32            // positions of the coupons limited to no location (see index)
	limited  map[string][]int32 // by location, positions of the coupons limited to it
}

// ListActiveCoupons answers from the company's cached active set: a
// coupon written through this Store (created, imported, its status
// changed, redeemed or restored by a transaction) drops its company's set
// at once; one written elsewhere (another instance, the CLI) shows within
// the TTL, as a redeemed coupon on another instance stays listed for up to
// the TTL (docs/decisions.md, "Active coupon lists are cached per
// company"). A
// query for a moment before the set was read (a sandbox clock set back) or
// for every location goes to the store.
func (s *Store) ListActiveCoupons(ctx context.Context, q posgate.ActiveCouponQuery) (*posgate.CouponPage, error) {
	if inAtomic(ctx) || q.LocationID == "" {
		return s.Store.ListActiveCoupons(ctx, q)
	}
	k := [2]string{q.POSSystemID, q.CompanyID}
	now := s.now()
	s.mu.RLock()
	set, ok := s.active[k]
	gen := s.activeGen
	s.mu.RUnlock()
	if !ok || !now.Before(set.exp) {
		var err error
		if set, err = s.loadActive(ctx, k, q.At, now, gen); err != nil {
			return nil, err
		}
	}
	if set.tooMany || q.At.Before(set.loadedAt) {
		return s.Store.ListActiveCoupons(ctx, q)
	}
	return set.page(q), nil
}

// index sorts the set's coupons by where they are usable: those limited to
// no location once, and for each location those limited to it (among
// others), both as positions in coupons, in order. A location's coupons
// are then the merge of the two lists, found without comparing the
// location with every coupon's list (most of a request's filtering when it
// did), and the index is no larger than the set's own location lists.
func (a *activeSet) index() {
	a.limited = map[string][]int32{}
	for i, c := range a.coupons {
		if len(c.LocationIDs) == 0 {
			a.anywhere = append(a.anywhere, int32(i))
			continue
		}
		for _, l := range c.LocationIDs {
			if at := a.limited[l]; len(at) == 0 || at[len(at)-1] != int32(i) {
				a.limited[l] = append(at, int32(i))
			}
		}
	}
}

// page is q's page of the set: the coupons usable at q.LocationID and not
// expired at q.At (which is not before the set's loadedAt, so the set
// holds every coupon active then), as the stores select them.
func (a *activeSet) page(q posgate.ActiveCouponQuery) *posgate.CouponPage {
	offset := max(q.Offset, 0)
	anywhere, limited := a.anywhere, a.limited[q.LocationID]
	out := &posgate.CouponPage{}
	// Room for the page at once (an empty page is nil, as the stores'
	// are: see the end).
	if n := min(q.Limit, len(anywhere)+len(limited)-offset); n > 0 {
		out.Coupons = make([]*posgate.Coupon, 0, n)
	}
	for len(anywhere) > 0 || len(limited) > 0 {
		var i int32
		if len(limited) == 0 || (len(anywhere) > 0 && anywhere[0] < limited[0]) {
			i, anywhere = anywhere[0], anywhere[1:]
		} else {
			i, limited = limited[0], limited[1:]
		}
		c := a.coupons[i]
		if c.AvailableUntil != nil && c.AvailableUntil.Before(q.At) {
			continue
		}
		if out.Total >= offset && len(out.Coupons) < q.Limit {
			out.Coupons = append(out.Coupons, cloneCoupon(c))
		}
		out.Total++
	}
	if len(out.Coupons) == 0 {
		out.Coupons = nil
	}
	return out
}

// activeLoad is a read of a company's set in flight, which the requests
// that miss the same set meanwhile wait for instead of each reading it:
// when a set expires under load, every request for the company misses at
// once, and a read each was a burst of identical store reads.
type activeLoad struct {
	done chan struct{}
	gen  uint64 // the coupon writes it follows
	set  *activeSet
	err  error
}

// loadActive reads the company's set at at (the first asker's moment),
// once for all who ask while it is read, and caches it.
func (s *Store) loadActive(ctx context.Context, k [2]string, at, now time.Time, gen uint64) (*activeSet, error) {
	s.mu.Lock()
	if l, ok := s.activeLoads[k]; ok {
		s.mu.Unlock()
		if l.gen != gen {
			// Begun before a coupon write that this request follows: its
			// set may miss the write, so this request reads for itself.
			return s.readActive(ctx, k, at, now)
		}
		select {
		case <-l.done:
			return l.set, l.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l := &activeLoad{done: make(chan struct{}), gen: gen}
	s.activeLoads[k] = l
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.activeLoads, k)
		s.mu.Unlock()
		close(l.done)
	}()
	if l.set, l.err = s.readActive(ctx, k, at, now); l.err != nil {
		return nil, l.err
	}
	s.putActive(k, l.set, gen)
	return l.set, nil
}

// readActive reads the company's set from the store.
func (s *Store) readActive(ctx context.Context, k [2]string, at, now time.Time) (*activeSet, error) {
	p, err := s.Store.ListActiveCoupons(ctx, posgate.ActiveCouponQuery{POSSystemID: k[0], CompanyID: k[1],
		At: at, Limit: maxActivePerCompany + 1})
	if err != nil {
		return nil, err
	}
	set := &activeSet{coupons: p.Coupons, loadedAt: at, exp: now.Add(s.ttl)}
	if p.Total > maxActivePerCompany {
		set.coupons, set.tooMany = nil, true
	}
	set.index()
	return set, nil
}

// putActive caches a set unless a coupon was written since gen, within
// the bound on coupons kept.
func (s *Store) putActive(k [2]string, set *activeSet, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.activeGen != gen {
		return
	}
	if old, ok := s.active[k]; ok {
		s.activeCount -= len(old.coupons)
	}
	if s.activeCount+len(set.coupons) > maxActiveCoupons || len(s.active) >= s.max {
		clear(s.active)
		s.activeCount = 0
	}
	s.active[k] = set
	s.activeCount += len(set.coupons)
}

// invalidateActive drops the active coupon sets of the companies a coupon
// write touched (every set when it names none) and makes the reads in
// flight skip filling. Only those companies' sets go, so that the sales of
// one company do not empty every other company's.
func (s *Store) invalidateActive(companies ...[2]string) {
	s.mu.Lock()
	s.activeGen++
	if len(companies) == 0 {
		clear(s.active)
		s.activeCount = 0
	}
	for _, k := range companies {
		if old, ok := s.active[k]; ok {
			s.activeCount -= len(old.coupons)
			delete(s.active, k)
		}
	}
	s.mu.Unlock()
}

func cloneCoupon(c *posgate.Coupon) *posgate.Coupon {
	cp := *c
	cp.Info = slices.Clone(c.Info)
	cp.LocationIDs = slices.Clone(c.LocationIDs)
	return &cp
}

// CreateCoupon stores the coupon, then drops its company's active set.
func (s *Store) CreateCoupon(ctx context.Context, c *posgate.Coupon) error {
	defer s.invalidateActive([2]string{c.POSSystemID, c.CompanyID})
	return s.Store.CreateCoupon(ctx, c)
}

// ImportCoupons stores the coupons, then empties the active coupon sets.
func (s *Store) ImportCoupons(ctx context.Context, seq iter.Seq2[*posgate.Coupon, error]) (int, error) {
	defer s.invalidateActive()
	return s.Store.ImportCoupons(ctx, seq)
}

// ChangeCouponStatus changes the coupon's status, then drops its
// company's active set.
func (s *Store) ChangeCouponStatus(ctx context.Context, posSystemID, companyID, code string, to posgate.CouponStatus) (*posgate.Coupon, error) {
	defer s.invalidateActive([2]string{posSystemID, companyID})
	return s.Store.ChangeCouponStatus(ctx, posSystemID, companyID, code, to)
}

// ApplyTransactions records the sales and refunds, then drops the active
// coupon sets of the companies whose items may have changed a coupon: a
// sale that names coupons redeems them, a refund may restore them; other
// sales write no coupon and keep the sets.
func (s *Store) ApplyTransactions(ctx context.Context, items []*posgate.TransactionInput) ([]*posgate.TransactionOutcome, error) {
	var touched [][2]string
	for _, it := range items {
		k := [2]string{it.POSSystemID, it.CompanyID}
		if (len(it.CouponCodes) > 0 || it.Type == posgate.TransactionRefund) && !slices.Contains(touched, k) {
			touched = append(touched, k)
		}
	}
	if len(touched) > 0 {
		defer s.invalidateActive(touched...)
	}
	return s.Store.ApplyTransactions(ctx, items)
}

// ApplyCheckingSession records in as ApplyTransactions does, its session
// checked by the store beneath when it can (posgate.ApplyCheckingSession).
func (s *Store) ApplyCheckingSession(ctx context.Context, in *posgate.TransactionInput, check posgate.SessionCheck) (*posgate.TransactionOutcome, error) {
	if len(in.CouponCodes) > 0 || in.Type == posgate.TransactionRefund {
		defer s.invalidateActive([2]string{in.POSSystemID, in.CompanyID})
	}
	return posgate.ApplyCheckingSession(ctx, s.Store, in, check)
}

// RedeemCouponForTransaction redeems the coupon, then drops its
// company's active set.
func (s *Store) RedeemCouponForTransaction(ctx context.Context, t *posgate.Transaction, code string, owner *posgate.CouponOwner, locationID string) (*posgate.TransactionCoupon, time.Time, error) {
	defer s.invalidateActive([2]string{t.POSSystemID, t.CompanyID})
	return s.Store.RedeemCouponForTransaction(ctx, t, code, owner, locationID)
}
