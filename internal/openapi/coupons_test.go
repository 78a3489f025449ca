package openapi

import (
	"slices"
	"testing"

	"github.com/posgate/posgate"
)

// TestCouponEnumsMatchTheDomain keeps the coupon enums of the document equal
// to the domain's values.
func TestCouponEnumsMatchTheDomain(t *testing.T) {
	schemas := load(t).Components.Schemas
	enum := func(name string) []string {
		var out []string
		for _, v := range schemas[name].Value.Enum {
			out = append(out, v.(string))
		}
		return out
	}
	var providers, statuses []string
	for _, p := range posgate.RewardProviders {
		providers = append(providers, string(p))
	}
	for _, s := range posgate.CouponStatuses {
		statuses = append(statuses, string(s))
	}
	if got := enum("RewardProvider"); !slices.Equal(got, providers) {
		t.Errorf("RewardProvider %v, want %v", got, providers)
	}
	if got := enum("CouponCodeItemStatus"); !slices.Equal(got, statuses) {
		t.Errorf("CouponCodeItemStatus %v, want %v", got, statuses)
	}
	var storable []string
	for _, s := range posgate.CouponStatuses {
		if s.Storable() {
			storable = append(storable, string(s))
		}
	}
	var issue []string
	for _, v := range schemas["IssueCouponRequest"].Value.Properties["status"].Value.Enum {
		issue = append(issue, v.(string))
	}
	if !slices.Equal(issue, storable) {
		t.Errorf("IssueCouponRequest.status %v, want %v", issue, storable)
	}
	// The interface forbids unknown properties in these two.
	for _, name := range []string{"SearchUserCouponsDto", "CouponCodeDisplayDto"} {
		if ap := schemas[name].Value.AdditionalProperties; ap.Has == nil || *ap.Has {
			t.Errorf("%s allows additional properties", name)
		}
	}
}
