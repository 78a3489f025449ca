package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/openapi/openapitest"
	"github.com/posgate/posgate/internal/pgtest"
)

// clock is a settable clock injected into the server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// forEachStore runs fn against SQLite and, when configured, PostgreSQL.
func forEachStore(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, filepath.Join(t.TempDir(), "posgate.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, pgtest.DSN(t))
	})
}

// server is one running posgate.
type server struct {
	cfg    app.Config
	addrs  app.Addrs
	base   string
	clock  *clock
	http   *http.Client
	cancel context.CancelFunc
	done   chan error
}

var validatorOnce struct {
	sync.Once
	v *openapitest.Validator
}

// start runs posgate with the demo data set on dsn until the test ends.
func start(t *testing.T, dsn string, mod ...func(*app.Config)) *server {
	t.Helper()
	cfg := app.Config{
		Listen:   "127.0.0.1:0",
		Database: dsn,
		Demo:     true,
	}
	for _, m := range mod {
		m(&cfg)
	}
	s := &server{clock: newClock()}
	if cfg.Now == nil {
		cfg.Now = s.clock.Now
	}
	s.cfg = cfg
	s.run(t)
	return s
}

func (s *server) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan app.Addrs, 1)
	s.done = make(chan error, 1)
	s.cancel = cancel
	go func() { s.done <- app.Serve(ctx, s.cfg, func(a app.Addrs) { ready <- a }) }()
	select {
	case s.addrs = <-ready:
	case err := <-s.done:
		t.Fatalf("serve: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not start")
	}
	s.base = "http://" + s.addrs.API.String()
	v := validator(t)
	s.http = &http.Client{Transport: v.Transport(t, http.DefaultTransport), Timeout: 20 * time.Second}
	t.Cleanup(func() { s.stop(t) })
}

// checkedClient is a plain HTTP client whose every answer is validated
// against the served OpenAPI document, for the tests that build their
// requests by hand (streamed bodies, processes killed mid-request).
func checkedClient(t *testing.T) *http.Client {
	return &http.Client{Transport: validator(t).Transport(t, http.DefaultTransport)}
}

func validator(t *testing.T) *openapitest.Validator {
	validatorOnce.Do(func() { validatorOnce.v = openapitest.New(t) })
	return validatorOnce.v
}

// stop shuts the server down (idempotent).
func (s *server) stop(t *testing.T) {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("serve returned: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("server did not stop")
	}
}

// restart stops the server and starts it again on the same store.
func (s *server) restart(t *testing.T) {
	t.Helper()
	s.stop(t)
	s.cfg.Listen = s.addrs.API.String()
	s.run(t)
}

// openStore opens a second handle on the server's store, for checks and for
// crafting tokens with its keys.
func (s *server) openStore(t *testing.T) posgate.Store {
	t.Helper()
	st, err := app.OpenStore(context.Background(), s.cfg.Database, false, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// response is what a test reads back.
type response struct {
	Status int
	Header http.Header
	Body   []byte
	Close  bool // the server closes the connection after it (Connection: close)
}

// JSON decodes the body into a generic value.
func (r response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// req is one request to send.
type req struct {
	Method, Path string
	Token        string
	ContentType  string
	Body         string
	Header       map[string]string
	// Undocumented marks probes of routes or methods the OpenAPI document
	// does not have (unknown paths, wrong methods): not validated.
	Undocumented bool
}

func (s *server) do(t *testing.T, q req) response {
	t.Helper()
	if q.Undocumented {
		return doTo(t, http.DefaultClient, s.base, q)
	}
	return doTo(t, s.http, s.base, q)
}

func doTo(t *testing.T, c *http.Client, base string, q req) response {
	t.Helper()
	var body io.Reader
	if q.Body != "" {
		body = strings.NewReader(q.Body)
	}
	r, err := http.NewRequest(q.Method, base+q.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	if q.ContentType != "" {
		r.Header.Set("Content-Type", q.ContentType)
	}
	if q.Token != "" {
		r.Header.Set("Authorization", "Bearer "+q.Token)
	}
	for k, v := range q.Header {
		r.Header.Set(k, v)
	}
	resp, err := c.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", q.Method, q.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b, Close: resp.Close}
}

// tokenResponse is the token endpoint's success body.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
}

// token gets an access token with HTTP Basic client authentication.
func (s *server) token(t *testing.T, id, secret, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	r := s.tokenRequest(t, form, id, secret)
	if r.Status != 200 {
		t.Fatalf("token for %s: %d %s", id, r.Status, r.Body)
	}
	var tr tokenResponse
	if err := json.Unmarshal(r.Body, &tr); err != nil {
		t.Fatal(err)
	}
	return tr.AccessToken
}

// tokenRequest posts a form to /connect/token, with Basic auth when id is
// not empty.
func (s *server) tokenRequest(t *testing.T, form url.Values, id, secret string) response {
	t.Helper()
	r, err := http.NewRequest("POST", s.base+"/connect/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if id != "" {
		r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	}
	resp, err := s.http.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func (s *server) posToken(t *testing.T) string {
	return s.token(t, "demo-pos", "demo-pos-secret", "pos_integration")
}

func (s *server) adminToken(t *testing.T) string {
	return s.token(t, "demo-admin", "demo-admin-secret", "admin")
}

// mustStatus fails the test unless r has the wanted status.
func mustStatus(t *testing.T, r response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body: %s", r.Status, want, r.Body)
	}
}

// problem is a decoded problem document.
type problem struct {
	Type    string              `json:"type"`
	Title   string              `json:"title"`
	Status  int                 `json:"status"`
	Detail  string              `json:"detail"`
	TraceID string              `json:"traceId"`
	Errors  map[string][]string `json:"errors"`
}

// mustProblem checks status, content type and the problem's fields (the
// trace id only for its shape), and returns it.
func mustProblem(t *testing.T, r response, status int, detail string, errs map[string][]string) problem {
	t.Helper()
	mustStatus(t, r, status)
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json; charset=utf-8" {
		t.Fatalf("content type %q, want problem+json", ct)
	}
	var p problem
	dec := json.NewDecoder(strings.NewReader(string(r.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("problem body: %v: %s", err, r.Body)
	}
	if p.Status != status || !(strings.HasPrefix(p.Type, "https://tools.ietf.org/html/rfc9110#section-") ||
		status == http.StatusTooManyRequests && p.Type == "https://tools.ietf.org/html/rfc6585#section-4") || p.Title == "" {
		t.Fatalf("problem header fields wrong: %+v", p)
	}
	if len(p.TraceID) != 55 || !strings.HasPrefix(p.TraceID, "00-") {
		t.Fatalf("traceId %q is not traceparent-shaped", p.TraceID)
	}
	if detail != "*" && p.Detail != detail {
		t.Fatalf("detail %q, want %q", p.Detail, detail)
	}
	if !equalFields(p.Errors, errs) {
		t.Fatalf("errors %v, want %v", p.Errors, errs)
	}
	return p
}

func equalFields(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if av[i] != bv[i] {
				return false
			}
		}
	}
	return true
}
