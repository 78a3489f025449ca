package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// day is a UTC time in the week of Sunday 2031-06-01 (day 1 is that Sunday).
func day(d, hour, minute int) time.Time {
	return time.Date(2031, 6, d, hour, minute, 0, 0, time.UTC)
}

// tp is the instant t as a promotion's time.
func tp(t time.Time) *posgate.PromotionTime {
	p := posgate.InstantTime(t)
	return &p
}

// wp is t's date and clock as a wall-clock time of a promotion.
func wp(t time.Time) *posgate.PromotionTime {
	p := posgate.WallTime(t)
	return &p
}

// place creates a location and, where absent, its company and POS system.
func (e *env) place(posSystemID, companyID, locationID string) {
	e.t.Helper()
	ctx := e.t.Context()
	if err := e.s.CreatePOSSystem(ctx, &posgate.POSSystem{ID: posSystemID}); err != nil && !errors.Is(err, posgate.ErrConflict) {
		e.t.Fatal(err)
	}
	if err := e.s.CreateCompany(ctx, &posgate.Company{POSSystemID: posSystemID, ID: companyID, Status: posgate.StatusActive}); err != nil && !errors.Is(err, posgate.ErrConflict) {
		e.t.Fatal(err)
	}
	e.location(posSystemID, locationID, companyID)
}

// promo builds a promotion the way an import item arrives: lists with
// repeats, days out of order, times in another zone with nanoseconds.
func promo(id string, locations ...string) *posgate.Promotion {
	zone := time.FixedZone("UTC-3", -3*3600)
	return &posgate.Promotion{
		ID:          id,
		Name:        "Promotion " + id,
		LocationIDs: locations,
		CategoryIDs: []string{"C2", "C1", "C2"},
		ProductIDs:  []string{"P1"},
		Validities: []posgate.PromotionValidity{
			{StartDate: tp(time.Date(2031, 6, 1, 0, 0, 0, 123, zone)), EndDate: tp(day(14, 23, 59))},
			{StartDate: tp(day(21, 0, 0)), Recurrence: &posgate.PromotionRecurrence{
				DaysOfWeek: []string{"Saturday", "Sunday", "Saturday"}, StartDate: tp(day(21, 8, 0)), EndDate: tp(day(21, 20, 0))}},
		},
		Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionPercentage, Value: 12.5}, {PromotionType: posgate.PromotionAmount, Value: 0.1 + 0.2}},
	}
}

// accept normalises p as the import's checks do before it reaches a store.
func accept(t *testing.T, companyID string, locations []string, ps ...*posgate.Promotion) {
	t.Helper()
	c := posgate.NewPromotionChecker(companyID, locations, nil)
	for i, p := range ps {
		if !c.Check(i+1, p) {
			t.Fatalf("test promotion %s fails the checks: %+v", p.ID, c.Result(0, 0).Errors)
		}
	}
}

// importPromotions imports ps (already accepted) and checks the counts.
func (e *env) importPromotions(posSystemID, companyID string, wantCreated, wantUpdated int, ps ...*posgate.Promotion) {
	e.t.Helper()
	ctx := e.t.Context()
	imp, err := e.s.BeginPromotionImport(ctx, posSystemID, companyID)
	if err != nil {
		e.t.Fatalf("BeginPromotionImport(%s, %s): %v", posSystemID, companyID, err)
	}
	defer imp.Rollback()
	for _, p := range ps {
		if err := imp.Add(ctx, p); err != nil {
			e.t.Fatalf("Add(%s): %v", p.ID, err)
		}
	}
	created, updated, err := imp.Commit(ctx)
	if err != nil {
		e.t.Fatalf("Commit: %v", err)
	}
	if created != wantCreated || updated != wantUpdated {
		e.t.Fatalf("Commit: created %d, updated %d; want %d, %d", created, updated, wantCreated, wantUpdated)
	}
}

