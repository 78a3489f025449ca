// Package service holds posgate's use cases: every rule of the POS API and
// the operator API — who may act (tenancy, company restrictions), feature
// switches, posStatus and validation — applied once, here. The HTTP adapter
// (internal/httpapi) and the command line (cmd/posgate) only translate
// requests into calls of these methods and their answers back, so no rule can
// be forgotten by one of them or applied twice differently.
//
// Access is closed by default: every method takes the principal it acts for
// and refuses to do anything without one (docs/api.md §1.3).
package service

import (
	"context"
	"time"

	"github.com/posgate/posgate"
)

// Defaults of Config.
const (
	DefaultSessionTTL     = 24 * time.Hour
	DefaultCarouselURLTTL = 24 * time.Hour
	DefaultCarouselPoll   = 30 * time.Second
)

// KeyRotator makes a new token-signing key the one that signs (the identity
// provider, internal/auth); the operator's key rotation goes through it so
// that the running instance signs with the new key at once.
type KeyRotator interface {
	Rotate(ctx context.Context) (*posgate.SigningKey, error)
}

// Config holds the settings of the use cases; zero fields get their
// defaults.
type Config struct {
	// BaseURL is posgate's public address: the carousel page and the QR
	// images that the POS answers link to live under it.
	BaseURL string
	// SessionTTL is how long a startInteraction session lives.
	SessionTTL time.Duration
	// CarouselURLTTL is how long a carousel URL stays valid; CarouselPoll is
	// how often the carousel page asks for changed slides.
	CarouselURLTTL time.Duration
	CarouselPoll   time.Duration
	// TransactionMaxAge is how old a submitted transaction's date may be
	// (--transaction-max-age, docs/api.md §13.1).
	TransactionMaxAge time.Duration
	// Keys rotates the signing key; nil refuses key rotation.
	Keys KeyRotator
	// RateLimit is the request budget of an API client without one of its
	// own (docs/api.md §16.1); zero: such clients are not limited.
	RateLimit posgate.RateLimit
	// Now is the clock; its times are used in UTC.
	Now func() time.Time
	// Wall is the real clock, for times third parties check against their
	// own clocks (a rotated webhook secret's overlap, docs/api.md §20);
	// default Now (they differ only in demo mode, where Now is the sandbox
	// clock).
	Wall func() time.Time
	// Sandbox is a demo server's sandbox clock (docs/api.md §20), whose
	// Now is Now; nil outside demo mode, where the sandbox use cases answer
	// ENOTFOUND.
	Sandbox *posgate.SandboxClock
	// PromotionCacheTTL is how long promotion evaluation uses a company's
	// promotions before it asks the store whether they changed (default
	// DefaultPromotionCacheTTL; negative: read them for every evaluation).
	PromotionCacheTTL time.Duration
	// Origin is recorded in the audit log for a write whose context
	// carries no origin (posgate.WithAuditOrigin): the command line's
	// service sets the channel "cli" here; with none, the channel is "api",
	// whose adapter sets an origin for every operator request.
	Origin posgate.AuditOrigin

	// Kits signs the offline kits (docs/api.md §24); nil: none are served.
	Kits KitSigner
	// KitTTL is how long an offline kit is valid (default
	// posgate.DefaultKitTTL).
	KitTTL time.Duration

	// WebhookAllowLoopback lets operators register webhook endpoints on
	// loopback addresses (--webhooks-allow-loopback, docs/api.md §19.1).
	WebhookAllowLoopback bool
	// TerminalFeed wakes the terminal channel's streams (docs/api.md §25);
	// nil: a feed of the service's own.
	TerminalFeed *TerminalFeed
}

// Service is posgate's use cases over one store. It is safe for concurrent
// use.
type Service struct {
	store   posgate.Store
	cfg     Config
	links   links
	indexes *indexCache
	feed    *TerminalFeed
}

// New returns the use cases over store.
func New(store posgate.Store, cfg Config) *Service {
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.CarouselURLTTL <= 0 {
		cfg.CarouselURLTTL = DefaultCarouselURLTTL
	}
	if cfg.CarouselPoll <= 0 {
		cfg.CarouselPoll = DefaultCarouselPoll
	}
	if cfg.TransactionMaxAge <= 0 {
		cfg.TransactionMaxAge = DefaultTransactionMaxAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Wall == nil {
		cfg.Wall = cfg.Now
	}
	if cfg.TerminalFeed == nil {
		cfg.TerminalFeed = NewTerminalFeed()
	}
	return &Service{store: store, cfg: cfg, links: links{store: store}, indexes: newIndexCache(cfg.PromotionCacheTTL),
		feed: cfg.TerminalFeed}
}

// now is the service's clock, in UTC.
func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

// wall is the real time in UTC (Config.Wall).
func (s *Service) wall() time.Time { return s.cfg.Wall().UTC() }

// Ready reports whether the store can serve requests (for /readyz).
func (s *Service) Ready(ctx context.Context) error { return s.store.Ping(ctx) }
