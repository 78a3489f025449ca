package storetest

import (
	"testing"

	"github.com/posgate/posgate"
)

// The catalogue (posgate.CatalogueStore): categories and products, their
// imports, lists and the version stamp that promotion evaluation revalidates
// its cache with.

func price(v int64) *posgate.MinorUnits {
	p := posgate.MinorUnits(v)
	return &p
}

func (e *env) stamp(posSystemID, companyID string) string {
	e.t.Helper()
	return must[string](e.t, "PromotionStamp")(e.s.PromotionStamp(e.t.Context(), posSystemID, companyID))
}

// importCategories imports cats (which pass unchecked) and checks the
// counts; it returns the stored tree the store handed to the plan.
func (e *env) importCategories(posSystemID, companyID string, wantCreated, wantUpdated int, cats ...*posgate.Category) map[string]string {
	e.t.Helper()
	var seen map[string]string
	created, updated, err := e.s.ImportCategories(e.t.Context(), posSystemID, companyID, func(stored map[string]string) ([]*posgate.Category, error) {
		seen = stored
		return cats, nil
	})
	if err != nil {
		e.t.Fatalf("ImportCategories: %v", err)
	}
	if created != wantCreated || updated != wantUpdated {
		e.t.Fatalf("ImportCategories: created %d, updated %d; want %d, %d", created, updated, wantCreated, wantUpdated)
	}
	return seen
}

func testProductImport(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.company("clover", "other", posgate.AllFeaturesOn())
	t0 := e.clk.stamp()
	ps := []*posgate.Product{
		{ID: "SKU-2", Name: "Latte", CategoryID: "COFFEE", CategoryName: "Coffee", Manufacturer: "Us", Price: price(350)},
		{ID: "SKU-1", Name: "Croissant", CategoryID: "PASTRY", Price: price(0)},
		{ID: "SKU-3", Name: "No price"},
	}
	created, updated, err := e.s.ImportProducts(ctx, "clover", "acme", ps)
	if err != nil || created != 3 || updated != 0 {
		t.Fatalf("ImportProducts: %d, %d, %v", created, updated, err)
	}
	got, total, err := e.s.ListProducts(ctx, "clover", "acme", 0, 0)
	if err != nil || total != 3 {
		t.Fatalf("ListProducts: %d, %v", total, err)
	}
	for i, id := range []string{"SKU-1", "SKU-2", "SKU-3"} {
		if got[i].ID != id || got[i].POSSystemID != "clover" || got[i].CompanyID != "acme" || !got[i].CreatedAt.Equal(t0) || !got[i].UpdatedAt.Equal(t0) {
			t.Fatalf("ListProducts[%d]: %s", i, show(got[i]))
		}
	}
	check(t, "SKU-2's fields", []any{got[1].Name, got[1].CategoryID, got[1].CategoryName, got[1].Manufacturer, *got[1].Price}, []any{"Latte", "COFFEE", "Coffee", "Us", posgate.MinorUnits(350)})
	check(t, "SKU-1's zero price", *got[0].Price, posgate.MinorUnits(0))
	if got[2].Price != nil {
		t.Fatalf("SKU-3's price: %v", *got[2].Price)
	}

	// A page, and the other company's (empty) list.
	page, total, err := e.s.ListProducts(ctx, "clover", "acme", 1, 1)
	if err != nil || total != 3 || len(page) != 1 || page[0].ID != "SKU-2" {
		t.Fatalf("page 2 of 1: %s, %d, %v", show(page), total, err)
	}
	page, total, err = e.s.ListProducts(ctx, "clover", "other", 0, 10)
	if err != nil || total != 0 || page == nil || len(page) != 0 {
		t.Fatalf("other's products: %v, %d, %v", page, total, err)
	}

	// Again, one changed and one new: the unchanged keep UpdatedAt.
	t1 := e.clk.advance()
	created, updated, err = e.s.ImportProducts(ctx, "clover", "acme", []*posgate.Product{
		{ID: "SKU-1", Name: "Croissant", CategoryID: "PASTRY", Price: price(0)},
		{ID: "SKU-3", Name: "No price", Price: price(199)},
		{ID: "SKU-4", Name: "New"},
	})
	if err != nil || created != 1 || updated != 2 {
		t.Fatalf("second ImportProducts: %d, %d, %v", created, updated, err)
	}
	found := must[[]*posgate.Product](t, "FindProducts")(e.s.FindProducts(ctx, "clover", "acme", []string{"SKU-3", "SKU-1", "NOPE", "SKU-4"}))
	byID := map[string]*posgate.Product{}
	for _, p := range found {
		byID[p.ID] = p
	}
	if len(found) != 3 || !byID["SKU-1"].UpdatedAt.Equal(t0) || !byID["SKU-3"].UpdatedAt.Equal(t1) || !byID["SKU-3"].CreatedAt.Equal(t0) ||
		*byID["SKU-3"].Price != 199 || !byID["SKU-4"].CreatedAt.Equal(t1) {
		t.Fatalf("FindProducts after the second import: %s", show(found))
	}
	if got := must[[]*posgate.Product](t, "FindProducts")(e.s.FindProducts(ctx, "clover", "other", []string{"SKU-1"})); len(got) != 0 {
		t.Fatalf("another company's FindProducts: %s", show(got))
	}
	if got := must[[]*posgate.Product](t, "FindProducts")(e.s.FindProducts(ctx, "clover", "acme", nil)); got == nil || len(got) != 0 {
		t.Fatalf("FindProducts(nothing): %v", got)
	}
	// Evaluation caches the products' categories: the stamp moves.
	if e.stamp("clover", "acme") == "0" {
		t.Fatal("product imports left the stamp as it was")
	}

	_, _, err = e.s.ImportProducts(ctx, "clover", "nope", ps)
	checkErr(t, "ImportProducts(unknown company)", err, posgate.ErrNotFound, `company "nope" not found`)
	// The catalogue's ids.
	check(t, "FindCatalogue", must[*posgate.Catalogue](t, "FindCatalogue")(e.s.FindCatalogue(ctx, "clover", "acme")),
		&posgate.Catalogue{POSSystemID: "clover", CompanyID: "acme", CategoryIDs: []string{}, ProductIDs: []string{"SKU-1", "SKU-2", "SKU-3", "SKU-4"}})
}

