package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// retireSkew is added to the token lifetime before an old key stops being
// published: it covers instances that still signed with the old key until
// their next refresh, and clocks that disagree.
const retireSkew = 5 * time.Minute

// algES256 is the only signing algorithm posgate uses.
const algES256 = "ES256"

// keySet is an immutable snapshot of the signing keys; a reload swaps the
// whole set so that readers never lock.
type keySet struct {
	signer signer      // the newest key
	keys   []publicKey // oldest first
}

type signer struct {
	kid    string
	key    *ecdsa.PrivateKey
	header string // the base64url JOSE header of its tokens
}

type publicKey struct {
	kid   string
	key   *ecdsa.PublicKey
	jwk   jwk
	until time.Time // the key is published before this time; zero for the newest key
}

func (k *publicKey) publishedAt(now time.Time) bool { return k.until.IsZero() || now.Before(k.until) }

// published returns the public key with id kid when it is published at now.
// A linear scan: there are rarely more than two keys.
func (ks *keySet) published(kid string, now time.Time) *ecdsa.PublicKey {
	for i := range ks.keys {
		if k := &ks.keys[i]; k.kid == kid && k.publishedAt(now) {
			return k.key
		}
	}
	return nil
}

// jwk is one entry of the JWKS document (RFC 7517, RFC 7518 §6.2).
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// sortKeys orders keys oldest first, by id among equal times, so that every
// instance agrees on which key is the newest.
func sortKeys(keys []*posgate.SigningKey) {
	slices.SortStableFunc(keys, func(a, b *posgate.SigningKey) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// retiredAt returns when keys[i] (sorted) stops being published: once every
// token it may have signed has expired, counted from the creation of the key
// that replaced it. The newest key never retires (zero time).
func retiredAt(keys []*posgate.SigningKey, i int, ttl time.Duration) time.Time {
	if i == len(keys)-1 {
		return time.Time{}
	}
	return keys[i+1].CreatedAt.Add(ttl + retireSkew)
}

// newKeySet parses the stored keys, opening sealed ones with kek.
func newKeySet(stored []*posgate.SigningKey, ttl time.Duration, kek *KeyEncryption) (*keySet, error) {
	if len(stored) == 0 {
		return nil, errors.New("auth: the store holds no signing key")
	}
	stored = slices.Clone(stored)
	sortKeys(stored)
	ks := &keySet{keys: make([]publicKey, len(stored))}
	for i, sk := range stored {
		der, err := kek.open(sk.ID, sk.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("auth: signing key %q: %w", sk.ID, err)
		}
		priv, err := parseKey(sk, der)
		if err != nil {
			return nil, err
		}
		point, err := priv.PublicKey.Bytes() // 0x04 || X || Y
		if err != nil {
			return nil, fmt.Errorf("auth: signing key %q: %w", sk.ID, err)
		}
		ks.keys[i] = publicKey{
			kid: sk.ID,
			key: &priv.PublicKey,
			jwk: jwk{
				Kty: "EC", Crv: "P-256", Kid: sk.ID, Use: "sig", Alg: algES256,
				X: base64.RawURLEncoding.EncodeToString(point[1:33]),
				Y: base64.RawURLEncoding.EncodeToString(point[33:]),
			},
			until: retiredAt(stored, i, ttl),
		}
		header, err := encodeHeader(sk.ID)
		if err != nil {
			return nil, err
		}
		ks.signer = signer{kid: sk.ID, key: priv, header: header} // the last, newest key wins
	}
	return ks, nil
}

// parseKey parses the PKCS #8 key der of sk (its private key, opened).
func parseKey(sk *posgate.SigningKey, der []byte) (*ecdsa.PrivateKey, error) {
	if sk.Algorithm != algES256 {
		return nil, fmt.Errorf("auth: signing key %q: unsupported algorithm %q", sk.ID, sk.Algorithm)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("auth: signing key %q: %w", sk.ID, err)
	}
	priv, ok := k.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, fmt.Errorf("auth: signing key %q is not an ECDSA P-256 key", sk.ID)
	}
	return priv, nil
}

// Reload re-reads the keys from the store and swaps them in: the
// operator's key rotation (service.KeyReloader) calls it once the new key
// is committed.
func (a *Auth) Reload(ctx context.Context) error { return a.reload(ctx) }

// reload re-reads the keys from the store and swaps them in.
func (a *Auth) reload(ctx context.Context) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	return a.reloadLocked(ctx)
}

// reloadIfStale reloads unless the keys were read less than
// minReloadInterval before now.
func (a *Auth) reloadIfStale(ctx context.Context, now time.Time) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if now.Sub(a.lastReload) < minReloadInterval {
		return nil
	}
	return a.reloadLocked(ctx)
}

func (a *Auth) reloadLocked(ctx context.Context) error {
	stored, err := a.store.ListSigningKeys(ctx)
	if err != nil {
		return fmt.Errorf("auth: list signing keys: %w", err)
	}
	ks, err := newKeySet(stored, a.ttl, a.kek)
	if err != nil {
		return err
	}
	a.keys.Store(ks)
	a.lastReload = a.now()
	return nil
}

