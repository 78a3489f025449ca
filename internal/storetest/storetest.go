// Package storetest is the conformance suite for posgate.Store: every
// storage adapter runs Run from its own tests, so that SQLite and PostgreSQL
// behave the same behind the interface (in the style of dex's
// storage/conformance). Run uses nothing but the Store interface;
// RunSessionWriter also tests the storekit.SessionWriter that both stores
// group their sessions with, through hooks that each store's tests supply.
package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// Run runs one subtest per behaviour of the Store contract. newStore must
// return a fresh, empty store that takes CreatedAt/UpdatedAt from now and
// registers its own cleanup on t; it is called once per subtest.
func Run(t *testing.T, newStore func(t *testing.T, now func() time.Time) posgate.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, e *env)
	}{
		{"POSSystemCreateFindList", testPOSSystemCreateFindList},
		{"POSSystemErrors", testPOSSystemErrors},
		{"CompanyCreateFindList", testCompanyCreateFindList},
		{"CompanyUpdate", testCompanyUpdate},
		{"CompanyErrors", testCompanyErrors},
		{"LocationCreateFindList", testLocationCreateFindList},
		{"LocationUpdate", testLocationUpdate},
		{"LocationErrors", testLocationErrors},
		{"TerminalCreateFindList", testTerminalCreateFindList},
		{"TerminalUpdate", testTerminalUpdate},
		{"TerminalErrors", testTerminalErrors},
		{"ClientCreateFindList", testClientCreateFindList},
		{"ClientUpdate", testClientUpdate},
		{"ClientErrors", testClientErrors},
		{"SessionCreateFind", testSessionCreateFind},
		{"SessionsPerHour", testSessionsPerHour},
		{"SessionDeleteExpired", testSessionDeleteExpired},
		{"SigningKeys", testSigningKeys},
		{"KeysAreCaseSensitive", testKeysAreCaseSensitive},
		{"TenantIsolation", testTenantIsolation},
		{"ConcurrentSessions", testConcurrentSessions},
		{"Ping", testPing},
		// Customer-facing content (carousel, receipt promotion).
		{"SlideCreateFindList", testSlideCreateFindList},
		{"SlideUpdateDelete", testSlideUpdateDelete},
		{"SlideErrors", testSlideErrors},
		{"CarouselSettings", testCarouselSettings},
		{"ReceiptPromotions", testReceiptPromotions},
		{"Impressions", testImpressions},
		{"ConcurrentImpressions", testConcurrentImpressions},
		{"EnsureSecret", testEnsureSecret},
		// Coupons and loyalty users (coupons.go).
		{"CouponCreateFind", testCouponCreateFind},
		{"CouponErrors", testCouponErrors},
		{"CouponImport", testCouponImport},
		{"CouponStatus", testCouponStatus},
		{"CouponSearch", testCouponSearch},
		{"ActiveCoupons", testActiveCoupons},
		{"LoyaltyUserCreateFindUpdate", testLoyaltyUserCreateFindUpdate},
		{"LoyaltyUserImport", testLoyaltyUserImport},
		{"LoyaltyUserSearch", testLoyaltyUserSearch},
		{"LoyaltyUserSearchLimit", testLoyaltyUserSearchLimit},
		{"LoyaltyUserSearchAgainstScan", testLoyaltyUserSearchAgainstScan},
		{"CustomerMatch", testCustomerMatch},
		{"PromotionImport", testPromotionImport},
		{"PromotionBudgets", testPromotionBudgets},
		{"PromotionImportErrors", testPromotionImportErrors},
		{"PromotionsValidAt", testPromotionsValidAt},
		{"CarouselPromotions", testCarouselPromotions},
		{"PromotionsLocalTime", testPromotionsLocalTime},
		{"PromotionPaging", testPromotionPaging},
		{"ConcurrentPromotionImports", testConcurrentPromotionImports},
		{"Catalogue", testCatalogue},
		{"ProductImport", testProductImport},
		{"CategoryImport", testCategoryImport},
		{"CatalogueReplaceKeepsFields", testCatalogueReplaceKeepsFields},
		{"PromotionStampFollowsImports", testPromotionStampFollowsImports},
		// Idempotency-Key records (idempotency.go).
		{"IdempotencyClaimCompleteReplay", testIdempotencyClaimCompleteReplay},
		{"IdempotencyRelease", testIdempotencyRelease},
		{"IdempotencyLeaseAndExpiry", testIdempotencyLeaseAndExpiry},
		{"IdempotencyDeleteExpired", testIdempotencyDeleteExpired},
		{"ConcurrentIdempotencyClaims", testConcurrentIdempotencyClaims},
		// Loyalty programs and transactions (transactions.go).
		{"LoyaltyProgram", testLoyaltyProgram},
		{"TransactionLedger", testTransactionLedger},
		{"ConcurrentTransactions", testConcurrentTransactions},
		{"ConcurrentSalesOneCustomer", testConcurrentSalesOneCustomer},
		{"LoneRejectedTransaction", testLoneRejectedTransaction},
		{"ApplyCheckingSession", testApplyCheckingSession},
		{"LedgerItemsSeeEarlier", testLedgerItemsSeeEarlier},
		// Offline kits (offline.go).
		{"OfflineAllowance", testOfflineAllowance},
		{"OfflineRedemptions", testOfflineRedemptions},
		// The audit log (audit.go).
		{"AuditAppendList", testAuditAppendList},
		{"AuditAtomic", testAuditAtomic},
		// People and the browser flows (people.go).
		{"People", testPeople},
		{"SignIns", testSignIns},
		{"AuthCodesAndRefreshTokens", testAuthCodesAndRefreshTokens},
		// Webhook endpoints, the outbox and its delivery (webhooks.go).
		{"WebhookEndpoints", testWebhookEndpoints},
		{"WebhookOutbox", testWebhookOutbox},
		{"WebhookClaims", testWebhookClaims},
		{"WebhookImportEvents", testWebhookImportEvents},
		{"ImportLog", testImportLog},
		{"TerminalEvents", testTerminalEvents},
		{"WebhookSenderOrderAndBackoff", testWebhookSenderOrderAndBackoff},
		{"WebhookSenderDeadAndGone", testWebhookSenderDeadAndGone},
		{"WebhookSweep", testWebhookSweep},
		{"WebhookSenderLeaseMargin", testWebhookSenderLeaseMargin},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{now: time.Date(2031, 5, 17, 10, 20, 30, 123456789, time.FixedZone("UTC+05:30", 5*3600+30*60))}
			tc.fn(t, &env{t: t, s: newStore(t, clk.Now), clk: clk})
		})
	}
}

// clock is the fake clock the suite hands to the store. It starts in a
// non-UTC zone with nanoseconds, so that the store has to normalise it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the current fake time.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// advance moves the clock on by an odd amount (an hour and 777 ns), so that
// every step changes the stored microseconds too.
func (c *clock) advance() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Hour + 777*time.Nanosecond)
	return posgate.Timestamp(c.now)
}

