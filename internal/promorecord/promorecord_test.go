package promorecord

import (
	"math"
	"reflect"
	"testing"

	"github.com/posgate/posgate"
)

func at(s string) *posgate.PromotionTime {
	t, err := posgate.ParsePromotionTime(s)
	if err != nil {
		panic(err)
	}
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
			Results: []posgate.PromotionResult{{PromotionType: "Amount", Value: 0.1 + 0.2, GetProductIDs: []string{}},
				{PromotionType: "Percentage", Value: math.MaxFloat64, GetProductIDs: []string{}}}},
		// Wall-clock times (version 2), beside instants.
		{LocationIDs: []string{}, CategoryIDs: []string{}, ProductIDs: []string{}, Results: []posgate.PromotionResult{},
			Validities: []posgate.PromotionValidity{
				{StartDate: at("2026-03-08T02:30:00"), EndDate: at("2026-11-01T01:30:00.000001Z")},
				{StartDate: at("2026-03-29T00:00:00Z"), EndDate: at("2026-10-25T02:30:00"), Recurrence: &posgate.PromotionRecurrence{
					DaysOfWeek: []string{"Sunday", "Saturday"}, StartDate: at("2026-01-03T07:00:00"), EndDate: at("2026-01-03T11:00:00")}},
				{Recurrence: &posgate.PromotionRecurrence{DaysOfWeek: []string{}, EndDate: at("2026-01-03")}},
			}},
		{Name: "every new field", LocationIDs: []string{}, CategoryIDs: []string{}, ProductIDs: []string{"SANDWICH"},
			Validities: []posgate.PromotionValidity{}, Priority: -1_000_000, Stackable: true, RequiresCoupon: true,
			MinQuantity: 2.5, MinBasketAmount: 10.99,
			Results: []posgate.PromotionResult{{PromotionType: "BuyXGetY", Value: 100, BuyQuantity: 1, GetQuantity: 10_000,
				GetProductIDs: []string{"MUFFIN", "COOKIE"}, MaxApplications: 1_000_000}}},
		{Name: "priority only", LocationIDs: []string{}, CategoryIDs: []string{}, ProductIDs: []string{}, Priority: 7,
			Validities: []posgate.PromotionValidity{}, Results: []posgate.PromotionResult{{PromotionType: "FixedPrice", Value: 1, GetProductIDs: []string{}}}},
		budgeted(&posgate.PromotionRedemption{Quantity: ptr(int64(10)), PerCustomer: ptr(int64(1))}),
		budgeted(&posgate.PromotionRedemption{Quantity: ptr(int64(1_000_000_000))}),
		budgeted(&posgate.PromotionRedemption{PerCustomer: ptr(int64(300))}),
	} {
		b := Append([]byte("prefix"), p)[len("prefix"):]
		var got posgate.Promotion
		if err := Decode(b, &got); err != nil {
			t.Fatal(err)
		}
		if b[0] != version {
			t.Fatalf("version %d, want %d", b[0], version)
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
	if err := Decode([]byte{3, 0}, &posgate.Promotion{}); err == nil {
		t.Fatal("a record of a newer version decoded")
	}
}

// TestVersion1 decodes a record written before the promotion model's
// conditions and buy-X-get-Y results: they read as absent.
func TestVersion1(t *testing.T) {
	// version 1, flags 2, name "N", no locations, categories, products or
	// validities, one Percentage result of 10.
	b := []byte{1, 2, 1, 'N', 0, 0, 0, 0, 1, 10}
	b = append(b, "Percentage"...)
	b = append(b, 0, 0, 0, 0, 0, 0, 0x24, 0x40)
	p := posgate.Promotion{Priority: 3, Stackable: true, MinQuantity: 1}
	if err := Decode(b, &p); err != nil {
		t.Fatal(err)
	}
	want := posgate.Promotion{Name: "N", UseForAllProducts: true, LocationIDs: []string{}, CategoryIDs: []string{}, ProductIDs: []string{},
		Validities: []posgate.PromotionValidity{}, Results: []posgate.PromotionResult{{PromotionType: "Percentage", Value: 10, GetProductIDs: []string{}}}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
}

func ptr[T any](v T) *T { return &v }

// budgeted is a promotion with budget r.
func budgeted(r *posgate.PromotionRedemption) *posgate.Promotion {
	return &posgate.Promotion{Name: "B", LocationIDs: []string{"L"}, CategoryIDs: []string{}, ProductIDs: []string{"P"},
		Validities: []posgate.PromotionValidity{}, Results: []posgate.PromotionResult{{PromotionType: "Amount", Value: 1, GetProductIDs: []string{}}}, Redemption: r}
}
