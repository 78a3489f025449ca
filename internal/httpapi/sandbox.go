package httpapi

import (
	"net/http"

	"github.com/posgate/posgate/internal/service"
)

// The sandbox clock of a demo server (docs/api.md §20). Its routes exist
// only when Config.Sandbox is set: elsewhere they are unknown routes (404).

func (s *Server) getSandboxClock(r *http.Request) (int, any, error) {
	return enveloped(s.svc.SandboxClock(r.Context(), principal(r.Context())))
}

func (s *Server) setSandboxClock(r *http.Request, req *service.SetSandboxClockRequest) (int, any, error) {
	return enveloped(s.svc.SetSandboxClock(r.Context(), principal(r.Context()), req))
}

func (s *Server) advanceSandboxClock(r *http.Request, req *service.AdvanceSandboxClockRequest) (int, any, error) {
	return enveloped(s.svc.AdvanceSandboxClock(r.Context(), principal(r.Context()), req))
}