// stamp is the clock's time as the store must return it.
func (c *clock) stamp() time.Time { return posgate.Timestamp(c.Now()) }

// env is one subtest's store and clock, with helpers that create fixtures
// and fail the test on error.
type env struct {
	t   *testing.T
	s   posgate.Store
	clk *clock
}

func (e *env) posSystem(id string) *posgate.POSSystem {
	e.t.Helper()
	p := &posgate.POSSystem{ID: id, Name: "POS " + id}
	if err := e.s.CreatePOSSystem(e.t.Context(), p); err != nil {
		e.t.Fatalf("CreatePOSSystem(%q): %v", id, err)
	}
	return p
}

func (e *env) company(posSystemID, id string, f posgate.Features) *posgate.Company {
	e.t.Helper()
	c := &posgate.Company{POSSystemID: posSystemID, ID: id, Name: "Company " + id + " of " + posSystemID, Status: posgate.StatusActive, Features: f}
	if err := e.s.CreateCompany(e.t.Context(), c); err != nil {
		e.t.Fatalf("CreateCompany(%q, %q): %v", posSystemID, id, err)
	}
	return c
}

func (e *env) location(posSystemID, id, companyID string) *posgate.Location {
	e.t.Helper()
	l := &posgate.Location{POSSystemID: posSystemID, ID: id, CompanyID: companyID, Name: "Location " + id + " of " + posSystemID, Status: posgate.StatusActive}
	if err := e.s.CreateLocation(e.t.Context(), l); err != nil {
		e.t.Fatalf("CreateLocation(%q, %q): %v", posSystemID, id, err)
	}
	return l
}

func (e *env) terminal(posSystemID, locationID, id string) *posgate.Terminal {
	e.t.Helper()
	t := &posgate.Terminal{POSSystemID: posSystemID, LocationID: locationID, ID: id, Name: "Till " + id + " at " + locationID, Status: posgate.StatusActive}
	if err := e.s.CreateTerminal(e.t.Context(), t); err != nil {
		e.t.Fatalf("CreateTerminal(%q, %q, %q): %v", posSystemID, locationID, id, err)
	}
	return t
}

// check fails the test unless got deeply equals want.
func check[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %s\nwant %s", what, show(got), show(want))
	}
}

// show prints v with pointers (also inside slices) dereferenced.
func show(v any) string {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return "nil"
		}
		return fmt.Sprintf("%+v", rv.Elem().Interface())
	case reflect.Slice:
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = show(rv.Index(i).Interface())
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%+v", v)
}

// checkErr fails the test unless err matches sentinel and carries msg.
func checkErr(t *testing.T, what string, err, sentinel error, msg string) {
	t.Helper()
	if !errors.Is(err, sentinel) || posgate.ErrorMessage(err) != msg {
		t.Fatalf("%s: got error %v, want %v with message %q", what, err, sentinel, msg)
	}
}

// must fails the test on err and returns v.
func must[T any](t *testing.T, what string) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// noCompany drops the Company that only FindLocation must fill, for
// comparing the results of the other location methods.
func noCompany(ls ...*posgate.Location) []*posgate.Location {
	out := make([]*posgate.Location, len(ls))
	for i, l := range ls {
		c := *l
		c.Company = nil
		out[i] = &c
	}
	return out
}

