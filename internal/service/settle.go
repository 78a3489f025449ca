package service

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/posgate/posgate"
)

// The settlement of a sale's promotions (docs/api.md §13.9) and the
// budgets' preview of the evaluate endpoint (docs/api.md §9.7, §18.2): both
// evaluate with posgate.PromotionIndex.EvaluateInput; the sale's runs in
// the ledger, inside the sale's database transaction, where the budgets
// are consumed (posgate.ApplyLedger).

// promotionBudgets are the budgets of the promotions that have one; nil
// when none has.
func promotionBudgets(promos []*posgate.Promotion) map[string]posgate.PromotionBudget {
	var out map[string]posgate.PromotionBudget
	for _, p := range promos {
		if b := p.Redemption.Budget(); b.Limited() {
			if out == nil {
				out = map[string]posgate.PromotionBudget{}
			}
			out[p.ID] = b
		}
	}
	return out
}

// budgetsUsedUp is the evaluate endpoint's EvaluationInput.Unavailable:
// the promotions whose budget is used up for the customer as the store
// counts it now (posgate.PromotionBudget.Exhausted); nil when no promotion
// has a budget. The counters are read once, when the evaluation first asks
// about a promotion with a budget: all of the company's budgeted
// promotions' at once, or, for a company with more than
// maxBudgetsReadAtOnce of them, each one's as it is asked about. failed
// returns the first read that failed (the promotion counts as used up
// meanwhile), once the evaluation is over.
func (s *Service) budgetsUsedUp(ctx context.Context, loc *posgate.Location, budgets map[string]posgate.PromotionBudget, customerID string) (unavailable func(string) bool, failed func() error) {
	var readErr error
	failed = func() error { return readErr }
	if len(budgets) == 0 {
		return nil, failed
	}
	var usage map[string]posgate.PromotionUsage
	read := map[string]bool{}
	return func(id string) bool {
		b, ok := budgets[id]
		if !ok {
			return false
		}
		if !read[id] {
			ids := []string{id}
			if len(budgets) <= maxBudgetsReadAtOnce {
				ids = slices.Collect(maps.Keys(budgets))
			}
			got, err := s.store.PromotionUsage(ctx, loc.POSSystemID, loc.CompanyID, customerID, ids)
			if err != nil {
				readErr = err
				return true
			}
			if usage == nil {
				usage = map[string]posgate.PromotionUsage{}
			}
			for _, id := range ids {
				usage[id], read[id] = got[id], true
			}
		}
		return b.Exhausted(usage[id], customerID)
	}, failed
}

// maxBudgetsReadAtOnce is the most budgeted promotions whose counters the
// evaluate endpoint reads in one query.
const maxBudgetsReadAtOnce = 1000

// saleLines are a sale's priced lines: the products that name an id and a
// price (a product without a price cannot be discounted), their quantity
// read to the evaluation's thousandths (1 when absent or not positive).
func saleLines(products []TransactionProduct) []posgate.BasketLine {
	lines := make([]posgate.BasketLine, 0, len(products))
	for _, pr := range products {
		if !given(pr.ProductID) || pr.Price == nil || *pr.Price < 0 {
			continue
		}
		l := posgate.BasketLine{ProductID: *pr.ProductID, UnitPrice: *pr.Price, Quantity: 1000}
		if pr.ProductCategory != nil {
			l.Category = *pr.ProductCategory
		}
		if pr.Quantity != nil && *pr.Quantity > 0 && *pr.Quantity <= posgate.MaxQuantity/1000 {
			l.Quantity = int64(math.Round(*pr.Quantity * 1000))
		}
		lines = append(lines, l)
	}
	return lines
}

// saleSettlement is what the ledger needs to settle a sale's promotions
// (posgate.SaleSettlement) for the sale's priced lines (saleLines); nil
// when there are none.
func (s *Service) saleSettlement(ctx context.Context, loc *posgate.Location, at time.Time, products []TransactionProduct) (*posgate.SaleSettlement, error) {
	lines := saleLines(products)
	if len(lines) == 0 {
		return nil, nil
	}
	snap, err := s.promotionSnapshot(ctx, loc.POSSystemID, loc.CompanyID)
	if err != nil {
		return nil, err
	}
	if err := s.completeLines(ctx, loc, snap.ix, lines); err != nil {
		return nil, err
	}
	ix, at := snap.ix, at.In(loc.Zone()) // wall-clock validity is the location's local time
	return &posgate.SaleSettlement{Budgets: snap.budgets,
		Evaluate: func(customerID string, coupons []posgate.EvaluationCoupon, unavailable func(string) bool) (*posgate.Evaluation, error) {
			return ix.EvaluateInput(posgate.EvaluationInput{LocationID: loc.ID, At: at, Lines: lines, Coupons: coupons,
				CustomerID: customerID, Unavailable: unavailable})
		}}, nil
}

// couponValue is the promotion that the coupon code (any case) of the
// transaction's company carries (nil: none, or no such coupon) and what it
// takes off the transaction's priced lines (saleLines of its stored
// request), evaluated as the evaluate endpoint evaluates (evaluateInput) at
// the transaction's date and location, for its customer, with the coupon
// presented: 0 unless the transaction has the coupon redeemed (a
// requiresCoupon promotion applies only with a redeemable coupon), or when
// the promotion does not apply or nothing is priced (docs/api.md §13.5).
func (s *Service) couponValue(ctx context.Context, loc *posgate.Location, t *posgate.Transaction, code string, status posgate.CouponStatus) (*string, posgate.MinorUnits, error) {
	c, err := s.store.FindCoupon(ctx, t.POSSystemID, t.CompanyID, code)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, 0, nil
	} else if err != nil {
		return nil, 0, err
	}
	if c.PromotionID == "" {
		return nil, 0, nil
	}
	id := c.PromotionID
	if status != posgate.CouponRedeemed || len(t.Request) == 0 {
		return &id, 0, nil
	}
	var req TransactionRequest
	if err := json.Unmarshal(t.Request, &req); err != nil {
		return nil, 0, fmt.Errorf("read the request of transaction %s: %w", t.ID, err)
	}
	lines := saleLines(req.Products)
	if len(lines) == 0 {
		return &id, 0, nil
	}
	ev, err := s.evaluateInput(ctx, loc, posgate.EvaluationInput{At: t.Date, Lines: lines, CustomerID: t.UserID,
		Coupons: []posgate.EvaluationCoupon{{Code: c.Code, PromotionID: id}}})
	if err != nil {
		return nil, 0, err
	}
	return &id, ev.Coupons[0].Discount, nil
}
