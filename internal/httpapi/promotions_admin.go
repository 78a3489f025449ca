package httpapi

import (
	"net/http"

	"github.com/posgate/posgate/internal/service"
)

// Operator API: promotions of a company and the catalogue their category
// and product ids are checked against.

// listPromotions lists a company's promotions, a page at a time; with
// ?validAt= (even empty: now) or ?posLocationId= only those that apply
// there and then.
func (s *Server) listPromotions(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	req := &service.ListPromotionsRequest{Page: queryNumber(q, "page"), PageSize: queryNumber(q, "pageSize"), LocationID: q.Get("posLocationId")}
	if q.Has("validAt") {
		at := q.Get("validAt")
		req.ValidAt = &at
	}
	return plain(s.svc.ListPromotions(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}

func (s *Server) getPromotion(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindPromotion(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("promotionId")))
}

func (s *Server) getCatalogue(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindCatalogue(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

func (s *Server) replaceCatalogue(r *http.Request, req *service.ReplaceCatalogueRequest) (int, any, error) {
	return enveloped(s.svc.ReplaceCatalogue(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}
