package storecache

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// activeCounting counts the active coupon lists that reach the store.
type activeCounting struct {
	*counting
	lists atomic.Int64
	gate  chan struct{} // when set, each list waits for it to close
}

func (c *activeCounting) ListActiveCoupons(ctx context.Context, q posgate.ActiveCouponQuery) (*posgate.CouponPage, error) {
	c.lists.Add(1)
	if c.gate != nil {
		<-c.gate
	}
	return c.Store.ListActiveCoupons(ctx, q)
}

// activeFixture is newFixture with locations L1–L4 and a cache over a store
// that counts its active coupon lists.
func activeFixture(t *testing.T) (*fixture, *activeCounting) {
	t.Helper()
	f := newFixture(t, 0)
	for _, id := range []string{"L2", "L3", "L4"} {
		if err := f.raw.CreateLocation(f.ctx, &posgate.Location{POSSystemID: "pos", ID: id, CompanyID: "co", Status: posgate.StatusActive}); err != nil {
			t.Fatal(err)
		}
	}
	ac := &activeCounting{counting: f.count}
	f.c = New(ac, Options{TTL: time.Second, Now: f.clock.Now})
	return f, ac
}

// importCoupons stores coupons behind the cache (as another instance would).
func importCoupons(t *testing.T, f *fixture, cs []*posgate.Coupon) {
	t.Helper()
	seq := func(yield func(*posgate.Coupon, error) bool) {
		for _, c := range cs {
			if !yield(c, nil) {
				return
			}
		}
	}
	if _, err := f.raw.ImportCoupons(f.ctx, iter.Seq2[*posgate.Coupon, error](seq)); err != nil {
		t.Fatal(err)
	}
}

// randomCoupons makes n coupons of company co: some limited to locations,
// some expiring around at, some owned, redeemed or cancelled, so that the
// cache's filter meets every condition of the stores'.
func randomCoupons(r *rand.Rand, n int, at time.Time) []*posgate.Coupon {
	var cs []*posgate.Coupon
	locs := []string{"L1", "L2", "L3", "L4"}
	for i := range n {
		c := &posgate.Coupon{POSSystemID: "pos", CompanyID: "co", Code: fmt.Sprintf("%c%04d", "aBcD"[i%4], r.IntN(100000)*10+i%10),
			Status: posgate.CouponIssued}
		switch r.IntN(5) {
		case 0:
			c.LocationIDs = []string{locs[r.IntN(4)]}
		case 1:
			c.LocationIDs = []string{locs[r.IntN(2)], locs[2+r.IntN(2)]}
		case 2:
			l := locs[r.IntN(4)]
			c.LocationIDs = []string{l, l}
		}
		if r.IntN(3) == 0 {
			until := at.Add(time.Duration(r.IntN(120)-30) * time.Second)
			c.AvailableUntil = &until
		}
		switch r.IntN(10) {
		case 0:
			c.Status = posgate.CouponRedeemed
		case 1:
			c.Status = posgate.CouponCancelled
		case 2:
			c.Email = "someone@example.com"
		case 3:
			c.Phone = "+1 555 0100"
		}
		cs = append(cs, c)
	}
	return cs
}

// The cached lists are the store's, for every location, page and moment
// after the set was read, and the store is read once per company per TTL.
func TestActiveCouponsMatchTheStore(t *testing.T) {
	f, ac := activeFixture(t)
	at := f.clock.Now().Truncate(time.Second)
	r := rand.New(rand.NewPCG(1, 2))
	importCoupons(t, f, randomCoupons(r, 400, at))
	reads := 0
	for i := range 300 {
		q := posgate.ActiveCouponQuery{POSSystemID: "pos", CompanyID: "co", LocationID: []string{"L1", "L2", "L3", "L4", "L9"}[r.IntN(5)],
			At: at.Add(time.Duration(r.IntN(90)) * time.Second), Offset: r.IntN(5) * 20 * r.IntN(4), Limit: []int{0, 1, 20, 100, 500}[r.IntN(5)]}
		if i == 0 {
			q.At = at // the set is read at the earliest moment asked for below
		}
		before := ac.lists.Load()
		got, err := f.c.ListActiveCoupons(f.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		reads += int(ac.lists.Load() - before)
		want, err := f.raw.ListActiveCoupons(f.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v: cached %d of %d, store %d of %d", q, len(got.Coupons), got.Total, len(want.Coupons), want.Total)
		}
	}
	if reads != 1 {
		t.Errorf("%d store reads within the TTL, want 1", reads)
	}

	// A moment before the set was read is the store's to answer.
	q := posgate.ActiveCouponQuery{POSSystemID: "pos", CompanyID: "co", LocationID: "L1", At: at.Add(-time.Minute), Limit: 500}
	got, _ := f.c.ListActiveCoupons(f.ctx, q)
	want, _ := f.raw.ListActiveCoupons(f.ctx, q)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("before the set: cached total %d, store %d", got.Total, want.Total)
	}
}

