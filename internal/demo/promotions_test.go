package demo_test

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/sqlite"
)

// TestLoadPromotionsTwice loads the demo data set twice, the second time
// after the operator changed the catalogue and a promotion: nothing changes.
func TestLoadPromotionsTwice(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "demo.db"), sqlite.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := demo.Load(ctx, st); err != nil {
		t.Fatal(err)
	}
	first, total, err := st.ListPromotions(ctx, demo.POSSystemID, demo.CompanyID, 0, 0)
	if err != nil || total != 7 {
		t.Fatalf("demo promotions: %d, %v", total, err)
	}
	at := time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC) // a Saturday morning
	valid, err := st.ListPromotionsValidAt(ctx, demo.POSSystemID, demo.CompanyID, "LOC123", at)
	var ids []string
	for _, p := range valid {
		ids = append(ids, p.ID)
	}
	if err != nil || !slices.Equal(ids, []string{"DEMO-COFFEE-2OFF", "DEMO-COUPON-COOKIE", "DEMO-CROISSANTS-3", "DEMO-LATTE-M-3", "DEMO-SANDWICH-MUFFIN", "DEMO-WEEKEND-BREAKFAST"}) {
		t.Fatalf("valid at LOC123 on a Saturday morning: %v %v", valid, err)
	}
	changed := &posgate.Catalogue{POSSystemID: demo.POSSystemID, CompanyID: demo.CompanyID, CategoryIDs: []string{"MINE"}, ProductIDs: []string{}}
	if err := st.ReplaceCatalogue(ctx, changed); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if err := demo.Load(ctx, st); err != nil {
		t.Fatal(err)
	}
	second, _, err := st.ListPromotions(ctx, demo.POSSystemID, demo.CompanyID, 0, 0)
	if err != nil || !reflect.DeepEqual(first, second) {
		t.Fatalf("promotions changed by a second load:\n%v\n%v", first, second)
	}
	if cat, err := st.FindCatalogue(ctx, demo.POSSystemID, demo.CompanyID); err != nil || !reflect.DeepEqual(cat, changed) {
		t.Fatalf("the operator's catalogue was replaced: %+v %v", cat, err)
	}
}

// TestDemoPromotionsMeanTheirNames evaluates each demo promotion alone on
// every demo product at both locations, at a time it is valid: it takes
// something off exactly the products its name promises.
func TestDemoPromotionsMeanTheirNames(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "demo.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := demo.Load(ctx, st); err != nil {
		t.Fatal(err)
	}
	promos, _, err := st.ListPromotions(ctx, demo.POSSystemID, demo.CompanyID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	cats, _, err := st.ListCategories(ctx, demo.POSSystemID, demo.CompanyID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	products, _, err := st.ListProducts(ctx, demo.POSSystemID, demo.CompanyID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	saturday := time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC) // within every promotion's validity
	// What each name promises: promotion → location → discounted products.
	want := map[string]map[string][]string{
		"DEMO-COFFEE-2OFF": { // "2 off any large coffee": the large latte, everywhere
			"LOC123": {"SKU-LATTE-L"}, "LOC456": {"SKU-LATTE-L"}},
		"DEMO-WEEKEND-BREAKFAST": { // "15% off breakfast on weekend mornings": pastries and coffee at LOC123
			"LOC123": {"SKU-COOKIE", "SKU-CROISSANT", "SKU-LATTE-L", "SKU-LATTE-M", "SKU-MUFFIN"}, "LOC456": nil},
		"DEMO-AIRPORT-MUFFIN": { // "Free muffin at the airport": the muffin, free, at LOC456
			"LOC123": nil, "LOC456": {"SKU-MUFFIN"}},
		// "Free muffin with a sandwich", "20% off from 3 croissants": one
		// product alone gets nothing (the baskets below).
		"DEMO-SANDWICH-MUFFIN": {"LOC123": nil, "LOC456": nil},
		"DEMO-CROISSANTS-3":    {"LOC123": nil, "LOC456": nil},
		// "1 off a cookie with a coupon": nothing without John Doe's coupon.
		"DEMO-COUPON-COOKIE": {"LOC123": nil, "LOC456": nil},
		"DEMO-LATTE-M-3": { // "Medium latte for 3.00": everywhere
			"LOC123": {"SKU-LATTE-M"}, "LOC456": {"SKU-LATTE-M"}},
	}
	if len(promos) != len(want) {
		t.Fatalf("%d demo promotions, the test knows %d", len(promos), len(want))
	}
	for _, p := range promos {
		ix := posgate.NewPromotionIndex([]*posgate.Promotion{p}, cats)
		ix.SetProductCategories(products)
		for _, loc := range []string{"LOC123", "LOC456"} {
			var got []string
			for _, pr := range products {
				line := posgate.BasketLine{ProductID: pr.ID, Quantity: 1000, UnitPrice: 500}
				line.CatalogCategory, _ = ix.ProductCategory(pr.ID)
				ev, err := ix.Evaluate(loc, saturday, []posgate.BasketLine{line})
				if err != nil {
					t.Fatal(err)
				}
				if ev.TotalDiscount > 0 {
					got = append(got, pr.ID)
					if p.ID == "DEMO-AIRPORT-MUFFIN" && ev.TotalDiscount != 500 {
						t.Errorf("%s: the muffin costs %d after it, want free", p.ID, 500-ev.TotalDiscount)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want[p.ID][loc]) {
				t.Errorf("%s (%q) at %s discounts %v, want %v", p.ID, p.Name, loc, got, want[p.ID][loc])
			}
		}
	}
}

// TestDemoPromotionsOfTheModel evaluates the demo's buy-X-get-Y, fixed
// price and minimum-quantity promotions on the baskets their names speak
// of, at LOC123 on a Monday (no weekend breakfast).
func TestDemoPromotionsOfTheModel(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "demo.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := demo.Load(ctx, st); err != nil {
		t.Fatal(err)
	}
	promos, _, err := st.ListPromotions(ctx, demo.POSSystemID, demo.CompanyID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ix := posgate.NewPromotionIndex(promos, nil)
	monday := time.Date(2030, 6, 3, 12, 0, 0, 0, time.UTC)
	line := func(id string, qty int64, price posgate.MinorUnits) posgate.BasketLine {
		return posgate.BasketLine{ProductID: id, Quantity: qty * 1000, UnitPrice: price}
	}
	for _, tc := range []struct {
		name  string
		lines []posgate.BasketLine
		want  string // promotion:discount of each line, "" for none
	}{
		{"a sandwich and two muffins: one muffin free", []posgate.BasketLine{line("SKU-SANDWICH-BLT", 1, 690), line("SKU-MUFFIN", 2, 300)},
			",DEMO-SANDWICH-MUFFIN:3.00"},
		{"a muffin alone", []posgate.BasketLine{line("SKU-MUFFIN", 1, 300)}, ""},
		{"two medium lattes at 3.00", []posgate.BasketLine{line("SKU-LATTE-M", 2, 360)}, "DEMO-LATTE-M-3:1.20"},
		{"two croissants", []posgate.BasketLine{line("SKU-CROISSANT", 2, 250)}, ""},
		{"three croissants", []posgate.BasketLine{line("SKU-CROISSANT", 3, 250)}, "DEMO-CROISSANTS-3:1.50"},
	} {
		ev, err := ix.Evaluate("LOC123", monday, tc.lines)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range ev.Lines {
			var s []string
			for _, a := range l.Applied {
				s = append(s, a.ID+":"+a.Discount.String())
			}
			got = append(got, strings.Join(s, "+"))
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, strings.Join(got, ","), tc.want)
		}
	}
}
