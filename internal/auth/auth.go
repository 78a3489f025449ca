// Package auth is posgate's identity provider and resource-server side of
// OAuth2: it issues ES256 access tokens (RFC 9068) for the client credentials
// grant, publishes discovery and JWKS documents, and verifies the tokens that
// POS and operator requests carry. Signing keys live in the store so that
// several instances share them and tokens survive restarts.
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
)

// Store is the part of posgate.Store that auth needs (posgate.Store
// satisfies it); keeping it small lets tests and the CLI supply less.
type Store interface {
	FindClient(ctx context.Context, id string) (*posgate.Client, error)
	CreateSigningKey(ctx context.Context, k *posgate.SigningKey) error
	// ListSigningKeys returns every key, oldest first.
	ListSigningKeys(ctx context.Context) ([]*posgate.SigningKey, error)
	DeleteSigningKey(ctx context.Context, id string) error
}

// Config holds what the identity provider cannot guess; zero fields take the
// defaults documented on each field.
type Config struct {
	Issuer     string        // {auth_url}, e.g. "http://localhost:8080" (no trailing slash); the "iss" claim
	Audience   string        // the "aud" claim; default "posgate"
	TokenTTL   time.Duration // default 1h; whole seconds (expires_in is an integer)
	KeyRefresh time.Duration // how often keys are re-read from the store; default 30s
	CacheSize  int           // verified-token cache entries; default 10000
	Now        func() time.Time
	Logger     *slog.Logger

	// KeyEncryption seals the signing keys at rest (kek.go): New seals the
	// stored keys that are not sealed with its current KEK yet, and new
	// keys are stored sealed. nil: keys are stored plain, and a sealed key
	// in the store is an error.
	KeyEncryption *KeyEncryption

	// ClientFailures and AddressFailures failed client authentications of
	// one client id, or from one remote address, within Lockout lock it out
	// of the token endpoint for Lockout (docs/api.md §16.2). Zero: the
	// defaults; negative: no lockout of that kind.
	ClientFailures  int
	AddressFailures int
	Lockout         time.Duration

	// People enables the browser side (docs/api.md §21): sign-in, the
	// implicit and authorization code flows, refresh tokens. nil: only the
	// client credentials grant.
	People People
	// Origins are the public origins (besides the issuer's) whose pages may
	// post the sign-in forms, e.g. {base_url}'s.
	Origins []string
	// SignInTTL, AuthCodeTTL and RefreshTokenTTL bound sign-in sessions,
	// authorization codes and refresh tokens; LoginFailures failed sign-ins
	// of one account, or LoginAddressFailures from one address, within
	// LoginLockout lock it for LoginLockout. Zero: the defaults.
	SignInTTL            time.Duration
	AuthCodeTTL          time.Duration
	RefreshTokenTTL      time.Duration
	LoginFailures        int
	LoginAddressFailures int
	LoginLockout         time.Duration
}

// Defaults of Config and fixed limits of the token checks.
const (
	DefaultAudience   = "posgate"
	DefaultTokenTTL   = time.Hour
	DefaultKeyRefresh = 30 * time.Second
	DefaultCacheSize  = 10000

	// clockSkew is how far in the future "iat" and "nbf" may lie, for
	// instances whose clocks disagree a little.
	clockSkew = 30 * time.Second
	// minReloadInterval bounds how often an unknown kid may make Verify
	// re-read the keys, so that forged kids cannot hammer the store.
	minReloadInterval = time.Second
)

// Auth issues and verifies access tokens. It is safe for concurrent use.
type Auth struct {
	store     Store
	issuer    string
	audience  string
	ttl       time.Duration
	refresh   time.Duration
	now       func() time.Time
	log       *slog.Logger
	parser    *jwt.Parser
	cache     *tokenCache
	dummyHash []byte // compared against for unknown clients, to equalise timing
	discovery []byte

	// clientLockout and addressLockout count failed client authentications
	// per client id and per remote address.
	clientLockout  *lockout
	addressLockout *lockout

	// browser is the sign-in and the browser flows; nil without People.
	browser *browser

	// kek seals and opens the stored private keys; nil: they are plain.
	kek *KeyEncryption

	keys atomic.Pointer[keySet]

	reloadMu   sync.Mutex
	lastReload time.Time

	// verified counts full (uncached) signature checks, for tests.
	verified atomic.Int64
}

