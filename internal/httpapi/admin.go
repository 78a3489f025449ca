package httpapi

import (
	"net/http"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// Operator API (docs/api.md §10): every handler decodes the path,
// query and body, calls the use case of internal/service, which applies
// the principal's reach and validates, and encodes its answer.

// list answers a list in the data envelope, [] rather than null.
func list[T any](xs []T, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	if xs == nil {
		xs = []T{}
	}
	return http.StatusOK, envelope{xs}, nil
}

// created answers 201 with the new object in the data envelope, or the
// error.
func created[T any](x *T, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, envelope{x}, nil
}

func (s *Server) createPOSSystem(r *http.Request, req *service.CreatePOSSystemRequest) (int, any, error) {
	return created(s.svc.CreatePOSSystem(r.Context(), principal(r.Context()), req))
}

func (s *Server) listPOSSystems(r *http.Request) (int, any, error) {
	return list(s.svc.ListPOSSystems(r.Context(), principal(r.Context())))
}

func (s *Server) getPOSSystem(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindPOSSystem(r.Context(), principal(r.Context()), r.PathValue("posSystemId")))
}

func (s *Server) createCompany(r *http.Request, req *service.CreateCompanyRequest) (int, any, error) {
	return created(s.svc.CreateCompany(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

func (s *Server) listCompanies(r *http.Request) (int, any, error) {
	return list(s.svc.ListCompanies(r.Context(), principal(r.Context()), r.PathValue("posSystemId")))
}

func (s *Server) getCompany(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindCompany(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

func (s *Server) updateCompany(r *http.Request, req *service.UpdateCompanyRequest) (int, any, error) {
	return enveloped(s.svc.UpdateCompany(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}

func (s *Server) createLocation(r *http.Request, req *service.CreateLocationRequest) (int, any, error) {
	return created(s.svc.CreateLocation(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

func (s *Server) listLocations(r *http.Request) (int, any, error) {
	return list(s.svc.ListLocations(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.URL.Query().Get("posCompanyId")))
}

func (s *Server) getLocation(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindLocation(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posLocationId")))
}

func (s *Server) updateLocation(r *http.Request, req *service.UpdateLocationRequest) (int, any, error) {
	return enveloped(s.svc.UpdateLocation(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posLocationId"), req))
}

func (s *Server) createTerminal(r *http.Request, req *service.CreateTerminalRequest) (int, any, error) {
	return created(s.svc.CreateTerminal(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posLocationId"), req))
}

func (s *Server) listTerminals(r *http.Request) (int, any, error) {
	return list(s.svc.ListTerminals(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posLocationId")))
}

func (s *Server) getTerminal(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindTerminal(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posLocationId"), r.PathValue("terminalId")))
}

func (s *Server) setTerminalStatus(st posgate.Status) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		return enveloped(s.svc.SetTerminalStatus(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posLocationId"), r.PathValue("terminalId"), st))
	}
}

func (s *Server) createClient(r *http.Request, req *service.CreateClientRequest) (int, any, error) {
	out, err := s.svc.CreateClient(r.Context(), principal(r.Context()), req)
	return withSecret(http.StatusCreated, out, err)
}

func (s *Server) listClients(r *http.Request) (int, any, error) {
	return list(s.svc.ListClients(r.Context(), principal(r.Context())))
}

func (s *Server) getClient(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindClient(r.Context(), principal(r.Context()), r.PathValue("clientId")))
}

func (s *Server) setClientDisabled(disabled bool) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		return enveloped(s.svc.SetClientDisabled(r.Context(), principal(r.Context()), r.PathValue("clientId"), disabled))
	}
}

// rotateClientSecret answers the client with its new secret, shown this
// once (docs/api.md §10).
func (s *Server) rotateClientSecret(r *http.Request) (int, any, error) {
	out, err := s.svc.RotateClientSecret(r.Context(), principal(r.Context()), r.PathValue("clientId"))
	return withSecret(http.StatusOK, out, err)
}

func (s *Server) putClientRateLimit(r *http.Request, req *posgate.RateLimit) (int, any, error) {
	return enveloped(s.rateLimitChanged(s.svc.SetClientRateLimit(r.Context(), principal(r.Context()), r.PathValue("clientId"), req)))
}

func (s *Server) putClientRedirectURIs(r *http.Request, req *service.ClientRedirectURIsRequest) (int, any, error) {
	return enveloped(s.svc.PutClientRedirectURIs(r.Context(), principal(r.Context()), r.PathValue("clientId"), req))
}

func (s *Server) deleteClientRateLimit(r *http.Request) (int, any, error) {
	return enveloped(s.rateLimitChanged(s.svc.ClearClientRateLimit(r.Context(), principal(r.Context()), r.PathValue("clientId"))))
}

// rateLimitChanged makes this instance apply a client's changed rate limit
// from its next request on (other instances within RateLimitRefresh), and
// passes the change's answer on.
func (s *Server) rateLimitChanged(c *service.ClientView, err error) (*service.ClientView, error) {
	if err == nil && s.limiter != nil {
		s.limiter.forget(c.ID)
	}
	return c, err
}

func (s *Server) getSession(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindSession(r.Context(), principal(r.Context()), r.PathValue("sessionId")))
}

func (s *Server) listKeys(r *http.Request) (int, any, error) {
	return list(s.svc.ListKeys(r.Context(), principal(r.Context())))
}

func (s *Server) rotateKey(r *http.Request) (int, any, error) {
	return created(s.svc.RotateKey(r.Context(), principal(r.Context())))
}