// sameEmpty makes an empty CompanyIDs nil, as a store may return either.
func sameEmpty(cs ...*posgate.Client) []*posgate.Client {
	out := make([]*posgate.Client, len(cs))
	for i, c := range cs {
		n := *c
		if len(n.CompanyIDs) == 0 {
			n.CompanyIDs = nil
		}
		out[i] = &n
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func testPOSSystemCreateFindList(t *testing.T, e *env) {
	ctx := t.Context()
	check(t, "ListPOSSystems of an empty store", len(must[[]*posgate.POSSystem](t, "ListPOSSystems")(e.s.ListPOSSystems(ctx))), 0)
	pax := e.posSystem("pax")
	check(t, "CreatePOSSystem sets CreatedAt", pax, &posgate.POSSystem{ID: "pax", Name: "POS pax", CreatedAt: e.clk.stamp()})
	e.clk.advance()
	clover := e.posSystem("clover")
	check(t, "CreatePOSSystem sets CreatedAt", clover.CreatedAt, e.clk.stamp())

	check(t, "FindPOSSystem(pax)", must[*posgate.POSSystem](t, "FindPOSSystem")(e.s.FindPOSSystem(ctx, "pax")), pax)
	check(t, "FindPOSSystem(clover)", must[*posgate.POSSystem](t, "FindPOSSystem")(e.s.FindPOSSystem(ctx, "clover")), clover)
	check(t, "ListPOSSystems", must[[]*posgate.POSSystem](t, "ListPOSSystems")(e.s.ListPOSSystems(ctx)), []*posgate.POSSystem{clover, pax})
}

func testPOSSystemErrors(t *testing.T, e *env) {
	ctx := t.Context()
	clover := e.posSystem("clover")
	e.clk.advance()
	err := e.s.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover", Name: "another"})
	checkErr(t, "CreatePOSSystem of an existing id", err, posgate.ErrConflict, `POS system "clover" already exists`)
	check(t, "FindPOSSystem after the conflict", must[*posgate.POSSystem](t, "FindPOSSystem")(e.s.FindPOSSystem(ctx, "clover")), clover)
	_, err = e.s.FindPOSSystem(ctx, "nope")
	checkErr(t, "FindPOSSystem of an absent id", err, posgate.ErrNotFound, `POS system "nope" not found`)
}

func testCompanyCreateFindList(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.posSystem("pax")
	// Between them, a and b switch every feature on once and off once.
	a := e.company("clover", "zeta", posgate.Features{Coupons: true, Carousel: true, Transactions: true})
	check(t, "CreateCompany sets the times", a, &posgate.Company{
		POSSystemID: "clover", ID: "zeta", Name: "Company zeta of clover", Status: posgate.StatusActive,
		Features:  posgate.Features{Coupons: true, Carousel: true, Transactions: true},
		CreatedAt: e.clk.stamp(), UpdatedAt: e.clk.stamp(),
	})
	e.clk.advance()
	b := &posgate.Company{POSSystemID: "clover", ID: "acme", Name: "Acme", Status: posgate.StatusDisabled,
		Features: posgate.Features{ReceiptPromotion: true, PromotionImport: true}, TimeZone: "America/New_York"}
	if err := e.s.CreateCompany(ctx, b); err != nil {
		t.Fatalf("CreateCompany: %v", err)
	}
	e.clk.advance()
	c := e.company("clover", "midway", posgate.AllFeaturesOn())
	e.company("pax", "other", posgate.Features{})

	for _, want := range []*posgate.Company{a, b, c} {
		got := must[*posgate.Company](t, "FindCompany")(e.s.FindCompany(ctx, "clover", want.ID))
		check(t, "FindCompany("+want.ID+")", got, want)
	}
	check(t, "ListCompanies(clover)", must[[]*posgate.Company](t, "ListCompanies")(e.s.ListCompanies(ctx, "clover")), []*posgate.Company{b, c, a})
	check(t, "ListCompanies(absent)", len(must[[]*posgate.Company](t, "ListCompanies")(e.s.ListCompanies(ctx, "nope"))), 0)
}

func testCompanyUpdate(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	// The switches differ from each other at every step, so that a store
	// that mixes up two columns fails.
	want := *e.company("clover", "acme", posgate.Features{Coupons: true, Carousel: true, Transactions: true})
	steps := []struct {
		name   string
		upd    posgate.CompanyUpdate
		change func(c *posgate.Company)
	}{
		{"name", posgate.CompanyUpdate{Name: ptr("Acme Corp")}, func(c *posgate.Company) { c.Name = "Acme Corp" }},
		{"status", posgate.CompanyUpdate{Status: ptr(posgate.StatusDisabled)}, func(c *posgate.Company) { c.Status = posgate.StatusDisabled }},
		{"features", posgate.CompanyUpdate{Features: &posgate.Features{ReceiptPromotion: true, PromotionImport: true}},
			func(c *posgate.Company) { c.Features = posgate.Features{ReceiptPromotion: true, PromotionImport: true} }},
		{"nothing", posgate.CompanyUpdate{}, func(*posgate.Company) {}},
		{"time zone", posgate.CompanyUpdate{TimeZone: ptr("Europe/Berlin")}, func(c *posgate.Company) { c.TimeZone = "Europe/Berlin" }},
		{"name keeps the time zone", posgate.CompanyUpdate{Name: ptr("Acme GmbH")}, func(c *posgate.Company) { c.Name = "Acme GmbH" }},
		{"everything", posgate.CompanyUpdate{Name: ptr("A"), Status: ptr(posgate.StatusActive), Features: &posgate.Features{Coupons: true, PromotionImport: true},
			TimeZone: ptr("America/New_York")},
			func(c *posgate.Company) {
				c.Name, c.Status, c.Features = "A", posgate.StatusActive, posgate.Features{Coupons: true, PromotionImport: true}
				c.TimeZone = "America/New_York"
			}},
		{"time zone removed", posgate.CompanyUpdate{TimeZone: ptr("")}, func(c *posgate.Company) { c.TimeZone = "" }},
	}
	for _, step := range steps {
		want.UpdatedAt = e.clk.advance()
		step.change(&want)
		got := must[*posgate.Company](t, "UpdateCompany")(e.s.UpdateCompany(ctx, "clover", "acme", step.upd))
		check(t, "UpdateCompany("+step.name+")", got, &want)
		check(t, "FindCompany after updating "+step.name, must[*posgate.Company](t, "FindCompany")(e.s.FindCompany(ctx, "clover", "acme")), &want)
	}
}

func testCompanyErrors(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	acme := e.company("clover", "acme", posgate.AllFeaturesOn())
	err := e.s.CreateCompany(ctx, &posgate.Company{POSSystemID: "clover", ID: "acme", Name: "dup", Status: posgate.StatusActive})
	checkErr(t, "CreateCompany of an existing id", err, posgate.ErrConflict, `company "acme" already exists`)
	check(t, "FindCompany after the conflict", must[*posgate.Company](t, "FindCompany")(e.s.FindCompany(ctx, "clover", "acme")), acme)
	err = e.s.CreateCompany(ctx, &posgate.Company{POSSystemID: "nope", ID: "acme", Name: "orphan", Status: posgate.StatusActive})
	checkErr(t, "CreateCompany of an absent POS system", err, posgate.ErrNotFound, `POS system "nope" not found`)
	_, err = e.s.FindCompany(ctx, "clover", "nope")
	checkErr(t, "FindCompany of an absent id", err, posgate.ErrNotFound, `company "nope" not found`)
	_, err = e.s.FindCompany(ctx, "nope", "acme")
	checkErr(t, "FindCompany of an absent POS system", err, posgate.ErrNotFound, `company "acme" not found`)
	_, err = e.s.UpdateCompany(ctx, "clover", "nope", posgate.CompanyUpdate{Name: ptr("x")})
	checkErr(t, "UpdateCompany of an absent id", err, posgate.ErrNotFound, `company "nope" not found`)
}

func testLocationCreateFindList(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	acme := e.company("clover", "acme", posgate.Features{Coupons: true})
	beta := e.company("clover", "beta", posgate.Features{Carousel: true})
	e.clk.advance()
	l2 := e.location("clover", "L2", "acme")
	check(t, "CreateLocation sets the times", l2, &posgate.Location{
		POSSystemID: "clover", ID: "L2", CompanyID: "acme", Name: "Location L2 of clover", Status: posgate.StatusActive,
		CreatedAt: e.clk.stamp(), UpdatedAt: e.clk.stamp(),
	})
	e.clk.advance()
	l1 := &posgate.Location{POSSystemID: "clover", ID: "L1", CompanyID: "beta", Name: "Beta high street", Status: posgate.StatusDisabled,
		TimeZone: "Europe/Berlin"}
	if err := e.s.CreateLocation(ctx, l1); err != nil {
		t.Fatalf("CreateLocation: %v", err)
	}
	l3 := e.location("clover", "L3", "acme")

	for _, tc := range []struct {
		want    *posgate.Location
		company *posgate.Company
	}{{l1, beta}, {l2, acme}, {l3, acme}} {
		want := *tc.want
		want.Company = tc.company
		check(t, "FindLocation("+want.ID+") with its company", must[*posgate.Location](t, "FindLocation")(e.s.FindLocation(ctx, "clover", want.ID)), &want)
	}
	list := func(companyID string) []*posgate.Location {
		return noCompany(must[[]*posgate.Location](t, "ListLocations")(e.s.ListLocations(ctx, "clover", companyID))...)
	}
	check(t, "ListLocations(all)", list(""), noCompany(l1, l2, l3))
	check(t, "ListLocations(acme)", list("acme"), noCompany(l2, l3))
	check(t, "ListLocations(beta)", list("beta"), noCompany(l1))
	check(t, "ListLocations(absent company)", len(list("nope")), 0)

	// FindLocation reads the company as it is now.
	e.clk.advance()
	acme = must[*posgate.Company](t, "UpdateCompany")(e.s.UpdateCompany(ctx, "clover", "acme", posgate.CompanyUpdate{Status: ptr(posgate.StatusDisabled)}))
	got := must[*posgate.Location](t, "FindLocation")(e.s.FindLocation(ctx, "clover", "L2"))
	check(t, "FindLocation's company after UpdateCompany", got.Company, acme)
}

func testLocationUpdate(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	acme := e.company("clover", "acme", posgate.AllFeaturesOn())
	want := *e.location("clover", "L1", "acme")
	steps := []struct {
		name   string
		upd    posgate.LocationUpdate
		change func(l *posgate.Location)
	}{
		{"name", posgate.LocationUpdate{Name: ptr("High Street")}, func(l *posgate.Location) { l.Name = "High Street" }},
		{"status", posgate.LocationUpdate{Status: ptr(posgate.StatusDisabled)}, func(l *posgate.Location) { l.Status = posgate.StatusDisabled }},
		{"nothing", posgate.LocationUpdate{}, func(*posgate.Location) {}},
		{"both", posgate.LocationUpdate{Name: ptr("Mall"), Status: ptr(posgate.StatusActive)}, func(l *posgate.Location) { l.Name, l.Status = "Mall", posgate.StatusActive }},
		{"time zone", posgate.LocationUpdate{TimeZone: ptr("America/New_York")}, func(l *posgate.Location) { l.TimeZone = "America/New_York" }},
		{"status keeps the time zone", posgate.LocationUpdate{Status: ptr(posgate.StatusDisabled)}, func(l *posgate.Location) { l.Status = posgate.StatusDisabled }},
		{"time zone removed", posgate.LocationUpdate{TimeZone: ptr("")}, func(l *posgate.Location) { l.TimeZone = "" }},
	}
	for _, step := range steps {
		want.UpdatedAt = e.clk.advance()
		step.change(&want)
		got := must[*posgate.Location](t, "UpdateLocation")(e.s.UpdateLocation(ctx, "clover", "L1", step.upd))
		check(t, "UpdateLocation("+step.name+")", noCompany(got), noCompany(&want))
		found := must[*posgate.Location](t, "FindLocation")(e.s.FindLocation(ctx, "clover", "L1"))
		withCompany := want
		withCompany.Company = acme
		check(t, "FindLocation after updating "+step.name, found, &withCompany)
	}
}

func testLocationErrors(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.posSystem("pax")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.company("pax", "paxco", posgate.AllFeaturesOn())
	l1 := e.location("clover", "L1", "acme")
	err := e.s.CreateLocation(ctx, &posgate.Location{POSSystemID: "clover", ID: "L1", CompanyID: "acme", Name: "dup", Status: posgate.StatusActive})
	checkErr(t, "CreateLocation of an existing id", err, posgate.ErrConflict, `location "L1" already exists`)
	got := must[*posgate.Location](t, "FindLocation")(e.s.FindLocation(ctx, "clover", "L1"))
	check(t, "FindLocation after the conflict", noCompany(got), noCompany(l1))
	err = e.s.CreateLocation(ctx, &posgate.Location{POSSystemID: "clover", ID: "L2", CompanyID: "nope", Name: "orphan", Status: posgate.StatusActive})
	checkErr(t, "CreateLocation of an absent company", err, posgate.ErrNotFound, `company "nope" not found`)
	err = e.s.CreateLocation(ctx, &posgate.Location{POSSystemID: "clover", ID: "L2", CompanyID: "paxco", Name: "other tenant's company", Status: posgate.StatusActive})
	checkErr(t, "CreateLocation of another POS system's company", err, posgate.ErrNotFound, `company "paxco" not found`)
	_, err = e.s.FindLocation(ctx, "clover", "L2")
	checkErr(t, "FindLocation of a location whose creation failed", err, posgate.ErrNotFound, `location "L2" not found`)
	_, err = e.s.FindLocation(ctx, "pax", "L1")
	checkErr(t, "FindLocation under another POS system", err, posgate.ErrNotFound, `location "L1" not found`)
	_, err = e.s.UpdateLocation(ctx, "clover", "nope", posgate.LocationUpdate{Name: ptr("x")})
	checkErr(t, "UpdateLocation of an absent id", err, posgate.ErrNotFound, `location "nope" not found`)
}

func testTerminalCreateFindList(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.location("clover", "L1", "acme")
	e.location("clover", "L2", "acme")
	e.clk.advance()
	l2t1 := e.terminal("clover", "L2", "T1")
	check(t, "CreateTerminal sets the times", l2t1, &posgate.Terminal{
		POSSystemID: "clover", LocationID: "L2", ID: "T1", Name: "Till T1 at L2", Status: posgate.StatusActive,
		CreatedAt: e.clk.stamp(), UpdatedAt: e.clk.stamp(),
	})
	e.clk.advance()
	l1t2 := &posgate.Terminal{POSSystemID: "clover", LocationID: "L1", ID: "T2", Name: "Back till", Status: posgate.StatusDisabled}
	if err := e.s.CreateTerminal(ctx, l1t2); err != nil {
		t.Fatalf("CreateTerminal: %v", err)
	}
	l1t1 := e.terminal("clover", "L1", "T1")

	for _, want := range []*posgate.Terminal{l1t1, l1t2, l2t1} {
		got := must[*posgate.Terminal](t, "FindTerminal")(e.s.FindTerminal(ctx, "clover", want.LocationID, want.ID))
		check(t, "FindTerminal("+want.LocationID+", "+want.ID+")", got, want)
	}
	list := func(locationID string) []*posgate.Terminal {
		return must[[]*posgate.Terminal](t, "ListTerminals")(e.s.ListTerminals(ctx, "clover", locationID))
	}
	check(t, "ListTerminals(all)", list(""), []*posgate.Terminal{l1t1, l1t2, l2t1})
	check(t, "ListTerminals(L1)", list("L1"), []*posgate.Terminal{l1t1, l1t2})
	check(t, "ListTerminals(L2)", list("L2"), []*posgate.Terminal{l2t1})
	check(t, "ListTerminals(absent location)", len(list("nope")), 0)
}

func testTerminalUpdate(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.location("clover", "L1", "acme")
	want := *e.terminal("clover", "L1", "T1")
	other := e.terminal("clover", "L1", "T2")
	steps := []struct {
		name   string
		upd    posgate.TerminalUpdate
		change func(t *posgate.Terminal)
	}{
		{"disable", posgate.TerminalUpdate{Status: ptr(posgate.StatusDisabled)}, func(t *posgate.Terminal) { t.Status = posgate.StatusDisabled }},
		{"enable", posgate.TerminalUpdate{Status: ptr(posgate.StatusActive)}, func(t *posgate.Terminal) { t.Status = posgate.StatusActive }},
		{"name", posgate.TerminalUpdate{Name: ptr("Front till")}, func(t *posgate.Terminal) { t.Name = "Front till" }},
		{"nothing", posgate.TerminalUpdate{}, func(*posgate.Terminal) {}},
	}
	for _, step := range steps {
		want.UpdatedAt = e.clk.advance()
		step.change(&want)
		got := must[*posgate.Terminal](t, "UpdateTerminal")(e.s.UpdateTerminal(ctx, "clover", "L1", "T1", step.upd))
		check(t, "UpdateTerminal("+step.name+")", got, &want)
		check(t, "FindTerminal after "+step.name, must[*posgate.Terminal](t, "FindTerminal")(e.s.FindTerminal(ctx, "clover", "L1", "T1")), &want)
	}
	check(t, "the other terminal", must[*posgate.Terminal](t, "FindTerminal")(e.s.FindTerminal(ctx, "clover", "L1", "T2")), other)
}

func testTerminalErrors(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.location("clover", "L1", "acme")
	e.location("clover", "L2", "acme")
	t1 := e.terminal("clover", "L1", "T1")
	err := e.s.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: "clover", LocationID: "L1", ID: "T1", Name: "dup", Status: posgate.StatusActive})
	checkErr(t, "CreateTerminal of an existing id", err, posgate.ErrConflict, `terminal "T1" already exists`)
	check(t, "FindTerminal after the conflict", must[*posgate.Terminal](t, "FindTerminal")(e.s.FindTerminal(ctx, "clover", "L1", "T1")), t1)
	err = e.s.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: "clover", LocationID: "nope", ID: "T1", Name: "orphan", Status: posgate.StatusActive})
	checkErr(t, "CreateTerminal of an absent location", err, posgate.ErrNotFound, `location "nope" not found`)
	_, err = e.s.FindTerminal(ctx, "clover", "L2", "T1")
	checkErr(t, "FindTerminal at another location", err, posgate.ErrNotFound, `terminal "T1" not found`)
	_, err = e.s.FindTerminal(ctx, "clover", "L1", "nope")
	checkErr(t, "FindTerminal of an absent id", err, posgate.ErrNotFound, `terminal "nope" not found`)
	_, err = e.s.UpdateTerminal(ctx, "clover", "L2", "T1", posgate.TerminalUpdate{Status: ptr(posgate.StatusDisabled)})
	checkErr(t, "UpdateTerminal at another location", err, posgate.ErrNotFound, `terminal "T1" not found`)
	check(t, "FindTerminal after the failed update", must[*posgate.Terminal](t, "FindTerminal")(e.s.FindTerminal(ctx, "clover", "L1", "T1")), t1)
}

