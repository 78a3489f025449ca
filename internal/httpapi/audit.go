package httpapi

import (
	"net/http"

	"github.com/posgate/posgate/internal/service"
)

// listAudit pages the audit log (docs/api.md §22); filters, cursor and
// page size come from the query.
func (s *Server) listAudit(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	req := &service.ListAuditRequest{Actor: q.Get("actor"), Action: q.Get("action"), TargetType: q.Get("targetType"),
		TargetID: q.Get("targetId"), POSSystemID: q.Get("posSystemId"), CompanyID: q.Get("posCompanyId"), LocationID: q.Get("posLocationId"),
		From: q.Get("from"), To: q.Get("to"), Cursor: q.Get("cursor"), PageSize: queryNumber(q, "pageSize")}
	return enveloped(s.svc.ListAudit(r.Context(), principal(r.Context()), req))
}
