package benchkeys

import (
	"fmt"

	"github.com/posgate/posgate"
)

// Shape of the promotion evaluation data set (the evaluate row of bench and
// posgate's BenchmarkEvaluate): 10 top categories of 5 children each, 2,000
// products (100 basket families of 20), 10,000 promotions over 20
// locations: 1 % for every product, a third by category (a top category or
// a child), the rest by 5 products; a quarter everywhere, the others at 2
// locations; half always valid, half in 2030 (a quarter on weekend days
// 08:00–20:00 only).
const (
	EvalLocations  = 20
	EvalFamilies   = 100
	EvalLines      = 20
	EvalPromotions = 10_000
)

// EvalLocation is the id of location i of the data set (modulo
// EvalLocations).
func EvalLocation(i int) string { return fmt.Sprintf("EVL%02d", i%EvalLocations) }

// EvalPromotion is promotion i of the data set.
func EvalPromotion(i int) *posgate.Promotion {
	date := func(s string) *posgate.PromotionTime {
		t, _ := posgate.ParsePromotionTime(s)
		return &t
	}
	p := &posgate.Promotion{ID: fmt.Sprintf("EVAL-%05d", i), Name: fmt.Sprintf("Evaluation promotion %d", i)}
	switch {
	case i%100 == 0:
		p.UseForAllProducts = true
	case i%3 == 0:
		p.CategoryIDs = []string{fmt.Sprintf("CAT-%d", i%10)}
		if i%2 == 0 {
			p.CategoryIDs = []string{fmt.Sprintf("CAT-%d-%d", i%10, i%5)}
		}
	default:
		for j := range 5 {
			p.ProductIDs = append(p.ProductIDs, fmt.Sprintf("P-%d-%02d", (i+j*37)%EvalFamilies, (i+j)%EvalLines))
		}
	}
	if i%4 != 0 {
		p.LocationIDs = []string{EvalLocation(i), EvalLocation(i + 1)}
	}
	if i%2 == 1 {
		v := posgate.PromotionValidity{StartDate: date("2030-01-01T00:00:00Z"), EndDate: date("2030-12-31T23:59:59Z")}
		if i%4 == 1 {
			v.Recurrence = &posgate.PromotionRecurrence{DaysOfWeek: []string{"Saturday", "Sunday"},
				StartDate: date("2030-01-05T08:00:00Z"), EndDate: date("2030-01-05T20:00:00Z")}
		}
		p.Validities = []posgate.PromotionValidity{v}
	}
	if i%2 == 0 {
		p.Results = []posgate.PromotionResult{{PromotionType: posgate.PromotionPercentage, Value: float64(5 + (i%7)*5)}}
	} else {
		p.Results = []posgate.PromotionResult{{PromotionType: posgate.PromotionAmount, Value: 0.5 + float64(i%5)}}
	}
	return p
}