// secret is a SecretHash with every kind of byte a text column would mangle.
func secret(seed byte) []byte {
	b := make([]byte, 32)
	for i := range b {
		b[i] = seed + byte(i*37)
	}
	b[0], b[1], b[31] = 0x00, 0xff, 0x80
	return b
}

func testClientCreateFindList(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "zeta", posgate.AllFeaturesOn())
	e.company("clover", "acme", posgate.AllFeaturesOn())
	check(t, "ListClients of an empty store", len(must[[]*posgate.Client](t, "ListClients")(e.s.ListClients(ctx))), 0)
	e.clk.advance()
	pos := &posgate.Client{
		ID: "pos-client", Name: "Clover till", SecretHash: secret(1), POSSystemID: "clover",
		Scopes:     []string{posgate.ScopeServiceAPI, posgate.ScopePOSIntegration},
		CompanyIDs: []string{"zeta", "acme"},
	}
	if err := e.s.CreateClient(ctx, pos); err != nil {
		t.Fatalf("CreateClient: %v", err)
	}
	check(t, "CreateClient sets the times", []time.Time{pos.CreatedAt, pos.UpdatedAt}, []time.Time{e.clk.stamp(), e.clk.stamp()})
	e.clk.advance()
	admin := &posgate.Client{ID: "admin", Name: "Operator", SecretHash: secret(2), Scopes: []string{posgate.ScopeAdmin}, Disabled: true}
	if err := e.s.CreateClient(ctx, admin); err != nil {
		t.Fatalf("CreateClient: %v", err)
	}
	unrestricted := &posgate.Client{ID: "z-client", Name: "", SecretHash: secret(3), POSSystemID: "clover",
		Scopes:    []string{posgate.ScopePOSIntegration, posgate.ScopeAdmin, posgate.ScopeServiceAPI},
		RateLimit: &posgate.RateLimit{RequestsPerSecond: 2.5, Burst: 7}}
	if err := e.s.CreateClient(ctx, unrestricted); err != nil {
		t.Fatalf("CreateClient: %v", err)
	}

	for _, want := range []*posgate.Client{pos, admin, unrestricted} {
		got := must[*posgate.Client](t, "FindClient")(e.s.FindClient(ctx, want.ID))
		check(t, "FindClient("+want.ID+")", sameEmpty(got), sameEmpty(want))
	}
	check(t, "ListClients", sameEmpty(must[[]*posgate.Client](t, "ListClients")(e.s.ListClients(ctx))...), sameEmpty(admin, pos, unrestricted))
}

