package posgate

import (
	"context"
	"fmt"
	"strconv"
)

// Promotion budgets (docs/api.md §9.7): how many sales a promotion may be
// applied to in all and per customer. The names are Voucherify's
// (redemption.quantity, redemption.per_customer); the idea of a budget that
// a sale consumes atomically is Talon.One's. A redemption is one recorded
// sale whose settlement applied the promotion (to one line or to many).

// MaxRedemptionQuantity is the largest budget accepted.
const MaxRedemptionQuantity = 1_000_000_000

// PromotionRedemption is a promotion's budget as imported: quantity is the
// number of sales it may be applied to in all, perCustomer the number per
// loyalty customer; a missing one (nil) sets no limit.
type PromotionRedemption struct {
	Quantity    *int64 `json:"quantity"`
	PerCustomer *int64 `json:"perCustomer"`
	// Used is how many sales applied the promotion under its budget, in
	// all: counted by posgate, answered by the operator API (docs/api.md
	// §9.7), never stored with the promotion; an import that gives it is
	// refused.
	Used *int64 `json:"used,omitempty"`
}

// Budget returns the limits as the ledger counts them (0: none); the zero
// PromotionBudget for nil.
func (r *PromotionRedemption) Budget() PromotionBudget {
	var b PromotionBudget
	if r == nil {
		return b
	}
	if r.Quantity != nil {
		b.Quantity = *r.Quantity
	}
	if r.PerCustomer != nil {
		b.PerCustomer = *r.PerCustomer
	}
	return b
}

// check reports the budget's fields out of range (each from 1 to
// MaxRedemptionQuantity) through fail.
func (r *PromotionRedemption) check(fail func(msg, details string)) {
	if r == nil {
		return
	}
	if r.Used != nil {
		fail("The redemption.used is counted by posgate; an import cannot set it.", "redemption.used: "+strconv.FormatInt(*r.Used, 10))
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"quantity", r.Quantity}, {"perCustomer", r.PerCustomer}} {
		if f.v != nil && (*f.v < 1 || *f.v > MaxRedemptionQuantity) {
			fail(fmt.Sprintf("The redemption.%s must be an integer from 1 to %d.", f.name, MaxRedemptionQuantity),
				"redemption."+f.name+": "+strconv.FormatInt(*f.v, 10))
		}
	}
}

// normalize drops a budget that limits nothing: {} and {"quantity":null}
// are no budget, stored as none.
func (r *PromotionRedemption) normalize() *PromotionRedemption {
	if r == nil || (r.Quantity == nil && r.PerCustomer == nil) {
		return nil
	}
	return r
}

// WithUsage returns promotions as the operator API shows them: each with
// a budget is a copy whose redemption tells how many sales used it in all
// (usage, as PromotionUsageReader answers it with no user; absent: 0).
// The promotions themselves (a cache's, say) are not changed.
func WithUsage(promotions []*Promotion, usage map[string]PromotionUsage) []*Promotion {
	out := make([]*Promotion, len(promotions))
	for i, p := range promotions {
		out[i] = p
		if p.Redemption == nil {
			continue
		}
		q, r := *p, *p.Redemption
		used := usage[p.ID].Used
		r.Used, q.Redemption = &used, &r
		out[i] = &q
	}
	return out
}

// BudgetedIDs are the ids of those of promotions that have a budget.
func BudgetedIDs(promotions []*Promotion) []string {
	var ids []string
	for _, p := range promotions {
		if p.Redemption != nil {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// PromotionBudget is a promotion's budget in the ledger's terms: the most
// sales it may be applied to in all (Quantity) and per loyalty customer
// (PerCustomer); 0 is no limit.
type PromotionBudget struct {
	Quantity, PerCustomer int64
}

// Limited reports whether the budget limits anything.
func (b PromotionBudget) Limited() bool { return b.Quantity > 0 || b.PerCustomer > 0 }

// PromotionUsage is how many sales a promotion was applied to under its
// budget: Used in all, CustomerUsed by one customer.
type PromotionUsage struct {
	Used, CustomerUsed int64
}

// Exhausted is the budget rule of docs/api.md §9.7, as the evaluation
// previews it: a promotion whose budget is used up does not apply, and one
// with a per-customer budget applies only to an identified loyalty customer
// (customerID not "").
func (b PromotionBudget) Exhausted(u PromotionUsage, customerID string) bool {
	if b.PerCustomer > 0 && (customerID == "" || u.CustomerUsed >= b.PerCustomer) {
		return true
	}
	return b.Quantity > 0 && u.Used >= b.Quantity
}

// BudgetUse is one consumption of a promotion's budget by a sale: the
// promotion, the sale's loyalty customer ("" for none), the sale's posgate
// id, and the budget in force.
type BudgetUse struct {
	POSSystemID, CompanyID, PromotionID string
	UserID                              string
	SaleID                              string
	Budget                              PromotionBudget
}

// PromotionUsageReader reads the budgets' counters (the evaluate endpoint's
// preview; a sale consumes them through its LedgerTx).
type PromotionUsageReader interface {
	// PromotionUsage returns, for each of promotionIDs that has been
	// applied under a budget, its usage in all and by userID ("" for none:
	// CustomerUsed is 0); a promotion never counted is absent.
	PromotionUsage(ctx context.Context, posSystemID, companyID, userID string, promotionIDs []string) (map[string]PromotionUsage, error)
}
