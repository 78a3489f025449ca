package demo

import (
	"context"
	"errors"
	"fmt"

	"github.com/posgate/posgate"
)

// demoCategories and demoProducts are demo-company's catalogue, imported
// only while the company has none: categories in two levels (PASTRY under
// BAKERY), so that a promotion for BAKERY reaches a croissant.
var (
	demoCategories = []posgate.CategoryItem{
		{PosProductCategoryID: "BAKERY", Name: "Bakery"},
		{PosProductCategoryID: "PASTRY", Name: "Pastry", PosProductParentCategoryID: "BAKERY"},
		{PosProductCategoryID: "COFFEE", Name: "Coffee"},
		{PosProductCategoryID: "SANDWICHES", Name: "Sandwiches"},
	}
	demoProducts = []posgate.ProductItem{
		{ProductID: "SKU-CROISSANT", ProductName: "Croissant", ProductCategoryID: "PASTRY", ProductCategory: "Pastry", Manufacturer: "Demo Bakery", Price: "2.50"},
		{ProductID: "SKU-MUFFIN", ProductName: "Blueberry muffin", ProductCategoryID: "PASTRY", ProductCategory: "Pastry", Manufacturer: "Demo Bakery", Price: "3.00"},
		{ProductID: "SKU-LATTE-L", ProductName: "Latte, large", ProductCategoryID: "COFFEE", ProductCategory: "Coffee", Price: "4.20"},
		{ProductID: "SKU-LATTE-M", ProductName: "Latte, medium", ProductCategoryID: "COFFEE", ProductCategory: "Coffee", Price: "3.60"},
		{ProductID: "SKU-COOKIE", ProductName: "Chocolate cookie", ProductCategoryID: "PASTRY", ProductCategory: "Pastry", Manufacturer: "Demo Bakery", Price: "2.00"},
		{ProductID: "SKU-SANDWICH-BLT", ProductName: "BLT sandwich", ProductCategoryID: "SANDWICHES", ProductCategory: "Sandwiches", Price: "6.90"},
	}
)

// loadCatalogue imports the demo catalogue if demo-company has none,
// through the imports' checks.
func loadCatalogue(ctx context.Context, st posgate.Store) (*posgate.Catalogue, error) {
	cat, err := st.FindCatalogue(ctx, POSSystemID, CompanyID)
	if err != nil || len(cat.CategoryIDs) > 0 || len(cat.ProductIDs) > 0 {
		return cat, err
	}
	cc := posgate.NewCategoryChecker(POSSystemID, CompanyID)
	for i := range demoCategories {
		cc.Check(i+1, &demoCategories[i])
	}
	if _, _, err := st.ImportCategories(ctx, POSSystemID, CompanyID, cc.Plan); err != nil {
		return nil, err
	}
	if r := cc.Result(0, 0); len(r.Errors) > 0 {
		return nil, fmt.Errorf("demo categories fail the checks: %+v", r.Errors)
	}
	pc := posgate.NewProductChecker(CompanyID, []string{"BAKERY", "PASTRY", "COFFEE", "SANDWICHES"})
	for i := range demoProducts {
		if !pc.Check(i+1, POSSystemID, &demoProducts[i]) {
			return nil, fmt.Errorf("demo product %s fails the checks: %+v", demoProducts[i].ProductID, pc.Result(0, 0).Errors)
		}
	}
	if _, _, err := st.ImportProducts(ctx, POSSystemID, CompanyID, pc.Accepted()); err != nil {
		return nil, err
	}
	return st.FindCatalogue(ctx, POSSystemID, CompanyID)
}

