package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/posgate/posgate"
)

// demoCatalogue is demo-company's catalogue, set only while the company has
// none.
var demoCatalogue = posgate.Catalogue{POSSystemID: POSSystemID, CompanyID: CompanyID,
	CategoryIDs: []string{"BAKERY", "COFFEE", "SANDWICHES"},
	ProductIDs:  []string{"SKU-CROISSANT", "SKU-LATTE-L", "SKU-LATTE-M", "SKU-MUFFIN", "SKU-SANDWICH-BLT"}}

// demoPromotions are demo-company's promotions, each imported only while
// absent: one everywhere and always, one at LOC123 on weekend mornings, one
// at LOC456 through 2030.
func demoPromotions() []*posgate.Promotion {
	date := func(s string) *time.Time {
		t, _ := time.Parse(time.RFC3339, s)
		return &t
	}
	return []*posgate.Promotion{
		{ID: "DEMO-COFFEE-2OFF", Name: "2 off any large coffee", CategoryIDs: []string{"COFFEE"}, ProductIDs: []string{"SKU-LATTE-L"},
			Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionAmount, Value: 2}}},
		{ID: "DEMO-WEEKEND-BREAKFAST", Name: "15% off breakfast on weekend mornings", LocationIDs: []string{"LOC123"},
			CategoryIDs: []string{"BAKERY", "COFFEE"},
			Validities: []posgate.PromotionValidity{{StartDate: date("2025-01-01T00:00:00Z"), Recurrence: &posgate.PromotionRecurrence{
				DaysOfWeek: []string{"Saturday", "Sunday"}, StartDate: date("2025-01-04T07:00:00Z"), EndDate: date("2025-01-04T11:00:00Z")}}},
			Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionPercentage, Value: 15}}},
		{ID: "DEMO-AIRPORT-MUFFIN", Name: "Free muffin with a sandwich", LocationIDs: []string{"LOC456"}, UseForAllCategories: true,
			ProductIDs: []string{"SKU-MUFFIN", "SKU-SANDWICH-BLT"},
			Validities: []posgate.PromotionValidity{{StartDate: date("2025-01-01T00:00:00Z"), EndDate: date("2030-12-31T23:59:59Z")}},
			Results:    []posgate.PromotionResult{{PromotionType: posgate.PromotionPercentage, Value: 100}}},
	}
}

// loadPromotions sets the demo catalogue if demo-company has none and
// imports the demo promotions it lacks, through the same checks as an
// import, so that the carousel and the operator API have something to show.
func loadPromotions(ctx context.Context, st posgate.Store) error {
	cat, err := st.FindCatalogue(ctx, POSSystemID, CompanyID)
	if err != nil {
		return err
	}
	if len(cat.CategoryIDs) == 0 && len(cat.ProductIDs) == 0 {
		c := demoCatalogue
		if err := c.Validate(); err != nil {
			return err
		}
		if err := st.ReplaceCatalogue(ctx, &c); err != nil {
			return err
		}
		cat = &c
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
