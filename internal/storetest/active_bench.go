package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/coupongen"
)

// Active coupon benchmark data: one company of the POS system ActiveBenchPOS
// holding owned coupons (each with an owner e-mail and phone of its own, so
// that no loyalty users are needed) and ActiveBenchOpen coupons held by
// nobody, of which a share is expired, redeemed or limited to a location.
const (
	ActiveBenchPOS      = "bench"
	ActiveBenchCompany  = "big"
	ActiveBenchLocation = "L1"
	ActiveBenchOpen     = 1000
)

// LoadActiveCouponBench fills st (a fresh store) with the data of
// BenchActiveCoupons: owned generated coupons and ActiveBenchOpen coupons
// held by nobody, at time now.
func LoadActiveCouponBench(b *testing.B, st posgate.Store, owned int, now time.Time) {
	b.Helper()
	ctx := b.Context()
	locations := []string{"L1", "L2", "L3", "L4", "L5"}
	for _, err := range []error{
		st.CreatePOSSystem(ctx, &posgate.POSSystem{ID: ActiveBenchPOS, Name: "Bench"}),
		st.CreateCompany(ctx, &posgate.Company{POSSystemID: ActiveBenchPOS, ID: ActiveBenchCompany, Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()}),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, l := range locations {
		if err := st.CreateLocation(ctx, &posgate.Location{POSSystemID: ActiveBenchPOS, ID: l, CompanyID: ActiveBenchCompany, Status: posgate.StatusActive}); err != nil {
			b.Fatal(err)
		}
	}
	gen := coupongen.Config{POSSystemID: ActiveBenchPOS, CompanyID: ActiveBenchCompany, Coupons: owned, Seed: 7, LocationIDs: locations, Now: now}
	t0 := time.Now()
	if _, err := st.ImportCoupons(ctx, gen.AllCoupons()); err != nil {
		b.Fatal(err)
	}
	_, err := st.ImportCoupons(ctx, func(yield func(*posgate.Coupon, error) bool) {
		for i := range ActiveBenchOpen {
			c := &posgate.Coupon{POSSystemID: ActiveBenchPOS, CompanyID: ActiveBenchCompany, Code: fmt.Sprintf("OPEN-%05d", i)}
			switch i % 10 {
			case 0:
				c.AvailableUntil = ptr(now.Add(-time.Hour))
			case 1:
				c.Status = posgate.CouponRedeemed
			case 2, 3:
				c.LocationIDs = []string{locations[(i/10)%len(locations)]}
			}
			if !yield(c, nil) {
				return
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d owned and %d unowned coupons in %v", owned, ActiveBenchOpen, time.Since(t0).Round(time.Millisecond))
}

// BenchActiveCoupons measures ListActiveCoupons on the data of
// LoadActiveCouponBench at ActiveBenchLocation: the first page, a later
// page and a page past the end, 20 coupons each. Its figures should not
// grow with the owned coupons, which the index leaves out.
func BenchActiveCoupons(b *testing.B, st posgate.Store, now time.Time) {
	for _, c := range []struct {
		name   string
		offset int
	}{{"first-page", 0}, {"page-20", 380}, {"past-the-end", 2000}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			q := posgate.ActiveCouponQuery{POSSystemID: ActiveBenchPOS, CompanyID: ActiveBenchCompany, LocationID: ActiveBenchLocation,
				At: now, Offset: c.offset, Limit: 20}
			var p *posgate.CouponPage
			for b.Loop() {
				var err error
				if p, err = st.ListActiveCoupons(b.Context(), q); err != nil {
					b.Fatal(err)
				}
			}
			// 1000 open coupons: 100 expired, 100 redeemed, 160 limited to
			// other locations of five.
			if p.Total != 640 {
				b.Fatalf("total %d, want 640", p.Total)
			}
			b.ReportMetric(float64(len(p.Coupons)), "coupons/op")
		})
	}
}
