package posgate

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// at is the instant s, in UTC (the zone promotions are checked in when
// nothing else is said).
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// atp is s as an imported promotion time: an instant with an offset, a
// wall-clock time without.
func atp(s string) *PromotionTime {
	t, err := ParsePromotionTime(s)
	if err != nil {
		panic(err)
	}
	return &t
}

func TestPromotionCheckerErrors(t *testing.T) {
	valid := func() *Promotion { return &Promotion{ID: "P1", Name: "n", LocationIDs: []string{"L1"}} }
	cases := []struct {
		name    string
		mod     func(p *Promotion)
		entity  string
		message string
		details string
	}{
		{"id missing", func(p *Promotion) { p.ID = "" }, "", "The id field is required.", "id: missing or empty"},
		{"id with a slash", func(p *Promotion) { p.ID = "a/b" }, "a/b",
			`The id field must be 1-128 printable characters without '/', '\', '?', '#', '%' or surrounding spaces.`, `id: "a/b"`},
		{"id too long", func(p *Promotion) { p.ID = strings.Repeat("x", 129) }, strings.Repeat("x", 129),
			`The id field must be 1-128 printable characters without '/', '\', '?', '#', '%' or surrounding spaces.`, `id: "` + strings.Repeat("x", 100) + `"…`},
		{"name missing", func(p *Promotion) { p.Name = "" }, "P1", "The name field is required.", "name: missing or empty"},
		{"name too long", func(p *Promotion) { p.Name = strings.Repeat("é", 251) }, "P1", "The name field must be at most 500 bytes.", "name: 502 bytes"},
		{"unknown locations", func(p *Promotion) { p.LocationIDs = []string{"L9", "L1", "L8", "L9"} }, "P1",
			"The locationIds name locations that are not locations of company 'acme'.", `locationIds: "L9", "L8"`},
		{"end before start", func(p *Promotion) {
			p.Validities = []PromotionValidity{{}, {StartDate: atp("2030-02-01T00:00:00Z"), EndDate: atp("2030-01-31T23:59:59.5Z")}}
		}, "P1", "The endDate must not be before the startDate.",
			"promotionValidities[1]: endDate 2030-01-31T23:59:59.5Z is before startDate 2030-02-01T00:00:00Z"},
		{"recurrence end before start", func(p *Promotion) {
			p.Validities = []PromotionValidity{{Recurrence: &PromotionRecurrence{StartDate: atp("2030-01-01T10:00:00Z"), EndDate: atp("2030-01-01T09:00:00Z")}}}
		}, "P1", "The endDate must not be before the startDate.",
			"promotionValidities[0].recurrence: endDate 2030-01-01T09:00:00Z is before startDate 2030-01-01T10:00:00Z"},
		{"day name", func(p *Promotion) {
			p.Validities = []PromotionValidity{{Recurrence: &PromotionRecurrence{DaysOfWeek: []string{"Sunday", "sunday"}}}}
		}, "P1", "The daysOfWeek must be day names from Sunday to Saturday (Sunday, Monday, Tuesday, Wednesday, Thursday, Friday, Saturday).",
			`promotionValidities[0].recurrence.daysOfWeek[1]: "sunday"`},
		{"promotion type", func(p *Promotion) { p.Results = []PromotionResult{{PromotionType: "Fixed", Value: 1}} }, "P1",
			"The promotionType must be Amount, Percentage, FixedPrice or BuyXGetY.", `promotionResults[0].promotionType: "Fixed"`},
		{"promotion type missing", func(p *Promotion) { p.Results = []PromotionResult{{Value: 1}} }, "P1",
			"The promotionType must be Amount, Percentage, FixedPrice or BuyXGetY.", `promotionResults[0].promotionType: ""`},
		{"negative value", func(p *Promotion) {
			p.Results = []PromotionResult{{PromotionType: PromotionAmount, Value: 1}, {PromotionType: PromotionAmount, Value: -0.01}}
		}, "P1", "The value must not be negative.", "promotionResults[1].value: -0.01"},
		{"percentage over 100", func(p *Promotion) { p.Results = []PromotionResult{{PromotionType: PromotionPercentage, Value: 100.5}} }, "P1",
			"A Percentage value must be between 0 and 100.", "promotionResults[0].value: 100.5"},
		{"amount over 1e9", func(p *Promotion) { p.Results = []PromotionResult{{PromotionType: PromotionAmount, Value: 1e300}} }, "P1",
			"An Amount value must be at most 1000000000.", "promotionResults[0].value: 1e+300"},
		{"amount just over 1e9", func(p *Promotion) {
			p.Results = []PromotionResult{{PromotionType: PromotionAmount, Value: 1000000000.01}}
		}, "P1",
			"An Amount value must be at most 1000000000.", "promotionResults[0].value: 1.00000000001e+09"},
		{"fixed price over 1e9", func(p *Promotion) { p.Results = []PromotionResult{{PromotionType: PromotionFixedPrice, Value: 2e9}} }, "P1",
			"A FixedPrice value must be at most 1000000000.", "promotionResults[0].value: 2e+09"},
		{"buy-x-get-y over 100", func(p *Promotion) {
			p.Results = []PromotionResult{{PromotionType: PromotionBuyXGetY, Value: 101, BuyQuantity: 1, GetQuantity: 1}}
		}, "P1", "A BuyXGetY value must be between 0 and 100.", "promotionResults[0].value: 101"},
		{"buy-x-get-y without buyQuantity", func(p *Promotion) {
			p.Results = []PromotionResult{{PromotionType: PromotionBuyXGetY, Value: 100, GetQuantity: 1}}
		}, "P1", "A BuyXGetY result's buyQuantity must be a whole number from 1 to 10000.", "promotionResults[0].buyQuantity: 0"},
		{"buy-x-get-y getQuantity too large", func(p *Promotion) {
			p.Results = []PromotionResult{{PromotionType: PromotionBuyXGetY, Value: 100, BuyQuantity: 2, GetQuantity: 10001}}
		}, "P1", "A BuyXGetY result's getQuantity must be a whole number from 1 to 10000.", "promotionResults[0].getQuantity: 10001"},
		{"buy-x-get-y negative maxApplications", func(p *Promotion) {
			p.Results = []PromotionResult{{PromotionType: PromotionBuyXGetY, Value: 100, BuyQuantity: 2, GetQuantity: 1, MaxApplications: -1}}
		}, "P1", "The maxApplications must be a whole number from 0 (no limit) to 1000000.", "promotionResults[0].maxApplications: -1"},
		{"buy-x-get-y empty product", func(p *Promotion) {
			p.Results = []PromotionResult{{PromotionType: PromotionBuyXGetY, Value: 100, BuyQuantity: 2, GetQuantity: 1, GetProductIDs: []string{"M", ""}}}
		}, "P1", "The getProductIds must not hold an empty id.", `promotionResults[0].getProductIds[1]: ""`},
		{"buy fields on a Percentage", func(p *Promotion) {
			p.Results = []PromotionResult{{PromotionType: PromotionPercentage, Value: 10, GetProductIDs: []string{"M"}}}
		}, "P1", "The buyQuantity, getQuantity, getProductIds and maxApplications belong to BuyXGetY results only.",
			`promotionResults[0].promotionType: "Percentage"`},
		{"priority out of range", func(p *Promotion) { p.Priority = 1_000_001 }, "P1",
			"The priority must be a whole number from -1000000 to 1000000.", "priority: 1000001"},
		{"minQuantity with 4 decimals", func(p *Promotion) { p.MinQuantity = 1.0005 }, "P1",
			"The minQuantity must be a number from 0 to 1000000 with at most 3 decimals.", "minQuantity: 1.0005"},
		{"negative minQuantity", func(p *Promotion) { p.MinQuantity = -1 }, "P1",
			"The minQuantity must be a number from 0 to 1000000 with at most 3 decimals.", "minQuantity: -1"},
		{"minBasketAmount with 3 decimals", func(p *Promotion) { p.MinBasketAmount = 10.005 }, "P1",
			"The minBasketAmount must be a number from 0 to 1000000000 with at most 2 decimals.", "minBasketAmount: 10.005"},
		{"minBasketAmount over 1e9", func(p *Promotion) { p.MinBasketAmount = 1e10 }, "P1",
			"The minBasketAmount must be a number from 0 to 1000000000 with at most 2 decimals.", "minBasketAmount: 1e+10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewPromotionChecker("acme", []string{"L1", "L2"}, nil)
			p := valid()
			tc.mod(p)
			if c.Check(7, p) {
				t.Fatal("accepted")
			}
			r := c.Result(0, 0)
			want := []ImportError{{EntityID: tc.entity, RowNumber: 7, ErrorMessage: tc.message, ErrorDetails: tc.details}}
			if !reflect.DeepEqual(r.Errors, want) || r.Status != ImportFailed || len(r.Warnings) != 0 {
				t.Fatalf("got %+v\nwant %+v", r, want)
			}
		})
	}
}

