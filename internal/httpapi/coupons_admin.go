package httpapi

import (
	"net/http"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/importfile"
	"github.com/posgate/posgate/internal/service"
)

// Operator API: coupons and loyalty users of a company.

// couponImportBodyBytes caps a bulk issue's body: service.MaxCouponBatch
// small coupons.
const couponImportBodyBytes = 32 << 20

func (s *Server) createCoupon(r *http.Request, req *service.CouponInput) (int, any, error) {
	return created(s.svc.IssueCoupon(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}

// importCoupons issues a batch {"items":[coupon…]} all-or-nothing; the
// items are decoded as the service reads them, so that an oversized batch
// is refused without reading it whole.
func (s *Server) importCoupons(r *http.Request) (int, any, error) {
	if codec.KindOf(r.Header.Get("Content-Type")) != codec.JSON {
		return 0, nil, errJSONOnly
	}
	return created(s.svc.IssueCouponBatch(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), importfile.CouponItems(r.Body, r.Header.Get("Content-Type"))))
}

func (s *Server) getCoupon(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindCoupon(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("code")))
}

// setCouponStatus cancels or redeems an Issued, unexpired coupon.
func (s *Server) setCouponStatus(to posgate.CouponStatus) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		return enveloped(s.svc.SetCouponStatus(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("code"), to))
	}
}

func (s *Server) createLoyaltyUser(r *http.Request, req *posgate.LoyaltyCard) (int, any, error) {
	return created(s.svc.CreateLoyaltyUser(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}

func (s *Server) getLoyaltyUser(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindLoyaltyUser(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("userId")))
}

func (s *Server) updateLoyaltyUser(r *http.Request, req *service.UpdateLoyaltyUserRequest) (int, any, error) {
	return enveloped(s.svc.UpdateLoyaltyUser(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("userId"), req))
}