func testClientUpdate(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	want := posgate.Client{ID: "c1", Name: "Till", SecretHash: secret(9), POSSystemID: "clover",
		Scopes: []string{posgate.ScopePOSIntegration}, CompanyIDs: []string{"acme"}}
	if err := e.s.CreateClient(ctx, &want); err != nil {
		t.Fatalf("CreateClient: %v", err)
	}
	steps := []struct {
		name   string
		upd    posgate.ClientUpdate
		change func(c *posgate.Client)
	}{
		{"disable", posgate.ClientUpdate{Disabled: ptr(true)}, func(c *posgate.Client) { c.Disabled = true }},
		{"name", posgate.ClientUpdate{Name: ptr("Renamed")}, func(c *posgate.Client) { c.Name = "Renamed" }},
		{"enable", posgate.ClientUpdate{Disabled: ptr(false)}, func(c *posgate.Client) { c.Disabled = false }},
		{"nothing", posgate.ClientUpdate{}, func(*posgate.Client) {}},
		{"secret", posgate.ClientUpdate{SecretHash: secret(10)}, func(c *posgate.Client) { c.SecretHash = secret(10) }},
		{"nothing keeps the secret", posgate.ClientUpdate{}, func(*posgate.Client) {}},
		{"rate limit", posgate.ClientUpdate{RateLimit: &posgate.RateLimit{RequestsPerSecond: 0.5, Burst: 3}},
			func(c *posgate.Client) { c.RateLimit = &posgate.RateLimit{RequestsPerSecond: 0.5, Burst: 3} }},
		{"nothing keeps the rate limit", posgate.ClientUpdate{}, func(*posgate.Client) {}},
		{"rate limit and name", posgate.ClientUpdate{Name: ptr("Busy"), RateLimit: &posgate.RateLimit{RequestsPerSecond: 1000, Burst: 2000}},
			func(c *posgate.Client) {
				c.Name, c.RateLimit = "Busy", &posgate.RateLimit{RequestsPerSecond: 1000, Burst: 2000}
			}},
		{"clear the rate limit", posgate.ClientUpdate{ClearRateLimit: true}, func(c *posgate.Client) { c.RateLimit = nil }},
	}
	for _, step := range steps {
		want.UpdatedAt = e.clk.advance()
		step.change(&want)
		got := must[*posgate.Client](t, "UpdateClient")(e.s.UpdateClient(ctx, "c1", step.upd))
		check(t, "UpdateClient("+step.name+")", got, &want)
		check(t, "FindClient after "+step.name, must[*posgate.Client](t, "FindClient")(e.s.FindClient(ctx, "c1")), &want)
	}
}