func TestPromotionCheckerAcceptsEdges(t *testing.T) {
	c := NewPromotionChecker("acme", []string{"L1"}, nil)
	p := &Promotion{ID: "P1", Name: strings.Repeat("x", 500), Validities: []PromotionValidity{
		{StartDate: atp("2030-01-01T00:00:00Z"), EndDate: atp("2030-01-01T00:00:00Z")}, // a single instant
		{Recurrence: &PromotionRecurrence{}},
	}, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 100}, {PromotionType: PromotionPercentage}, {PromotionType: PromotionAmount, Value: 1e9}}}
	if !c.Check(1, p) {
		t.Fatalf("rejected: %+v", c.Result(0, 0).Errors)
	}
	// Normalised: no nil lists.
	if p.LocationIDs == nil || p.CategoryIDs == nil || p.ProductIDs == nil || p.Validities[1].Recurrence.DaysOfWeek == nil {
		t.Fatalf("nil lists after Check: %+v", p)
	}
}

func TestPromotionCheckerSeveralErrorsAndDuplicates(t *testing.T) {
	c := NewPromotionChecker("acme", []string{"L1"}, nil)
	ok := func(row int, p *Promotion) {
		t.Helper()
		if !c.Check(row, p) {
			t.Fatalf("row %d rejected", row)
		}
	}
	ok(1, &Promotion{ID: "A", Name: "a"})
	if c.Check(2, &Promotion{ID: "B", Results: []PromotionResult{{PromotionType: "x", Value: -1}}}) {
		t.Fatal("row 2 accepted")
	}
	if c.Check(3, &Promotion{ID: "A", Name: "again"}) {
		t.Fatal("a repeated id was accepted")
	}
	if c.Check(4, &Promotion{ID: "B", Name: "valid, but B came before"}) {
		t.Fatal("an id repeated after a failed item was accepted")
	}
	ok(5, &Promotion{ID: "C", Name: "c"})
	r := c.Result(2, 0)
	want := []ImportError{
		{"B", 2, "The name field is required.", "name: missing or empty"},
		{"B", 2, "The promotionType must be Amount, Percentage, FixedPrice or BuyXGetY.", `promotionResults[0].promotionType: "x"`},
		{"A", 3, "The id 'A' is given more than once in this request; only its first item (row 1) is imported.", `id: "A" also on row 1`},
		{"B", 4, "The id 'B' is given more than once in this request; only its first item (row 2) is imported.", `id: "B" also on row 2`},
	}
	if !reflect.DeepEqual(r.Errors, want) || r.Status != ImportCompletedWithErrors || c.Accepted() != 2 {
		t.Fatalf("got %+v (accepted %d)\nwant %+v", r, c.Accepted(), want)
	}
}

