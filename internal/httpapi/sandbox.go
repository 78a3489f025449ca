package httpapi

import (
	"net/http"

	"github.com/posgate/posgate/internal/conformance/record"
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

// Recordings are what a demo server recorded of each POS client's calls
// (internal/conformance/record, docs/api.md §20.3).
type Recordings interface {
	Recording(clientID string) record.Recording
	Forget(clientID string) record.Recording
}

func (s *Server) getRecording(r *http.Request) (int, any, error) {
	if err := s.svc.AuthorizeRecordings(r.Context(), principal(r.Context())); err != nil {
		return 0, nil, err
	}
	rec := s.cfg.Recordings.Recording(r.PathValue("clientId"))
	return http.StatusOK, envelope{&rec}, nil
}

func (s *Server) forgetRecording(r *http.Request) (int, any, error) {
	if err := s.svc.AuthorizeRecordings(r.Context(), principal(r.Context())); err != nil {
		return 0, nil, err
	}
	rec := s.cfg.Recordings.Forget(r.PathValue("clientId"))
	return http.StatusOK, envelope{&rec}, nil
}
