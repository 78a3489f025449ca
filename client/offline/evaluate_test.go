package offline_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
)

// basketCount is how many random baskets each store evaluates both ways
// (a tenth of them with -short).
const basketCount = 10_000

// verdict is what one basket got, offline or online, in one form.
type verdict struct {
	Subtotal, TotalDiscount int64 // cents
	Promotions              []promotionVerdict
	Coupons                 []couponVerdict
}

type promotionVerdict struct {
	ID, Name, Type string
	Value          float64
	Discount       int64
	ProductIDs     []string
}

type couponVerdict struct {
	Code       string
	Redeemable bool
	Message    string
}

func cents(v float64) int64 { return int64(math.Round(v * 100)) }

// TestOfflineEvaluationIsTheServers evaluates 10,000 random baskets, each
// with coupons of the allowance, at random times of the kit's day, online
// (the evaluate endpoint) and offline (from the kit, client/offline), and
// requires the same promotions, discounts, subtotal and coupon verdicts.
func TestOfflineEvaluationIsTheServers(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := start(t, dsn)
		e.place()
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		rng := rand.New(rand.NewPCG(seed, 32))
		categories, products := e.catalogue(rng)
		// Coupons: some expiring within the day, one of another
		// location (not in KIT-A's allowance).
		var codes []string
		for i := range 12 {
			code := fmt.Sprintf("KIT-%02d", i)
			var until time.Time
			if i%3 == 0 {
				until = t0.Add(time.Duration(1+rng.IntN(23)) * time.Hour)
			}
			promotion := ""
			if i%2 == 1 {
				promotion = fmt.Sprintf("CP%d", i%4) // CP1, CP3: a coupon with value
			}
			e.couponWith(code, promotion, until)
			codes = append(codes, code)
		}
		e.coupon("ELSEWHERE", time.Time{}, locB)
		kit, _ := e.kit(locA, till1, nil)
		if len(kit.Allowance.Coupons) != len(codes) {
			t.Fatalf("the allowance lists %d coupons, want the %d of KIT-A", len(kit.Allowance.Coupons), len(codes))
		}
		if msg := kit.CheckCoupon("ELSEWHERE", t0); msg != "The coupon 'ELSEWHERE' is not in the offline allowance." {
			t.Fatalf("another location's coupon offline: %q", msg)
		}

		type basket struct {
			at      time.Time
			lines   []posgate.BasketLine
			request client.EvaluateRequest
		}
		n := basketCount
		if testing.Short() {
			n = basketCount / 10
		}
		baskets := make([]basket, n)
		for n := range baskets {
			at := t0.Add(time.Duration(rng.IntN(24*3600)) * time.Second)
			b := basket{at: at, request: client.EvaluateRequest{PosLocationID: locA, TransactionDate: &at}}
			for range 1 + rng.IntN(6) {
				id := []string{"X1", "NEW-1"}[rng.IntN(2)]
				var price int64 = int64(rng.IntN(3000))
				if rng.IntN(8) > 0 {
					p := products[rng.IntN(len(products))]
					id = p.ProductID
					if rng.IntN(2) == 0 {
						price = cents(*p.Price)
					}
				}
				cat := ""
				switch rng.IntN(6) {
				case 0:
					cat = categories[rng.IntN(len(categories))].PosProductCategoryID
				case 1:
					cat = categories[rng.IntN(len(categories))].Name
				case 2:
					cat = "OUTSIDE"
				}
				qty := int64(1000 * (1 + rng.IntN(4)))
				if rng.IntN(3) == 0 {
					qty = int64(1 + rng.IntN(5000))
				}
				b.lines = append(b.lines, posgate.BasketLine{ProductID: id, Category: cat, Quantity: qty, UnitPrice: posgate.MinorUnits(price)})
				q := float64(qty) / 1000
				b.request.Products = append(b.request.Products, client.EvaluateProduct{ProductID: id, ProductCategory: cat,
					Quantity: &q, Price: float64(price) / 100})
			}
			for range rng.IntN(3) {
				b.request.CouponCodes = append(b.request.CouponCodes, codes[rng.IntN(len(codes))])
			}
			baskets[n] = b
		}

		offlineVerdict := func(b *basket) (verdict, error) {
			ev, err := kit.EvaluateCoupons(b.at, b.lines, b.request.CouponCodes)
			if err != nil {
				return verdict{}, err
			}
			v := verdict{Subtotal: int64(ev.Subtotal), TotalDiscount: int64(ev.TotalDiscount), Promotions: []promotionVerdict{}, Coupons: []couponVerdict{}}
			for _, p := range ev.Promotions {
				v.Promotions = append(v.Promotions, promotionVerdict{p.ID, p.Name, string(p.PromotionType), p.Value, int64(p.Discount), p.ProductIDs})
			}
			for _, code := range b.request.CouponCodes {
				msg := kit.CheckCoupon(code, b.at)
				v.Coupons = append(v.Coupons, couponVerdict{code, msg == "", msg})
			}
			return v, nil
		}
		onlineVerdict := func(b *basket) (verdict, error) {
			ev, err := e.pos.EvaluatePromotions(e.ctx, pos, b.request)
			if err != nil {
				return verdict{}, err
			}
			v := verdict{Subtotal: cents(ev.Subtotal), TotalDiscount: cents(ev.TotalDiscount), Promotions: []promotionVerdict{}, Coupons: []couponVerdict{}}
			for _, p := range ev.Promotions {
				v.Promotions = append(v.Promotions, promotionVerdict{p.ID, p.Name, p.PromotionType, p.Value, cents(p.Discount), p.ProductIds})
			}
			for _, c := range ev.Coupons {
				msg := ""
				if c.ErrorMessage != nil {
					msg = *c.ErrorMessage
				}
				v.Coupons = append(v.Coupons, couponVerdict{c.Code, c.Redeemable, msg})
			}
			return v, nil
		}

		var mu sync.Mutex
		var wg sync.WaitGroup
		mismatches, discounted, refused := 0, 0, 0
		next := 0
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					n := next
					next++
					mu.Unlock()
					if n >= len(baskets) {
						return
					}
					b := &baskets[n]
					off, err := offlineVerdict(b)
					if err != nil {
						t.Errorf("basket %d offline: %v", n, err)
						return
					}
					on, err := onlineVerdict(b)
					if err != nil {
						t.Errorf("basket %d online: %v", n, err)
						return
					}
					mu.Lock()
					if off.TotalDiscount > 0 {
						discounted++
					}
					for _, c := range off.Coupons {
						if !c.Redeemable {
							refused++
						}
					}
					if !reflect.DeepEqual(off, on) {
						mismatches++
						if mismatches <= 3 {
							t.Errorf("basket %d at %s: %+v\noffline %+v\nonline  %+v", n, b.at.Format(time.RFC3339), b.request.Products, off, on)
						}
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if mismatches > 0 {
			t.Fatalf("%d of %d baskets differ offline and online", mismatches, len(baskets))
		}
		// The baskets exercise the rules: most get a discount, and some
		// coupons are refused (expired within the day).
		if discounted < len(baskets)/4 || refused == 0 {
			t.Fatalf("weak baskets: %d of %d discounted, %d coupons refused", discounted, len(baskets), refused)
		}
		t.Logf("%d baskets alike offline and online: %d discounted, %d coupon refusals", len(baskets), discounted, refused)
	})
}
