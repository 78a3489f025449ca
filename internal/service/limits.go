package service

import (
	"context"
	"errors"

	"github.com/posgate/posgate"
)

// Rate limits (docs/api.md §16.1). The rule is here, the mechanics (token
// buckets, headers, 429) in internal/httpapi: every API client has a token
// bucket per instance, of its own size when an operator gave it one and of
// the installation's default (Config.RateLimit) otherwise.

// RateLimitOf returns the request budget of the client p speaks for: its
// own, else the default; nil when neither limits it. A client that no
// longer exists gets the default, so that a token outliving its client is
// still counted.
func (s *Service) RateLimitOf(ctx context.Context, p *posgate.Principal) (*posgate.RateLimit, error) {
	if p == nil {
		return nil, posgate.Errorf(posgate.EUNAUTHORIZED, msgNoPrincipal)
	}
	c, err := s.store.FindClient(ctx, p.ClientID)
	switch {
	case err == nil && c.RateLimit != nil:
		l := *c.RateLimit
		return &l, nil
	case err != nil && !errors.Is(err, posgate.ErrNotFound):
		return nil, err
	case s.cfg.RateLimit.RequestsPerSecond > 0:
		l := s.cfg.RateLimit
		return &l, nil
	}
	return nil, nil
}

// SetClientRateLimit gives an API client its own rate limit, which replaces
// the default for it; only an unrestricted operator may, as for every
// change of a client.
func (s *Service) SetClientRateLimit(ctx context.Context, p *posgate.Principal, clientID string, req *posgate.RateLimit) (*ClientView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, posgate.Errorf(posgate.EINVALID, "A rate limit is required.")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return s.updateClient(ctx, p, "client.rate-limit.set", clientID, posgate.ClientUpdate{RateLimit: req})
}

// ClearClientRateLimit removes an API client's own rate limit: the default
// applies to it again.
func (s *Service) ClearClientRateLimit(ctx context.Context, p *posgate.Principal, clientID string) (*ClientView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	return s.updateClient(ctx, p, "client.rate-limit.clear", clientID, posgate.ClientUpdate{ClearRateLimit: true})
}
