package storekit

import (
	"context"
	"errors"
	"testing"

	"github.com/posgate/posgate"
)

// A bulk import reads each company's locations once; an absent company is
// ENOTFOUND every time it is named.
func TestCompanyCheckerReadsEachCompanyOnce(t *testing.T) {
	loads := map[string]int{}
	k := NewCompanyChecker(func(_ context.Context, pos, company string) (map[string]bool, bool, error) {
		loads[pos+"/"+company]++
		if company == "gone" {
			return nil, false, nil
		}
		return map[string]bool{"L1": true, "L2": true}, true, nil
	})
	ctx := t.Context()
	for range 3 {
		c := &posgate.Coupon{POSSystemID: "pos", CompanyID: "acme", Code: "X", LocationIDs: []string{"L2", "L1", "L2"}}
		if err := k.Coupon(ctx, c); err != nil {
			t.Fatalf("Coupon: %v", err)
		}
		if len(c.LocationIDs) != 2 || c.Status != posgate.CouponIssued {
			t.Errorf("coupon not normalised: %+v", c)
		}
	}
	if _, err := k.Locations(ctx, "other", "acme"); err != nil {
		t.Fatalf("Locations of another POS system's company: %v", err)
	}
	for range 2 {
		if _, err := k.Locations(ctx, "pos", "gone"); !errors.Is(err, posgate.ErrNotFound) || posgate.ErrorMessage(err) != `company "gone" not found` {
			t.Errorf("Locations of an absent company: %v", err)
		}
	}
	err := k.Coupon(ctx, &posgate.Coupon{POSSystemID: "pos", CompanyID: "acme", Code: "Y", LocationIDs: []string{"L9"}})
	if posgate.ErrorMessage(err) != `location "L9" of company "acme" not found` {
		t.Errorf("Coupon at another company's location: %v", err)
	}
	if want := map[string]int{"pos/acme": 1, "other/acme": 1, "pos/gone": 2}; len(loads) != len(want) ||
		loads["pos/acme"] != 1 || loads["other/acme"] != 1 || loads["pos/gone"] != 2 {
		t.Errorf("loads %v, want %v", loads, want)
	}
}

func TestLoaderErrorIsPassedOn(t *testing.T) {
	boom := errors.New("boom")
	k := NewCompanyChecker(func(context.Context, string, string) (map[string]bool, bool, error) { return nil, false, boom })
	if err := k.Coupon(t.Context(), &posgate.Coupon{POSSystemID: "pos", CompanyID: "acme"}); !errors.Is(err, boom) {
		t.Errorf("Coupon = %v, want the loader's error", err)
	}
}

func TestPrefixEnd(t *testing.T) {
	end := PrefixEnd("doe")
	for _, s := range []string{"doe", "doe.j", "doe\U0010FFFE", "doeé", "doe日本"} {
		if !("doe" <= s && s < end) {
			t.Errorf("%q is not in [doe, PrefixEnd(doe))", s)
		}
	}
	for _, s := range []string{"do", "dof", "dod\U0010FFFF", "Doe"} {
		if "doe" <= s && s < end {
			t.Errorf("%q is in [doe, PrefixEnd(doe))", s)
		}
	}
}
