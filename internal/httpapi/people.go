package httpapi

import (
	"net/http"

	"github.com/posgate/posgate/internal/service"
)

// The operator API's people (docs/api.md §21.1).

func (s *Server) createPerson(r *http.Request, req *service.CreatePersonRequest) (int, any, error) {
	return created(s.svc.CreatePerson(r.Context(), principal(r.Context()), req))
}

func (s *Server) listPeople(r *http.Request) (int, any, error) {
	return list(s.svc.ListPeople(r.Context(), principal(r.Context())))
}

func (s *Server) getPerson(r *http.Request) (int, any, error) {
	return enveloped(s.svc.FindPerson(r.Context(), principal(r.Context()), r.PathValue("personId")))
}

func (s *Server) setPersonDisabled(disabled bool) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		return enveloped(s.svc.SetPersonDisabled(r.Context(), principal(r.Context()), r.PathValue("personId"), disabled))
	}
}
