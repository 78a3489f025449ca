package service

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
)

// API clients act on the whole installation: only an unrestricted operator
// may create, list or change them (docs/api.md §10), since a client
// can be bound to any POS system.

// CreateClientRequest is a new API client; the id is generated when empty
// and the secret always is.
type CreateClientRequest struct {
	ID          string   `json:"clientId"`
	Name        string   `json:"name"`
	POSSystemID string   `json:"posSystemId"`
	Scopes      []string `json:"scopes"`
	CompanyIDs  []string `json:"companyIds"`
}

// ClientView is a client as operators see it: never its secret hash, and
// lists as [] rather than null.
type ClientView struct {
	*posgate.Client
	Scopes     []string `json:"scopes"`
	CompanyIDs []string `json:"companyIds"`
	// ClientSecret is set only in the answer that creates the client or
	// rotates its secret: the secret is shown once, only its hash is
	// stored.
	ClientSecret string `json:"clientSecret,omitempty"`
	// SecretNote stands in for ClientSecret in a replay of that answer
	// (an Idempotency-Key sent again): see WithoutSecret.
	SecretNote string `json:"secretNote,omitempty"`
}

// msgSecretNotKept is the SecretNote of a replayed answer that first
// carried a secret, with the path of the route that rotates it.
const msgSecretNotKept = "The secret was shown only in the first answer to this request and is not kept; rotate it (POST %s) to get a new one."

// WithoutSecret is v as kept for replay under an Idempotency-Key (docs/api.md
// §14): no secret, and a note that says how to get a new one.
func (v *ClientView) WithoutSecret() any {
	out := *v
	out.ClientSecret = ""
	out.SecretNote = fmt.Sprintf(msgSecretNotKept, "/admin/v1/clients/"+url.PathEscape(v.ID)+"/rotate-secret")
	return &out
}

func viewClient(c *posgate.Client) *ClientView {
	return &ClientView{Client: c, Scopes: nonNil(c.Scopes), CompanyIDs: nonNil(c.CompanyIDs)}
}

// CreateClient completes and stores a new API client and returns it with
// its secret. The POS system and companies it is bound to must exist.
func (s *Service) CreateClient(ctx context.Context, p *posgate.Principal, req *CreateClientRequest) (*ClientView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	c := &posgate.Client{ID: req.ID, Name: req.Name, POSSystemID: req.POSSystemID, Scopes: posgate.Dedupe(req.Scopes), CompanyIDs: posgate.Dedupe(req.CompanyIDs)}
	if c.ID == "" {
		c.ID = "client-" + randomID()
	}
	secret, err := credential.GenerateSecret()
	if err != nil {
		return nil, fmt.Errorf("generate secret: %w", err)
	}
	c.SecretHash = credential.HashSecret(secret)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.POSSystemID != "" {
		if _, err := s.store.FindPOSSystem(ctx, c.POSSystemID); err != nil {
			return nil, notFound(err, "POS system '%s' not found.", c.POSSystemID)
		}
		for _, id := range c.CompanyIDs {
			if _, err := s.store.FindCompany(ctx, c.POSSystemID, id); err != nil {
				return nil, notFound(err, "Company '%s' of POS system '%s' not found.", id, c.POSSystemID)
			}
		}
	}
	err = s.audited(ctx, p, "client.create", func(ctx context.Context, ch *change) error {
		// The view holds no secret: the hash is not encoded, and the
		// secret is only added to the answer below.
		ch.target, ch.after = clientTarget(c.ID), viewClient(c)
		return s.store.CreateClient(ctx, c)
	})
	if err != nil {
		return nil, err
	}
	v := viewClient(c)
	v.ClientSecret = secret
	return v, nil
}

// ListClients lists every API client.
func (s *Service) ListClients(ctx context.Context, p *posgate.Principal) ([]*ClientView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	cs, err := s.store.ListClients(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*ClientView, len(cs))
	for i, c := range cs {
		out[i] = viewClient(c)
	}
	return out, nil
}

// FindClient returns an API client.
func (s *Service) FindClient(ctx context.Context, p *posgate.Principal, clientID string) (*ClientView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	c, err := s.store.FindClient(ctx, clientID)
	if err != nil {
		return nil, err
	}
	return viewClient(c), nil
}

// SetClientDisabled disables or enables an API client: a disabled client
// gets no new tokens, while tokens already issued stay valid until they
// expire.
func (s *Service) SetClientDisabled(ctx context.Context, p *posgate.Principal, clientID string, disabled bool) (*ClientView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	action := "client.enable"
	if disabled {
		action = "client.disable"
	}
	return s.updateClient(ctx, p, action, clientID, posgate.ClientUpdate{Disabled: &disabled})
}

// RotateClientSecret gives a client a new secret and returns it, once,
// with the client (only its hash is kept): the old secret stops working at
// once, tokens already issued with it live on until they expire. It acts
// on the whole installation, like every change of a client.
func (s *Service) RotateClientSecret(ctx context.Context, p *posgate.Principal, clientID string) (*ClientView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	secret, err := credential.GenerateSecret()
	if err != nil {
		return nil, fmt.Errorf("generate secret: %w", err)
	}
	v, err := s.updateClient(ctx, p, "client.secret.rotate", clientID, posgate.ClientUpdate{SecretHash: credential.HashSecret(secret)})
	if err != nil {
		return nil, notFound(err, "Client '%s' not found.", clientID)
	}
	out := *v
	out.ClientSecret = secret
	return &out, nil
}

// updateClient is an audited change of an API client.
func (s *Service) updateClient(ctx context.Context, p *posgate.Principal, action, clientID string, upd posgate.ClientUpdate) (*ClientView, error) {
	var out *ClientView
	err := s.audited(ctx, p, action, func(ctx context.Context, ch *change) error {
		before, err := s.store.FindClient(ctx, clientID)
		if err != nil {
			return err
		}
		c, err := s.store.UpdateClient(ctx, clientID, upd)
		if err != nil {
			return err
		}
		out = viewClient(c)
		ch.target, ch.before, ch.after = clientTarget(clientID), viewClient(before), out
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// clientTarget is an API client as the target of a change: it belongs to
// the whole installation, so only an unrestricted operator sees its
// entries.
func clientTarget(clientID string) posgate.AuditTarget {
	return posgate.AuditTarget{Type: "client", ID: clientID}
}

// nonNil makes an absent list encode as [] rather than null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// notFound rewords a store's not-found error; other errors pass unchanged.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, posgate.ErrNotFound) {
		return posgate.Errorf(posgate.ENOTFOUND, format, args...)
	}
	return err
}