// demoPromotions are demo-company's promotions, each imported only while
// absent: one everywhere and always, one at LOC123 on weekend mornings, one
// at LOC456 through 2030, and one of each other kind of the promotion model
// (docs/api.md §9.1): a buy-X-get-Y (a free muffin with a sandwich), a
// fixed price (the medium latte at 3.00), and a stackable one with a
// minimum quantity (20% off from 3 croissants), and one that applies only
// with a coupon that carries it (John Doe's DemoCookieCode). Each reaches exactly what
// its name says (TestDemoPromotionsMeanTheirNames): a promotion's
// categories and products add up, so "any large coffee" names the large
// latte alone, not the COFFEE category; the airport's free muffin has no
// basket condition, so it is free without a sandwich, as its name says.
func demoPromotions() []*posgate.Promotion {
	date := func(s string) *posgate.PromotionTime {
		t, _ := posgate.ParsePromotionTime(s)
		return &t
	}
	return []*posgate.Promotion{
		{ID: "DEMO-COFFEE-2OFF", Name: "2 off any large coffee", ProductIDs: []string{"SKU-LATTE-L"},
			Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionAmount, Value: 2}}},
		{ID: "DEMO-WEEKEND-BREAKFAST", Name: "15% off breakfast on weekend mornings", LocationIDs: []string{"LOC123"},
			CategoryIDs: []string{"BAKERY", "COFFEE"},
			Validities: []posgate.PromotionValidity{{StartDate: date("2025-01-01T00:00:00Z"), Recurrence: &posgate.PromotionRecurrence{
				DaysOfWeek: []string{"Saturday", "Sunday"}, StartDate: date("2025-01-04T07:00:00Z"), EndDate: date("2025-01-04T11:00:00Z")}}},
			Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionPercentage, Value: 15}}},
		{ID: "DEMO-AIRPORT-MUFFIN", Name: "Free muffin at the airport", LocationIDs: []string{"LOC456"},
			ProductIDs: []string{"SKU-MUFFIN"},
			Validities: []posgate.PromotionValidity{{StartDate: date("2025-01-01T00:00:00Z"), EndDate: date("2030-12-31T23:59:59Z")}},
			Results:    []posgate.PromotionResult{{PromotionType: posgate.PromotionPercentage, Value: 100}}},
		{ID: "DEMO-SANDWICH-MUFFIN", Name: "Free muffin with a sandwich", ProductIDs: []string{"SKU-SANDWICH-BLT"},
			Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionBuyXGetY, Value: 100, BuyQuantity: 1, GetQuantity: 1,
				GetProductIDs: []string{"SKU-MUFFIN"}}}},
		{ID: "DEMO-LATTE-M-3", Name: "Medium latte for 3.00", ProductIDs: []string{"SKU-LATTE-M"},
			Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionFixedPrice, Value: 3}}},
		{ID: "DEMO-CROISSANTS-3", Name: "20% off from 3 croissants, on top", ProductIDs: []string{"SKU-CROISSANT"}, MinQuantity: 3, Stackable: true,
			Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionPercentage, Value: 20}}},
		{ID: DemoCouponPromotion, Name: "1 off a cookie with a coupon", ProductIDs: []string{"SKU-COOKIE"}, RequiresCoupon: true,
			Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionAmount, Value: 1}}},
	}
}

// loadPromotions imports the demo catalogue if demo-company has none and
// imports the demo promotions it lacks, through the same checks as an
// import, so that the carousel and the operator API have something to show.
func loadPromotions(ctx context.Context, st posgate.Store) error {
	cat, err := loadCatalogue(ctx, st)
	if err != nil {
		return err
	}
	var missing []*posgate.Promotion
	for _, p := range demoPromotions() {
		_, err := st.FindPromotion(ctx, POSSystemID, CompanyID, p.ID)
		if errors.Is(err, posgate.ErrNotFound) {
			missing = append(missing, p)
		} else if err != nil {
			return err
		}
	}
	if len(missing) == 0 {
		return nil
	}
	checker := posgate.NewPromotionChecker(CompanyID, []string{"LOC123", "LOC456"}, cat)
	imp, err := st.BeginPromotionImport(ctx, POSSystemID, CompanyID)
	if err != nil {
		return err
	}
	defer imp.Rollback()
	for i, p := range missing {
		if !checker.Check(i+1, p) {
			return fmt.Errorf("demo promotion %s fails the checks: %+v", p.ID, checker.Result(0, 0).Errors)
		}
		if err := imp.Add(ctx, p); err != nil {
			return err
		}
	}
	_, _, err = imp.Commit(ctx)
	return err
}