// stored is p as a store returns it after an import at the clock's time.
func stored(p *posgate.Promotion, posSystemID, companyID string, created, updated time.Time) *posgate.Promotion {
	s := *p
	s.POSSystemID, s.CompanyID, s.CreatedAt, s.UpdatedAt = posSystemID, companyID, created, updated
	return &s
}

func (e *env) promotions(posSystemID, companyID string) []*posgate.Promotion {
	e.t.Helper()
	ps, total, err := e.s.ListPromotions(e.t.Context(), posSystemID, companyID, 0, 0)
	if err != nil {
		e.t.Fatalf("ListPromotions: %v", err)
	}
	if total != len(ps) {
		e.t.Fatalf("ListPromotions: total %d for %d promotions", total, len(ps))
	}
	return ps
}

func testPromotionImport(t *testing.T, e *env) {
	ctx := t.Context()
	e.place("clover", "acme", "L1")
	e.location("clover", "L2", "acme")
	locs := []string{"L1", "L2"}
	a, b, c := promo("A", "L1", "L2", "L1"), promo("B"), promo("C", "L2")
	c.Validities, c.Results, c.CategoryIDs = nil, nil, nil
	// B has every field of the promotion model (docs/api.md §9.1).
	b.Priority, b.Stackable, b.MinQuantity, b.MinBasketAmount, b.RequiresCoupon = -3, true, 2.5, 10.25, true
	b.Results = append(b.Results, posgate.PromotionResult{PromotionType: posgate.PromotionBuyXGetY, Value: 50, BuyQuantity: 2, GetQuantity: 1,
		GetProductIDs: []string{"P2", "P3", "P2"}, MaxApplications: 4}, posgate.PromotionResult{PromotionType: posgate.PromotionFixedPrice, Value: 1.5})
	accept(t, "acme", locs, a, b, c)
	check(t, "normalised location list", a.LocationIDs, []string{"L1", "L2"})
	check(t, "normalised days", a.Validities[1].Recurrence.DaysOfWeek, []string{"Sunday", "Saturday"})
	first := e.clk.stamp()
	e.importPromotions("clover", "acme", 3, 0, c, a, b)

	want := []*posgate.Promotion{stored(a, "clover", "acme", first, first), stored(b, "clover", "acme", first, first), stored(c, "clover", "acme", first, first)}
	check(t, "ListPromotions after the first import", e.promotions("clover", "acme"), want)
	check(t, "FindPromotion(A)", must[*posgate.Promotion](t, "FindPromotion")(e.s.FindPromotion(ctx, "clover", "acme", "A")), want[0])
	check(t, "A's first validity start (UTC, microseconds)", *want[0].Validities[0].StartDate, posgate.InstantTime(day(1, 3, 0)))

	// A second import replaces A's lists (not a merge), leaves B alone and
	// creates D.
	second := e.clk.advance()
	a2 := promo("A", "L2")
	a2.Name, a2.UseForAllProducts, a2.ProductIDs, a2.CategoryIDs = "Renamed", true, []string{}, []string{"C9"}
	a2.Validities = a2.Validities[1:]
	a2.Results = []posgate.PromotionResult{{PromotionType: posgate.PromotionAmount, Value: 3}}
	d := promo("D", "L1")
	accept(t, "acme", locs, a2, d)
	e.importPromotions("clover", "acme", 1, 1, a2, d)
	want = []*posgate.Promotion{stored(a2, "clover", "acme", first, second), want[1], want[2], stored(d, "clover", "acme", second, second)}
	check(t, "ListPromotions after the second import", e.promotions("clover", "acme"), want)
	// A no longer applies at L1.
	at := day(22, 12, 0) // Sunday noon: A's and D's recurring window
	check(t, "valid at L1 after A dropped it", promotionIDs(must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(e.s.ListPromotionsValidAt(ctx, "clover", "acme", "L1", at))), []string{"B", "D"})
	check(t, "valid at L2", promotionIDs(must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(e.s.ListPromotionsValidAt(ctx, "clover", "acme", "L2", at))), []string{"A", "B", "C"})

	// Re-sending the same import creates nothing and updates each once,
	// without changing them (UpdatedAt stays); a changed one gets the new
	// UpdatedAt.
	e.clk.advance()
	e.importPromotions("clover", "acme", 0, 2, a2, d)
	check(t, "promotions after a re-sent import", e.promotions("clover", "acme"), want)
	third := e.clk.advance()
	d3 := *d
	d3.UseForAllCategories = true
	e.importPromotions("clover", "acme", 0, 2, a2, &d3)
	want[3] = stored(&d3, "clover", "acme", second, third)
	check(t, "promotions after changing one", e.promotions("clover", "acme"), want)
	// A change of the model's fields alone is a change too.
	fourth := e.clk.advance()
	d4 := d3
	d4.Priority = 7
	e.importPromotions("clover", "acme", 0, 1, &d4)
	want[3] = stored(&d4, "clover", "acme", second, fourth)
	check(t, "promotions after changing a priority", e.promotions("clover", "acme"), want)

	// An empty import is fine.
	e.importPromotions("clover", "acme", 0, 0)
}

