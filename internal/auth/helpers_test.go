package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
)

const testIssuer = "http://idp.test"

// memStore is an in-memory Store; the SQLite store is written elsewhere.
type memStore struct {
	mu      sync.Mutex
	clients map[string]*posgate.Client
	keys    map[string]*posgate.SigningKey
	lists   atomic.Int64 // ListSigningKeys calls
	// failFind makes FindClient fail as a broken database would.
	failFind atomic.Bool
}

// fullStore is a memStore as a posgate.Store, so that it can sit behind the
// store cache as in posgate serve; the methods auth does not use panic (nil
// embedded interface).
type fullStore struct {
	posgate.Store
	m *memStore
}

func memFull(m *memStore) fullStore { return fullStore{m: m} }

func (f fullStore) FindClient(ctx context.Context, id string) (*posgate.Client, error) {
	return f.m.FindClient(ctx, id)
}

func (f fullStore) CreateSigningKey(ctx context.Context, k *posgate.SigningKey) error {
	return f.m.CreateSigningKey(ctx, k)
}

func (f fullStore) ListSigningKeys(ctx context.Context) ([]*posgate.SigningKey, error) {
	return f.m.ListSigningKeys(ctx)
}

func (f fullStore) DeleteSigningKey(ctx context.Context, id string) error {
	return f.m.DeleteSigningKey(ctx, id)
}

// newMemStore returns a store holding the test clients (addTestClients):
// Verify looks up the client of every token.
func newMemStore() *memStore {
	s := &memStore{clients: map[string]*posgate.Client{}, keys: map[string]*posgate.SigningKey{}}
	addTestClients(s)
	return s
}

func (s *memStore) addClient(c *posgate.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.ID] = c
}

func (s *memStore) FindClient(_ context.Context, id string) (*posgate.Client, error) {
	if s.failFind.Load() {
		return nil, errors.New("memstore: the database is gone")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, posgate.Errorf(posgate.ENOTFOUND, "client %s not found", id)
	}
	cp := *c
	return &cp, nil
}

func (s *memStore) CreateSigningKey(_ context.Context, k *posgate.SigningKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[k.ID]; ok {
		return posgate.Errorf(posgate.ECONFLICT, "key exists")
	}
	cp := *k
	s.keys[k.ID] = &cp
	return nil
}

func (s *memStore) ListSigningKeys(context.Context) ([]*posgate.SigningKey, error) {
	s.lists.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*posgate.SigningKey, 0, len(s.keys))
	for _, k := range s.keys {
		cp := *k
		out = append(out, &cp)
	}
	slices.SortFunc(out, func(a, b *posgate.SigningKey) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

func (s *memStore) ReplaceSigningKey(_ context.Context, id string, old, next []byte) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok || !bytes.Equal(k.PrivateKey, old) {
		return false, nil
	}
	cp := *k
	cp.PrivateKey = slices.Clone(next)
	s.keys[id] = &cp
	return true, nil
}

func (s *memStore) DeleteSigningKey(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[id]; !ok {
		return posgate.Errorf(posgate.ENOTFOUND, "key not found")
	}
	delete(s.keys, id)
	return nil
}

// keyIDs returns the stored key ids, oldest first.
func (s *memStore) keyIDs(t *testing.T) []string {
	t.Helper()
	keys, err := s.ListSigningKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.ID
	}
	return ids
}

