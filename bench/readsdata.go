package main

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"time"

	"github.com/posgate/posgate"
)

// activeCoupons is how many coupons held by nobody the active coupons row
// adds to the company (docs/api.md §15.2): a promotion's worth of
// anonymous coupons, beside the data set's owned ones, which the list
// never shows. A quarter are limited to one to three locations.
const activeCoupons = 500

// activeSeed seeds the anonymous coupons' generator.
const activeSeed = 0xAC71E

// loadActiveCoupons imports the anonymous coupons (with the coupon data
// set, so that the list's index sits beside the owned coupons it skips).
func loadActiveCoupons(ctx context.Context, e *env) error {
	if err := loadCouponData(ctx, e); err != nil {
		return err
	}
	if e.loaded["activeCoupons"] {
		return nil
	}
	d := e.Data
	n, err := e.Store.ImportCoupons(ctx, iter.Seq2[*posgate.Coupon, error](func(yield func(*posgate.Coupon, error) bool) {
		for i := range activeCoupons {
			r := rand.New(rand.NewPCG(activeSeed, uint64(i)))
			name, title := fmt.Sprintf("Welcome %d", i), "A free drink with any meal"
			until := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(365*24)) * time.Hour)
			c := &posgate.Coupon{POSSystemID: d.POSSystem, CompanyID: d.Company, Code: fmt.Sprintf("AC%06d", i),
				RewardProvider: posgate.ProviderTwoReward, Name: &name, Title: &title, AvailableUntil: &until,
				Status: posgate.CouponIssued}
			if r.IntN(4) == 0 {
				for range 1 + r.IntN(3) {
					c.LocationIDs = append(c.LocationIDs, d.Locations[r.IntN(len(d.Locations))])
				}
			}
			c.Normalize()
			if !yield(c, nil) {
				return
			}
		}
	}))
	if err != nil {
		return fmt.Errorf("import active coupons: %w", err)
	}
	if e.Kind == "postgres" {
		if err := e.exec(ctx, "ANALYZE coupons"); err != nil {
			return err
		}
	}
	logf("%s: %d anonymous coupons", e.Kind, n)
	e.loaded["activeCoupons"] = true
	return nil
}

// companyKeys is the data set's one company.
func companyKeys(e *env) [][]string { return [][]string{{e.Data.Company}} }
