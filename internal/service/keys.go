package service

import (
	"context"
	"time"

	"github.com/posgate/posgate"
)

// KeyView describes a token-signing key without its private part, which
// must never leave the store.
type KeyView struct {
	Kid       string    `json:"kid"`
	Algorithm string    `json:"algorithm"`
	CreatedAt time.Time `json:"createdAt"`
	Signing   bool      `json:"signing"`
}

// KeyReloader is a KeyRotator that keeps the keys in memory (the identity
// provider): RotateKey asks it to read them again once the rotation and its
// audit entry are committed.
type KeyReloader interface {
	Reload(ctx context.Context) error
}

// ListKeys lists the signing keys, oldest first; the newest signs. Keys
// serve every POS system, so only an unrestricted operator may see them.
func (s *Service) ListKeys(ctx context.Context, p *posgate.Principal) ([]KeyView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	keys, err := s.store.ListSigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]KeyView, len(keys))
	for i, k := range keys {
		out[i] = KeyView{Kid: k.ID, Algorithm: k.Algorithm, CreatedAt: k.CreatedAt, Signing: i == len(keys)-1}
	}
	return out, nil
}

// RotateKey makes a new signing key the one that signs, through the
// configured KeyRotator, so that the running identity provider (or the
// CLI's store) applies its own retirement rules.
func (s *Service) RotateKey(ctx context.Context, p *posgate.Principal) (*KeyView, error) {
	if err := s.installation(p); err != nil {
		return nil, err
	}
	if s.cfg.Keys == nil {
		return nil, posgate.Errorf(posgate.EINTERNAL, "Key rotation is not configured.")
	}
	var v *KeyView
	err := s.audited(ctx, p, "key.rotate", func(ctx context.Context, c *change) error {
		k, err := s.cfg.Keys.Rotate(ctx)
		if err != nil {
			return err
		}
		v = &KeyView{Kid: k.ID, Algorithm: k.Algorithm, CreatedAt: k.CreatedAt, Signing: true}
		c.target, c.after = posgate.AuditTarget{Type: "key", ID: k.ID}, v
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The rotator reloaded its keys inside the transaction, where a store
	// read may not see the new key yet; it reloads them once committed.
	if r, ok := s.cfg.Keys.(KeyReloader); ok {
		if err := r.Reload(ctx); err != nil {
			return nil, err
		}
	}
	return v, nil
}
