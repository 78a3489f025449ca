package service_test

import (
	"context"
	"iter"
	"testing"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// TestIssuedCouponsReachTheTerminalLog: every way an operator issues
// coupons (one, a batch, a streamed file) appends a CouponIssued for each
// coupon held by a loyalty user, naming the user, in the write's
// transaction; coupons held by nobody append nothing.
func TestIssuedCouponsReachTheTerminalLog(t *testing.T) {
	ctx := context.Background()
	st := newServiceStore(t)
	svc := service.New(st, service.Config{BaseURL: "http://posgate.test"})
	admin := &posgate.Principal{ClientID: "ops", Scopes: []string{posgate.ScopeAdmin}}
	inputs := func(codes ...string) iter.Seq2[*service.CouponInput, error] {
		return func(yield func(*service.CouponInput, error) bool) {
			for i, c := range codes {
				in := &service.CouponInput{Code: c, RewardProvider: posgate.ProviderPJM}
				if i%2 == 0 {
					in.UserID = "john-doe"
				}
				if !yield(in, nil) {
					return
				}
			}
		}
	}
	if _, err := svc.IssueCoupon(ctx, admin, "clover", "demo-company", &service.CouponInput{Code: "ONE", RewardProvider: posgate.ProviderPJM, UserID: "jane-doe"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.IssueCouponBatch(ctx, admin, "clover", "demo-company", inputs("B1", "B2", "B3")); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ImportCoupons(ctx, admin, "clover", "demo-company", inputs("F1", "F2")); err != nil {
		t.Fatal(err)
	}
	evs, err := st.TerminalEventsAfter(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Type+" "+e.CompanyID+" "+e.UserID+" "+string(e.Data))
	}
	coupon := func(code string) string {
		return `{"rewardProvider":"PJM","code":"` + code + `","name":null,"title":null,"pictureUrl":null,"availableUntil":null,"status":"Issued","info":null,"promotionId":null}`
	}
	want := []string{"CouponIssued demo-company jane-doe " + coupon("ONE"), "CouponIssued demo-company john-doe " + coupon("B1"),
		"CouponIssued demo-company john-doe " + coupon("B3"), "CouponIssued demo-company john-doe " + coupon("F1")}
	if len(got) != len(want) {
		t.Fatalf("log: %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: %q, want %q", i, got[i], want[i])
		}
	}
}