// A coupon written through the cache shows at once; one written behind it
// within the TTL.
func TestActiveCouponWritesAreSeen(t *testing.T) {
	f, _ := activeFixture(t)
	at := f.clock.Now()
	q := posgate.ActiveCouponQuery{POSSystemID: "pos", CompanyID: "co", LocationID: "L1", At: at, Limit: 20}
	total := func() int {
		t.Helper()
		p, err := f.c.ListActiveCoupons(f.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return p.Total
	}
	if n := total(); n != 0 {
		t.Fatalf("no coupons: total %d", n)
	}
	if err := f.c.CreateCoupon(f.ctx, &posgate.Coupon{POSSystemID: "pos", CompanyID: "co", Code: "ONE", Status: posgate.CouponIssued}); err != nil {
		t.Fatal(err)
	}
	if n := total(); n != 1 {
		t.Errorf("after creating one through the cache: total %d, want 1", n)
	}
	if _, err := f.c.ChangeCouponStatus(f.ctx, "pos", "co", "ONE", posgate.CouponCancelled); err != nil {
		t.Fatal(err)
	}
	if n := total(); n != 0 {
		t.Errorf("after cancelling it through the cache: total %d, want 0", n)
	}
	importCoupons(t, f, []*posgate.Coupon{{POSSystemID: "pos", CompanyID: "co", Code: "TWO", Status: posgate.CouponIssued}})
	if n := total(); n != 0 {
		t.Errorf("created elsewhere, within the TTL: total %d, want the cached 0", n)
	}
	f.clock.Advance(time.Second)
	if n := total(); n != 1 {
		t.Errorf("created elsewhere, after the TTL: total %d, want 1", n)
	}
}

// A company with more active coupons than a set may hold is answered by
// the store, correctly, on every request.
func TestActiveCouponsOfALargeCompany(t *testing.T) {
	f, ac := activeFixture(t)
	at := f.clock.Now()
	var cs []*posgate.Coupon
	for i := range maxActivePerCompany + 1 {
		cs = append(cs, &posgate.Coupon{POSSystemID: "pos", CompanyID: "co", Code: fmt.Sprintf("C%05d", i), Status: posgate.CouponIssued})
	}
	importCoupons(t, f, cs)
	for range 3 {
		p, err := f.c.ListActiveCoupons(f.ctx, posgate.ActiveCouponQuery{POSSystemID: "pos", CompanyID: "co", LocationID: "L2", At: at, Offset: 2000, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != maxActivePerCompany+1 || len(p.Coupons) != 1 || p.Coupons[0].Code != fmt.Sprintf("C%05d", maxActivePerCompany) {
			t.Fatalf("total %d, %d coupons", p.Total, len(p.Coupons))
		}
	}
	// One read of the set (found too large) and one per request.
	if n := ac.lists.Load(); n != 4 {
		t.Errorf("%d store reads, want 4", n)
	}
}

// Requests that miss a company's set while it is being read wait for that
// read instead of each reading it.
func TestActiveCouponMissesReadOnce(t *testing.T) {
	f, ac := activeFixture(t)
	importCoupons(t, f, []*posgate.Coupon{{POSSystemID: "pos", CompanyID: "co", Code: "ONE", Status: posgate.CouponIssued}})
	ac.gate = make(chan struct{})
	q := posgate.ActiveCouponQuery{POSSystemID: "pos", CompanyID: "co", LocationID: "L1", At: f.clock.Now(), Limit: 20}
	var wg sync.WaitGroup
	totals := make([]int, 16)
	for i := range totals {
		wg.Go(func() {
			p, err := f.c.ListActiveCoupons(f.ctx, q)
			if err != nil {
				t.Error(err)
				return
			}
			totals[i] = p.Total
		})
	}
	for ac.lists.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the others reach the wait
	close(ac.gate)
	wg.Wait()
	if n := ac.lists.Load(); n != 1 {
		t.Errorf("%d store reads for 16 concurrent misses, want 1", n)
	}
	for i, n := range totals {
		if n != 1 {
			t.Errorf("request %d: total %d, want 1", i, n)
		}
	}
}

// A coupon write drops only its company's set, and a sale that names no
// coupon drops none.
func TestActiveCouponWritesDropOnlyTheirCompany(t *testing.T) {
	f, ac := activeFixture(t)
	if err := f.raw.CreateCompany(f.ctx, &posgate.Company{POSSystemID: "pos", ID: "co2", Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()}); err != nil {
		t.Fatal(err)
	}
	at := f.clock.Now()
	list := func(company string) {
		t.Helper()
		if _, err := f.c.ListActiveCoupons(f.ctx, posgate.ActiveCouponQuery{POSSystemID: "pos", CompanyID: company, LocationID: "L1", At: at, Limit: 20}); err != nil {
			t.Fatal(err)
		}
	}
	reads := func() int64 { return ac.lists.Load() }
	list("co")
	list("co2")
	if n := reads(); n != 2 {
		t.Fatalf("%d reads for two companies, want 2", n)
	}
	if err := f.c.CreateCoupon(f.ctx, &posgate.Coupon{POSSystemID: "pos", CompanyID: "co2", Code: "X", Status: posgate.CouponIssued}); err != nil {
		t.Fatal(err)
	}
	list("co")
	list("co2")
	if n := reads(); n != 3 {
		t.Errorf("after a coupon of co2: %d reads, want 3 (co2's set read again, co's kept)", n)
	}
	// The sale fails (no such session or customer is needed for this):
	// what matters is which sets the cache drops around it.
	f.c.ApplyTransactions(f.ctx, []*posgate.TransactionInput{{Row: 1, POSSystemID: "pos", CompanyID: "co", Type: posgate.TransactionSale}})
	list("co")
	if n := reads(); n != 3 {
		t.Errorf("after a sale without coupons: %d reads, want 3", n)
	}
	f.c.ApplyTransactions(f.ctx, []*posgate.TransactionInput{{Row: 1, POSSystemID: "pos", CompanyID: "co", Type: posgate.TransactionSale, CouponCodes: []string{"Z"}}})
	list("co")
	list("co2")
	if n := reads(); n != 4 {
		t.Errorf("after a sale naming a coupon of co: %d reads, want 4", n)
	}
}