func testClientErrors(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.posSystem("pax")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.company("pax", "paxco", posgate.AllFeaturesOn())
	c1 := &posgate.Client{ID: "c1", Name: "first", SecretHash: secret(1), POSSystemID: "clover", Scopes: []string{posgate.ScopePOSIntegration}}
	if err := e.s.CreateClient(ctx, c1); err != nil {
		t.Fatalf("CreateClient: %v", err)
	}
	err := e.s.CreateClient(ctx, &posgate.Client{ID: "c1", Name: "dup", SecretHash: secret(2), Scopes: []string{posgate.ScopeAdmin}})
	checkErr(t, "CreateClient of an existing id", err, posgate.ErrConflict, `client "c1" already exists`)
	check(t, "FindClient after the conflict", sameEmpty(must[*posgate.Client](t, "FindClient")(e.s.FindClient(ctx, "c1"))), sameEmpty(c1))
	err = e.s.CreateClient(ctx, &posgate.Client{ID: "c2", Name: "orphan", SecretHash: secret(3), POSSystemID: "nope", Scopes: []string{posgate.ScopePOSIntegration}})
	checkErr(t, "CreateClient of an absent POS system", err, posgate.ErrNotFound, `POS system "nope" not found`)
	for _, companyID := range []string{"nope", "paxco"} {
		err = e.s.CreateClient(ctx, &posgate.Client{ID: "c3", Name: "restricted", SecretHash: secret(4), POSSystemID: "clover",
			Scopes: []string{posgate.ScopePOSIntegration}, CompanyIDs: []string{"acme", companyID}})
		checkErr(t, "CreateClient restricted to an absent company", err, posgate.ErrNotFound, `company "`+companyID+`" not found`)
		_, err = e.s.FindClient(ctx, "c3")
		checkErr(t, "FindClient of a client whose creation failed", err, posgate.ErrNotFound, `client "c3" not found`)
	}
	_, err = e.s.UpdateClient(ctx, "nope", posgate.ClientUpdate{Disabled: ptr(true)})
	checkErr(t, "UpdateClient of an absent id", err, posgate.ErrNotFound, `client "nope" not found`)
	check(t, "ListClients after the failures", len(must[[]*posgate.Client](t, "ListClients")(e.s.ListClients(ctx))), 1)
}

// till creates the POS system, company, location and terminal that
// sessions belong to.
func (e *env) till(posSystemID, companyID, locationID, terminalID string) {
	e.t.Helper()
	e.posSystem(posSystemID)
	e.company(posSystemID, companyID, posgate.AllFeaturesOn())
	e.location(posSystemID, locationID, companyID)
	e.terminal(posSystemID, locationID, terminalID)
}

func testSessionCreateFind(t *testing.T, e *env) {
	ctx := t.Context()
	e.till("clover", "acme", "L1", "T1")
	tokyo := time.FixedZone("JST", 9*3600)
	in := &posgate.Session{ID: "3f1c1e0a-8d4b-4f5e-9a61-0c2b7d9e4a11", POSSystemID: "clover", CompanyID: "acme", LocationID: "L1", TerminalID: "T1",
		CreatedAt: time.Date(2030, 1, 2, 3, 4, 5, 999999999, tokyo), ExpiresAt: time.Date(2030, 1, 3, 3, 4, 5, 1001, tokyo)}
	if err := e.s.CreateSession(ctx, in); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	want := *in
	want.CreatedAt = time.Date(2030, 1, 1, 18, 4, 5, 999999000, time.UTC)
	want.ExpiresAt = time.Date(2030, 1, 2, 18, 4, 5, 1000, time.UTC)
	check(t, "FindSession", must[*posgate.Session](t, "FindSession")(e.s.FindSession(ctx, in.ID)), &want)

	dup := want
	dup.ExpiresAt = dup.ExpiresAt.Add(time.Hour)
	checkErr(t, "CreateSession of an existing id", e.s.CreateSession(ctx, &dup), posgate.ErrConflict, `session "`+in.ID+`" already exists`)
	check(t, "FindSession after the conflict", must[*posgate.Session](t, "FindSession")(e.s.FindSession(ctx, in.ID)), &want)
	_, err := e.s.FindSession(ctx, "nope")
	checkErr(t, "FindSession of an absent id", err, posgate.ErrNotFound, `session "nope" not found`)
	orphan := want
	orphan.ID, orphan.TerminalID = "orphan", "T9"
	checkErr(t, "CreateSession at an absent terminal", e.s.CreateSession(ctx, &orphan), posgate.ErrNotFound, `terminal "T9" not found`)
}

