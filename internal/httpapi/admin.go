package httpapi

import (
	"net/http"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/ops"
)

// statusOr returns *s, or Active when the request left status out.
func statusOr(s *posgate.Status) posgate.Status {
	if s == nil {
		return posgate.StatusActive
	}
	return *s
}

// nonNil makes an absent list encode as [] rather than null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// list answers a store list, or its error.
func list[T any](xs []T, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{nonNil(xs)}, nil
}

// one answers a single found or updated object, or the error.
func one[T any](x T, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{x}, nil
}

// created answers 201 with the object, or the store's error.
func created(x any, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, envelope{x}, nil
}

type createPOSSystemRequest struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (s *Server) createPOSSystem(r *http.Request, req *createPOSSystemRequest) (int, any, error) {
	p := &posgate.POSSystem{ID: req.ID, Name: req.Name}
	if err := p.Validate(); err != nil {
		return 0, nil, err
	}
	return created(p, s.store.CreatePOSSystem(r.Context(), p))
}

func (s *Server) listPOSSystems(r *http.Request) (int, any, error) {
	return list(s.store.ListPOSSystems(r.Context()))
}

func (s *Server) getPOSSystem(r *http.Request) (int, any, error) {
	return one(s.store.FindPOSSystem(r.Context(), r.PathValue("posSystemId")))
}

type createCompanyRequest struct {
	ID       string            `json:"posCompanyId"`
	Name     string            `json:"name"`
	Status   *posgate.Status   `json:"status"`
	Features *ops.FeaturePatch `json:"features"`
}

func (s *Server) createCompany(r *http.Request, req *createCompanyRequest) (int, any, error) {
	c := &posgate.Company{
		POSSystemID: r.PathValue("posSystemId"),
		ID:          req.ID,
		Name:        req.Name,
		Status:      statusOr(req.Status),
		Features:    req.Features.Apply(posgate.AllFeaturesOn()),
	}
	if err := c.Validate(); err != nil {
		return 0, nil, err
	}
	return created(c, s.store.CreateCompany(r.Context(), c))
}

// needPOSSystem makes a list under an unknown POS system a 404, not [].
func (s *Server) needPOSSystem(r *http.Request) error {
	_, err := s.store.FindPOSSystem(r.Context(), r.PathValue("posSystemId"))
	return err
}

func (s *Server) listCompanies(r *http.Request) (int, any, error) {
	if err := s.needPOSSystem(r); err != nil {
		return 0, nil, err
	}
	return list(s.store.ListCompanies(r.Context(), r.PathValue("posSystemId")))
}

