package posgate

import (
	"time"
)

// EvaluationCoupon is a coupon of the basket, by its code.
type EvaluationCoupon struct {
	Code string
}

// EvaluationInput is one evaluation's basket and context: the one input of
// the evaluation that the evaluate endpoint and a sale's settlement both
// call (docs/api.md §18.5).
type EvaluationInput struct {
	LocationID string
	At         time.Time
	Lines      []BasketLine
	Coupons    []EvaluationCoupon
	CustomerID string
	// Unavailable, when not nil, names the promotions that do not apply
	// (their budget is exhausted, docs/api.md §9.7): a line then gets the
	// best of the others.
	Unavailable func(promotionID string) bool
}

// EvaluateInput evaluates in's basket (Evaluate) without the promotions
// that in.Unavailable names.
func (ix *PromotionIndex) EvaluateInput(in EvaluationInput) (*Evaluation, error) {
	ev, err := ix.Evaluate(in.LocationID, in.At, in.Lines)
	if err != nil || in.Unavailable == nil {
		return ev, err
	}
	// A line whose best promotion is available keeps it whatever else is
	// unavailable; only the lines whose best one is not are evaluated
	// again, on an index without it, until every line's best is available.
	var out map[string]bool
	for {
		again := false
		for _, p := range ev.Promotions {
			if in.Unavailable(p.ID) {
				if out == nil {
					out = map[string]bool{}
				}
				out[p.ID], again = true, true
			}
		}
		if !again {
			return ev, nil
		}
		if ev, err = ix.without(out).Evaluate(in.LocationID, in.At, in.Lines); err != nil {
			return nil, err
		}
	}
}

// without is a copy of the index in which the promotions of ids are never
// valid; it shares everything else with ix.
func (ix *PromotionIndex) without(ids map[string]bool) *PromotionIndex {
	never := time.Unix(0, 0).UTC()
	before := never.Add(-time.Microsecond)
	closed := []PromotionValidity{{StartDate: &never, EndDate: &before}}
	cp := *ix
	cp.promos = make([]indexedPromotion, len(ix.promos))
	copy(cp.promos, ix.promos)
	for i := range cp.promos {
		if ids[cp.promos[i].id] {
			cp.promos[i].validities = closed
		}
	}
	return &cp
}