// New builds an Auth on s and loads the signing keys, creating the first
// ES256 key when the store has none, so that a fresh installation can issue
// tokens at once.
func New(ctx context.Context, s Store, cfg Config) (*Auth, error) {
	issuer := strings.TrimRight(cfg.Issuer, "/")
	ttl := orDefault(cfg.TokenTTL, DefaultTokenTTL).Truncate(time.Second)
	refresh := orDefault(cfg.KeyRefresh, DefaultKeyRefresh)
	switch {
	case issuer == "":
		return nil, errors.New("auth: config: Issuer is required")
	case ttl <= 0 || refresh <= 0 || cfg.CacheSize < 0:
		return nil, errors.New("auth: config: TokenTTL must be at least 1s, KeyRefresh and CacheSize positive")
	}
	a := &Auth{
		store:    s,
		issuer:   issuer,
		audience: orDefault(cfg.Audience, DefaultAudience),
		ttl:      ttl,
		refresh:  refresh,
		log:      cfg.Logger,
		parser:   jwt.NewParser(jwt.WithoutClaimsValidation(), jwt.WithStrictDecoding()),
		cache:    newTokenCache(orDefault(cfg.CacheSize, DefaultCacheSize)),
		kek:      cfg.KeyEncryption,
	}
	window := orDefault(cfg.Lockout, DefaultLockout)
	a.clientLockout = newLockout(orDefault(cfg.ClientFailures, DefaultClientFailures), window)
	a.addressLockout = newLockout(orDefault(cfg.AddressFailures, DefaultAddressFailures), window)
	nowFn := cfg.Now
	if nowFn == nil {
		nowFn = time.Now
	}
	a.now = func() time.Time { return nowFn().UTC() }
	if a.log == nil {
		a.log = slog.Default()
	}
	secret, err := credential.GenerateSecret()
	if err != nil {
		return nil, err
	}
	a.dummyHash = credential.HashSecret(secret)
	if a.browser, err = newBrowser(issuer, cfg); err != nil {
		return nil, err
	}
	if a.discovery, err = json.Marshal(discoveryDocument(issuer, a.browser != nil)); err != nil {
		return nil, fmt.Errorf("auth: discovery document: %w", err)
	}

	if a.kek != nil {
		ks, ok := s.(KeyStore)
		if !ok {
			return nil, errors.New("auth: this store cannot rewrite signing keys, so it cannot seal them")
		}
		n, err := SealKeys(ctx, ks, a.kek)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			a.log.Info("auth: sealed the stored signing keys with the key-encryption key", "count", n, "kek", a.kek.Fingerprint())
		}
	}
	keys, err := s.ListSigningKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: list signing keys: %w", err)
	}
	if len(keys) == 0 {
		k, err := Rotate(ctx, s, a.kek, a.now(), a.ttl)
		if err != nil {
			return nil, err
		}
		a.log.Info("auth: created the first signing key", "kid", k.ID)
	}
	if err := a.reload(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// orDefault returns v, or def when v is the zero value.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Run re-reads the keys every KeyRefresh until ctx is done, so that a key
// rotated by another instance (or the CLI) becomes the signing key here too.
func (a *Auth) Run(ctx context.Context) {
	t := time.NewTicker(a.refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := a.reload(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("auth: refreshing signing keys failed; keeping the loaded ones", "err", err)
			}
		}
	}
}

// ClockRestarted forgets what this instance remembers by its clock: the
// verified tokens and the lockouts of the token endpoint and the sign-in.
// A demo server calls it when its sandbox clock goes back to the real time
// (posgate.SandboxClock.Restart), so that a token or a lockout of the later
// sandbox time does not last for as long as the clock went back; such a
// token is then verified afresh, and refused while its iat is ahead.
func (a *Auth) ClockRestarted() {
	a.cache.clear()
	a.clientLockout.clear()
	a.addressLockout.clear()
	if a.browser != nil {
		a.browser.accountLockout.clear()
		a.browser.addressLockout.clear()
	}
}