func testCategoryImport(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.company("clover", "other", posgate.AllFeaturesOn())
	check(t, "stamp of a new company", e.stamp("clover", "acme"), "0")
	t0 := e.clk.stamp()
	stored := e.importCategories("clover", "acme", 2, 0,
		&posgate.Category{ID: "BAKERY", Name: "Bakery"},
		&posgate.Category{ID: "PASTRY", Name: "Pastry", ParentID: "BAKERY", CatalogID: "main"})
	check(t, "stored tree of a new company", stored, map[string]string{})
	s1 := e.stamp("clover", "acme")
	if s1 == "0" {
		t.Fatal("a category import left the stamp as it was")
	}
	check(t, "the other company's stamp", e.stamp("clover", "other"), "0")
	t1 := e.clk.advance()
	stored = e.importCategories("clover", "acme", 1, 2,
		&posgate.Category{ID: "BAKERY", Name: "Bakery"},                                          // unchanged
		&posgate.Category{ID: "PASTRY", Name: "Pastries", ParentID: "BAKERY", CatalogID: "main"}, // changed
		&posgate.Category{ID: "COFFEE", Name: "Coffee"})
	check(t, "stored tree", stored, map[string]string{"BAKERY": "", "PASTRY": "BAKERY"})
	if s2 := e.stamp("clover", "acme"); s2 == s1 {
		t.Fatal("a second category import left the stamp as it was")
	}
	got, total, err := e.s.ListCategories(ctx, "clover", "acme", 0, 0)
	if err != nil || total != 3 {
		t.Fatalf("ListCategories: %d, %v", total, err)
	}
	check(t, "categories", got, []*posgate.Category{
		{POSSystemID: "clover", CompanyID: "acme", ID: "BAKERY", Name: "Bakery", CreatedAt: t0, UpdatedAt: t0},
		{POSSystemID: "clover", CompanyID: "acme", ID: "COFFEE", Name: "Coffee", CreatedAt: t1, UpdatedAt: t1},
		{POSSystemID: "clover", CompanyID: "acme", ID: "PASTRY", Name: "Pastries", ParentID: "BAKERY", CatalogID: "main", CreatedAt: t0, UpdatedAt: t1},
	})
	page, total, err := e.s.ListCategories(ctx, "clover", "acme", 2, 5)
	if err != nil || total != 3 || len(page) != 1 || page[0].ID != "PASTRY" {
		t.Fatalf("last page: %s, %d, %v", show(page), total, err)
	}
	if page, total, err := e.s.ListCategories(ctx, "clover", "other", 0, 0); err != nil || total != 0 || page == nil || len(page) != 0 {
		t.Fatalf("other's categories: %v %d %v", page, total, err)
	}
	// A plan's error stores nothing.
	_, _, err = e.s.ImportCategories(ctx, "clover", "acme", func(map[string]string) ([]*posgate.Category, error) {
		return nil, posgate.Errorf(posgate.EINVALID, "no")
	})
	checkErr(t, "a failing plan", err, posgate.ErrInvalid, "no")
	_, _, err = e.s.ImportCategories(ctx, "clover", "nope", func(map[string]string) ([]*posgate.Category, error) { return nil, nil })
	checkErr(t, "ImportCategories(unknown company)", err, posgate.ErrNotFound, `company "nope" not found`)
}

