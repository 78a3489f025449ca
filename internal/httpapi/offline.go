package httpapi

import (
	"net/http"
	"strconv"

	"github.com/posgate/posgate/internal/service"
)

// offlineKit answers a location's offline kit for a terminal (docs/api.md
// §24): the compact JWS as application/jose, with its version as ETag;
// 304 when If-None-Match names the current version.
func (s *Server) offlineKit(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	kit, err := s.svc.OfflineKit(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posLocationId"),
		service.KitRequest{TerminalID: q.Get("terminalId"), Since: q.Get("since"), IfNoneMatch: r.Header.Get("If-None-Match")})
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("ETag", `"`+kit.Version+`"`)
	h.Set("Cache-Control", "private, no-cache")
	if kit.NotModified {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "application/jose")
	h.Set("Content-Length", strconv.Itoa(len(kit.JWS)))
	w.Write([]byte(kit.JWS)) // a client gone away: nothing more to say
	return nil
}

// listOfflineConflicts pages a company's offline conflicts (docs/api.md
// §24.6).
func (s *Server) listOfflineConflicts(r *http.Request) (int, any, error) {
	return enveloped(s.svc.ListOfflineConflicts(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), s.cataloguePage(r)))
}