// Rotate adds a new signing key, makes it the signing key of this instance at
// once and prunes keys whose tokens have all expired.
func (a *Auth) Rotate(ctx context.Context) (*posgate.SigningKey, error) {
	k, err := Rotate(ctx, a.store, a.kek, a.now(), a.ttl)
	if err != nil {
		return nil, err
	}
	if err := a.reload(ctx); err != nil {
		return nil, err
	}
	a.log.Info("auth: rotated the signing key", "kid", k.ID)
	return k, nil
}

// Principal is who a verified access token speaks for (posgate.Principal).
// Verify shares one Principal between requests carrying the same token: treat
// it as read-only.
type Principal = posgate.Principal

// claims is the payload of a posgate access token (RFC 9068 §2.2 plus the
// tenancy claims).
type claims struct {
	Issuer      string           `json:"iss"`
	Audience    audience         `json:"aud"`
	Subject     string           `json:"sub"`
	ClientID    string           `json:"client_id"`
	Scope       string           `json:"scope"`
	IssuedAt    *jwt.NumericDate `json:"iat"`
	NotBefore   *jwt.NumericDate `json:"nbf,omitempty"`
	ExpiresAt   *jwt.NumericDate `json:"exp"`
	ID          string           `json:"jti"`
	POSSystemID string           `json:"pos_system_id,omitempty"`
	CompanyIDs  []string         `json:"pos_company_ids,omitempty"`
	LocationIDs []string         `json:"pos_location_ids,omitempty"`
	PersonID    string           `json:"person_id,omitempty"`
}

// The jwt.Claims methods; Verify validates the claims itself (jwt's
// validator would apply its leeway to "exp" too).
func (c *claims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }
func (c *claims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt, nil }
func (c *claims) GetNotBefore() (*jwt.NumericDate, error)      { return c.NotBefore, nil }
func (c *claims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c *claims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c *claims) GetAudience() (jwt.ClaimStrings, error)       { return jwt.ClaimStrings(c.Audience), nil }

// audience is the "aud" claim: written as a single string (as posgate issues
// it), read as a string or an array (as RFC 7519 allows).
type audience []string

// MarshalJSON writes one audience as a plain string.
func (a audience) MarshalJSON() ([]byte, error) {
	if len(a) == 1 {
		return json.Marshal(a[0])
	}
	return json.Marshal([]string(a))
}

// UnmarshalJSON accepts a string or an array of strings.
func (a *audience) UnmarshalJSON(b []byte) error {
	var cs jwt.ClaimStrings
	if err := cs.UnmarshalJSON(b); err != nil {
		return err
	}
	*a = audience(cs)
	return nil
}

// Issue signs an access token for client c with the given (already granted)
// scopes and returns it with its expiry.
func (a *Auth) Issue(ctx context.Context, c *posgate.Client, scopes []string) (token string, expiresAt time.Time, err error) {
	return a.issue(&issuedClaims{Subject: c.ID, ClientID: c.ID, POSSystemID: c.POSSystemID, CompanyIDs: c.CompanyIDs}, scopes)
}

// IssueForPerson signs an access token that client c obtained for person p
// through a browser flow: "sub" is the person, and the token carries the
// person's reach (POS system, companies, locations), which the resource
// server applies exactly as a restricted client's (docs/api.md §21.1).
func (a *Auth) IssueForPerson(ctx context.Context, c *posgate.Client, p *posgate.Person, scopes []string) (token string, expiresAt time.Time, err error) {
	return a.issue(&issuedClaims{Subject: p.ID, ClientID: c.ID, PersonID: p.ID, POSSystemID: p.POSSystemID,
		CompanyIDs: p.CompanyIDs, LocationIDs: p.LocationIDs}, scopes)
}