func testSessionsPerHour(t *testing.T, e *env) {
	ctx := t.Context()
	e.till("clover", "acme", "L1", "T1")
	e.company("clover", "zeta", posgate.AllFeaturesOn())
	e.location("clover", "L2", "zeta")
	e.terminal("clover", "L2", "T2")
	base := time.Date(2030, 3, 4, 10, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{base.Add(-time.Microsecond), base, base.Add(59*time.Minute + 59*time.Second), base.Add(time.Hour + time.Minute),
		base.Add(3*time.Hour - time.Microsecond), base.Add(3 * time.Hour)} {
		s := &posgate.Session{ID: fmt.Sprintf("s-%d", i), POSSystemID: "clover", CompanyID: "acme", LocationID: "L1", TerminalID: "T1",
			CreatedAt: at.In(time.FixedZone("JST", 9*3600)), ExpiresAt: at.Add(24 * time.Hour)}
		if err := e.s.CreateSession(ctx, s); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
	}
	if err := e.s.CreateSession(ctx, &posgate.Session{ID: "other", POSSystemID: "clover", CompanyID: "zeta", LocationID: "L2", TerminalID: "T2",
		CreatedAt: base, ExpiresAt: base.Add(time.Hour)}); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	got := must[map[time.Time]int](t, "SessionsPerHour")(e.s.SessionsPerHour(ctx, "clover", "acme", base, base.Add(3*time.Hour)))
	check(t, "SessionsPerHour", got, map[time.Time]int{base: 2, base.Add(time.Hour): 1, base.Add(2 * time.Hour): 1})
	check(t, "SessionsPerHour of another POS system", len(must[map[time.Time]int](t, "SessionsPerHour")(e.s.SessionsPerHour(ctx, "pax", "acme", base, base.Add(time.Hour)))), 0)
}

func testSessionDeleteExpired(t *testing.T, e *env) {
	ctx := t.Context()
	e.till("clover", "acme", "L1", "T1")
	cut := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	expiries := map[string]time.Time{
		"long-ago":     cut.Add(-48 * time.Hour),
		"just-before":  cut.Add(-time.Microsecond),
		"exactly-then": cut,
		"just-after":   cut.Add(time.Microsecond),
	}
	for id, exp := range expiries {
		s := &posgate.Session{ID: id, POSSystemID: "clover", CompanyID: "acme", LocationID: "L1", TerminalID: "T1",
			CreatedAt: exp.Add(-24 * time.Hour), ExpiresAt: exp.In(time.FixedZone("EST", -5*3600))}
		if err := e.s.CreateSession(ctx, s); err != nil {
			t.Fatalf("CreateSession(%s): %v", id, err)
		}
	}
	n := must[int64](t, "DeleteExpiredSessions")(e.s.DeleteExpiredSessions(ctx, cut.In(time.FixedZone("CEST", 2*3600))))
	check(t, "DeleteExpiredSessions count", n, 2)
	for id, gone := range map[string]bool{"long-ago": true, "just-before": true, "exactly-then": false, "just-after": false} {
		_, err := e.s.FindSession(ctx, id)
		if gone {
			checkErr(t, "FindSession of a deleted session", err, posgate.ErrNotFound, `session "`+id+`" not found`)
		} else if err != nil {
			t.Fatalf("FindSession(%s) of a session that has not expired: %v", id, err)
		}
	}
	check(t, "DeleteExpiredSessions count again", must[int64](t, "DeleteExpiredSessions")(e.s.DeleteExpiredSessions(ctx, cut)), 0)
}

func testSigningKeys(t *testing.T, e *env) {
	ctx := t.Context()
	check(t, "ListSigningKeys of an empty store", len(must[[]*posgate.SigningKey](t, "ListSigningKeys")(e.s.ListSigningKeys(ctx))), 0)
	ny := time.FixedZone("EDT", -4*3600)
	base := time.Date(2030, 3, 1, 20, 0, 0, 123456789, ny) // 2030-03-02T00:00:00.123456789Z
	keys := []*posgate.SigningKey{
		{ID: "k-newest", Algorithm: "ES256", PrivateKey: secret(7), CreatedAt: base.Add(2 * time.Hour)},
		{ID: "k-oldest", Algorithm: "ES256", PrivateKey: secret(5), CreatedAt: base},
		{ID: "k-middle", Algorithm: "ES256", PrivateKey: secret(6), CreatedAt: base.Add(time.Hour)},
	}
	for _, k := range keys {
		if err := e.s.CreateSigningKey(ctx, k); err != nil {
			t.Fatalf("CreateSigningKey(%s): %v", k.ID, err)
		}
	}
	stored := func(k *posgate.SigningKey, createdAt time.Time) *posgate.SigningKey {
		c := *k
		c.CreatedAt = createdAt
		return &c
	}
	newest := stored(keys[0], time.Date(2030, 3, 2, 2, 0, 0, 123456000, time.UTC))
	oldest := stored(keys[1], time.Date(2030, 3, 2, 0, 0, 0, 123456000, time.UTC))
	middle := stored(keys[2], time.Date(2030, 3, 2, 1, 0, 0, 123456000, time.UTC))
	list := func() []*posgate.SigningKey {
		return must[[]*posgate.SigningKey](t, "ListSigningKeys")(e.s.ListSigningKeys(ctx))
	}
	check(t, "ListSigningKeys, oldest first", list(), []*posgate.SigningKey{oldest, middle, newest})

	err := e.s.CreateSigningKey(ctx, &posgate.SigningKey{ID: "k-oldest", Algorithm: "ES256", PrivateKey: secret(8), CreatedAt: base.Add(3 * time.Hour)})
	checkErr(t, "CreateSigningKey of an existing id", err, posgate.ErrConflict, `signing key "k-oldest" already exists`)
	if err := e.s.DeleteSigningKey(ctx, "k-middle"); err != nil {
		t.Fatalf("DeleteSigningKey: %v", err)
	}
	check(t, "ListSigningKeys after a delete", list(), []*posgate.SigningKey{oldest, newest})
	checkErr(t, "DeleteSigningKey of an absent id", e.s.DeleteSigningKey(ctx, "k-middle"), posgate.ErrNotFound, `signing key "k-middle" not found`)

	// ReplaceSigningKey swaps the private key only while it is the one the
	// caller read.
	check(t, "ReplaceSigningKey with a stale old", must[bool](t, "ReplaceSigningKey")(e.s.ReplaceSigningKey(ctx, "k-oldest", secret(9), secret(10))), false)
	check(t, "ReplaceSigningKey of an absent id", must[bool](t, "ReplaceSigningKey")(e.s.ReplaceSigningKey(ctx, "k-middle", secret(6), secret(10))), false)
	check(t, "ListSigningKeys after refused replaces", list(), []*posgate.SigningKey{oldest, newest})
	check(t, "ReplaceSigningKey", must[bool](t, "ReplaceSigningKey")(e.s.ReplaceSigningKey(ctx, "k-oldest", secret(5), secret(10))), true)
	replaced := *oldest
	replaced.PrivateKey = secret(10)
	check(t, "ListSigningKeys after a replace", list(), []*posgate.SigningKey{&replaced, newest})
}

func testKeysAreCaseSensitive(t *testing.T, e *env) {
	ctx := t.Context()
	// Each pair differs only in case; both members must be separate objects.
	e.posSystem("clover")
	e.posSystem("CLOVER")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.company("clover", "ACME", posgate.Features{})
	e.location("clover", "loc1", "acme")
	e.location("clover", "LOC1", "ACME")
	e.terminal("clover", "loc1", "t1")
	e.terminal("clover", "loc1", "T1")
	for _, id := range []string{"client", "Client"} {
		if err := e.s.CreateClient(ctx, &posgate.Client{ID: id, Name: id, SecretHash: secret(1), Scopes: []string{posgate.ScopeAdmin}}); err != nil {
			t.Fatalf("CreateClient(%s): %v", id, err)
		}
	}

	check(t, "FindPOSSystem(CLOVER).Name", must[*posgate.POSSystem](t, "FindPOSSystem")(e.s.FindPOSSystem(ctx, "CLOVER")).Name, "POS CLOVER")
	check(t, "FindCompany(ACME).Features", must[*posgate.Company](t, "FindCompany")(e.s.FindCompany(ctx, "clover", "ACME")).Features, posgate.Features{})
	check(t, "FindLocation(LOC1).CompanyID", must[*posgate.Location](t, "FindLocation")(e.s.FindLocation(ctx, "clover", "LOC1")).CompanyID, "ACME")
	check(t, "FindLocation(loc1).CompanyID", must[*posgate.Location](t, "FindLocation")(e.s.FindLocation(ctx, "clover", "loc1")).CompanyID, "acme")
	check(t, "FindTerminal(T1).ID", must[*posgate.Terminal](t, "FindTerminal")(e.s.FindTerminal(ctx, "clover", "loc1", "T1")).ID, "T1")
	check(t, "FindClient(Client).Name", must[*posgate.Client](t, "FindClient")(e.s.FindClient(ctx, "Client")).Name, "Client")

	_, err := e.s.FindPOSSystem(ctx, "Clover")
	checkErr(t, "FindPOSSystem(Clover)", err, posgate.ErrNotFound, `POS system "Clover" not found`)
	_, err = e.s.FindCompany(ctx, "clover", "Acme")
	checkErr(t, "FindCompany(Acme)", err, posgate.ErrNotFound, `company "Acme" not found`)
	_, err = e.s.FindLocation(ctx, "clover", "Loc1")
	checkErr(t, "FindLocation(Loc1)", err, posgate.ErrNotFound, `location "Loc1" not found`)
	_, err = e.s.FindTerminal(ctx, "clover", "LOC1", "t1")
	checkErr(t, "FindTerminal(LOC1, t1)", err, posgate.ErrNotFound, `terminal "t1" not found`)
	_, err = e.s.FindClient(ctx, "CLIENT")
	checkErr(t, "FindClient(CLIENT)", err, posgate.ErrNotFound, `client "CLIENT" not found`)
	_, err = e.s.FindCompany(ctx, "CLOVER", "acme")
	checkErr(t, "FindCompany under CLOVER", err, posgate.ErrNotFound, `company "acme" not found`)

	check(t, "len(ListPOSSystems)", len(must[[]*posgate.POSSystem](t, "ListPOSSystems")(e.s.ListPOSSystems(ctx))), 2)
	check(t, "len(ListLocations(acme))", len(must[[]*posgate.Location](t, "ListLocations")(e.s.ListLocations(ctx, "clover", "acme"))), 1)
	check(t, "len(ListTerminals(loc1))", len(must[[]*posgate.Terminal](t, "ListTerminals")(e.s.ListTerminals(ctx, "clover", "loc1"))), 2)
	check(t, "len(ListTerminals(LOC1))", len(must[[]*posgate.Terminal](t, "ListTerminals")(e.s.ListTerminals(ctx, "clover", "LOC1"))), 0)
}

func testTenantIsolation(t *testing.T, e *env) {
	ctx := t.Context()
	// Both POS systems use the same company, location and terminal ids.
	e.till("clover", "acme", "L1", "T1")
	e.till("pax", "acme", "L1", "T1")
	paxCompany := must[*posgate.Company](t, "FindCompany")(e.s.FindCompany(ctx, "pax", "acme"))
	paxLocation := must[*posgate.Location](t, "FindLocation")(e.s.FindLocation(ctx, "pax", "L1"))
	paxTerminal := must[*posgate.Terminal](t, "FindTerminal")(e.s.FindTerminal(ctx, "pax", "L1", "T1"))
	check(t, "pax location's company", paxLocation.Company, paxCompany)

	e.clk.advance()
	disabled := ptr(posgate.StatusDisabled)
	cloverCompany := must[*posgate.Company](t, "UpdateCompany")(e.s.UpdateCompany(ctx, "clover", "acme",
		posgate.CompanyUpdate{Name: ptr("changed"), Status: disabled, Features: &posgate.Features{}}))
	must[*posgate.Location](t, "UpdateLocation")(e.s.UpdateLocation(ctx, "clover", "L1", posgate.LocationUpdate{Name: ptr("changed"), Status: disabled}))
	must[*posgate.Terminal](t, "UpdateTerminal")(e.s.UpdateTerminal(ctx, "clover", "L1", "T1", posgate.TerminalUpdate{Name: ptr("changed"), Status: disabled}))

	check(t, "clover company after its update", cloverCompany.Name, "changed")
	check(t, "pax company after clover's update", must[*posgate.Company](t, "FindCompany")(e.s.FindCompany(ctx, "pax", "acme")), paxCompany)
	check(t, "pax location after clover's update", must[*posgate.Location](t, "FindLocation")(e.s.FindLocation(ctx, "pax", "L1")), paxLocation)
	check(t, "pax terminal after clover's update", must[*posgate.Terminal](t, "FindTerminal")(e.s.FindTerminal(ctx, "pax", "L1", "T1")), paxTerminal)
	check(t, "clover location's company", must[*posgate.Location](t, "FindLocation")(e.s.FindLocation(ctx, "clover", "L1")).Company, cloverCompany)

	check(t, "ListCompanies(pax)", must[[]*posgate.Company](t, "ListCompanies")(e.s.ListCompanies(ctx, "pax")), []*posgate.Company{paxCompany})
	check(t, "ListLocations(pax, acme)", noCompany(must[[]*posgate.Location](t, "ListLocations")(e.s.ListLocations(ctx, "pax", "acme"))...), noCompany(paxLocation))
	check(t, "ListTerminals(pax, all)", must[[]*posgate.Terminal](t, "ListTerminals")(e.s.ListTerminals(ctx, "pax", "")), []*posgate.Terminal{paxTerminal})
	check(t, "ListTerminals(pax, L1)", must[[]*posgate.Terminal](t, "ListTerminals")(e.s.ListTerminals(ctx, "pax", "L1")), []*posgate.Terminal{paxTerminal})
}

func testConcurrentSessions(t *testing.T, e *env) {
	ctx := t.Context()
	e.till("clover", "acme", "L1", "T1")
	const n = 50
	created := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = e.s.CreateSession(ctx, &posgate.Session{ID: fmt.Sprintf("session-%02d", i), POSSystemID: "clover", CompanyID: "acme",
				LocationID: "L1", TerminalID: "T1", CreatedAt: created.Add(time.Duration(i) * time.Second), ExpiresAt: created.Add(24 * time.Hour)})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("CreateSession %d of %d concurrent ones: %v", i, n, err)
		}
	}
	for i := range n {
		got := must[*posgate.Session](t, "FindSession")(e.s.FindSession(ctx, fmt.Sprintf("session-%02d", i)))
		check(t, "concurrent session's CreatedAt", got.CreatedAt, created.Add(time.Duration(i)*time.Second))
	}
	check(t, "DeleteExpiredSessions of all of them", must[int64](t, "DeleteExpiredSessions")(e.s.DeleteExpiredSessions(ctx, created.Add(25*time.Hour))), n)
}

func testPing(t *testing.T, e *env) {
	if err := e.s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

// RunLoyaltySearch runs the keyword-search tests of Run alone, for a store
// to run again with its lookups tuned otherwise (a lower range limit, so
// that the suite's few thousand users reach both ways of reading a prefix).
func RunLoyaltySearch(t *testing.T, newStore func(t *testing.T, now func() time.Time) posgate.Store) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, e *env)
	}{
		{"LoyaltyUserSearch", testLoyaltyUserSearch},
		{"LoyaltyUserSearchLimit", testLoyaltyUserSearchLimit},
		{"LoyaltyUserSearchAgainstScan", testLoyaltyUserSearchAgainstScan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{now: time.Date(2031, 5, 17, 10, 20, 30, 0, time.UTC)}
			tc.fn(t, &env{t: t, s: newStore(t, clk.Now), clk: clk})
		})
	}
}
