package httpapi

import (
	"net/http"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// lookupSettings answers the settings lookup with a body (docs/api.md
// §15.1).
func (s *Server) lookupSettings(r *http.Request, req *service.SettingsLookupRequest) (int, any, error) {
	return enveloped(s.svc.LookupSettings(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

// lookupSettingsQuery answers the settings lookup's GET form, whose
// posCompanyId is a query parameter. Given twice, it is refused like a
// property given twice in a body (docs/api.md §2.2): which one was meant
// cannot be known.
func (s *Server) lookupSettingsQuery(r *http.Request) (int, any, error) {
	req := &service.SettingsLookupRequest{}
	switch vs := r.URL.Query()["posCompanyId"]; len(vs) {
	case 0:
	case 1:
		req.PosCompanyID = &vs[0]
	default:
		v := posgate.ValidationError{}
		v.Add("posCompanyId", "The posCompanyId parameter is given more than once.")
		return 0, nil, v.Err()
	}
	return enveloped(s.svc.LookupSettings(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}