// issue completes the claims and signs them.
func (a *Auth) issue(c *issuedClaims, scopes []string) (string, time.Time, error) {
	signer := a.keys.Load().signer
	now := a.now().Truncate(time.Second)
	expiresAt := now.Add(a.ttl)
	c.Issuer, c.Audience, c.Scope = a.issuer, a.audience, strings.Join(scopes, " ")
	c.IssuedAt, c.NotBefore, c.ExpiresAt, c.ID = now.Unix(), now.Unix(), expiresAt.Unix(), uuid.NewString()
	token, err := signES256(signer.header, c, signer.key)
	if err != nil {
		return "", time.Time{}, err
	}
	return token, expiresAt, nil
}

// checkPerson refuses the token of a person who is disabled or gone: like
// a client's, the decision reaches the tokens already issued within the
// store's lookup cache TTL (docs/api.md §21.4).
func (a *Auth) checkPerson(ctx context.Context, personID string) error {
	p, err := a.browser.people.FindPerson(ctx, personID)
	switch {
	case err == nil && !p.Disabled:
		return nil
	case err == nil || errors.Is(err, posgate.ErrNotFound):
		return unauthorized(msgPersonRevoked)
	}
	return fmt.Errorf("auth: looking up the person of a token: %w", err)
}

// Client-safe reasons a token is refused; the HTTP layer puts them in
// WWW-Authenticate's error_description, so they hold no quotes.
const (
	msgMalformed     = "The access token is malformed."
	msgAlgorithm     = "The access token algorithm is not allowed."
	msgType          = "The access token type is not at+jwt."
	msgUnknownKey    = "The access token signing key is unknown."
	msgSignature     = "The access token signature is invalid."
	msgMissingClaim  = "The access token lacks a required claim."
	msgIssuer        = "The access token issuer is invalid."
	msgAudience      = "The access token audience is invalid."
	msgExpired       = "The access token is expired."
	msgNotYetValid   = "The access token is not yet valid."
	msgCritical      = "The access token names critical header extensions that are not understood."
	msgRevoked       = "The access token is revoked: its client is disabled or no longer registered."
	msgPersonRevoked = "The access token is revoked: the person it was issued to is disabled."
)

func unauthorized(msg string) error { return &posgate.Error{Code: posgate.EUNAUTHORIZED, Message: msg} }

// Verify checks an access token and returns its Principal. Errors are
// *posgate.Error with code EUNAUTHORIZED and a client-safe message, except
// a failure of the store (EINTERNAL). Tokens verified before are answered
// from a cache until they expire, but the client a token speaks for is
// looked up on every call (the store's lookup cache makes that a memory read
// on the hot path), so that disabling a client revokes its tokens within
// that cache's TTL on every instance (docs/api.md §3.6).
func (a *Auth) Verify(ctx context.Context, token string) (*Principal, error) {
	now := a.now()
	// The token's bytes are hashed in place: a copy of its ~600 bytes was
	// the largest allocation of a cached verification.
	key := sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
	if p := a.cache.get(key, now); p != nil {
		if err := a.checkClient(ctx, p); err != nil {
			return nil, err
		}
		return p, nil
	}
	p, err := a.verify(ctx, token, now)
	if err != nil {
		return nil, err
	}
	if err := a.checkClient(ctx, p); err != nil {
		return nil, err
	}
	if a.browser == nil && p.PersonID != "" {
		return nil, unauthorized(msgRevoked) // a person's token, and no people here to check it against
	}
	a.cache.put(key, p, now)
	return p, nil
}

// clientStates is implemented by a store that can say whether a client is
// disabled without copying it (internal/storecache, in front of the store
// in posgate serve): the check of every request then allocates nothing.
type clientStates interface {
	ClientDisabled(ctx context.Context, id string) (bool, error)
}

