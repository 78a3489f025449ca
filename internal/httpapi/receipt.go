package httpapi

import "net/http"

// receiptPromotion returns what a location's receipts print (docs/api.md
// §8.1).
func (s *Server) receiptPromotion(r *http.Request) (int, any, error) {
	return enveloped(s.svc.ReceiptPromotion(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posLocationId")))
}