func (s *Server) getCompany(r *http.Request) (int, any, error) {
	return one(s.store.FindCompany(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

type updateCompanyRequest struct {
	Name     *string           `json:"name"`
	Status   *posgate.Status   `json:"status"`
	Features *ops.FeaturePatch `json:"features"`
}

func (s *Server) updateCompany(r *http.Request, req *updateCompanyRequest) (int, any, error) {
	return one(ops.UpdateCompany(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req.Name, req.Status, req.Features))
}

type createLocationRequest struct {
	ID        string          `json:"posLocationId"`
	CompanyID string          `json:"posCompanyId"`
	Name      string          `json:"name"`
	Status    *posgate.Status `json:"status"`
}

func (s *Server) createLocation(r *http.Request, req *createLocationRequest) (int, any, error) {
	l := &posgate.Location{
		POSSystemID: r.PathValue("posSystemId"),
		ID:          req.ID,
		CompanyID:   req.CompanyID,
		Name:        req.Name,
		Status:      statusOr(req.Status),
	}
	if err := l.Validate(); err != nil {
		return 0, nil, err
	}
	return created(l, s.store.CreateLocation(r.Context(), l))
}

func (s *Server) listLocations(r *http.Request) (int, any, error) {
	if err := s.needPOSSystem(r); err != nil {
		return 0, nil, err
	}
	return list(s.store.ListLocations(r.Context(), r.PathValue("posSystemId"), r.URL.Query().Get("posCompanyId")))
}

func (s *Server) getLocation(r *http.Request) (int, any, error) {
	return one(s.store.FindLocation(r.Context(), r.PathValue("posSystemId"), r.PathValue("posLocationId")))
}

type updateLocationRequest struct {
	Name   *string         `json:"name"`
	Status *posgate.Status `json:"status"`
}

// Validate checks the status, the one field with a closed set of values.
func (q *updateLocationRequest) Validate() error { return validStatus(q.Status) }

func validStatus(st *posgate.Status) error {
	if st != nil && !st.Valid() {
		v := posgate.ValidationError{}
		v.Add("status", "The status field must be Active or Disabled.")
		return v.Err()
	}
	return nil
}

func (s *Server) updateLocation(r *http.Request, req *updateLocationRequest) (int, any, error) {
	return one(s.store.UpdateLocation(r.Context(), r.PathValue("posSystemId"), r.PathValue("posLocationId"),
		posgate.LocationUpdate{Name: req.Name, Status: req.Status}))
}

type createTerminalRequest struct {
	ID     string          `json:"terminalId"`
	Name   string          `json:"name"`
	Status *posgate.Status `json:"status"`
}

func (s *Server) createTerminal(r *http.Request, req *createTerminalRequest) (int, any, error) {
	t := &posgate.Terminal{
		POSSystemID: r.PathValue("posSystemId"),
		LocationID:  r.PathValue("posLocationId"),
		ID:          req.ID,
		Name:        req.Name,
		Status:      statusOr(req.Status),
	}
	if err := t.Validate(); err != nil {
		return 0, nil, err
	}
	return created(t, s.store.CreateTerminal(r.Context(), t))
}

func (s *Server) listTerminals(r *http.Request) (int, any, error) {
	ctx := r.Context()
	pos, loc := r.PathValue("posSystemId"), r.PathValue("posLocationId")
	// An unknown location is a 404, not an empty list.
	if _, err := s.store.FindLocation(ctx, pos, loc); err != nil {
		return 0, nil, err
	}
	return list(s.store.ListTerminals(ctx, pos, loc))
}

func (s *Server) getTerminal(r *http.Request) (int, any, error) {
	return one(s.store.FindTerminal(r.Context(), r.PathValue("posSystemId"), r.PathValue("posLocationId"), r.PathValue("terminalId")))
}

func (s *Server) setTerminalStatus(st posgate.Status) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		return one(s.store.UpdateTerminal(r.Context(), r.PathValue("posSystemId"), r.PathValue("posLocationId"), r.PathValue("terminalId"),
			posgate.TerminalUpdate{Status: &st}))
	}
}

type createClientRequest struct {
	ID          string   `json:"clientId"`
	Name        string   `json:"name"`
	POSSystemID string   `json:"posSystemId"`
	Scopes      []string `json:"scopes"`
	CompanyIDs  []string `json:"companyIds"`
}

// clientView is a client as the operator API shows it: never a secret.
type clientView struct {
	*posgate.Client
	Scopes     []string `json:"scopes"`
	CompanyIDs []string `json:"companyIds"`
	// ClientSecret is set only in the answer that creates the client.
	ClientSecret string `json:"clientSecret,omitempty"`
}

func viewClient(c *posgate.Client) clientView {
	return clientView{Client: c, Scopes: nonNil(c.Scopes), CompanyIDs: nonNil(c.CompanyIDs)}
}

func (s *Server) createClient(r *http.Request, req *createClientRequest) (int, any, error) {
	c := &posgate.Client{ID: req.ID, Name: req.Name, POSSystemID: req.POSSystemID, Scopes: req.Scopes, CompanyIDs: req.CompanyIDs}
	secret, err := ops.CreateClient(r.Context(), s.store, c)
	if err != nil {
		return 0, nil, err
	}
	v := viewClient(c)
	v.ClientSecret = secret
	return http.StatusCreated, envelope{v}, nil
}

func (s *Server) listClients(r *http.Request) (int, any, error) {
	cs, err := s.store.ListClients(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := make([]clientView, len(cs))
	for i, c := range cs {
		out[i] = viewClient(c)
	}
	return http.StatusOK, envelope{out}, nil
}

func (s *Server) getClient(r *http.Request) (int, any, error) {
	c, err := s.store.FindClient(r.Context(), r.PathValue("clientId"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{viewClient(c)}, nil
}

func (s *Server) setClientDisabled(disabled bool) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		c, err := s.store.UpdateClient(r.Context(), r.PathValue("clientId"), posgate.ClientUpdate{Disabled: &disabled})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, envelope{viewClient(c)}, nil
	}
}

func (s *Server) getSession(r *http.Request) (int, any, error) {
	return one(s.store.FindSession(r.Context(), r.PathValue("sessionId")))
}

// keyView describes a signing key without its private part.
type keyView struct {
	Kid       string    `json:"kid"`
	Algorithm string    `json:"algorithm"`
	CreatedAt time.Time `json:"createdAt"`
	Signing   bool      `json:"signing"`
}

func (s *Server) listKeys(r *http.Request) (int, any, error) {
	keys, err := s.store.ListSigningKeys(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := make([]keyView, len(keys))
	for i, k := range keys {
		out[i] = keyView{Kid: k.ID, Algorithm: k.Algorithm, CreatedAt: k.CreatedAt, Signing: i == len(keys)-1}
	}
	return http.StatusOK, envelope{out}, nil
}

func (s *Server) rotateKey(r *http.Request) (int, any, error) {
	k, err := s.auth.Rotate(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, envelope{keyView{Kid: k.ID, Algorithm: k.Algorithm, CreatedAt: k.CreatedAt, Signing: true}}, nil
}
