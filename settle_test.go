package posgate

import (
	"fmt"
	"testing"
	"time"
)

// TestEvaluateInputUnavailable: a promotion that Unavailable names does
// not apply; each line it was best for gets the next best, and the other
// lines keep theirs.
func TestEvaluateInputUnavailable(t *testing.T) {
	pct := func(id string, v float64, products ...string) *Promotion {
		return &Promotion{ID: id, Name: id, ProductIDs: products, Results: []PromotionResult{{PromotionType: PromotionPercentage, Value: v}}}
	}
	ix := NewPromotionIndex([]*Promotion{pct("A", 50, "P1"), pct("B", 20, "P1", "P2"), pct("C", 10, "P1")}, nil)
	lines := []BasketLine{{ProductID: "P1", Quantity: 1000, UnitPrice: 1000}, {ProductID: "P2", Quantity: 1000, UnitPrice: 1000}}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		out   []string
		want  string
		total MinorUnits
	}{
		{nil, "A:500,B:200", 700},
		{[]string{"A"}, "B:400", 400},
		{[]string{"A", "B"}, "C:100", 100},
		{[]string{"B"}, "A:500", 500},
		{[]string{"A", "B", "C"}, "", 0},
	} {
		in := EvaluationInput{At: at, Lines: lines}
		if c.out != nil {
			in.Unavailable = func(id string) bool {
				for _, o := range c.out {
					if o == id {
						return true
					}
				}
				return false
			}
		}
		ev, err := ix.EvaluateInput(in)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for i, p := range ev.Promotions {
			if i > 0 {
				got += ","
			}
			got += fmt.Sprintf("%s:%d", p.ID, int64(p.Discount))
		}
		if got != c.want || ev.TotalDiscount != c.total {
			t.Fatalf("without %v: %s (%s), want %s (%d)", c.out, got, ev.TotalDiscount, c.want, c.total)
		}
	}
}

// TestBudgetExhausted is the budget rule as the evaluation previews it.
func TestBudgetExhausted(t *testing.T) {
	for _, c := range []struct {
		b    PromotionBudget
		u    PromotionUsage
		user string
		want bool
	}{
		{PromotionBudget{Quantity: 10}, PromotionUsage{Used: 9}, "", false},
		{PromotionBudget{Quantity: 10}, PromotionUsage{Used: 10}, "u", true},
		{PromotionBudget{PerCustomer: 2}, PromotionUsage{Used: 100}, "", true},
		{PromotionBudget{PerCustomer: 2}, PromotionUsage{Used: 100, CustomerUsed: 1}, "u", false},
		{PromotionBudget{PerCustomer: 2}, PromotionUsage{CustomerUsed: 2}, "u", true},
		{PromotionBudget{Quantity: 5, PerCustomer: 2}, PromotionUsage{Used: 5}, "u", true},
	} {
		if got := c.b.Exhausted(c.u, c.user); got != c.want {
			t.Fatalf("%+v %+v %q: %v", c.b, c.u, c.user, got)
		}
	}
}