func testPromotionImportErrors(t *testing.T, e *env) {
	ctx := t.Context()
	e.place("clover", "acme", "L1")
	_, err := e.s.BeginPromotionImport(ctx, "clover", "nope")
	checkErr(t, "BeginPromotionImport(unknown company)", err, posgate.ErrNotFound, `company "nope" not found`)
	_, err = e.s.BeginPromotionImport(ctx, "pax", "acme")
	checkErr(t, "BeginPromotionImport(other POS system)", err, posgate.ErrNotFound, `company "acme" not found`)

	a, b := promo("A", "L1"), promo("B")
	accept(t, "acme", []string{"L1"}, a, b)
	imp := must[posgate.PromotionImport](t, "BeginPromotionImport")(e.s.BeginPromotionImport(ctx, "clover", "acme"))
	for _, p := range []*posgate.Promotion{a, b, a} {
		if err := imp.Add(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = imp.Commit(ctx)
	checkErr(t, "Commit with A twice", err, posgate.ErrConflict, `promotion "A" is given twice in this import`)
	check(t, "promotions after a failed commit", len(e.promotions("clover", "acme")), 0)

	imp = must[posgate.PromotionImport](t, "BeginPromotionImport")(e.s.BeginPromotionImport(ctx, "clover", "acme"))
	if err := imp.Add(ctx, b); err != nil {
		t.Fatal(err)
	}
	imp.Rollback()
	imp.Rollback() // twice is fine
	check(t, "promotions after a rollback", len(e.promotions("clover", "acme")), 0)
	if _, _, err := imp.Commit(ctx); err == nil {
		t.Fatal("Commit after Rollback succeeded")
	}
	_, err = e.s.FindPromotion(ctx, "clover", "acme", "A")
	checkErr(t, "FindPromotion(rolled back)", err, posgate.ErrNotFound, `promotion "A" not found`)

	// An import that is dropped without Commit or Rollback's help (a
	// cancelled request) stores nothing either.
	cctx, cancel := context.WithCancel(ctx)
	imp = must[posgate.PromotionImport](t, "BeginPromotionImport")(e.s.BeginPromotionImport(cctx, "clover", "acme"))
	if err := imp.Add(cctx, a); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, _, err := imp.Commit(cctx); err == nil {
		t.Fatal("Commit with a cancelled context succeeded")
	}
	imp.Rollback()
	check(t, "promotions after a cancelled import", len(e.promotions("clover", "acme")), 0)
}

func testPromotionsValidAt(t *testing.T, e *env) {
	ctx := t.Context()
	e.place("clover", "acme", "L1")
	e.location("clover", "L2", "acme")
	e.place("clover", "other", "X1") // another company of the same POS system
	e.place("pax", "acme", "L1")     // the same ids under another POS system

	mk := func(id string, locations []string, vs ...posgate.PromotionValidity) *posgate.Promotion {
		return &posgate.Promotion{ID: id, Name: id, LocationIDs: locations, Validities: vs}
	}
	period := func(from, until *posgate.PromotionTime) posgate.PromotionValidity {
		return posgate.PromotionValidity{StartDate: from, EndDate: until}
	}
	always := mk("always", nil)
	june := mk("june", []string{"L1"}, period(tp(day(1, 0, 0)), tp(day(30, 23, 59))))
	since := mk("since", []string{"L2"}, period(tp(day(10, 0, 0)), nil))
	until := mk("until", []string{"L1", "L2"}, period(nil, tp(day(10, 0, 0))))
	// Two periods with a gap (the 10th to the 20th) between them.
	gap := mk("gap", nil, period(tp(day(1, 0, 0)), tp(day(9, 23, 59))), period(tp(day(21, 0, 0)), tp(day(30, 0, 0))))
	// Friday 22:00 to 02:00, through June.
	night := mk("night", []string{"L1"}, posgate.PromotionValidity{StartDate: tp(day(1, 0, 0)), EndDate: tp(day(30, 0, 0)),
		Recurrence: &posgate.PromotionRecurrence{DaysOfWeek: []string{"Friday"}, StartDate: tp(day(6, 22, 0)), EndDate: tp(day(7, 2, 0))}})
	all := []*posgate.Promotion{always, june, since, until, gap, night}
	accept(t, "acme", []string{"L1", "L2"}, all...)
	e.importPromotions("clover", "acme", len(all), 0, all...)
	other := mk("elsewhere", nil)
	accept(t, "other", nil, other)
	e.importPromotions("clover", "other", 1, 0, other)
	paxOnly := mk("pax-only", []string{"L1"})
	accept(t, "acme", []string{"L1"}, paxOnly)
	e.importPromotions("pax", "acme", 1, 0, paxOnly)

	for _, tc := range []struct {
		location string
		at       time.Time
		want     []string
	}{
		{"L1", day(5, 12, 0), []string{"always", "gap", "june", "until"}},          // Thursday the 5th
		{"L1", day(6, 23, 0), []string{"always", "gap", "june", "night", "until"}}, // Friday night
		{"L1", day(7, 1, 59), []string{"always", "gap", "june", "night", "until"}}, // still Friday's window
		{"L1", day(7, 2, 0), []string{"always", "gap", "june", "until"}},           // the window has closed
		{"L1", day(8, 1, 0), []string{"always", "gap", "june", "until"}},           // Sunday 01:00: no Saturday window
		{"L1", day(13, 23, 0), []string{"always", "june", "night"}},                // the next Friday
		{"L1", day(10, 0, 0), []string{"always", "june", "until"}},                 // both bounds are inclusive
		{"L1", day(15, 12, 0), []string{"always", "june"}},                         // in the gap
		{"L2", day(15, 12, 0), []string{"always", "since"}},
		{"L2", day(5, 12, 0), []string{"always", "gap", "until"}},
		{"L1", day(31, 0, 0), []string{"always"}}, // July: only open-ended ones
		{"L2", day(31, 0, 0), []string{"always", "since"}},
		{"", day(15, 12, 0), []string{"always", "june", "since"}},
		{"X1", day(15, 12, 0), []string{}}, // another company's location: not even "always"
		{"NOPE", day(15, 12, 0), []string{}},
	} {
		got := must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(e.s.ListPromotionsValidAt(ctx, "clover", "acme", tc.location, tc.at))
		check(t, fmt.Sprintf("valid at %q %s", tc.location, tc.at.Format(time.RFC3339)), promotionIDs(got), tc.want)
	}
	got := must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(e.s.ListPromotionsValidAt(ctx, "clover", "other", "X1", day(15, 0, 0)))
	check(t, "valid at the other company's location", promotionIDs(got), []string{"elsewhere"})
	got = must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(e.s.ListPromotionsValidAt(ctx, "pax", "acme", "L1", day(15, 0, 0)))
	check(t, "valid at pax's L1", promotionIDs(got), []string{"pax-only"})
	full := must[*posgate.Promotion](t, "FindPromotion")(e.s.FindPromotion(ctx, "clover", "acme", "night"))
	check(t, "a promotion from ListPromotionsValidAt", must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(
		e.s.ListPromotionsValidAt(ctx, "clover", "acme", "L1", day(13, 23, 0)))[2], full)
}

func promotionIDs(ps []*posgate.Promotion) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

func testPromotionPaging(t *testing.T, e *env) {
	ctx := t.Context()
	e.place("clover", "acme", "L1")
	e.place("clover", "other", "X1")
	// Enough for several of a store's batches, and a replacement of many.
	const n = 1234
	ps := make([]*posgate.Promotion, n)
	for i := range ps {
		ps[i] = &posgate.Promotion{ID: fmt.Sprintf("P%05d", n-i), Name: "p", LocationIDs: []string{"L1"}}
	}
	accept(t, "acme", []string{"L1"}, ps...)
	e.importPromotions("clover", "acme", n, 0, ps...)
	e.importPromotions("clover", "other", 1, 0, &posgate.Promotion{ID: "P00001", Name: "other's", LocationIDs: []string{}, CategoryIDs: []string{},
		ProductIDs: []string{}, Validities: []posgate.PromotionValidity{}, Results: []posgate.PromotionResult{}})

	page, total, err := e.s.ListPromotions(ctx, "clover", "acme", 1000, 100)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "ListPromotions total", total, n)
	check(t, "ListPromotions(1000, 100) first and last", []string{page[0].ID, page[99].ID}, []string{"P01001", "P01100"})
	page, _, _ = e.s.ListPromotions(ctx, "clover", "acme", 1200, 100)
	check(t, "the last, short page", len(page), n-1200)
	page, total, _ = e.s.ListPromotions(ctx, "clover", "nobody", 0, 10)
	check(t, "ListPromotions of an unknown company", len(page) == 0 && page != nil && total == 0, true)

	// Replace them all: half move to no location, the rest stay.
	for i, p := range ps {
		if i%2 == 0 {
			p.LocationIDs = []string{}
		}
	}
	e.importPromotions("clover", "acme", 0, n, ps...)
	at := day(1, 0, 0)
	check(t, "valid at L1 after moving half", len(must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(e.s.ListPromotionsValidAt(ctx, "clover", "acme", "L1", at))), n)
	e.location("clover", "L2", "acme")
	check(t, "valid at L2: the half without locations", len(must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(e.s.ListPromotionsValidAt(ctx, "clover", "acme", "L2", at))), n/2)
	check(t, "other company's promotion untouched", must[*posgate.Promotion](t, "FindPromotion")(e.s.FindPromotion(ctx, "clover", "other", "P00001")).Name, "other's")
}

func testConcurrentPromotionImports(t *testing.T, e *env) {
	e.place("clover", "acme", "L1")
	const n = 300
	mk := func(name string) []*posgate.Promotion {
		ps := make([]*posgate.Promotion, n)
		for i := range ps {
			ps[i] = &posgate.Promotion{ID: fmt.Sprintf("P%03d", i), Name: name, LocationIDs: []string{"L1"}}
		}
		accept(t, "acme", []string{"L1"}, ps...)
		return ps
	}
	batches := [][]*posgate.Promotion{mk("first"), mk("second")}
	type counts struct{ created, updated int }
	results := make([]counts, len(batches))
	errs := make([]error, len(batches))
	var wg sync.WaitGroup
	for i, ps := range batches {
		wg.Go(func() {
			ctx := t.Context()
			imp, err := e.s.BeginPromotionImport(ctx, "clover", "acme")
			if err != nil {
				errs[i] = err
				return
			}
			defer imp.Rollback()
			for _, p := range ps {
				if err := imp.Add(ctx, p); err != nil {
					errs[i] = err
					return
				}
			}
			results[i].created, results[i].updated, errs[i] = imp.Commit(ctx)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent import: %v", err)
		}
	}
	slices.SortFunc(results, func(a, b counts) int { return b.created - a.created })
	check(t, "counts of two concurrent imports of the same ids", results, []counts{{n, 0}, {0, n}})
	ps := e.promotions("clover", "acme")
	check(t, "promotions after them", len(ps), n)
	for _, p := range ps {
		if p.Name != ps[0].Name {
			t.Fatalf("promotions mix both imports: %q and %q", ps[0].Name, p.Name)
		}
	}
}

func testCatalogue(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.company("clover", "other", posgate.AllFeaturesOn())
	empty := &posgate.Catalogue{POSSystemID: "clover", CompanyID: "acme", CategoryIDs: []string{}, ProductIDs: []string{}}
	check(t, "FindCatalogue of a new company", must[*posgate.Catalogue](t, "FindCatalogue")(e.s.FindCatalogue(ctx, "clover", "acme")), empty)
	_, err := e.s.FindCatalogue(ctx, "clover", "nope")
	checkErr(t, "FindCatalogue(unknown company)", err, posgate.ErrNotFound, `company "nope" not found`)
	checkErr(t, "ReplaceCatalogue(unknown company)", e.s.ReplaceCatalogue(ctx, &posgate.Catalogue{POSSystemID: "clover", CompanyID: "nope"}),
		posgate.ErrNotFound, `company "nope" not found`)

	c := &posgate.Catalogue{POSSystemID: "clover", CompanyID: "acme", CategoryIDs: []string{"b", "B", "a", "b"}, ProductIDs: []string{"SKU-1"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	check(t, "validated catalogue", c.CategoryIDs, []string{"B", "a", "b"})
	if err := e.s.ReplaceCatalogue(ctx, c); err != nil {
		t.Fatal(err)
	}
	check(t, "FindCatalogue", must[*posgate.Catalogue](t, "FindCatalogue")(e.s.FindCatalogue(ctx, "clover", "acme")), c)
	check(t, "the other company's", must[*posgate.Catalogue](t, "FindCatalogue")(e.s.FindCatalogue(ctx, "clover", "other")),
		&posgate.Catalogue{POSSystemID: "clover", CompanyID: "other", CategoryIDs: []string{}, ProductIDs: []string{}})
	c2 := &posgate.Catalogue{POSSystemID: "clover", CompanyID: "acme", ProductIDs: []string{"SKU-2"}}
	if err := c2.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := e.s.ReplaceCatalogue(ctx, c2); err != nil {
		t.Fatal(err)
	}
	check(t, "FindCatalogue after a replacement", must[*posgate.Catalogue](t, "FindCatalogue")(e.s.FindCatalogue(ctx, "clover", "acme")), c2)
}

// testCarouselPromotions: the carousel's bounded list is the first limit of
// ListPromotionsValidAt's answer in the carousel's order (the location's
// own first, then the soonest to end, then id), also when hundreds of
// candidates whose recurrence excludes the time sort before them.
func testCarouselPromotions(t *testing.T, e *env) {
	ctx := t.Context()
	e.place("clover", "acme", "L1")
	e.location("clover", "L2", "acme")
	e.place("clover", "other", "X1")
	at := day(5, 12, 0) // a Thursday
	var ps []*posgate.Promotion
	mk := func(id string, locations []string, until *posgate.PromotionTime, rec *posgate.PromotionRecurrence) {
		ps = append(ps, &posgate.Promotion{ID: id, Name: id, LocationIDs: locations,
			Validities: []posgate.PromotionValidity{{StartDate: tp(day(1, 0, 0)), EndDate: until, Recurrence: rec}}})
	}
	// 300 candidates that end first but only apply on Mondays.
	for i := range 300 {
		mk(fmt.Sprintf("monday-%03d", i), []string{"L1"}, tp(day(6, 0, i%60)), &posgate.PromotionRecurrence{DaysOfWeek: []string{"Monday"}})
	}
	mk("loc-c", []string{"L1"}, tp(day(12, 0, 0)), nil)
	mk("loc-a", []string{"L1", "L2"}, tp(day(20, 0, 0)), nil)
	mk("loc-b", []string{"L1"}, nil, nil)
	for i := range 60 {
		mk(fmt.Sprintf("all-%02d", i), nil, tp(day(11, 0, 59-i)), nil)
	}
	mk("all-open", nil, nil, nil)
	mk("over", []string{"L1"}, tp(day(4, 0, 0)), nil) // ended
	accept(t, "acme", []string{"L1", "L2"}, ps...)
	e.importPromotions("clover", "acme", len(ps), 0, ps...)
	others := []*posgate.Promotion{{ID: "x", Name: "x"}}
	accept(t, "other", nil, others...)
	e.importPromotions("clover", "other", 1, 0, others...)

	// The oracle: every promotion that applies, in the carousel's order.
	ordered := func(location string) []string {
		all := must[[]*posgate.Promotion](t, "ListPromotionsValidAt")(e.s.ListPromotionsValidAt(ctx, "clover", "acme", location, at))
		slices.SortFunc(all, func(a, b *posgate.Promotion) int {
			_, ua := a.ValidityBounds()
			_, ub := b.ValidityBounds()
			switch {
			case (len(a.LocationIDs) == 0) != (len(b.LocationIDs) == 0):
				return map[bool]int{true: 1, false: -1}[len(a.LocationIDs) == 0]
			case (ua == nil) != (ub == nil):
				return map[bool]int{true: 1, false: -1}[ua == nil]
			case ua != nil && !ua.Equal(*ub):
				return ua.Compare(*ub)
			}
			return strings.Compare(a.ID, b.ID)
		})
		return promotionIDs(all)
	}
	for _, tc := range []struct {
		location string
		limit    int
		first    []string
		n        int
	}{
		{"L1", posgate.MaxCarouselPromotions, []string{"loc-c", "loc-a", "loc-b", "all-59", "all-58"}, 50},
		{"L1", 2, []string{"loc-c", "loc-a"}, 2},
		{"L2", posgate.MaxCarouselPromotions, []string{"loc-a", "all-59"}, 50},
		{"L2", 1000, []string{"loc-a", "all-59"}, 62},
	} {
		got := promotionIDs(must[[]*posgate.Promotion](t, "ListCarouselPromotions")(
			e.s.ListCarouselPromotions(ctx, "clover", "acme", tc.location, at, tc.limit)))
		want := ordered(tc.location)
		check(t, fmt.Sprintf("carousel at %s, limit %d", tc.location, tc.limit), got, want[:min(tc.limit, len(want))])
		check(t, fmt.Sprintf("carousel at %s, limit %d: first and length", tc.location, tc.limit), []any{got[:len(tc.first)], len(got)}, []any{tc.first, tc.n})
	}
	check(t, "carousel at L2's last", promotionIDs(must[[]*posgate.Promotion](t, "ListCarouselPromotions")(
		e.s.ListCarouselPromotions(ctx, "clover", "acme", "L2", at, 1000)))[61], "all-open")
	for _, loc := range []string{"X1", "NOPE"} {
		got := must[[]*posgate.Promotion](t, "ListCarouselPromotions")(e.s.ListCarouselPromotions(ctx, "clover", "acme", loc, at, 50))
		check(t, "carousel at "+loc, len(got) == 0 && got != nil, true)
	}
	full := must[*posgate.Promotion](t, "FindPromotion")(e.s.FindPromotion(ctx, "clover", "acme", "loc-c"))
	check(t, "a promotion from ListCarouselPromotions", must[[]*posgate.Promotion](t, "ListCarouselPromotions")(
		e.s.ListCarouselPromotions(ctx, "clover", "acme", "L1", at, 1))[0], full)
}
