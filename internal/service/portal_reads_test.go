package service_test

import (
	"slices"
	"testing"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/service"
)

// TestOperatorSearches: the portal's coupon and loyalty-user searches find
// within one company the operator reaches, by code, e-mail or phone and by
// keyword; a company out of reach is absent, bad input is EINVALID.
func TestOperatorSearches(t *testing.T) {
	svc := newService(t)
	ctx := t.Context()
	admin := &posgate.Principal{ClientID: "ops", Scopes: []string{posgate.ScopeAdmin}}
	manager := &posgate.Principal{ClientID: "portal", PersonID: "m", Scopes: []string{posgate.ScopeAdmin}, POSSystemID: demo.POSSystemID, LocationIDs: []string{"LOC123"}}
	str := func(s string) *string { return &s }
	codes := func(req *service.SearchCouponsRequest) []string {
		t.Helper()
		page, err := svc.SearchCompanyCoupons(ctx, admin, demo.POSSystemID, demo.CompanyID, req)
		if err != nil {
			t.Fatalf("SearchCompanyCoupons(%+v): %v", req, err)
		}
		var out []string
		for _, c := range page.Coupons {
			out = append(out, c.Code+":"+string(c.Status))
		}
		return out
	}
	if got := codes(&service.SearchCouponsRequest{Code: str(" summer24 ")}); !slices.Equal(got, []string{"SUMMER24:Expired"}) {
		t.Errorf("by code: %v", got)
	}
	if got := codes(&service.SearchCouponsRequest{Phone: str("+1 555 555 1234")}); !slices.Equal(got, []string{"10OFFmq8kl8:Issued", "5OFFcx21pq:Cancelled", "COOKIE1:Issued", "FREECOFFEE1:Redeemed", "SUMMER24:Expired"}) {
		t.Errorf("by John Doe's phone: %v", got)
	}
	if _, err := svc.SearchCompanyCoupons(ctx, admin, demo.POSSystemID, demo.CompanyID, &service.SearchCouponsRequest{}); posgate.ErrorCode(err) != posgate.EINVALID {
		t.Errorf("no criterion: %v", err)
	}
	if _, err := svc.SearchCompanyCoupons(ctx, manager, demo.POSSystemID, demo.CompanyID, &service.SearchCouponsRequest{Code: str("SUMMER24")}); posgate.ErrorCode(err) != posgate.ENOTFOUND {
		t.Errorf("a location manager: %v", err)
	}

	users, err := svc.SearchCompanyLoyaltyUsers(ctx, admin, demo.POSSystemID, demo.CompanyID, "doe")
	var ids []string
	for _, u := range users {
		ids = append(ids, u.ID)
	}
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"ava-doerr", "jane-doe", "john-doe"}) {
		t.Errorf("users by doe: %v %v", ids, err)
	}
	if _, err := svc.SearchCompanyLoyaltyUsers(ctx, admin, demo.POSSystemID, demo.CompanyID, "x"); posgate.ErrorCode(err) != posgate.EINVALID {
		t.Errorf("a short keyword: %v", err)
	}
	if _, err := svc.SearchCompanyLoyaltyUsers(ctx, manager, demo.POSSystemID, demo.CompanyID, "doe"); posgate.ErrorCode(err) != posgate.ENOTFOUND {
		t.Errorf("a location manager: %v", err)
	}
}