// privateKey returns the parsed private key kid from the store.
func (s *memStore) privateKey(t *testing.T, kid string) *ecdsa.PrivateKey {
	t.Helper()
	s.mu.Lock()
	k, ok := s.keys[kid]
	s.mu.Unlock()
	if !ok {
		t.Fatalf("no key %s", kid)
	}
	priv, err := x509.ParsePKCS8PrivateKey(k.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return priv.(*ecdsa.PrivateKey)
}

// fakeClock is a settable clock shared by the Auths of a test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestAuth(t testing.TB, s Store, clock *fakeClock, mutate ...func(*Config)) *Auth {
	t.Helper()
	cfg := Config{
		Issuer: testIssuer + "/",
		Now:    clock.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, m := range mutate {
		m(&cfg)
	}
	a, err := New(context.Background(), s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// decodeJWT returns the decoded header and claims of a compact JWT.
func decodeJWT(t *testing.T, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	return header, claims
}

// signToken signs arbitrary header and claims with an ES256 key, to forge
// tokens that posgate would not issue.
func signToken(t *testing.T, key *ecdsa.PrivateKey, header, claims map[string]any) string {
	t.Helper()
	tok := &jwt.Token{Header: header, Claims: jwt.MapClaims(claims), Method: jwt.SigningMethodES256}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validClaims are the claims of a good token issued at now.
func validClaims(now time.Time) map[string]any {
	return map[string]any{
		"iss": testIssuer, "aud": "posgate", "sub": "pos-1", "client_id": "pos-1",
		"scope": "pos_integration", "iat": now.Unix(), "nbf": now.Unix(),
		"exp": now.Add(time.Hour).Unix(), "jti": "6f1c7b8e-51a4-4c59-9d56-4e1b2f0a9c11",
		"pos_system_id": "clover",
	}
}

// basic returns an Authorization header value per RFC 6749 §2.3.1.
func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

type tokenRequest struct {
	method      string // default POST
	contentType string // default form
	auth        string // Authorization header
	body        string
}

type tokenAnswer struct {
	status int
	header http.Header
	body   string
}

func postToken(t *testing.T, srv *httptest.Server, tr tokenRequest) tokenAnswer {
	t.Helper()
	method := tr.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, srv.URL+"/connect/token", strings.NewReader(tr.body))
	if err != nil {
		t.Fatal(err)
	}
	if tr.contentType == "" {
		tr.contentType = formContentType
	}
	req.Header.Set("Content-Type", tr.contentType)
	if tr.auth != "" {
		req.Header.Set("Authorization", tr.auth)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return tokenAnswer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// newServer serves a's endpoints the way internal/httpapi mounts them.
func newServer(t testing.TB, a *Auth) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/connect/token", a.TokenHandler())
	mux.Handle("GET /.well-known/openid-configuration", a.DiscoveryHandler())
	mux.Handle("GET /.well-known/openid-configuration/jwks", a.JWKSHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Test clients and their secrets.
const (
	posSecret     = "pos-secret-1"
	adminSecret   = "admin-secret-1"
	specialID     = "pos:1 a+b&c"
	specialSecret = "s3:cr+t/=&é"
)

func addTestClients(s *memStore) {
	s.addClient(&posgate.Client{ID: "pos-1", SecretHash: credential.HashSecret(posSecret), POSSystemID: "clover",
		Scopes: []string{posgate.ScopePOSIntegration}, CompanyIDs: []string{"c1", "c2"}})
	s.addClient(&posgate.Client{ID: "op-1", SecretHash: credential.HashSecret(adminSecret), Scopes: []string{posgate.ScopeAdmin}})
	s.addClient(&posgate.Client{ID: "off-1", SecretHash: credential.HashSecret(posSecret), POSSystemID: "clover",
		Scopes: []string{posgate.ScopePOSIntegration}, Disabled: true})
	s.addClient(&posgate.Client{ID: "web-1", SecretHash: credential.HashSecret(posSecret), POSSystemID: "clover",
		Scopes: []string{posgate.ScopeServiceAPI}})
	s.addClient(&posgate.Client{ID: "mix-1", SecretHash: credential.HashSecret(posSecret), POSSystemID: "pax",
		Scopes: []string{posgate.ScopeServiceAPI, posgate.ScopePOSIntegration}})
	s.addClient(&posgate.Client{ID: specialID, SecretHash: credential.HashSecret(specialSecret), POSSystemID: "pax",
		Scopes: []string{posgate.ScopePOSIntegration}})
}
