package storecache

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/sqlite"
	"github.com/posgate/posgate/internal/storetest"
)

// The cached store is a faithful posgate.Store: it passes the conformance
// suite (every find there follows the update it checks, through the same
// store).
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) posgate.Store {
		return New(openSQLite(t, now), Options{})
	})
}

func openSQLite(t *testing.T, now func() time.Time) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "posgate.db"), sqlite.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// counting counts the lookups that reach the real store, and can hold a
// terminal lookup after it has read the store (to race it with an update).
type counting struct {
	posgate.Store
	locations, terminals, clients, lists atomic.Int64
	hold                                 chan chan struct{} // when set, FindTerminal and ListTerminals send a channel and wait on it
}

func (c *counting) FindLocation(ctx context.Context, p, l string) (*posgate.Location, error) {
	c.locations.Add(1)
	return c.Store.FindLocation(ctx, p, l)
}

func (c *counting) FindTerminal(ctx context.Context, p, l, id string) (*posgate.Terminal, error) {
	c.terminals.Add(1)
	t, err := c.Store.FindTerminal(ctx, p, l, id)
	if c.hold != nil {
		release := make(chan struct{})
		c.hold <- release
		<-release
	}
	return t, err
}

// ListTerminals counts and holds as FindTerminal does: a terminal miss
// reads its location's terminals.
func (c *counting) ListTerminals(ctx context.Context, p, l string) ([]*posgate.Terminal, error) {
	c.terminals.Add(1)
	list, err := c.Store.ListTerminals(ctx, p, l)
	if c.hold != nil {
		release := make(chan struct{})
		c.hold <- release
		<-release
	}
	return list, err
}

func (c *counting) ListCompanies(ctx context.Context, p string) ([]*posgate.Company, error) {
	c.lists.Add(1)
	return c.Store.ListCompanies(ctx, p)
}

func (c *counting) FindClient(ctx context.Context, id string) (*posgate.Client, error) {
	c.clients.Add(1)
	return c.Store.FindClient(ctx, id)
}

// fakeClock is the cache's expiry clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	ctx   context.Context
	raw   *sqlite.DB // the store behind the cache: changes here are "another instance"
	count *counting
	clock *fakeClock
	c     *Store
}