// checkClient refuses the token of a client that is disabled or gone. A
// token is a bearer credential handed out before the operator's decision:
// only this check makes the decision reach the tokens already issued.
func (a *Auth) checkClient(ctx context.Context, p *Principal) error {
	if p.PersonID != "" && a.browser != nil {
		if err := a.checkPerson(ctx, p.PersonID); err != nil {
			return err
		}
	}
	var disabled bool
	var err error
	if cs, ok := a.store.(clientStates); ok {
		disabled, err = cs.ClientDisabled(ctx, p.ClientID)
	} else {
		var c *posgate.Client
		if c, err = a.store.FindClient(ctx, p.ClientID); err == nil {
			disabled = c.Disabled
		}
	}
	switch {
	case err == nil && !disabled:
		return nil
	case err == nil || errors.Is(err, posgate.ErrNotFound):
		return unauthorized(msgRevoked)
	}
	return fmt.Errorf("auth: looking up the client of a token: %w", err)
}

// verify checks a token's signature, header and claims without the cache.
func (a *Auth) verify(ctx context.Context, token string, now time.Time) (*Principal, error) {
	a.verified.Add(1)
	var c claims
	_, err := a.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) { return a.verificationKey(ctx, t, now) })
	if err != nil {
		var pe *posgate.Error
		switch {
		case errors.As(err, &pe):
			return nil, pe
		case errors.Is(err, jwt.ErrTokenSignatureInvalid):
			return nil, unauthorized(msgSignature)
		case errors.Is(err, jwt.ErrTokenUnverifiable): // an unknown or absent "alg"
			return nil, unauthorized(msgAlgorithm)
		default:
			return nil, unauthorized(msgMalformed)
		}
	}
	if err := a.checkClaims(&c, now); err != nil {
		return nil, err
	}
	return &Principal{
		ClientID:    c.ClientID,
		Scopes:      strings.Fields(c.Scope),
		POSSystemID: c.POSSystemID,
		CompanyIDs:  c.CompanyIDs,
		LocationIDs: c.LocationIDs,
		PersonID:    c.PersonID,
		ExpiresAt:   c.ExpiresAt.Time.UTC(),
	}, nil
}

// verificationKey is the jwt.Keyfunc: it enforces the algorithm allow-list
// and the token type, and finds the published key named by "kid", re-reading
// the store once when the kid is unknown (another instance may have rotated).
func (a *Auth) verificationKey(ctx context.Context, t *jwt.Token, now time.Time) (any, error) {
	if t.Method.Alg() != jwt.SigningMethodES256.Alg() {
		return nil, unauthorized(msgAlgorithm)
	}
	// RFC 7515 §4.1.11: a recipient must refuse a token whose "crit" lists
	// an extension it does not understand; posgate understands none (and an
	// empty list is itself invalid).
	if _, ok := t.Header["crit"]; ok {
		return nil, unauthorized(msgCritical)
	}
	typ, _ := t.Header["typ"].(string)
	if typ = strings.ToLower(typ); typ != "at+jwt" && typ != "application/at+jwt" {
		return nil, unauthorized(msgType)
	}
	kid, _ := t.Header["kid"].(string)
	if kid == "" {
		return nil, unauthorized(msgUnknownKey)
	}
	if k := a.keys.Load().published(kid, now); k != nil {
		return k, nil
	}
	if err := a.reloadIfStale(ctx, now); err != nil {
		a.log.Warn("auth: reloading signing keys for an unknown kid failed", "err", err)
	}
	if k := a.keys.Load().published(kid, now); k != nil {
		return k, nil
	}
	return nil, unauthorized(msgUnknownKey)
}

// checkClaims validates the claims of a token whose signature is good.
func (a *Auth) checkClaims(c *claims, now time.Time) error {
	switch {
	case c.Issuer == "" || len(c.Audience) == 0 || c.Subject == "" || c.ClientID == "" ||
		c.IssuedAt == nil || c.ExpiresAt == nil || c.ID == "":
		return unauthorized(msgMissingClaim)
	case c.Issuer != a.issuer:
		return unauthorized(msgIssuer)
	case !slices.Contains(c.Audience, a.audience):
		return unauthorized(msgAudience)
	case !now.Before(c.ExpiresAt.Time):
		return unauthorized(msgExpired)
	case c.IssuedAt.After(now.Add(clockSkew)) || (c.NotBefore != nil && c.NotBefore.After(now.Add(clockSkew))):
		return unauthorized(msgNotYetValid)
	}
	return nil
}
