package httpapi

import (
	"net/http"

	"github.com/posgate/posgate/internal/service"
)

// Operator API: carousel slides and settings, receipt promotions and the
// impression report of a company.

func (s *Server) createSlide(r *http.Request, req *service.CreateSlideRequest) (int, any, error) {
	return created(s.svc.CreateSlide(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}

func (s *Server) listSlides(r *http.Request) (int, any, error) {
	return list(s.svc.ListSlides(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

func (s *Server) getSlide(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindSlide(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("slideId")))
}

func (s *Server) updateSlide(r *http.Request, req *service.UpdateSlideRequest) (int, any, error) {
	return enveloped(s.svc.UpdateSlide(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("slideId"), req))
}

func (s *Server) deleteSlide(r *http.Request) (int, any, error) {
	return enveloped(s.svc.DeleteSlide(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("slideId")))
}

func (s *Server) getCarouselSettings(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindCarouselSettings(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

func (s *Server) putCarouselSettings(r *http.Request, req *service.PutCarouselSettingsRequest) (int, any, error) {
	return enveloped(s.svc.PutCarouselSettings(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}

// The receipt-promotion routes exist under a company (its default; no
// posLocationId in the path) and under a location (posCompanyId empty).

func (s *Server) getReceiptPromotion(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindReceiptPromotion(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("posLocationId")))
}

func (s *Server) putReceiptPromotion(r *http.Request, req *service.PutReceiptPromotionRequest) (int, any, error) {
	return enveloped(s.svc.PutReceiptPromotion(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("posLocationId"), req))
}

func (s *Server) deleteReceiptPromotion(r *http.Request) (int, any, error) {
	return enveloped(s.svc.DeleteReceiptPromotion(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("posLocationId")))
}

func (s *Server) listReceiptPromotions(r *http.Request) (int, any, error) {
	return list(s.svc.ListReceiptPromotions(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

// impressions reports a company's carousel impressions over ?from= to ?to=,
// optionally of one ?posLocationId= and ?terminalId=.
func (s *Server) impressions(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	return enveloped(s.svc.Impressions(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"),
		&service.ImpressionsRequest{From: q.Get("from"), To: q.Get("to"), LocationID: q.Get("posLocationId"), TerminalID: q.Get("terminalId")}))
}
