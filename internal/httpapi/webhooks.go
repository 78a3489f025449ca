package httpapi

import (
	"net/http"
	"strconv"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// The operator's webhook routes (docs/api.md §19.1, §19.3).

func (s *Server) createWebhook(r *http.Request, req *service.CreateWebhookEndpointRequest) (int, any, error) {
	out, err := s.svc.CreateWebhookEndpoint(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req)
	return withSecret(http.StatusCreated, out, err)
}

func (s *Server) listWebhooks(r *http.Request) (int, any, error) {
	return list(s.svc.ListWebhookEndpoints(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

func (s *Server) getWebhook(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindWebhookEndpoint(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("endpointId")))
}

func (s *Server) updateWebhook(r *http.Request, req *service.UpdateWebhookEndpointRequest) (int, any, error) {
	return enveloped(s.svc.UpdateWebhookEndpoint(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("endpointId"), req))
}

func (s *Server) deleteWebhook(r *http.Request) (int, any, error) {
	return enveloped(s.svc.DeleteWebhookEndpoint(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("endpointId")))
}

func (s *Server) rotateWebhookSecret(r *http.Request) (int, any, error) {
	out, err := s.svc.RotateWebhookSecret(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("endpointId"))
	return withSecret(http.StatusOK, out, err)
}

func (s *Server) testWebhook(r *http.Request) (int, any, error) {
	out, err := s.svc.SendTestWebhook(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("endpointId"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, envelope{out}, nil
}

// listWebhookDeliveries pages an endpoint's deliveries; status and paging
// come from the query.
func (s *Server) listWebhookDeliveries(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	req := &service.ListWebhookDeliveriesRequest{Status: q.Get("status"), Page: queryNumber(q, "page"), PageSize: queryNumber(q, "pageSize")}
	return enveloped(s.svc.ListWebhookDeliveries(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("endpointId"), req))
}

// redeliverWebhooks makes every dead delivery of an endpoint Pending again.
func (s *Server) redeliverWebhooks(r *http.Request) (int, any, error) {
	return enveloped(s.svc.RedeliverWebhooks(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("endpointId"), 0))
}

// redeliverWebhook makes one dead delivery Pending again.
func (s *Server) redeliverWebhook(r *http.Request) (int, any, error) {
	id, err := strconv.ParseInt(r.PathValue("deliveryId"), 10, 64)
	if err != nil || id <= 0 {
		return 0, nil, posgate.NotFound("dead webhook delivery", r.PathValue("deliveryId"))
	}
	return enveloped(s.svc.RedeliverWebhooks(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("endpointId"), id))
}