func TestPromotionCheckerWarnings(t *testing.T) {
	p := func() *Promotion {
		return &Promotion{ID: "P1", Name: "n", CategoryIDs: []string{"C1", "C9", "C9", "C8"}, ProductIDs: []string{"S1", "S9"},
			Results: []PromotionResult{{PromotionType: PromotionBuyXGetY, Value: 100, BuyQuantity: 1, GetQuantity: 1, GetProductIDs: []string{"S1", "S7"}}}}
	}
	for _, tc := range []struct {
		name    string
		cat     *Catalogue
		details string
	}{
		{"no catalogue", nil, ""},
		{"empty catalogue", &Catalogue{}, ""},
		{"both", &Catalogue{CategoryIDs: []string{"C1"}, ProductIDs: []string{"S1"}}, `categoryIds: "C9", "C8"; productIds: "S9"; promotionResults[0].getProductIds: "S7"`},
		{"categories only", &Catalogue{CategoryIDs: []string{"C1", "C8"}}, `categoryIds: "C9"`},
		{"products only", &Catalogue{ProductIDs: []string{"S1"}}, `productIds: "S9"; promotionResults[0].getProductIds: "S7"`},
		{"all known", &Catalogue{CategoryIDs: []string{"C1", "C8", "C9"}, ProductIDs: []string{"S1", "S7", "S9"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewPromotionChecker("acme", nil, tc.cat)
			if !c.Check(3, p()) {
				t.Fatal("a warning rejected the item")
			}
			r := c.Result(1, 0)
			want := []ImportWarning{}
			if tc.details != "" {
				want = []ImportWarning{{EntityID: "P1", RowNumber: 3, Details: tc.details,
					Message: "The promotion names categories or products that are not in the catalogue of company 'acme'; it is imported anyway."}}
			}
			if !reflect.DeepEqual(r.Warnings, want) || r.Status != ImportCompleted || len(r.Errors) != 0 {
				t.Fatalf("got %+v, want warnings %+v", r, want)
			}
		})
	}
}

func TestImportResultStatus(t *testing.T) {
	c := NewPromotionChecker("acme", nil, nil)
	if r := c.Result(0, 0); r.Status != ImportCompleted || r.Errors == nil || r.Warnings == nil {
		t.Fatalf("empty import: %+v", r)
	}
	c.Check(1, &Promotion{ID: "A"})
	if r := c.Result(0, 0); r.Status != ImportFailed {
		t.Fatalf("all failed: %+v", r)
	}
	if r := c.Result(0, 1); r.Status != ImportCompletedWithErrors {
		t.Fatalf("some stored: %+v", r)
	}
}

func TestPromotionNormalize(t *testing.T) {
	zone := time.FixedZone("x", 3600)
	p := &Promotion{ID: "P", Name: "n", LocationIDs: []string{"L2", "L1", "L2"}, ProductIDs: []string{},
		Validities: []PromotionValidity{{StartDate: ptrTime(InstantTime(time.Date(2030, 1, 1, 1, 0, 0, 1500, zone))),
			Recurrence: &PromotionRecurrence{DaysOfWeek: []string{"Saturday", "Monday", "Saturday"}}}}}
	long := make([]string, 40)
	for i := range long {
		long[i] = string(rune('a' + i%20))
	}
	p.CategoryIDs = long
	if !NewPromotionChecker("c", []string{"L1", "L2"}, nil).Check(1, p) {
		t.Fatal("rejected")
	}
	if !reflect.DeepEqual(p.LocationIDs, []string{"L2", "L1"}) || len(p.CategoryIDs) != 20 || p.CategoryIDs[19] != "t" {
		t.Errorf("lists: %v %v", p.LocationIDs, p.CategoryIDs)
	}
	if got := p.Validities[0].StartDate; got.IsWall() || got.Time().Location() != time.UTC || !got.Time().Equal(time.Date(2030, 1, 1, 0, 0, 0, 1000, time.UTC)) {
		t.Errorf("start %v", got)
	}
	if got := p.Validities[0].Recurrence.DaysOfWeek; !reflect.DeepEqual(got, []string{"Monday", "Saturday"}) {
		t.Errorf("days %v", got)
	}
	if p.Results == nil {
		t.Error("nil results")
	}
}

func ptrTime(t PromotionTime) *PromotionTime { return &t }

func TestValidityContains(t *testing.T) {
	// 2031-06-06 is a Friday.
	rec := func(days []string, from, to string) *PromotionValidity {
		r := &PromotionRecurrence{DaysOfWeek: days}
		if from != "" {
			r.StartDate = atp(from)
		}
		if to != "" {
			r.EndDate = atp(to)
		}
		return &PromotionValidity{Recurrence: r}
	}
	cases := []struct {
		name string
		v    *PromotionValidity
		at   string
		want bool
	}{
		{"open", &PromotionValidity{}, "2031-06-06T12:00:00Z", true},
		{"before start", &PromotionValidity{StartDate: atp("2031-06-06T12:00:00Z")}, "2031-06-06T11:59:59Z", false},
		{"at start", &PromotionValidity{StartDate: atp("2031-06-06T12:00:00Z")}, "2031-06-06T12:00:00Z", true},
		{"at end", &PromotionValidity{EndDate: atp("2031-06-06T12:00:00Z")}, "2031-06-06T12:00:00Z", true},
		{"after end", &PromotionValidity{EndDate: atp("2031-06-06T12:00:00Z")}, "2031-06-06T12:00:00.000001Z", false},
		{"day listed", rec([]string{"Friday"}, "", ""), "2031-06-06T23:59:59Z", true},
		{"day not listed", rec([]string{"Thursday", "Saturday"}, "", ""), "2031-06-06T12:00:00Z", false},
		{"no days: every day", rec(nil, "", ""), "2031-06-06T12:00:00Z", true},
		{"day in UTC: local Saturday 01:00 is UTC Friday", rec([]string{"Friday"}, "", ""), "2031-06-07T01:00:00+02:00", true},
		{"day in UTC: local Friday 23:00 is UTC Saturday", rec([]string{"Friday"}, "", ""), "2031-06-06T23:00:00-02:00", false},
		{"window", rec([]string{"Friday"}, "2020-01-01T08:00:00Z", "2020-01-01T20:00:00Z"), "2031-06-06T08:00:00Z", true},
		{"window end excluded", rec([]string{"Friday"}, "2020-01-01T08:00:00Z", "2020-01-01T20:00:00Z"), "2031-06-06T20:00:00Z", false},
		{"before window", rec([]string{"Friday"}, "2020-01-01T08:00:00Z", "2020-01-01T20:00:00Z"), "2031-06-06T07:59:59Z", false},
		{"window, wrong day", rec([]string{"Saturday"}, "2020-01-01T08:00:00Z", "2020-01-01T20:00:00Z"), "2031-06-06T12:00:00Z", false},
		{"dates only: whole day", rec([]string{"Friday"}, "2020-01-01T00:00:00Z", "2020-02-01T00:00:00Z"), "2031-06-06T03:00:00Z", true},
		{"start only: whole day", rec([]string{"Friday"}, "2020-01-01T08:00:00Z", ""), "2031-06-06T03:00:00Z", true},
		{"past midnight, evening", rec([]string{"Friday"}, "2020-01-03T22:00:00Z", "2020-01-04T02:00:00Z"), "2031-06-06T22:30:00Z", true},
		{"past midnight, next morning", rec([]string{"Friday"}, "2020-01-03T22:00:00Z", "2020-01-04T02:00:00Z"), "2031-06-07T01:30:00Z", true},
		{"past midnight, Friday morning is Thursday's", rec([]string{"Friday"}, "2020-01-03T22:00:00Z", "2020-01-04T02:00:00Z"), "2031-06-06T01:30:00Z", false},
		{"past midnight, closed", rec([]string{"Friday"}, "2020-01-03T22:00:00Z", "2020-01-04T02:00:00Z"), "2031-06-07T02:00:00Z", false},
		{"recurrence within bounds", &PromotionValidity{EndDate: atp("2031-06-01T00:00:00Z"), Recurrence: &PromotionRecurrence{}}, "2031-06-06T12:00:00Z", false},
	}
	for _, tc := range cases {
		if got := tc.v.Contains(at(tc.at)); got != tc.want {
			t.Errorf("%s: Contains(%s) = %v, want %v", tc.name, tc.at, got, tc.want)
		}
	}
}

func TestValidAtAndBounds(t *testing.T) {
	p := &Promotion{LocationIDs: []string{"L1"}}
	if !p.ValidAt(at("1999-01-01T00:00:00Z")) || !p.AppliesAt("L1", at("2031-01-01T00:00:00Z")) || p.AppliesAt("L2", at("2031-01-01T00:00:00Z")) || !p.AppliesAt("", time.Now()) {
		t.Error("a promotion without validities at L1")
	}
	if from, until := p.ValidityBounds(); from != nil || until != nil {
		t.Error("bounds of none")
	}
	p.Validities = []PromotionValidity{
		{StartDate: atp("2031-03-01T00:00:00Z"), EndDate: atp("2031-03-31T00:00:00Z")},
		{StartDate: atp("2031-01-01T00:00:00Z"), EndDate: atp("2031-01-31T00:00:00Z")},
	}
	from, until := p.ValidityBounds()
	if !from.Equal(at("2031-01-01T00:00:00Z")) || !until.Equal(at("2031-03-31T00:00:00Z")) {
		t.Errorf("bounds %v %v", from, until)
	}
	if p.ValidAt(at("2031-02-15T00:00:00Z")) || !p.ValidAt(at("2031-03-15T00:00:00Z")) {
		t.Error("ValidAt between and in periods")
	}
	p.Validities = append(p.Validities, PromotionValidity{EndDate: atp("2030-01-01T00:00:00Z")})
	if from, until := p.ValidityBounds(); from != nil || !until.Equal(at("2031-03-31T00:00:00Z")) {
		t.Errorf("open start: %v %v", from, until)
	}
	p.Validities = append(p.Validities, PromotionValidity{StartDate: atp("2040-01-01T00:00:00Z")})
	if from, until := p.ValidityBounds(); from != nil || until != nil {
		t.Errorf("open both: %v %v", from, until)
	}
}

func TestCatalogueValidate(t *testing.T) {
	c := &Catalogue{POSSystemID: "clover", CompanyID: "acme", CategoryIDs: []string{"b", "a", "b"}}
	if err := c.Validate(); err != nil || !reflect.DeepEqual(c.CategoryIDs, []string{"a", "b"}) || c.ProductIDs == nil {
		t.Fatalf("%v %+v", err, c)
	}
	c = &Catalogue{POSSystemID: "clover", CompanyID: "", ProductIDs: []string{"ok", "", strings.Repeat("x", 129)}}
	err := c.Validate()
	var e *Error
	if !errors.As(err, &e) || len(e.Fields["posCompanyId"]) != 1 || len(e.Fields["productIds[1]"]) != 1 || len(e.Fields["productIds[2]"]) != 1 {
		t.Fatalf("%v", err)
	}
}
