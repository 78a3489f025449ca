package httpapi

import (
	"net/http"

	"github.com/posgate/posgate/internal/service"
)

// startInteraction starts a customer interaction (docs/api.md §4.1).
func (s *Server) startInteraction(r *http.Request, req *service.StartInteractionRequest) (int, any, error) {
	out, err := s.svc.StartInteraction(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req)
	return enveloped(out, err)
}
