package demo_test

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
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
	if err != nil || total != 3 {
		t.Fatalf("demo promotions: %d, %v", total, err)
	}
	at := time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC) // a Saturday morning
	valid, err := st.ListPromotionsValidAt(ctx, demo.POSSystemID, demo.CompanyID, "LOC123", at)
	if err != nil || len(valid) != 2 || valid[0].ID != "DEMO-COFFEE-2OFF" || valid[1].ID != "DEMO-WEEKEND-BREAKFAST" {
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
			"LOC123": {"SKU-CROISSANT", "SKU-LATTE-L", "SKU-LATTE-M", "SKU-MUFFIN"}, "LOC456": nil},
		"DEMO-AIRPORT-MUFFIN": { // "Free muffin at the airport": the muffin, free, at LOC456
			"LOC123": nil, "LOC456": {"SKU-MUFFIN"}},
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
