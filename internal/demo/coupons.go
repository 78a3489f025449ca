package demo

import (
	"context"
	"time"

	"github.com/posgate/posgate"
)

// Demo loyalty users and coupon codes (README, "The demo data set"). John
// Doe owns a coupon in each state; Sl75Ev belongs to nobody and is usable at
// every location.
const (
	JohnID     = "1001"
	JaneID     = "1002"
	IssuedCode = "10OFFmq8kl8" // John's, Issued, usable at LOC123 only
	AnyCode    = "Sl75Ev"      // nobody's, Issued, every location, no optional fields
)

// couponSteps creates the demo users and coupons, users first (coupons
// refer to them).
func couponSteps(ctx context.Context, st posgate.Store) []func() error {
	str := func(s string) *string { return &s }
	until := func(s string) *time.Time {
		t, _ := time.Parse(time.RFC3339, s)
		return &t
	}
	users := []*posgate.LoyaltyUser{
		{ID: JohnID, FirstName: "John", LastName: "Doe", Gender: "Male", Phone: "+15555551234", Email: "john.doe@example.com", Stamps: 3, Points: 120},
		{ID: JaneID, FirstName: "Jane", LastName: "Roe", Gender: "Female", Phone: "+1 (555) 555-9876", Email: "jane.roe@example.com", Stamps: 7, Points: 40},
	}
	coupons := []*posgate.Coupon{
		{Code: IssuedCode, RewardProvider: posgate.ProviderTwoReward, Name: str("10% off"), Title: str("10% off your next purchase"),
			PictureURL: str("https://images.example.com/coupons/10off.png"), AvailableUntil: until("2099-12-31T23:59:59Z"),
			Status: posgate.CouponIssued, UserID: JohnID, LocationIDs: []string{"LOC123"},
			Info: []posgate.CouponInfo{{Title: str("Terms"), Items: map[string]*string{"minimumSpend": str("20.00"), "excludes": nil}}}},
		{Code: "5OFFrd2x9q", RewardProvider: posgate.ProviderPJM, Name: str("$5 off"), Title: str("$5 off any drink"),
			AvailableUntil: until("2099-12-31T23:59:59Z"), Status: posgate.CouponRedeemed, UserID: JohnID},
		{Code: "FREEcf7x2p", RewardProvider: posgate.ProviderTwoReward, Name: str("Free coffee"), Title: str("A free regular coffee"),
			AvailableUntil: until("2099-12-31T23:59:59Z"), Status: posgate.CouponCancelled, UserID: JohnID},
		{Code: "SUMMER20ab", RewardProvider: posgate.ProviderTwoReward, Name: str("20% off"), Title: str("Summer sale: 20% off"),
			AvailableUntil: until("2020-08-31T23:59:59Z"), Status: posgate.CouponIssued, UserID: JohnID},
		{Code: AnyCode, RewardProvider: posgate.ProviderDummy, Name: str("Free drink"), Status: posgate.CouponIssued},
		{Code: "JANE15off", RewardProvider: posgate.ProviderTwoReward, Name: str("15% off"), Title: str("15% off bakery items"),
			AvailableUntil: until("2099-12-31T23:59:59Z"), Status: posgate.CouponIssued, UserID: JaneID},
	}
	var steps []func() error
	for _, u := range users {
		u.POSSystemID, u.CompanyID = POSSystemID, CompanyID
		steps = append(steps, func() error { return st.CreateLoyaltyUser(ctx, u) })
	}
	for _, c := range coupons {
		c.POSSystemID, c.CompanyID = POSSystemID, CompanyID
		steps = append(steps, func() error { return st.CreateCoupon(ctx, c) })
	}
	return steps
}
