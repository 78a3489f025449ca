package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/posgate/posgate"
)

// Demo coupons and loyalty users of demo-company. John Doe owns one coupon
// in each state (the expired one has a fixed availableUntil in the past);
// Sl75Ev belongs to nobody and is usable at every location. The dates are
// fixed so that the data set, and the answers the README shows, never change.
const (
	DemoUserID       = "john-doe"
	DemoUserEmail    = "john.doe@example.com"
	DemoUserPhone    = "+15555551234"
	DemoIssuedCode   = "10OFFmq8kl8"
	DemoEverywhere   = "Sl75Ev"
	DemoRedeemedCode = "FREECOFFEE1"
	DemoCancelCode   = "5OFFcx21pq"
	DemoExpiredCode  = "SUMMER24"
	// DemoCookieCode carries DemoCouponPromotion, which applies only with it.
	DemoCookieCode      = "COOKIE1"
	DemoCouponPromotion = "DEMO-COUPON-COOKIE"
)

func demoUsers() []*posgate.LoyaltyUser {
	mk := func(id, first, last, gender, phone, email string, stamps, points int32) *posgate.LoyaltyUser {
		return &posgate.LoyaltyUser{POSSystemID: POSSystemID, CompanyID: CompanyID, LoyaltyCard: posgate.LoyaltyCard{ID: id, FirstName: first, LastName: last,
			Gender: gender, Phone: phone, Email: email, Stamps: stamps, Points: points}}
	}
	return []*posgate.LoyaltyUser{
		mk(DemoUserID, "John", "Doe", "Male", DemoUserPhone, DemoUserEmail, 3, 120),
		mk("jane-doe", "Jane", "Doe", "Female", "+1 (555) 555-9876", "jane.doe@example.com", 7, 45),
		mk("johnny-appleseed", "Johnny", "Appleseed", "Male", "+1 555 555 0100", "johnny@example.org", 0, 10),
		mk("mary-johnson", "Mary", "Johnson", "Female", "+44 20 7946 0958", "mary.johnson@example.com", 9, 300),
		mk("ava-doerr", "Ava", "Doerr", "", "", "ava.doerr@example.net", 1, 0),
	}
}

func demoCoupons() []*posgate.Coupon {
	str := func(s string) *string { return &s }
	at := func(s string) *time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return &t
	}
	// Owned coupons carry only the user's id: a search by e-mail or phone
	// matches the user's, so a changed e-mail finds them at once.
	mk := func(code string, provider posgate.RewardProvider, status posgate.CouponStatus, name, title string, until *time.Time, userID string, locations ...string) *posgate.Coupon {
		return &posgate.Coupon{POSSystemID: POSSystemID, CompanyID: CompanyID, Code: code, RewardProvider: provider, Status: status,
			Name: str(name), Title: str(title), AvailableUntil: until, UserID: userID, LocationIDs: locations}
	}
	issued := mk(DemoIssuedCode, posgate.ProviderTwoReward, posgate.CouponIssued, "10% off", "10% off your next purchase",
		at("2099-12-31T23:59:59Z"), DemoUserID, "LOC123")
	issued.PictureURL = str("https://example.com/demo/coupons/10off.png")
	issued.Info = []posgate.CouponInfo{{Title: str("Terms"), Items: map[string]*string{"minimumSpend": str("20.00"), "combinable": nil}}}
	cookie := mk(DemoCookieCode, posgate.ProviderTwoReward, posgate.CouponIssued, "Cookie", "1 off a chocolate cookie",
		at("2099-12-31T23:59:59Z"), DemoUserID)
	cookie.PromotionID = DemoCouponPromotion
	everywhere := mk(DemoEverywhere, posgate.ProviderPJM, posgate.CouponIssued, "Free drink", "A free drink with any meal", nil, "")
	return []*posgate.Coupon{
		issued,
		mk(DemoRedeemedCode, posgate.ProviderTwoReward, posgate.CouponRedeemed, "Free coffee", "One free coffee", at("2099-12-31T23:59:59Z"), DemoUserID),
		mk(DemoCancelCode, posgate.ProviderDummy, posgate.CouponCancelled, "$5 off", "$5 off a purchase over $25", at("2099-12-31T23:59:59Z"), DemoUserID),
		mk(DemoExpiredCode, posgate.ProviderTwoReward, posgate.CouponIssued, "Summer sale", "15% off summer items", at("2024-09-30T23:59:59Z"), DemoUserID),
		everywhere,
		cookie,
		mk("JANE2FOR1", posgate.ProviderTwoReward, posgate.CouponIssued, "2 for 1", "Two coffees for the price of one", at("2099-06-30T23:59:59Z"), "jane-doe", "LOC456"),
	}
}

// loadCoupons creates the demo loyalty users and coupons that are absent.
func loadCoupons(ctx context.Context, st posgate.Store) error {
	for _, u := range demoUsers() {
		if err := st.CreateLoyaltyUser(ctx, u); err != nil && !errors.Is(err, posgate.ErrConflict) {
			return fmt.Errorf("loyalty user %s: %w", u.ID, err)
		}
	}
	for _, c := range demoCoupons() {
		c.Normalize()
		if err := st.CreateCoupon(ctx, c); err != nil && !errors.Is(err, posgate.ErrConflict) {
			return fmt.Errorf("coupon %s: %w", c.Code, err)
		}
	}
	return nil
}