func newFixture(t *testing.T, maxEntries int) *fixture {
	t.Helper()
	f := &fixture{ctx: t.Context(), raw: openSQLite(t, nil), clock: &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}
	f.count = &counting{Store: f.raw}
	f.c = New(f.count, Options{TTL: time.Second, MaxEntries: maxEntries, Now: f.clock.Now})
	ctx, st := f.ctx, f.raw
	for _, err := range []error{
		st.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "pos", Name: "POS"}),
		st.CreateCompany(ctx, &posgate.Company{POSSystemID: "pos", ID: "co", Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()}),
		st.CreateLocation(ctx, &posgate.Location{POSSystemID: "pos", ID: "L1", CompanyID: "co", Status: posgate.StatusActive}),
		st.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: "pos", LocationID: "L1", ID: "T1", Status: posgate.StatusActive}),
		st.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: "pos", LocationID: "L1", ID: "T2", Status: posgate.StatusActive}),
		st.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: "pos", LocationID: "L1", ID: "T3", Status: posgate.StatusActive}),
		st.CreateClient(ctx, &posgate.Client{ID: "cl", SecretHash: []byte{1}, POSSystemID: "pos", Scopes: []string{posgate.ScopePOSIntegration}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) terminalStatus(t *testing.T, id string) posgate.Status {
	t.Helper()
	term, err := f.c.FindTerminal(f.ctx, "pos", "L1", id)
	if err != nil {
		t.Fatal(err)
	}
	return term.Status
}

var disabled = posgate.StatusDisabled

func TestLookupsAreCachedUntilTheTTL(t *testing.T) {
	f := newFixture(t, 0)
	for range 3 {
		f.terminalStatus(t, "T1")
		if _, err := f.c.FindLocation(f.ctx, "pos", "L1"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.c.FindClient(f.ctx, "cl"); err != nil {
			t.Fatal(err)
		}
	}
	if n, m, k := f.count.terminals.Load(), f.count.locations.Load(), f.count.clients.Load(); n != 1 || m != 1 || k != 1 {
		t.Errorf("store reads: %d terminal, %d location, %d client; want 1 each", n, m, k)
	}
	f.clock.Advance(time.Second)
	f.terminalStatus(t, "T1")
	if n := f.count.terminals.Load(); n != 2 {
		t.Errorf("after the TTL: %d terminal reads, want 2", n)
	}
}

// A terminal disabled through the cached store (this instance's operator
// API) answers Disabled at once.
func TestUpdateThroughTheCacheIsSeenAtOnce(t *testing.T) {
	f := newFixture(t, 0)
	if got := f.terminalStatus(t, "T1"); got != posgate.StatusActive {
		t.Fatalf("status %s", got)
	}
	if _, err := f.c.UpdateTerminal(f.ctx, "pos", "L1", "T1", posgate.TerminalUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	if got := f.terminalStatus(t, "T1"); got != posgate.StatusDisabled {
		t.Errorf("after disabling: %s", got)
	}

	// Locations carry their company: a company update shows at once too,
	// and so do location and client updates.
	if _, err := f.c.FindLocation(f.ctx, "pos", "L1"); err != nil {
		t.Fatal(err)
	}
	off := posgate.Features{}
	if _, err := f.c.UpdateCompany(f.ctx, "pos", "co", posgate.CompanyUpdate{Features: &off}); err != nil {
		t.Fatal(err)
	}
	l, err := f.c.FindLocation(f.ctx, "pos", "L1")
	if err != nil || l.Company.Features.Transactions {
		t.Errorf("after switching features off: %+v, %v", l.Company, err)
	}
	if _, err := f.c.UpdateLocation(f.ctx, "pos", "L1", posgate.LocationUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	if l, err := f.c.FindLocation(f.ctx, "pos", "L1"); err != nil || l.Status != posgate.StatusDisabled {
		t.Errorf("after disabling the location: %+v, %v", l, err)
	}
	if _, err := f.c.FindClient(f.ctx, "cl"); err != nil {
		t.Fatal(err)
	}
	yes := true
	if _, err := f.c.UpdateClient(f.ctx, "cl", posgate.ClientUpdate{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	if c, err := f.c.FindClient(f.ctx, "cl"); err != nil || !c.Disabled {
		t.Errorf("after disabling the client: %+v, %v", c, err)
	}
}

// A change made behind the cache (the CLI, another instance) is seen once
// the entry expires, and not later.
func TestUpdateElsewhereIsSeenWithinTheTTL(t *testing.T) {
	f := newFixture(t, 0)
	f.terminalStatus(t, "T1")
	if _, err := f.raw.UpdateTerminal(f.ctx, "pos", "L1", "T1", posgate.TerminalUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(999 * time.Millisecond)
	if got := f.terminalStatus(t, "T1"); got != posgate.StatusActive {
		t.Errorf("within the TTL: %s (the cache is not in use)", got)
	}
	f.clock.Advance(time.Millisecond)
	if got := f.terminalStatus(t, "T1"); got != posgate.StatusDisabled {
		t.Errorf("at the TTL: %s, want Disabled", got)
	}
}

// "Not found" is never cached: a terminal registered elsewhere is usable at
// once.
func TestNotFoundIsNotCached(t *testing.T) {
	f := newFixture(t, 0)
	if _, err := f.c.FindTerminal(f.ctx, "pos", "L1", "NEW"); !errors.Is(err, posgate.ErrNotFound) {
		t.Fatalf("err = %v, want not found", err)
	}
	if err := f.raw.CreateTerminal(f.ctx, &posgate.Terminal{POSSystemID: "pos", LocationID: "L1", ID: "NEW", Status: posgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
	if got := f.terminalStatus(t, "NEW"); got != posgate.StatusActive {
		t.Errorf("status %s", got)
	}
	if _, err := f.c.FindClient(f.ctx, "nobody"); !errors.Is(err, posgate.ErrNotFound) {
		t.Errorf("err = %v, want not found", err)
	}
}

// A lookup that read the store before an update and finishes after it must
// not put its old answer in the cache.
func TestLookupRacingAnUpdateDoesNotFill(t *testing.T) {
	f := newFixture(t, 0)
	f.count.hold = make(chan chan struct{})
	done := make(chan posgate.Status)
	go func() {
		term, err := f.c.FindTerminal(f.ctx, "pos", "L1", "T1")
		if err != nil {
			t.Error(err)
		}
		done <- term.Status
	}()
	release := <-f.count.hold // the lookup has read Active
	f.count.hold = nil
	if _, err := f.c.UpdateTerminal(f.ctx, "pos", "L1", "T1", posgate.TerminalUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if got := <-done; got != posgate.StatusActive {
		t.Fatalf("the racing lookup answered %s; the test did not race", got)
	}
	if got := f.terminalStatus(t, "T1"); got != posgate.StatusDisabled {
		t.Errorf("after the race: %s, want Disabled (the old answer was cached)", got)
	}
}

// Callers get copies: changing an answer does not change the cache.
func TestAnswersAreCopies(t *testing.T) {
	f := newFixture(t, 0)
	l, err := f.c.FindLocation(f.ctx, "pos", "L1")
	if err != nil {
		t.Fatal(err)
	}
	l.Status, l.Company.Status = posgate.StatusDisabled, posgate.StatusDisabled
	c, err := f.c.FindClient(f.ctx, "cl")
	if err != nil {
		t.Fatal(err)
	}
	c.Scopes[0] = posgate.ScopeAdmin
	l, _ = f.c.FindLocation(f.ctx, "pos", "L1")
	c, _ = f.c.FindClient(f.ctx, "cl")
	if l.Status != posgate.StatusActive || l.Company.Status != posgate.StatusActive || c.Scopes[0] != posgate.ScopePOSIntegration {
		t.Errorf("cached values changed through an answer: %+v %+v %v", l, l.Company, c.Scopes)
	}
	if f.count.locations.Load() != 1 || f.count.clients.Load() != 1 {
		t.Errorf("store reads: %d location, %d client; want 1 each", f.count.locations.Load(), f.count.clients.Load())
	}
}

func TestEntriesAreBounded(t *testing.T) {
	f := newFixture(t, 2)
	for _, id := range []string{"T1", "T2", "T3", "T1"} {
		f.terminalStatus(t, id)
		f.c.mu.RLock()
		n := len(f.c.terminals)
		f.c.mu.RUnlock()
		if n > 2 {
			t.Fatalf("%d cached terminals, limit 2", n)
		}
	}
}

// companyIDs lists the POS system's companies through the cache.
func (f *fixture) companyIDs(t *testing.T) []string {
	t.Helper()
	cs, err := f.c.ListCompanies(f.ctx, "pos")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID+":"+string(c.Status))
	}
	return ids
}

// The company list is cached like the lookups; a company created or
// changed through the cache shows at once, one created elsewhere within
// the TTL, and answers are copies.
func TestCompanyListIsCached(t *testing.T) {
	f := newFixture(t, 0)
	want := func(got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("companies %v, want %v", got, want)
		}
	}
	want(f.companyIDs(t), "co:Active")
	want(f.companyIDs(t), "co:Active")
	if n := f.count.lists.Load(); n != 1 {
		t.Errorf("%d list reads, want 1", n)
	}
	cs, _ := f.c.ListCompanies(f.ctx, "pos")
	cs[0].Status = disabled
	want(f.companyIDs(t), "co:Active")

	if err := f.c.CreateCompany(f.ctx, &posgate.Company{POSSystemID: "pos", ID: "co2", Status: posgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
	want(f.companyIDs(t), "co:Active", "co2:Active")
	if _, err := f.c.UpdateCompany(f.ctx, "pos", "co2", posgate.CompanyUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	want(f.companyIDs(t), "co:Active", "co2:Disabled")

	if err := f.raw.CreateCompany(f.ctx, &posgate.Company{POSSystemID: "pos", ID: "co3", Status: posgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(999 * time.Millisecond)
	want(f.companyIDs(t), "co:Active", "co2:Disabled")
	f.clock.Advance(time.Millisecond)
	want(f.companyIDs(t), "co:Active", "co2:Disabled", "co3:Active")
}

// ClientDisabled answers from FindClient's entry: a client disabled behind
// the cache is seen within the TTL, one disabled through it at once, and an
// unknown client is ENOTFOUND (and not cached).
func TestClientDisabled(t *testing.T) {
	f := newFixture(t, 0)
	yes, no := true, false
	disabledNow := func(want bool) {
		t.Helper()
		got, err := f.c.ClientDisabled(f.ctx, "cl")
		if err != nil || got != want {
			t.Fatalf("ClientDisabled = %v, %v; want %v", got, err, want)
		}
	}
	disabledNow(false)
	disabledNow(false)
	if n := f.count.clients.Load(); n != 1 {
		t.Errorf("store reads: %d, want 1", n)
	}
	if _, err := f.raw.UpdateClient(f.ctx, "cl", posgate.ClientUpdate{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(999 * time.Millisecond)
	disabledNow(false)
	f.clock.Advance(time.Millisecond)
	disabledNow(true)
	if _, err := f.c.UpdateClient(f.ctx, "cl", posgate.ClientUpdate{Disabled: &no}); err != nil {
		t.Fatal(err)
	}
	disabledNow(false)
	for range 2 {
		if _, err := f.c.ClientDisabled(f.ctx, "nobody"); !errors.Is(err, posgate.ErrNotFound) {
			t.Errorf("unknown client: %v, want not found", err)
		}
	}
	if n := f.count.clients.Load(); n != 5 {
		t.Errorf("store reads: %d, want 5 (the first, after the TTL, after the update, one per unknown lookup)", n)
	}
}

// A location of another company answers as an absent one does, and after
// the same store read: a restricted caller cannot tell them apart by time.
// A visible one is cached.
func TestFindVisibleLocation(t *testing.T) {
	f := newFixture(t, 0)
	if err := f.raw.CreateCompany(f.ctx, &posgate.Company{POSSystemID: "pos", ID: "other", Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()}); err != nil {
		t.Fatal(err)
	}
	reads := func() int64 { return f.count.locations.Load() }
	for range 3 {
		if l, err := f.c.FindVisibleLocation(f.ctx, "pos", "L1", []string{"x", "co"}); err != nil || l.ID != "L1" || l.Company == nil {
			t.Fatalf("visible: %+v, %v", l, err)
		}
	}
	if n := reads(); n != 1 {
		t.Errorf("visible: %d store reads, want 1", n)
	}
	for _, id := range []string{"L1", "NOPE"} {
		before := reads()
		for range 3 {
			_, err := f.c.FindVisibleLocation(f.ctx, "pos", id, []string{"other"})
			if !errors.Is(err, posgate.ErrNotFound) || err.Error() != posgate.NotFound("location", id).Error() {
				t.Fatalf("%s hidden or absent: %v", id, err)
			}
		}
		if n := reads() - before; n != 3 {
			t.Errorf("%s: %d store reads for 3 lookups, want 3 (one each)", id, n)
		}
	}
}

// BenchmarkFindVisibleLocation compares a hidden location with an unknown
// one for a restricted caller (on SQLite, behind the cache): they take the
// same store call, so the same time; a visible one is a cache hit.
func BenchmarkFindVisibleLocation(b *testing.B) {
	db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "posgate.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := b.Context()
	for _, err := range []error{
		db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "pos", Name: "POS"}),
		db.CreateCompany(ctx, &posgate.Company{POSSystemID: "pos", ID: "co", Status: posgate.StatusActive}),
		db.CreateCompany(ctx, &posgate.Company{POSSystemID: "pos", ID: "other", Status: posgate.StatusActive}),
		db.CreateLocation(ctx, &posgate.Location{POSSystemID: "pos", ID: "L1", CompanyID: "co", Status: posgate.StatusActive}),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	c := New(db, Options{TTL: time.Hour})
	for _, tc := range []struct{ name, location, company string }{
		{"visible", "L1", "co"}, {"hidden", "L1", "other"}, {"unknown", "NOPE", "other"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			companies := []string{tc.company}
			for b.Loop() {
				_, _ = c.FindVisibleLocation(ctx, "pos", tc.location, companies)
			}
		})
	}
}

// Inside Atomic, lookups read the store, not the cache: they are the
// "before" of a change and what its rules check. Atomic empties the cache
// once it commits (or rolls back).
func TestAtomicReadsTheStore(t *testing.T) {
	f := newFixture(t, 0)
	f.terminalStatus(t, "T1")
	if _, err := f.raw.UpdateTerminal(f.ctx, "pos", "L1", "T1", posgate.TerminalUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	if got := f.terminalStatus(t, "T1"); got != posgate.StatusActive {
		t.Fatalf("outside Atomic, within the TTL: %s, want the cached Active", got)
	}
	before := f.count.terminals.Load()
	err := f.c.Atomic(f.ctx, func(ctx context.Context) error {
		term, err := f.c.FindTerminal(ctx, "pos", "L1", "T1")
		if err != nil || term.Status != posgate.StatusDisabled {
			t.Errorf("inside Atomic: %+v, %v; want the store's Disabled", term, err)
		}
		for _, err := range []error{
			func() error { _, err := f.c.FindLocation(ctx, "pos", "L1"); return err }(),
			func() error { _, err := f.c.FindClient(ctx, "cl"); return err }(),
			func() error { _, err := f.c.ListCompanies(ctx, "pos"); return err }(),
		} {
			if err != nil {
				t.Error(err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count.terminals.Load() - before; n != 1 {
		t.Errorf("terminal lookups that reached the store inside Atomic: %d, want 1", n)
	}
	locations, clients, lists := f.count.locations.Load(), f.count.clients.Load(), f.count.lists.Load()
	for range 2 {
		f.c.FindLocation(f.ctx, "pos", "L1")
		f.c.FindClient(f.ctx, "cl")
		f.c.ListCompanies(f.ctx, "pos")
	}
	if f.count.locations.Load()-locations != 1 || f.count.clients.Load()-clients != 1 || f.count.lists.Load()-lists != 1 {
		t.Errorf("after Atomic, each lookup should reach the store once and then be cached")
	}
	if got := f.terminalStatus(t, "T1"); got != posgate.StatusDisabled {
		t.Errorf("after Atomic: %s, want Disabled (the cache was emptied)", got)
	}
}

// TestPersonDisabled: a person is cached like a client, so that a change
// made elsewhere (another instance, the CLI) is seen within the TTL and one
// made through the cache at once.
func TestPersonDisabled(t *testing.T) {
	f := newFixture(t, 0)
	yes, no := true, false
	if err := f.raw.CreatePerson(f.ctx, &posgate.Person{ID: "p", Email: "p@example.com", Name: "P", PasswordHash: "h", Role: posgate.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	disabledNow := func(want bool) {
		t.Helper()
		p, err := f.c.FindPerson(f.ctx, "p")
		if err != nil || p.Disabled != want {
			t.Fatalf("FindPerson: %+v, %v; want disabled %v", p, err, want)
		}
	}
	disabledNow(false)
	if _, err := f.raw.UpdatePerson(f.ctx, "p", posgate.PersonUpdate{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(999 * time.Millisecond)
	disabledNow(false)
	f.clock.Advance(time.Millisecond)
	disabledNow(true)
	if _, err := f.c.UpdatePerson(f.ctx, "p", posgate.PersonUpdate{Disabled: &no}); err != nil {
		t.Fatal(err)
	}
	disabledNow(false)
	if _, err := f.c.FindPerson(f.ctx, "nobody"); !errors.Is(err, posgate.ErrNotFound) {
		t.Errorf("unknown person: %v", err)
	}
}

// configCounting counts the store reads of the company configuration that
// the POS reads ask for.
type configCounting struct {
	posgate.Store
	companies, carousels, receipts, webhooks atomic.Int64
}

func (c *configCounting) FindCompany(ctx context.Context, p, id string) (*posgate.Company, error) {
	c.companies.Add(1)
	return c.Store.FindCompany(ctx, p, id)
}

func (c *configCounting) FindCarouselSettings(ctx context.Context, p, co string) (*posgate.CarouselSettings, error) {
	c.carousels.Add(1)
	return c.Store.FindCarouselSettings(ctx, p, co)
}

func (c *configCounting) EffectiveReceiptPromotion(ctx context.Context, p, co, l string) (*posgate.ReceiptPromotion, error) {
	c.receipts.Add(1)
	return c.Store.EffectiveReceiptPromotion(ctx, p, co, l)
}

func (c *configCounting) HasEnabledWebhook(ctx context.Context, p, co string) (bool, error) {
	c.webhooks.Add(1)
	return c.Store.HasEnabledWebhook(ctx, p, co)
}

// A company's carousel settings, its effective receipt promotion and
// whether it has an enabled webhook endpoint are cached until the TTL (their
// absence too); a change through the cache is seen at once, one behind it
// within the TTL. The company itself is cached only for the settings
// lookup (FindPOSCompany).
func TestConfigurationIsCached(t *testing.T) {
	f := newFixture(t, 0)
	ctx := f.ctx
	cnt := &configCounting{Store: f.raw}
	c := New(cnt, Options{TTL: time.Second, Now: f.clock.Now})

	receipt := func() string {
		t.Helper()
		p, err := c.EffectiveReceiptPromotion(ctx, "pos", "co", "L1")
		if errors.Is(err, posgate.ErrNotFound) {
			return ""
		} else if err != nil {
			t.Fatal(err)
		}
		return p.PrimaryText
	}
	if got := receipt(); got != "" {
		t.Fatalf("receipt %q before any", got)
	}
	if err := f.raw.PutReceiptPromotion(ctx, &posgate.ReceiptPromotion{POSSystemID: "pos", CompanyID: "co", PrimaryText: "Default", TargetURL: "https://example.com/"}); err != nil {
		t.Fatal(err)
	}
	if got := receipt(); got != "" {
		t.Errorf("receipt %q within the TTL of none found: the absence is cached too", got)
	}
	if n := cnt.receipts.Load(); n != 1 {
		t.Errorf("%d receipt reads of the store, want 1", n)
	}
	f.clock.Advance(time.Second)
	if got := receipt(); got != "Default" {
		t.Errorf("receipt %q at the TTL after one was stored elsewhere", got)
	}
	if err := c.PutReceiptPromotion(ctx, &posgate.ReceiptPromotion{POSSystemID: "pos", CompanyID: "co", LocationID: "L1", PrimaryText: "L1's", TargetURL: "https://example.com/"}); err != nil {
		t.Fatal(err)
	}
	if got := receipt(); got != "L1's" {
		t.Errorf("receipt %q after a put through the cache", got)
	}
	before := cnt.receipts.Load()
	receipt()
	receipt()
	if n := cnt.receipts.Load() - before; n != 0 {
		t.Errorf("%d receipt reads of the store within the TTL, want 0", n)
	}
	if _, err := c.DeleteReceiptPromotion(ctx, "pos", "co", "L1"); err != nil {
		t.Fatal(err)
	}
	if got := receipt(); got != "Default" {
		t.Errorf("receipt %q after a delete through the cache", got)
	}

	for range 2 {
		if _, err := c.FindCarouselSettings(ctx, "pos", "co"); !errors.Is(err, posgate.ErrNotFound) {
			t.Fatalf("carousel settings before any: %v", err)
		}
	}
	if n := cnt.carousels.Load(); n != 1 {
		t.Errorf("%d carousel reads of the store for no settings, want 1 (the absence is cached)", n)
	}
	if err := c.PutCarouselSettings(ctx, &posgate.CarouselSettings{POSSystemID: "pos", CompanyID: "co", URLTemplate: "https://a.example/{terminalId}"}); err != nil {
		t.Fatal(err)
	}
	tmpl := func() string {
		t.Helper()
		s, err := c.FindCarouselSettings(ctx, "pos", "co")
		if err != nil {
			t.Fatal(err)
		}
		return s.URLTemplate
	}
	tmpl()
	if err := f.raw.PutCarouselSettings(ctx, &posgate.CarouselSettings{POSSystemID: "pos", CompanyID: "co", URLTemplate: "https://b.example/{terminalId}"}); err != nil {
		t.Fatal(err)
	}
	if got := tmpl(); got != "https://a.example/{terminalId}" {
		t.Errorf("within the TTL: %q (the cache is not in use)", got)
	}
	f.clock.Advance(time.Second)
	if got := tmpl(); got != "https://b.example/{terminalId}" {
		t.Errorf("at the TTL: %q", got)
	}
	if err := c.PutCarouselSettings(ctx, &posgate.CarouselSettings{POSSystemID: "pos", CompanyID: "co", URLTemplate: "https://c.example/{terminalId}"}); err != nil {
		t.Fatal(err)
	}
	if got := tmpl(); got != "https://c.example/{terminalId}" {
		t.Errorf("after a put through the cache: %q", got)
	}

	// The company is read from the store every time (see the package
	// comment: the timing of a hidden company).
	for range 2 {
		if _, err := c.FindCompany(ctx, "pos", "co"); err != nil {
			t.Fatal(err)
		}
	}
	if n := cnt.companies.Load(); n != 2 {
		t.Errorf("%d company reads of the store, want 2: the company is not cached", n)
	}
	// FindPOSCompany, the settings lookup's, is cached; an unknown company
	// is read every time (it fills nothing); a change through the cache is
	// seen at once.
	for range 2 {
		if co, err := c.FindPOSCompany(ctx, "pos", "co"); err != nil || co.ID != "co" {
			t.Fatalf("FindPOSCompany: %v, %v", co, err)
		}
	}
	for range 2 {
		if _, err := c.FindPOSCompany(ctx, "pos", "nope"); !errors.Is(err, posgate.ErrNotFound) {
			t.Fatalf("FindPOSCompany of an unknown company: %v", err)
		}
	}
	if n := cnt.companies.Load(); n != 2+1+2 {
		t.Errorf("%d company reads of the store, want 5: one for the known company, one per unknown read", n)
	}
	disabled := posgate.StatusDisabled
	if _, err := c.UpdateCompany(ctx, "pos", "co", posgate.CompanyUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	if co, err := c.FindPOSCompany(ctx, "pos", "co"); err != nil || co.Status != posgate.StatusDisabled {
		t.Errorf("after a change through the cache: %v, %v", co, err)
	}
	active := posgate.StatusActive
	if _, err := c.UpdateCompany(ctx, "pos", "co", posgate.CompanyUpdate{Status: &active}); err != nil {
		t.Fatal(err)
	}

	hooked := func() bool {
		t.Helper()
		ok, err := c.HasEnabledWebhook(ctx, "pos", "co")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if hooked() || hooked() {
		t.Fatal("a webhook before any endpoint")
	}
	if n := cnt.webhooks.Load(); n != 1 {
		t.Errorf("%d webhook reads of the store, want 1", n)
	}
	e := &posgate.WebhookEndpoint{POSSystemID: "pos", CompanyID: "co", ID: "wh1", URL: "https://hooks.example/", Enabled: true,
		EventTypes: []string{"coupon.redeemed"}, Secret: "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3"}
	if err := c.CreateWebhookEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	if !hooked() {
		t.Error("no webhook after an endpoint was created through the cache")
	}
	e.Enabled = false
	if err := c.UpdateWebhookEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	if hooked() {
		t.Error("a webhook after the endpoint was disabled through the cache")
	}
}

// A client's redirect URIs are cached until the TTL; a change through the
// cache is seen at once, one behind it within the TTL.
func TestRedirectURIsAreCached(t *testing.T) {
	f := newFixture(t, 0)
	uris := func() []string {
		t.Helper()
		u, err := f.c.ClientRedirectURIs(f.ctx, "cl")
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	if got := uris(); len(got) != 0 {
		t.Fatalf("redirect URIs %q before any", got)
	}
	if err := f.c.SetClientRedirectURIs(f.ctx, "cl", []string{"https://a.example/cb"}); err != nil {
		t.Fatal(err)
	}
	if got := uris(); !slices.Equal(got, []string{"https://a.example/cb"}) {
		t.Errorf("after a change through the cache: %q", got)
	}
	got := uris()
	got[0] = "changed by the caller"
	if err := f.raw.SetClientRedirectURIs(f.ctx, "cl", []string{"https://b.example/cb"}); err != nil {
		t.Fatal(err)
	}
	if got := uris(); !slices.Equal(got, []string{"https://a.example/cb"}) {
		t.Errorf("within the TTL, after a change elsewhere: %q, want the cached copy unchanged", got)
	}
	f.clock.Advance(time.Second)
	if got := uris(); !slices.Equal(got, []string{"https://b.example/cb"}) {
		t.Errorf("at the TTL: %q", got)
	}
}

// A terminal miss caches its location's terminals together: the other
// tills of the shop are answered from memory until the TTL, a terminal
// created meanwhile is read on its own (never "not found" from the
// cache), and a location with more terminals than the cache may hold
// caches only the one asked for.
func TestTerminalMissCachesItsLocation(t *testing.T) {
	f := newFixture(t, 0)
	for _, id := range []string{"T1", "T2", "T3", "T2"} {
		f.terminalStatus(t, id)
	}
	if n := f.count.terminals.Load(); n != 1 {
		t.Fatalf("store reads for T1, T2, T3, T2: %d, want 1 (the location's list)", n)
	}
	if err := f.raw.CreateTerminal(f.ctx, &posgate.Terminal{POSSystemID: "pos", LocationID: "L1", ID: "T4", Status: posgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
	if got := f.terminalStatus(t, "T4"); got != posgate.StatusActive {
		t.Fatalf("T4: %s", got)
	}
	if n := f.count.terminals.Load(); n != 2 {
		t.Fatalf("store reads after T4: %d, want 2", n)
	}
	f.clock.Advance(time.Second)
	if _, err := f.raw.UpdateTerminal(f.ctx, "pos", "L1", "T3", posgate.TerminalUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	f.terminalStatus(t, "T1")
	if got := f.terminalStatus(t, "T3"); got != posgate.StatusDisabled {
		t.Fatalf("T3 after the TTL: %s, want the store's Disabled", got)
	}
	if n := f.count.terminals.Load(); n != 3 {
		t.Fatalf("store reads after the TTL: %d, want 3", n)
	}

	small := newFixture(t, 2)
	small.terminalStatus(t, "T1")
	small.c.mu.RLock()
	n := len(small.c.terminals)
	small.c.mu.RUnlock()
	if n != 1 {
		t.Fatalf("a location of 3 terminals in a cache of 2: %d cached, want 1", n)
	}
}
