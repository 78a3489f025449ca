package posgate

import (
	"cmp"
	"fmt"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// refRound is a/b rounded half to even, computed with big integers: the
// reference's own arithmetic.
func refRound(a, b *big.Int) int64 {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	twice := new(big.Int).Mul(r, big.NewInt(2))
	if c := twice.Cmp(b); c > 0 || (c == 0 && q.Bit(0) == 1) {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// refMul is x × y / d (y and d given as decimal text), rounded half to even.
func refMul(x int64, y string, d int64) int64 {
	r, _ := new(big.Rat).SetString(y)
	r.Mul(r, new(big.Rat).SetInt64(x))
	r.Quo(r, new(big.Rat).SetInt64(d))
	return refRound(r.Num(), r.Denom())
}

// referenceEvaluate is EvaluateInput written the slow, obvious way from its
// documented rules, without the index: every promotion is tried on every
// line, and every line ranks all of its candidates.
func referenceEvaluate(promos []*Promotion, cats []*Category, in EvaluationInput) ([]LineResult, MinorUnits) {
	parents, byName, names := map[string]string{}, map[string]string{}, map[string]int{}
	for _, c := range cats {
		parents[c.ID] = c.ParentID
		byName[c.Name] = c.ID
		names[c.Name]++
	}
	chain := func(l BasketLine) []string {
		cat := l.CatalogCategory
		if l.Category != "" {
			cat = l.Category
			if _, isID := parents[cat]; !isID && names[cat] == 1 {
				cat = byName[cat]
			}
		}
		var out []string
		for ; cat != "" && len(out) <= len(cats); cat = parents[cat] {
			out = append(out, cat)
		}
		return out
	}
	coupons := map[string]string{}
	for _, c := range in.Coupons {
		if _, dup := coupons[c.PromotionID]; !dup && c.PromotionID != "" {
			coupons[c.PromotionID] = c.Code
		}
	}
	totals := make([]int64, len(in.Lines))
	var subtotal int64
	for n, l := range in.Lines {
		totals[n] = refMul(int64(l.UnitPrice), fmt.Sprint(l.Quantity), 1000)
		subtotal += totals[n]
	}
	type cand struct {
		p      *Promotion
		whole  int64
		reason RejectionReason
	}
	text := func(f float64) string { return fmt.Sprint(f) }
	// off is what p's first result takes off line n when left remains.
	off := func(p *Promotion, n int, left, whole int64) int64 {
		r, l := p.Results[0], in.Lines[n]
		var d int64
		switch r.PromotionType {
		case PromotionPercentage:
			d = refMul(left, text(r.Value), 100)
		case PromotionAmount:
			d = refMul(refMul(100, text(r.Value), 1), fmt.Sprint(l.Quantity), 1000)
		case PromotionFixedPrice:
			d = max(0, left-refMul(refMul(100, text(r.Value), 1), fmt.Sprint(l.Quantity), 1000))
		case PromotionBuyXGetY:
			d = whole
			if left < totals[n] {
				d = refMul(whole, fmt.Sprint(left), totals[n])
			}
		}
		return min(d, left)
	}
	perLine := make([][]cand, len(in.Lines))
	for _, p := range promos {
		if len(p.Results) == 0 || !p.AppliesAt(in.LocationID, in.At) {
			continue
		}
		r := p.Results[0]
		var named []int
		var qty int64
		for n, l := range in.Lines {
			if p.UseForAllProducts || p.UseForAllCategories || slices.Contains(p.ProductIDs, l.ProductID) ||
				slices.ContainsFunc(chain(l), func(c string) bool { return slices.Contains(p.CategoryIDs, c) }) {
				named = append(named, n)
				qty += l.Quantity
			}
		}
		if len(named) == 0 {
			continue
		}
		var reason RejectionReason
		switch {
		case p.RequiresCoupon && coupons[p.ID] == "":
			reason = RejectCouponRequired
		case float64(subtotal) < p.MinBasketAmount*100:
			reason = RejectMinBasketAmount
		case float64(qty) < p.MinQuantity*1000:
			reason = RejectMinQuantity
		case in.Unavailable != nil && in.Unavailable(p.ID):
			reason = RejectBudgetExhausted
		}
		wholes := map[int]int64{}
		if r.PromotionType != PromotionBuyXGetY {
			for _, n := range named {
				wholes[n] = off(p, n, totals[n], 0)
			}
		} else {
			var gets []int
			var sets int64
			if len(r.GetProductIDs) == 0 {
				var u int64
				for _, n := range named {
					u += in.Lines[n].Quantity / 1000
				}
				gets, sets = named, u/int64(r.BuyQuantity+r.GetQuantity)
			} else {
				var bought, got int64
				for n, l := range in.Lines {
					if slices.Contains(r.GetProductIDs, l.ProductID) {
						gets = append(gets, n)
						got += l.Quantity / 1000
					} else if slices.Contains(named, n) {
						bought += l.Quantity / 1000
					}
				}
				sets = min(bought/int64(r.BuyQuantity), got/int64(r.GetQuantity))
			}
			if r.MaxApplications > 0 {
				sets = min(sets, int64(r.MaxApplications))
			}
			free := sets * int64(r.GetQuantity)
			gets = slices.Clone(gets)
			slices.SortStableFunc(gets, func(a, b int) int { return cmp.Compare(in.Lines[a].UnitPrice, in.Lines[b].UnitPrice) })
			for _, n := range gets {
				u := min(free, in.Lines[n].Quantity/1000)
				free -= u
				wholes[n] = min(totals[n], refMul(int64(in.Lines[n].UnitPrice)*u, text(r.Value), 100))
			}
		}
		for n, d := range wholes {
			if d > 0 {
				perLine[n] = append(perLine[n], cand{p, d, reason})
			}
		}
	}
	out := make([]LineResult, len(in.Lines))
	var discount int64
	for n := range in.Lines {
		res := LineResult{Total: MinorUnits(totals[n]), Applied: []LinePromotion{}, NotApplied: []LineRejection{}}
		cs := perLine[n]
		slices.SortFunc(cs, func(a, b cand) int {
			return cmp.Or(cmp.Compare(b.p.Priority, a.p.Priority), cmp.Compare(b.whole, a.whole), cmp.Compare(a.p.ID, b.p.ID))
		})
		left := totals[n]
		var applied []*Promotion
		for _, c := range cs {
			rej := LineRejection{ID: c.p.ID, Reason: c.reason}
			stacks := c.p.Stackable && !slices.ContainsFunc(applied, func(a *Promotion) bool { return !a.Stackable })
			if rej.Reason == "" && len(applied) > 0 && !stacks {
				rej.Reason, rej.LostTo = RejectSmallerDiscount, applied[0].ID
				if applied[0].Priority > c.p.Priority {
					rej.Reason = RejectLowerPriority
				}
			}
			d := int64(0)
			if rej.Reason == "" {
				if d = off(c.p, n, left, c.whole); d == 0 {
					rej.Reason = RejectNothingLeft
				}
			}
			if rej.Reason != "" {
				if len(res.NotApplied) < MaxLineRejections {
					res.NotApplied = append(res.NotApplied, rej)
				}
				continue
			}
			if len(applied) == 0 {
				res.PromotionID = c.p.ID
			}
			applied = append(applied, c.p)
			left -= d
			res.Discount += MinorUnits(d)
			res.Applied = append(res.Applied, LinePromotion{ID: c.p.ID, Discount: MinorUnits(d), CouponCode: coupons[c.p.ID]})
		}
		discount += int64(res.Discount)
		out[n] = res
	}
	return out, MinorUnits(subtotal - discount)
}

// randomPromotion is promotion i of a random data set: few distinct values
// (so that ties are common), every result type and condition, some limited
// to locations (one listed twice), some valid only at times.
func randomPromotion(r *rand.Rand, i int, cats []*Category, locs []string, at time.Time, rich bool) *Promotion {
	p := &Promotion{ID: fmt.Sprintf("P%04d", i), Name: fmt.Sprintf("Promotion %d", i)}
	switch r.IntN(4) {
	case 0:
		p.UseForAllProducts = true
	case 1:
		p.CategoryIDs = []string{cats[r.IntN(len(cats))].ID}
	default:
		for range 1 + r.IntN(3) {
			p.ProductIDs = append(p.ProductIDs, fmt.Sprintf("X%d", r.IntN(20)))
		}
	}
	switch r.IntN(4) {
	case 0:
		p.LocationIDs = []string{locs[r.IntN(4)]}
	case 1:
		p.LocationIDs = []string{locs[r.IntN(4)], locs[r.IntN(4)]}
	}
	if r.IntN(3) == 0 {
		start := InstantTime(at.Add(time.Duration(r.IntN(3)-1) * time.Hour))
		p.Validities = []PromotionValidity{{StartDate: &start}}
	}
	kinds := 2
	if rich {
		kinds = 4
	}
	switch r.IntN(kinds) {
	case 0:
		p.Results = []PromotionResult{{PromotionType: PromotionPercentage, Value: float64(5 * (1 + r.IntN(4)))}}
	case 1:
		p.Results = []PromotionResult{{PromotionType: PromotionAmount, Value: 0.5 * float64(1+r.IntN(4))}}
	case 2:
		p.Results = []PromotionResult{{PromotionType: PromotionFixedPrice, Value: 0.5 * float64(r.IntN(12))}}
	case 3:
		res := PromotionResult{PromotionType: PromotionBuyXGetY, Value: float64([]int{50, 100}[r.IntN(2)]),
			BuyQuantity: 1 + r.IntN(2), GetQuantity: 1 + r.IntN(2), MaxApplications: r.IntN(3)}
		if r.IntN(2) == 0 {
			res.GetProductIDs = []string{fmt.Sprintf("X%d", r.IntN(20))}
		}
		p.Results = []PromotionResult{res}
	}
	if r.IntN(30) == 0 {
		p.Results = nil // applies to nothing
	}
	if rich {
		p.Priority = r.IntN(3) - 1
		if r.IntN(3) == 0 {
			p.Stackable = true
		}
		if r.IntN(8) == 0 {
			p.MinQuantity = float64(1 + r.IntN(4))
		}
		if r.IntN(8) == 0 {
			p.MinBasketAmount = float64(r.IntN(40))
		}
		p.RequiresCoupon = r.IntN(10) == 0
	}
	return p
}

// TestEvaluateAgainstReference compares EvaluateInput with
// referenceEvaluate on random promotions and random baskets, at a location
// and at none: first with the plain promotions of the seed (Percentage and
// Amount only, none stackable: each line gets its best promotion), then
// with every result type, priority, stacking, condition, coupon and budget.
func TestEvaluateAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2030, 7, 6, 9, 0, 0, 0, time.UTC)
	locs := []string{"L1", "L2", "L3", "L4"}
	var cats []*Category
	for top := range 3 {
		cats = append(cats, &Category{ID: fmt.Sprintf("C%d", top), Name: fmt.Sprintf("Top %d", top)})
		for child := range 3 {
			cats = append(cats, &Category{ID: fmt.Sprintf("C%d-%d", top, child), ParentID: fmt.Sprintf("C%d", top)})
		}
	}
	baskets := 0
	for round := range 400 {
		rich := round%2 == 1
		var promos []*Promotion
		for i := range 1 + r.IntN(300) {
			promos = append(promos, randomPromotion(r, i, cats, locs, at, rich))
		}
		ix := NewPromotionIndex(promos, cats)
		for range 20 {
			in := EvaluationInput{At: at}
			for range 1 + r.IntN(6) {
				l := BasketLine{ProductID: fmt.Sprintf("X%d", r.IntN(25)), Quantity: int64(1+r.IntN(6)) * 500, UnitPrice: MinorUnits(50 + r.IntN(1000))}
				if r.IntN(2) == 0 {
					l.Category = cats[r.IntN(len(cats))].ID
				}
				in.Lines = append(in.Lines, l)
			}
			if r.IntN(5) != 0 {
				in.LocationID = locs[r.IntN(len(locs))]
			}
			if rich {
				for k := range r.IntN(3) {
					in.Coupons = append(in.Coupons, EvaluationCoupon{Code: fmt.Sprintf("C%d", k), PromotionID: promos[r.IntN(len(promos))].ID})
				}
				if r.IntN(2) == 0 {
					out := promos[r.IntN(len(promos))].ID
					in.Unavailable = func(id string) bool { return id == out }
				}
			}
			ev, err := ix.EvaluateInput(in)
			if err != nil {
				t.Fatal(err)
			}
			baskets++
			want, total := referenceEvaluate(promos, cats, in)
			if !reflect.DeepEqual(ev.Lines, want) || ev.Total != total || ev.Subtotal-ev.TotalDiscount != total {
				for n := range want {
					if !reflect.DeepEqual(ev.Lines[n], want[n]) {
						t.Errorf("line %d %+v:\n got %+v\nwant %+v", n, in.Lines[n], ev.Lines[n], want[n])
					}
				}
				t.Fatalf("round %d, location %q, coupons %v: total %s, the reference's %s", round, in.LocationID, in.Coupons, ev.Total, total)
			}
		}
	}
	t.Logf("%d baskets", baskets)
}

// TestEvaluateKinds checks each result type, condition and stacking rule on
// hand-computed baskets.
func TestEvaluateKinds(t *testing.T) {
	pct := func(id string, v float64) *Promotion {
		return &Promotion{ID: id, UseForAllProducts: true, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: v}}}
	}
	sandwich := BasketLine{ProductID: "SANDWICH", Quantity: 2000, UnitPrice: 550} // 11.00
	muffin := BasketLine{ProductID: "MUFFIN", Quantity: 3000, UnitPrice: 250}     // 7.50
	coffee := BasketLine{ProductID: "COFFEE", Quantity: 1500, UnitPrice: 300}     // 4.50
	type line struct {
		applied    string // "id:discount,…"
		notApplied string // "id:reason>lostTo,…"
	}
	for _, tc := range []struct {
		name    string
		promos  []*Promotion
		in      EvaluationInput
		lines   []line
		total   MinorUnits
		coupons string
	}{
		{"a Percentage and an Amount: the larger alone", []*Promotion{
			pct("A", 10),
			{ID: "B", ProductIDs: []string{"COFFEE"}, Results: []PromotionResult{{PromotionType: PromotionAmount, Value: 0.5}}},
		}, EvaluationInput{Lines: []BasketLine{coffee}}, []line{{"B:0.75", "A:SmallerDiscount>B"}}, 375, ""},
		{"FixedPrice: the unit price becomes the value, never higher", []*Promotion{
			{ID: "F", ProductIDs: []string{"MUFFIN", "COFFEE"}, Results: []PromotionResult{{PromotionType: PromotionFixedPrice, Value: 2}}},
			{ID: "G", ProductIDs: []string{"SANDWICH"}, Results: []PromotionResult{{PromotionType: PromotionFixedPrice, Value: 6}}},
		}, EvaluationInput{Lines: []BasketLine{muffin, coffee, sandwich}}, []line{{"F:1.50", ""}, {"F:1.50", ""}, {"", ""}}, 2000, ""},
		{"priority beats a larger discount", []*Promotion{
			pct("BIG", 50),
			{ID: "SMALL", UseForAllProducts: true, Priority: 1, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 5}}},
		}, EvaluationInput{Lines: []BasketLine{coffee}}, []line{{"SMALL:0.22", "BIG:LowerPriority>SMALL"}}, 428, ""},
		{"stackable ones apply in turn to what is left", []*Promotion{
			{ID: "S1", UseForAllProducts: true, Stackable: true, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 10}}},
			{ID: "S2", UseForAllProducts: true, Stackable: true, Results: []PromotionResult{{PromotionType: PromotionAmount, Value: 1}}},
			{ID: "X", ProductIDs: []string{"SANDWICH"}, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 5}}},
		}, EvaluationInput{Lines: []BasketLine{sandwich}}, []line{{"S2:2.00,S1:0.90", "X:SmallerDiscount>S2"}}, 810, ""},
		{"an exclusive one that ranks first applies alone", []*Promotion{
			{ID: "S1", UseForAllProducts: true, Stackable: true, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 10}}},
			{ID: "X", ProductIDs: []string{"SANDWICH"}, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 20}}},
		}, EvaluationInput{Lines: []BasketLine{sandwich}}, []line{{"X:2.20", "S1:SmallerDiscount>X"}}, 880, ""},
		{"buy 1 sandwich, get a muffin free, twice at most", []*Promotion{
			{ID: "BOGO", ProductIDs: []string{"SANDWICH"}, Results: []PromotionResult{{PromotionType: PromotionBuyXGetY, Value: 100,
				BuyQuantity: 1, GetQuantity: 1, GetProductIDs: []string{"MUFFIN"}, MaxApplications: 2}}},
		}, EvaluationInput{Lines: []BasketLine{sandwich, muffin, {ProductID: "SANDWICH", Quantity: 1000, UnitPrice: 500}}},
			[]line{{"", ""}, {"BOGO:5.00", ""}, {"", ""}}, 1850, ""},
		{"buy 2 get 1 half price among the same products: the cheapest unit", []*Promotion{
			{ID: "B2G1", ProductIDs: []string{"MUFFIN", "COFFEE"}, Results: []PromotionResult{{PromotionType: PromotionBuyXGetY, Value: 50,
				BuyQuantity: 2, GetQuantity: 1}}},
		}, EvaluationInput{Lines: []BasketLine{muffin, {ProductID: "COFFEE", Quantity: 3000, UnitPrice: 200}}},
			[]line{{"", ""}, {"B2G1:2.00", ""}}, 1150, ""},
		{"conditions not met", []*Promotion{
			{ID: "Q", UseForAllProducts: true, MinQuantity: 6, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 30}}},
			{ID: "M", UseForAllProducts: true, MinBasketAmount: 20, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 20}}},
			{ID: "C", UseForAllProducts: true, RequiresCoupon: true, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 15}}},
			pct("B", 12), pct("Z", 1),
		}, EvaluationInput{Lines: []BasketLine{sandwich, coffee}, Unavailable: func(id string) bool { return id == "B" }},
			[]line{{"Z:0.11", "Q:MinQuantityNotMet,M:MinBasketAmountNotMet,C:CouponRequired"},
				{"Z:0.04", "Q:MinQuantityNotMet,M:MinBasketAmountNotMet,C:CouponRequired"}}, 1535, ""},
		{"conditions met, and a coupon that carries its promotion", []*Promotion{
			{ID: "Q", UseForAllProducts: true, MinQuantity: 5, Stackable: true, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: 30}}},
			{ID: "C", ProductIDs: []string{"COFFEE"}, RequiresCoupon: true, Stackable: true, Results: []PromotionResult{{PromotionType: PromotionAmount, Value: 1}}},
			pct("B", 12),
		}, EvaluationInput{Lines: []BasketLine{sandwich, muffin, coffee}, Unavailable: func(id string) bool { return id == "B" },
			Coupons: []EvaluationCoupon{{Code: "PLAIN"}, {Code: "COFFEE1", PromotionID: "C"}}},
			[]line{{"Q:3.30", "B:BudgetExhausted"}, {"Q:2.25", "B:BudgetExhausted"}, {"C:1.50@COFFEE1,Q:0.90", "B:BudgetExhausted"}}, 1505,
			"PLAIN:0.00,COFFEE1:1.50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewPromotionIndex(tc.promos, nil)
			ev, err := ix.EvaluateInput(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			for n, want := range tc.lines {
				var applied, rejected []string
				for _, a := range ev.Lines[n].Applied {
					s := a.ID + ":" + a.Discount.String()
					if a.CouponCode != "" {
						s += "@" + a.CouponCode
					}
					applied = append(applied, s)
				}
				for _, r := range ev.Lines[n].NotApplied {
					s := r.ID + ":" + string(r.Reason)
					if r.LostTo != "" {
						s += ">" + r.LostTo
					}
					rejected = append(rejected, s)
				}
				if got := (line{strings.Join(applied, ","), strings.Join(rejected, ",")}); got != want {
					t.Errorf("line %d: got %+v, want %+v", n, got, want)
				}
			}
			var coupons []string
			for _, c := range ev.Coupons {
				coupons = append(coupons, c.Code+":"+c.Discount.String())
			}
			if ev.Total != tc.total || strings.Join(coupons, ",") != tc.coupons {
				t.Errorf("total %s, coupons %v; want %s, %s", ev.Total, coupons, tc.total, tc.coupons)
			}
			want, total := referenceEvaluate(tc.promos, nil, tc.in)
			if !reflect.DeepEqual(ev.Lines, want) || total != ev.Total {
				t.Errorf("the reference gives %+v, %s", want, total)
			}
		})
	}
}
