package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/posgate/posgate"
)

// Promotion budgets (docs/api.md §9.7) through the ledger: the stores'
// counters decide, under concurrency, per customer, and a full refund
// gives a sale's redemptions back.

// budgetSettlement settles a sale as an evaluation that applies promo
// (1.00 off a 5.00 line) unless it is unavailable, and else FALLBACK
// (0.50 off), with the given budgets.
func budgetSettlement(promo string, budgets map[string]posgate.PromotionBudget) *posgate.SaleSettlement {
	return &posgate.SaleSettlement{Budgets: budgets,
		Evaluate: func(_ string, _ []posgate.EvaluationCoupon, unavailable func(string) bool) (*posgate.Evaluation, error) {
			id, off := promo, posgate.MinorUnits(100)
			if unavailable != nil && unavailable(promo) {
				id, off = "FALLBACK", 50
			}
			return &posgate.Evaluation{Subtotal: 500, TotalDiscount: off, Lines: []posgate.LineResult{{Total: 500, PromotionID: id, Discount: off}},
				Promotions: []posgate.AppliedPromotion{{ID: id, Name: id, PromotionType: posgate.PromotionAmount, Value: 1, Discount: off, ProductIDs: []string{"P"}}}}, nil
		}}
}

// appliedPromotion is the id of the one promotion an outcome's answer lists.
func appliedPromotion(t *testing.T, o *posgate.TransactionOutcome) string {
	t.Helper()
	a := answerOf(t, o)
	if o.Status != posgate.OutcomeCreated || len(a.Promotions) != 1 || a.Settlement == nil || a.Settlement.Total != 500-a.Promotions[0].Discount {
		t.Fatalf("outcome %s %s", o.Status, o.Answer)
	}
	return a.Promotions[0].ID
}

func testPromotionBudgets(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	usage := func(user, promo string) posgate.PromotionUsage {
		t.Helper()
		u, err := e.s.PromotionUsage(ctx, "clover", "acme", user, []string{promo, "FALLBACK"})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := u["FALLBACK"]; ok {
			t.Fatalf("a promotion without a budget is counted: %v", u)
		}
		return u[promo]
	}

	// 20 sales at once against a budget of 5: exactly 5 get it.
	total := map[string]posgate.PromotionBudget{"TOTAL": {Quantity: 5}}
	const n = 20
	outs := make([]*posgate.TransactionOutcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			in := e.txInput(1, fmt.Sprintf("BT-%d", i), 400, func(in *posgate.TransactionInput) {
				in.Settle, in.CardNumber = budgetSettlement("TOTAL", total), ""
			})
			in.ID = uid()
			o, err := e.s.ApplyTransactions(ctx, []*posgate.TransactionInput{in})
			if err != nil {
				t.Errorf("sale %d: %v", i, err)
				return
			}
			outs[i] = o[0]
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	got := map[string]int{}
	for _, o := range outs {
		got[appliedPromotion(t, o)]++
	}
	if got["TOTAL"] != 5 || got["FALLBACK"] != 15 || usage("", "TOTAL") != (posgate.PromotionUsage{Used: 5}) {
		t.Fatalf("applied %v, usage %v; want TOTAL 5 times", got, usage("", "TOTAL"))
	}

	// Per customer: twice for u1, never for an anonymous sale; a batch's
	// items count one after the other.
	per := map[string]posgate.PromotionBudget{"PER": {PerCustomer: 2}}
	var items []*posgate.TransactionInput
	for i, card := range []string{"u1", "", "u1", "u1"} {
		items = append(items, e.txInput(i+1, fmt.Sprintf("BP-%d", i), 400, func(in *posgate.TransactionInput) {
			in.Settle, in.CardNumber = budgetSettlement("PER", per), card
		}))
	}
	var seq []string
	for _, o := range e.apply(items...) {
		seq = append(seq, appliedPromotion(t, o))
	}
	if fmt.Sprint(seq) != "[PER FALLBACK PER FALLBACK]" || usage("u1", "PER") != (posgate.PromotionUsage{Used: 2, CustomerUsed: 2}) {
		t.Fatalf("per customer: %v, usage %v", seq, usage("u1", "PER"))
	}

	// Refunds: a partial one keeps the redemption, the one that completes
	// the sale gives it back, once; a sale that did not apply it gives
	// nothing back.
	refund := func(row int, id, sale string, amount posgate.Amount) {
		t.Helper()
		o := e.apply(e.txInput(row, id, -amount, func(in *posgate.TransactionInput) {
			in.Type, in.OriginalTransactionID, in.CardNumber = posgate.TransactionRefund, sale, ""
		}))
		if o[0].Status != posgate.OutcomeCreated {
			t.Fatalf("refund %s: %s %v", id, o[0].Status, o[0].Err)
		}
	}
	refund(1, "BR-1", "BP-0", 100)
	if u := usage("u1", "PER"); u != (posgate.PromotionUsage{Used: 2, CustomerUsed: 2}) {
		t.Fatalf("after a partial refund: %v", u)
	}
	refund(1, "BR-2", "BP-0", 300)
	refund(1, "BR-3", "BP-3", 400)
	if u := usage("u1", "PER"); u != (posgate.PromotionUsage{Used: 1, CustomerUsed: 1}) {
		t.Fatalf("after the full refund: %v", u)
	}
	o := e.apply(e.txInput(1, "BP-9", 400, func(in *posgate.TransactionInput) { in.Settle = budgetSettlement("PER", per) }))
	if id := appliedPromotion(t, o[0]); id != "PER" {
		t.Fatalf("after the redemption came back: %s", id)
	}
}
