package posgate

import (
	"context"
	"maps"
	"slices"
)

// A sale's settlement (docs/api.md §13.9): the ledger applies the
// promotion evaluation to the sale's lines inside the sale's database
// transaction, consumes the budgets of the promotions it applied there, and
// records what was applied with the sale.

// SaleSettlement is what the ledger needs to settle a sale's promotions:
// the evaluation of its lines (PromotionIndex.EvaluateInput, with the
// sale's location, date and lines bound) and the budgets of the company's
// promotions that have one.
type SaleSettlement struct {
	// Evaluate evaluates the sale's lines for the customer (a loyalty
	// user's id, "" for none) with the coupons the sale redeemed, without
	// the promotions that unavailable names.
	Evaluate func(customerID string, coupons []EvaluationCoupon, unavailable func(promotionID string) bool) (*Evaluation, error)
	// Budgets are the budgets of the company's promotions that have one
	// (PromotionBudget.Limited), by promotion id.
	Budgets map[string]PromotionBudget
}

// TransactionSettlement is what posgate computed for a sale's priced lines
// (docs/api.md §13.9), beside the amount the POS sent: a difference is
// reported, never refused.
type TransactionSettlement struct {
	Subtotal      MinorUnits `json:"subtotal"`
	TotalDiscount MinorUnits `json:"totalDiscount"`
	// Total is Subtotal less TotalDiscount.
	Total MinorUnits `json:"total"`
	// Difference is the POS's transactionAmount less Total; Mismatch is
	// whether it is not 0.
	Difference Amount `json:"difference"`
	Mismatch   bool   `json:"mismatch"`
}

// maxSettleRounds bounds the evaluations of one sale: each round that
// finds a budget exhausted evaluates again without that promotion; the last
// allowed one evaluates without every budgeted promotion not consumed yet.
const maxSettleRounds = 8

// settlePromotions evaluates the sale's lines for user with the redeemed
// coupons and consumes the budgets of the promotions the evaluation
// applied; a promotion whose budget is exhausted at that moment does not
// apply, and the lines are evaluated again without it, so that the next
// best applies. It returns the evaluation that was applied, every budget
// it applied consumed.
func settlePromotions(ctx context.Context, tx LedgerTx, it *TransactionInput, user string, in []EvaluationCoupon) (*Evaluation, error) {
	s := it.Settle
	use := func(id string) *BudgetUse {
		return &BudgetUse{POSSystemID: it.POSSystemID, CompanyID: it.CompanyID, PromotionID: id, UserID: user, SaleID: it.ID, Budget: s.Budgets[id]}
	}
	exhausted := map[string]bool{}
	consumed := map[string]bool{}
	var unavailable func(string) bool
	if len(s.Budgets) > 0 {
		unavailable = func(id string) bool { return exhausted[id] }
	}
	for round := 1; ; round++ {
		if round == maxSettleRounds {
			unavailable = func(id string) bool { return s.Budgets[id].Limited() && !consumed[id] }
		}
		ev, err := s.Evaluate(user, in, unavailable)
		if err != nil {
			return nil, err
		}
		if len(s.Budgets) == 0 {
			return ev, nil
		}
		applied := map[string]bool{}
		for _, p := range ev.Promotions {
			applied[p.ID] = true
		}
		// Budgets consumed in an earlier round for a promotion that no
		// longer applies go back.
		for _, id := range slices.Sorted(maps.Keys(consumed)) {
			if !applied[id] {
				if err := tx.ReleasePromotionBudget(ctx, use(id)); err != nil {
					return nil, err
				}
				delete(consumed, id)
			}
		}
		again := false
		for _, p := range ev.Promotions { // ordered by id: concurrent sales lock counters in one order
			b, limited := s.Budgets[p.ID]
			if !limited || !b.Limited() || consumed[p.ID] {
				continue
			}
			ok := false
			if b.PerCustomer == 0 || user != "" {
				if ok, err = consumeBudget(ctx, tx, use(p.ID)); err != nil {
					return nil, err
				}
			}
			if ok {
				consumed[p.ID] = true
			} else {
				exhausted[p.ID], again = true, true
			}
		}
		if !again {
			return ev, nil
		}
	}
}

// settlementOf is the answer's settlement of a sale of amount whose lines
// evaluated to ev.
func settlementOf(ev *Evaluation, amount Amount) *TransactionSettlement {
	total := ev.Subtotal - ev.TotalDiscount
	return &TransactionSettlement{Subtotal: ev.Subtotal, TotalDiscount: ev.TotalDiscount, Total: total,
		Difference: amount - total, Mismatch: amount != total}
}

// consumeBudget counts one redemption of u's promotion by sale u.SaleID in
// its counters: in all, then for its customer (u.UserID, when not ""); when
// the customer's counter is at its budget the first count is taken back
// and nothing is counted (false). A counted redemption is linked to the
// sale, for its refund (RestorePromotionBudgets).
func consumeBudget(ctx context.Context, tx LedgerTx, u *BudgetUse) (bool, error) {
	ok, err := tx.CountPromotionUse(ctx, u, "", u.Budget.Quantity)
	if err != nil || !ok {
		return false, err
	}
	if u.UserID != "" {
		if ok, err = tx.CountPromotionUse(ctx, u, u.UserID, u.Budget.PerCustomer); err != nil {
			return false, err
		}
		if !ok {
			return false, tx.UncountPromotionUse(ctx, u, "")
		}
	}
	return true, tx.LinkPromotionUse(ctx, u)
}