func testCatalogueReplaceKeepsFields(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	t0 := e.clk.stamp()
	e.importCategories("clover", "acme", 3, 0,
		&posgate.Category{ID: "BAKERY", Name: "Bakery"},
		&posgate.Category{ID: "PASTRY", Name: "Pastry", ParentID: "BAKERY"},
		&posgate.Category{ID: "COFFEE", Name: "Coffee"})
	if _, _, err := e.s.ImportProducts(ctx, "clover", "acme", []*posgate.Product{{ID: "SKU-1", Name: "Croissant", CategoryID: "PASTRY", Price: price(250)}}); err != nil {
		t.Fatal(err)
	}
	before := e.stamp("clover", "acme")
	// Removing a parent whose child stays is a conflict, and changes nothing.
	err := e.s.ReplaceCatalogue(ctx, &posgate.Catalogue{POSSystemID: "clover", CompanyID: "acme", CategoryIDs: []string{"PASTRY"}, ProductIDs: []string{}})
	checkErr(t, "orphaning PASTRY", err, posgate.ErrConflict,
		"Category 'PASTRY' has the parent 'BAKERY', which the catalogue would no longer hold; list 'BAKERY' too, or re-import the categories.")
	check(t, "stamp after a refused replacement", e.stamp("clover", "acme"), before)
	t1 := e.clk.advance()
	if err := e.s.ReplaceCatalogue(ctx, &posgate.Catalogue{POSSystemID: "clover", CompanyID: "acme",
		CategoryIDs: []string{"BAKERY", "PASTRY", "TEA"}, ProductIDs: []string{"SKU-1", "SKU-9"}}); err != nil {
		t.Fatal(err)
	}
	if e.stamp("clover", "acme") == before {
		t.Fatal("a replacement left the stamp as it was")
	}
	cats, _, err := e.s.ListCategories(ctx, "clover", "acme", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "categories after the replacement", cats, []*posgate.Category{
		{POSSystemID: "clover", CompanyID: "acme", ID: "BAKERY", Name: "Bakery", CreatedAt: t0, UpdatedAt: t0},
		{POSSystemID: "clover", CompanyID: "acme", ID: "PASTRY", Name: "Pastry", ParentID: "BAKERY", CreatedAt: t0, UpdatedAt: t0},
		{POSSystemID: "clover", CompanyID: "acme", ID: "TEA", CreatedAt: t1, UpdatedAt: t1},
	})
	ps, _, err := e.s.ListProducts(ctx, "clover", "acme", 0, 0)
	if err != nil || len(ps) != 2 || ps[0].Name != "Croissant" || *ps[0].Price != 250 || ps[1].ID != "SKU-9" || ps[1].Name != "" || ps[1].Price != nil {
		t.Fatalf("products after the replacement: %s %v", show(ps), err)
	}
}

// testPromotionStampFollowsImports checks that a promotion import changes
// the stamp (evaluation's cache must see new promotions) and an empty
// company's stamp stays.
func testPromotionStampFollowsImports(t *testing.T, e *env) {
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.company("clover", "other", posgate.AllFeaturesOn())
	before := e.stamp("clover", "acme")
	one := func(name string) *posgate.Promotion {
		p := &posgate.Promotion{ID: "P1", Name: name, Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionAmount, Value: 1}}}
		accept(t, "acme", nil, p)
		return p
	}
	e.importPromotions("clover", "acme", 1, 0, one("One"))
	after := e.stamp("clover", "acme")
	if after == before {
		t.Fatal("a promotion import left the stamp as it was")
	}
	check(t, "the other company's stamp", e.stamp("clover", "other"), "0")
	e.importPromotions("clover", "acme", 0, 1, one("One again"))
	if e.stamp("clover", "acme") == after {
		t.Fatal("a second promotion import left the stamp as it was")
	}
}
