package posgate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// referenceEvaluate is Evaluate written the slow, obvious way: every
// promotion of the index is tried on every line. The index's lists (by
// product, category and location, ordered by value) must give the same.
func referenceEvaluate(ix *PromotionIndex, promos []*Promotion, locationID string, at time.Time, lines []BasketLine) []LineResult {
	indexed := map[string]int32{} // the promotions the index kept, by id
	for i := range ix.promos {
		indexed[ix.promos[i].id] = int32(i)
	}
	out := make([]LineResult, len(lines))
	for n := range lines {
		l := &lines[n]
		total, _ := l.Total()
		out[n].Total = total
		var chain []string
		for cat, depth := ix.LineCategory(l), 0; cat != "" && depth <= len(ix.parents); depth++ {
			chain = append(chain, cat)
			cat = ix.parents[cat]
		}
		best, bestDisc := int32(-1), MinorUnits(0)
		for _, p := range promos {
			i, ok := indexed[p.ID]
			named := ok && (p.UseForAllProducts || p.UseForAllCategories || slices.Contains(p.ProductIDs, l.ProductID) ||
				slices.ContainsFunc(p.CategoryIDs, func(c string) bool { return slices.Contains(chain, c) }))
			if !named || !p.AppliesAt(locationID, at) {
				continue
			}
			if d := ix.discount(i, l, total); d > bestDisc || (d == bestDisc && d > 0 && i < best) {
				best, bestDisc = i, d
			}
		}
		if best >= 0 {
			out[n].PromotionID, out[n].Discount = ix.promos[best].id, bestDisc
		}
	}
	return out
}

// TestEvaluateAgainstReference compares Evaluate with referenceEvaluate on
// random promotions (few distinct values, so that ties are common; some
// limited to locations, some listing one twice; some valid only at times)
// and random baskets, at a location and at none.
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
	for round := range 200 {
		var promos []*Promotion
		for i := range 1 + r.IntN(300) {
			p := &Promotion{ID: fmt.Sprintf("P%04d", i)}
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
			if r.IntN(2) == 0 {
				p.Results = []PromotionResult{{PromotionType: PromotionPercentage, Value: float64(5 * (1 + r.IntN(4)))}}
			} else {
				p.Results = []PromotionResult{{PromotionType: PromotionAmount, Value: 0.5 * float64(1+r.IntN(4))}}
			}
			if r.IntN(30) == 0 {
				p.Results = nil // applies to nothing
			}
			promos = append(promos, p)
		}
		ix := NewPromotionIndex(promos, cats)
		for range 20 {
			var lines []BasketLine
			for range 1 + r.IntN(6) {
				l := BasketLine{ProductID: fmt.Sprintf("X%d", r.IntN(25)), Quantity: int64(1+r.IntN(3)) * 500, UnitPrice: MinorUnits(50 + r.IntN(1000))}
				if r.IntN(2) == 0 {
					l.Category = cats[r.IntN(len(cats))].ID
				}
				lines = append(lines, l)
			}
			loc := ""
			if r.IntN(5) != 0 {
				loc = locs[r.IntN(len(locs))]
			}
			ev, err := ix.Evaluate(loc, at, lines)
			if err != nil {
				t.Fatal(err)
			}
			if want := referenceEvaluate(ix, promos, loc, at, lines); !slices.Equal(ev.Lines, want) {
				t.Fatalf("round %d, location %q: Evaluate gave %+v, the reference %+v", round, loc, ev.Lines, want)
			}
		}
	}
}
