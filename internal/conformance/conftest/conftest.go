// Package conftest serves posgate in-process for the conformance kit's
// tests, on each store the tests run against, and gives them a till that
// calls the POS API by hand (so that it can break the rules on purpose).
package conftest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/pgtest"
)

// ForEachStore runs fn against a fresh demo server (posgate serve --demo)
// on a SQLite file and, when POSGATE_TEST_POSTGRES_DSN is set, one on a
// fresh PostgreSQL schema.
func ForEachStore(t *testing.T, fn func(t *testing.T, base string)) {
	ForEachStoreKind(t, func(t *testing.T, demo func(*testing.T, app.Config) string) { fn(t, demo(t, app.Config{})) })
}

// ForEachStoreKind runs fn once per store kind (SQLite; PostgreSQL when
// POSGATE_TEST_POSTGRES_DSN is set) with demo, which serves a fresh demo
// server on a new store of that kind, with cfg's other settings.
func ForEachStoreKind(t *testing.T, fn func(t *testing.T, demo func(*testing.T, app.Config) string)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, func(t *testing.T, cfg app.Config) string {
			cfg.Database, cfg.Demo = filepath.Join(t.TempDir(), "posgate-demo.db"), true
			return Serve(t, cfg)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.DSN(t) // skips without PostgreSQL
		fn(t, func(t *testing.T, cfg app.Config) string {
			cfg.Database, cfg.Demo = pgtest.DSN(t), true
			return Serve(t, cfg)
		})
	})
}

// Serve runs posgate with cfg on 127.0.0.1:0 until t ends and returns its
// base URL.
func Serve(t *testing.T, cfg app.Config) string {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan app.Addrs, 1)
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, cfg, func(a app.Addrs) { ready <- a }) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return a.BaseURL
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("server did not start")
	}
	return ""
}

// Operator is the demo operator's client of the server at base.
func Operator(t *testing.T, base string) *client.Admin {
	t.Helper()
	c, err := client.New(base, client.WithCredentials("demo-admin", "demo-admin-secret", "admin"))
	if err != nil {
		t.Fatal(err)
	}
	return c.Admin
}

// Till is a POS client that calls the API by hand: it sends exactly what
// its caller says, and fetches a token only when told.
type Till struct {
	T          *testing.T
	Base       string
	ID, Secret string
	Token      string
	http       http.Client
}

// NewTill registers a new POS client of the demo's POS system (clover)
// through the operator API and returns a till using it.
func NewTill(t *testing.T, base, id string) *Till {
	t.Helper()
	cl, err := Operator(t, base).CreateClient(context.Background(), client.CreateAPIClientRequest{ClientID: id, PosSystemID: "clover",
		Scopes: []client.Scope{"pos_integration"}})
	if err != nil {
		t.Fatalf("create client %s: %v", id, err)
	}
	return &Till{T: t, Base: base, ID: id, Secret: cl.ClientSecret, http: http.Client{Timeout: 30 * time.Second}}
}

// FetchToken asks for a new token and keeps it.
func (s *Till) FetchToken() string {
	s.T.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"pos_integration"}}
	req, _ := http.NewRequest(http.MethodPost, s.Base+"/connect/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(s.ID, s.Secret)
	resp, err := s.http.Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		s.T.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	s.Token = tok.AccessToken
	return s.Token
}

// Call sends a request with the till's token and the given headers
// ("Name: value"), and answers the status, the body and the headers.
func (s *Till) Call(method, path, body string, headers ...string) (int, string, http.Header) {
	s.T.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.Base+path, r)
	if err != nil {
		s.T.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// JSON is Call with a JSON body.
func (s *Till) JSON(method, path, body string, headers ...string) (int, string, http.Header) {
	s.T.Helper()
	return s.Call(method, path, body, append([]string{"Content-Type: application/json"}, headers...)...)
}
