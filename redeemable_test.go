package posgate

import (
	"testing"
	"time"
)

func TestCouponRedeemability(t *testing.T) {
	now := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Hour)
	user := func(id, email, phone string) *CouponRedeemer {
		r := &CouponRedeemer{}
		r.AddUser(&LoyaltyUser{LoyaltyCard: LoyaltyCard{ID: id, Email: email, Phone: phone}})
		return r
	}
	contact := func(email, phone string) *CouponRedeemer {
		r := &CouponRedeemer{}
		r.Add(email, phone)
		return r
	}
	nobody := &CouponRedeemer{}
	for _, tc := range []struct {
		name   string
		coupon Coupon
		r      *CouponRedeemer
		want   CouponVerdict
	}{
		{"free", Coupon{}, nobody, CouponRedeemable},
		{"free, until later", Coupon{AvailableUntil: &future}, nobody, CouponRedeemable},
		{"expired", Coupon{AvailableUntil: &past}, nobody, CouponHasExpired},
		{"redeemed", Coupon{Status: CouponRedeemed}, nobody, CouponAlreadyRedeemed},
		{"cancelled", Coupon{Status: CouponCancelled}, nobody, CouponWasCancelled},
		{"unknown status", Coupon{Status: "Odd"}, nobody, CouponWasCancelled},
		{"this location", Coupon{LocationIDs: []string{"L1", "L2"}}, nobody, CouponRedeemable},
		{"another location", Coupon{LocationIDs: []string{"L2"}}, nobody, CouponNotUsableHere},
		{"the user's", Coupon{UserID: "ann"}, user("ann", "", ""), CouponRedeemable},
		{"another user's", Coupon{UserID: "ann"}, user("bob", "", ""), CouponOtherCustomer},
		{"a user's, nobody matched", Coupon{UserID: "ann"}, contact("ann@example.com", ""), CouponNeedsCustomer},
		{"a user's with an e-mail, the other user with it", Coupon{UserID: "ann", Email: "bob@example.com"}, user("bob", "Bob@Example.com", ""), CouponOtherCustomer},
		{"e-mail only, a contact", Coupon{Email: "Walk.In@example.com"}, contact(" walk.in@EXAMPLE.com", ""), CouponRedeemable},
		{"e-mail only, the user's own", Coupon{Email: "ann@example.com"}, user("ann", "ANN@example.com", ""), CouponRedeemable},
		{"e-mail only, another", Coupon{Email: "walk.in@example.com"}, contact("other@example.com", "15550000001"), CouponOtherCustomer},
		{"e-mail only, nobody", Coupon{Email: "walk.in@example.com"}, nobody, CouponNeedsCustomer},
		{"e-mail only, nil", Coupon{Email: "walk.in@example.com"}, nil, CouponNeedsCustomer},
		{"a user's, nil", Coupon{UserID: "ann"}, nil, CouponNeedsCustomer},
		{"phone only, its digits", Coupon{Phone: "+1 (555) 000-0001"}, contact("", "15550000001"), CouponRedeemable},
		{"phone only, a user's phone", Coupon{Phone: "15550000001"}, user("ann", "", "+1 555 000 0001"), CouponRedeemable},
		{"phone only, another user", Coupon{Phone: "15550000001"}, user("bob", "bob@example.com", "15550000002"), CouponOtherCustomer},
	} {
		c := tc.coupon
		c.Code = "C"
		if c.Status == "" {
			c.Status = CouponIssued
		}
		if got := c.Redeemability("L1", now, tc.r); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
