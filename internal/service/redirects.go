package service

import (
	"context"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
)

// SetClientRedirectURIs registers the redirect URIs with which a client
// may use the browser flows (docs/api.md §21.3), replacing any before; an
// empty list takes the client out of them. Each URI must be absolute,
// https (or http on the loopback host) and without a fragment. It acts on
// the whole installation, like every change of a client.
func (s *Service) SetClientRedirectURIs(ctx context.Context, p *posgate.Principal, clientID string, uris []string) ([]string, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	uris = posgate.Dedupe(uris)
	v := posgate.ValidationError{}
	for _, u := range uris {
		if !credential.ValidRedirectURI(u) {
			v.Add("redirectUris", "'"+u+"' is not an absolute https URL (http only on localhost) without a fragment.")
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	err := s.audited(ctx, p, "client.redirect-uris.set", func(ctx context.Context, ch *change) error {
		before, err := s.store.ClientRedirectURIs(ctx, clientID)
		if err != nil {
			return err
		}
		if err := s.store.SetClientRedirectURIs(ctx, clientID, uris); err != nil {
			return notFound(err, "Client '%s' not found.", clientID)
		}
		ch.target = clientTarget(clientID)
		ch.before, ch.after = redirectURIsView{clientID, nonNil(before)}, redirectURIsView{clientID, nonNil(uris)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return uris, nil
}

// redirectURIsView is a client's redirect URIs as the audit log keeps
// them.
type redirectURIsView struct {
	ClientID     string   `json:"clientId"`
	RedirectURIs []string `json:"redirectUris"`
}

// ClientRedirectURIsRequest is the operator API's body for a client's
// redirect URIs (docs/api.md §21.3): the list is required, empty to take
// the client out of the browser flows.
type ClientRedirectURIsRequest struct {
	RedirectURIs *[]string `json:"redirectUris"`
}

// ClientRedirectURIs is a client's redirect URIs as the operator API
// answers them.
type ClientRedirectURIs struct {
	ClientID     string   `json:"clientId"`
	RedirectURIs []string `json:"redirectUris"`
}

// PutClientRedirectURIs is SetClientRedirectURIs for the operator API
// (operation putClientRedirectUris), whose body must name the list.
func (s *Service) PutClientRedirectURIs(ctx context.Context, p *posgate.Principal, clientID string, req *ClientRedirectURIsRequest) (*ClientRedirectURIs, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	if req == nil || req.RedirectURIs == nil {
		v := posgate.ValidationError{}
		v.Add("redirectUris", "The redirectUris field is required.")
		return nil, v.Err()
	}
	uris, err := s.SetClientRedirectURIs(ctx, p, clientID, *req.RedirectURIs)
	if err != nil {
		return nil, err
	}
	return &ClientRedirectURIs{ClientID: clientID, RedirectURIs: nonNil(uris)}, nil
}