// Rotate stores a new ES256 signing key created at now (or just after the
// newest stored key, should that be later) and deletes the keys that are no
// longer published: all their tokens, of lifetime ttl, have expired. It works
// on the store alone, for the CLI; running instances pick the new key up at
// their next refresh. ttl must be the servers' TokenTTL. With kek the new
// key is stored sealed. The returned key holds the private key (plain):
// never show or log it.
func Rotate(ctx context.Context, s Store, kek *KeyEncryption, now time.Time, ttl time.Duration) (*posgate.SigningKey, error) {
	keys, err := s.ListSigningKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: list signing keys: %w", err)
	}
	// The new key must be the newest even when this clock is behind the one
	// that made the current newest key (or the two coincide).
	createdAt := posgate.Timestamp(now)
	for _, old := range keys {
		if !createdAt.After(old.CreatedAt) {
			createdAt = old.CreatedAt.Add(time.Microsecond)
		}
	}
	k, err := newSigningKey(createdAt)
	if err != nil {
		return nil, err
	}
	stored := *k
	if kek != nil {
		if stored.PrivateKey, err = kek.seal(k.ID, k.PrivateKey); err != nil {
			return nil, err
		}
	}
	if err := s.CreateSigningKey(ctx, &stored); err != nil {
		return nil, fmt.Errorf("auth: store signing key: %w", err)
	}
	keys = append(keys, k)
	sortKeys(keys)
	for i, old := range keys {
		if until := retiredAt(keys, i, ttl); !until.IsZero() && !now.Before(until) {
			// Another instance may have pruned it already.
			if err := s.DeleteSigningKey(ctx, old.ID); err != nil && !errors.Is(err, posgate.ErrNotFound) {
				return nil, fmt.Errorf("auth: delete signing key %q: %w", old.ID, err)
			}
		}
	}
	return k, nil
}

func newSigningKey(createdAt time.Time) (*posgate.SigningKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("auth: generate signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("auth: encode signing key: %w", err)
	}
	kid := make([]byte, 16)
	if _, err := rand.Read(kid); err != nil {
		return nil, fmt.Errorf("auth: generate key id: %w", err)
	}
	return &posgate.SigningKey{
		ID:         base64.RawURLEncoding.EncodeToString(kid),
		Algorithm:  algES256,
		PrivateKey: der,
		CreatedAt:  createdAt,
	}, nil
}

// JWKSHandler serves the public keys at /.well-known/openid-configuration/jwks:
// the signing key and every older key whose tokens may still be alive. Mount
// it for GET (the router answers other methods).
func (a *Auth) JWKSHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ks, now := a.keys.Load(), a.now()
		doc := struct {
			Keys []jwk `json:"keys"`
		}{Keys: make([]jwk, 0, len(ks.keys))}
		for i := len(ks.keys) - 1; i >= 0; i-- { // newest first
			if k := &ks.keys[i]; k.publishedAt(now) {
				doc.Keys = append(doc.Keys, k.jwk)
			}
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		a.writeJSON(w, http.StatusOK, doc)
	})
}

// discoveryDocument is the OpenID provider metadata posgate publishes
// (RFC 8414 / OpenID Connect Discovery 1.0); with the browser side on, it
// lists the authorization endpoint and its flows too (docs/api.md §21.3).
func discoveryDocument(issuer string, browser bool) any {
	type doc struct {
		Issuer                   string   `json:"issuer"`
		AuthorizationEndpoint    string   `json:"authorization_endpoint,omitempty"`
		JWKSURI                  string   `json:"jwks_uri"`
		TokenEndpoint            string   `json:"token_endpoint"`
		GrantTypes               []string `json:"grant_types_supported"`
		TokenEndpointAuthMethods []string `json:"token_endpoint_auth_methods_supported"`
		Scopes                   []string `json:"scopes_supported"`
		ResponseTypes            []string `json:"response_types_supported"`
		ResponseModes            []string `json:"response_modes_supported,omitempty"`
		CodeChallengeMethods     []string `json:"code_challenge_methods_supported,omitempty"`
		AuthorizationResponseIss bool     `json:"authorization_response_iss_parameter_supported,omitempty"`
		SubjectTypes             []string `json:"subject_types_supported"`
		IDTokenSigningAlgorithms []string `json:"id_token_signing_alg_values_supported"`
	}
	d := doc{
		Issuer:                   issuer,
		JWKSURI:                  issuer + "/.well-known/openid-configuration/jwks",
		TokenEndpoint:            issuer + "/connect/token",
		GrantTypes:               []string{"client_credentials"},
		TokenEndpointAuthMethods: []string{"client_secret_basic", "client_secret_post"},
		Scopes:                   posgate.KnownScopes,
		ResponseTypes:            []string{"token"},
		SubjectTypes:             []string{"public"},
		IDTokenSigningAlgorithms: []string{algES256},
	}
	if browser {
		d.AuthorizationEndpoint = issuer + "/connect/authorize"
		d.GrantTypes = []string{"client_credentials", "authorization_code", "refresh_token", "implicit"}
		d.TokenEndpointAuthMethods = []string{"client_secret_basic", "client_secret_post", "none"}
		d.ResponseTypes = []string{"token", "code"}
		d.ResponseModes = []string{"query", "fragment"}
		d.CodeChallengeMethods = []string{"S256"}
		d.AuthorizationResponseIss = true
	}
	return d
}

// DiscoveryHandler serves /.well-known/openid-configuration so that clients
// find the token endpoint and the keys. Mount it for GET.
func (a *Auth) DiscoveryHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("Content-Type", contentTypeJSON)
		_, _ = w.Write(a.discovery)
	})
}
