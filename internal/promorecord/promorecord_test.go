package promorecord

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

func at(s string) *time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return &t
}

func TestRoundTrip(t *testing.T) {
	for _, p := range []*posgate.Promotion{
		{Name: "", LocationIDs: []string{}, CategoryIDs: []string{}, ProductIDs: []string{},
			Validities: []posgate.PromotionValidity{}, Results: []posgate.PromotionResult{}},
		{Name: "ünïcode, long " + string(make([]byte, 300)), UseForAllCategories: true, UseForAllProducts: true,
			LocationIDs: []string{"L1", "L2"}, CategoryIDs: []string{"C"}, ProductIDs: []string{"P1", "", "P3"},
			Validities: []posgate.PromotionValidity{
				{},
				{StartDate: at("1970-01-01T00:00:00Z"), EndDate: at("2099-12-31T23:59:59.999999Z")},
				{StartDate: at("1900-01-01T00:00:00.000001Z"), Recurrence: &posgate.PromotionRecurrence{DaysOfWeek: []string{}}},
				{EndDate: at("2030-01-01T00:00:00Z"), Recurrence: &posgate.PromotionRecurrence{DaysOfWeek: []string{"Sunday", "Wednesday", "Saturday"},
					StartDate: at("2030-01-01T08:00:00Z"), EndDate: at("2030-01-01T20:00:00Z")}},
			},
			Results: []posgate.PromotionResult{{PromotionType: "Amount", Value: 0.1 + 0.2}, {PromotionType: "Percentage", Value: math.MaxFloat64}}},
		budgeted(&posgate.PromotionRedemption{Quantity: ptr(int64(10)), PerCustomer: ptr(int64(1))}),
		budgeted(&posgate.PromotionRedemption{Quantity: ptr(int64(1_000_000_000))}),
		budgeted(&posgate.PromotionRedemption{PerCustomer: ptr(int64(300))}),
	} {
		b := Append([]byte("prefix"), p)[len("prefix"):]
		var got posgate.Promotion
		if err := Decode(b, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, p) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, *p)
		}
		if ls, err := Locations(b); err != nil || !reflect.DeepEqual(ls, p.LocationIDs) {
			t.Fatalf("Locations: %v %v", ls, err)
		}
		// Every cut-short record is an error, never a panic; a budget's
		// record cut before its section is the record without it.
		plain := len(b)
		if p.Redemption != nil {
			q := *p
			q.Redemption = nil
			plain = len(Append(nil, &q))
		}
		for n := range len(b) {
			if n == plain {
				continue
			}
			var q posgate.Promotion
			if err := Decode(b[:n], &q); err == nil {
				t.Fatalf("a record cut to %d of %d bytes decoded", n, len(b))
			}
		}
		if err := Decode(append(b[:len(b):len(b)], 0), &got); err == nil {
			t.Fatal("a record with trailing bytes decoded")
		}
	}
	if err := Decode([]byte{2, 0}, &posgate.Promotion{}); err == nil {
		t.Fatal("a record of a newer version decoded")
	}
}

func ptr[T any](v T) *T { return &v }

// budgeted is a promotion with budget r.
func budgeted(r *posgate.PromotionRedemption) *posgate.Promotion {
	return &posgate.Promotion{Name: "B", LocationIDs: []string{"L"}, CategoryIDs: []string{}, ProductIDs: []string{"P"},
		Validities: []posgate.PromotionValidity{}, Results: []posgate.PromotionResult{{PromotionType: "Amount", Value: 1}}, Redemption: r}
}
