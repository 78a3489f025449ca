package httpapi

import (
	"net/http"
	"strconv"

	"github.com/posgate/posgate/internal/service"
)

// strictPOSBody is posBody with unknown properties refused, for the requests
// that refuse them (docs/api.md §2.2).
var strictPOSBody = bodyOpts{strict: true}

// searchCoupons searches coupons (docs/api.md §5.2); page and
// pageSize come from the query.
func (s *Server) searchCoupons(r *http.Request, req *service.SearchCouponsRequest) (int, any, error) {
	q := r.URL.Query()
	req.Page, req.PageSize = queryNumber(q, "page"), queryNumber(q, "pageSize")
	return plain(s.svc.SearchCoupons(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

// queryNumber reads an integer query parameter: nil when absent, 0 (which
// no range holds, so the service refuses it with its range) when it is not
// an integer.
func queryNumber(q map[string][]string, name string) *int {
	vs, ok := q[name]
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil {
		n = 0
	}
	return &n
}

// lookupCoupon looks a coupon code up (docs/api.md §5.3).
func (s *Server) lookupCoupon(r *http.Request, req *service.LookupCouponRequest) (int, any, error) {
	return enveloped(s.svc.LookupCoupon(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

// lookupUsers looks loyalty-card users up (docs/api.md §6.1).
func (s *Server) lookupUsers(r *http.Request, req *service.LookupUsersRequest) (int, any, error) {
	return enveloped(s.svc.LookupUsers(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

// activeCoupons lists a location's active coupons (docs/api.md §15.2); page
// and pageSize come from the query, as for the coupon search.
func (s *Server) activeCoupons(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	req := &service.ActiveCouponsRequest{PosLocationID: r.PathValue("posLocationId"), Page: queryNumber(q, "page"), PageSize: queryNumber(q, "pageSize")}
	return plain(s.svc.ActiveCoupons(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}
