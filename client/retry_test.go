package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
)

// script is a local HTTP server on a real socket that answers each request
// with the next of its steps (the last one repeats) and records what it got.
type script struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	steps []func(w http.ResponseWriter, r *http.Request)
	got   []seen
}

// seen is one request as the server received it.
type seen struct {
	Method, Path, Key, Auth, UserAgent, Body string
	At                                       time.Time
}

func newScript(t *testing.T, steps ...func(w http.ResponseWriter, r *http.Request)) *script {
	s := &script{t: t, steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		s.mu.Lock()
		n := len(s.got)
		s.got = append(s.got, seen{Method: r.Method, Path: r.URL.Path, Key: r.Header.Get("Idempotency-Key"),
			Auth: r.Header.Get("Authorization"), UserAgent: r.Header.Get("User-Agent"), Body: string(b), At: time.Now()})
		step := s.steps[min(n, len(s.steps)-1)]
		s.mu.Unlock()
		step(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *script) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

func (s *script) client(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(s.srv.URL, append([]client.Option{client.WithToken("tok"),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 4, BaseDelay: 20 * time.Millisecond, MaxDelay: 100 * time.Millisecond})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func answer(status int, retryAfter, body string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		if status >= 400 {
			w.Header().Set("Content-Type", "application/problem+json; charset=utf-8")
		} else {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// drop closes the connection without an answer.
func drop(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

const (
	okSystem    = `{"data":{"id":"clover","name":"Clover","createdAt":"2026-01-02T03:04:05Z"}}`
	okStart     = `{"data":{"terminalId":"T","posLocationId":"L","sessionId":"0b5e8f3c-1f4e-4c1a-9d51-6a9a3f1f2b11","posStatus":"Accepted"}}`
	problem503  = `{"type":"https://tools.ietf.org/html/rfc9110#section-15.6.4","title":"Service Unavailable","status":503,"detail":"The server is at capacity; retry after the seconds of Retry-After.","traceId":"00-0123456789abcdef0123456789abcdef-0123456789abcdef-00"}`
	problem429  = `{"type":"https://tools.ietf.org/html/rfc6585#section-4","title":"Too Many Requests","status":429,"detail":"Rate limit exceeded.","traceId":"00-0123456789abcdef0123456789abcdef-0123456789abcdef-00"}`
	problem401  = `{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.2","title":"Unauthorized","status":401,"detail":"The access token is revoked.","traceId":"00-0123456789abcdef0123456789abcdef-0123456789abcdef-00"}`
	problem409  = `{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.10","title":"Conflict","status":409,"detail":"A request with this Idempotency-Key is still being processed.","traceId":"00-0123456789abcdef0123456789abcdef-0123456789abcdef-00"}`
	startSample = `{"terminalId":"T","posLocationId":"L"}`
)

func startReq() client.StartInteractionRequest {
	return client.StartInteractionRequest{TerminalID: "T", PosLocationID: "L"}
}

// TestRetry503HonoursRetryAfter: a GET answered 503 with Retry-After: 1 is
// sent again after a second, and its second answer is the call's.
func TestRetry503HonoursRetryAfter(t *testing.T) {
	s := newScript(t, answer(503, "1", problem503), answer(200, "", okSystem))
	sys, err := s.client(t).Admin.GetPosSystem(context.Background(), "clover")
	if err != nil {
		t.Fatal(err)
	}
	got := s.requests()
	if sys.ID != "clover" || len(got) != 2 {
		t.Fatalf("%+v after %d requests", sys, len(got))
	}
	if gap := got[1].At.Sub(got[0].At); gap < 950*time.Millisecond {
		t.Fatalf("retried after %v, Retry-After asked for 1 s", gap)
	}
}

// TestRetry429OnPOSTKeepsItsKey: a POST that takes an Idempotency-Key is
// retried after 429, with the same key on each attempt; another call gets
// another key.
func TestRetry429OnPOSTKeepsItsKey(t *testing.T) {
	s := newScript(t, answer(429, "1", problem429), answer(200, "", okStart))
	c := s.client(t)
	res, err := c.StartInteraction(context.Background(), "clover", startReq())
	if err != nil {
		t.Fatal(err)
	}
	if res.PosStatus != client.PosStatusAccepted {
		t.Fatalf("%+v", res)
	}
	got := s.requests()
	if len(got) != 2 || got[0].Key == "" || got[0].Key != got[1].Key || got[0].Body != startSample || got[1].Body != startSample {
		t.Fatalf("requests %+v: want two with one key and the same body", got)
	}
	if _, err := c.StartInteraction(context.Background(), "clover", startReq()); err != nil {
		t.Fatal(err)
	}
	got = s.requests()
	if len(got) != 3 || got[2].Key == "" || got[2].Key == got[0].Key {
		t.Fatalf("a second call's key %q, the first's %q: want a new one", got[2].Key, got[0].Key)
	}
	if len(got[0].Key) != 32 {
		t.Fatalf("key %q: want 128 random bits in hex", got[0].Key)
	}
}

// TestWithIdempotencyKey: the caller's key is sent instead of a random one.
func TestWithIdempotencyKey(t *testing.T) {
	s := newScript(t, drop, answer(200, "", okStart))
	ctx := client.WithIdempotencyKey(context.Background(), "sale-42")
	if _, err := s.client(t).StartInteraction(ctx, "clover", startReq()); err != nil {
		t.Fatal(err)
	}
	got := s.requests()
	if len(got) != 2 || got[0].Key != "sale-42" || got[1].Key != "sale-42" {
		t.Fatalf("%+v", got)
	}
}

// TestRetryDroppedConnection: a connection closed without an answer is a
// connection error; a GET and a keyed POST are sent again.
func TestRetryDroppedConnection(t *testing.T) {
	s := newScript(t, drop, drop, answer(200, "", okSystem))
	if _, err := s.client(t).Admin.GetPosSystem(context.Background(), "clover"); err != nil {
		t.Fatal(err)
	}
	if n := len(s.requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

// TestPOSTWithoutKeyIsNeverRetried: the carousel impression takes no
// Idempotency-Key, so neither a 503 nor a dropped connection is retried,
// and it is sent without a key.
func TestPOSTWithoutKeyIsNeverRetried(t *testing.T) {
	for name, first := range map[string]func(http.ResponseWriter, *http.Request){
		"503":     answer(503, "1", problem503),
		"dropped": drop,
	} {
		t.Run(name, func(t *testing.T) {
			s := newScript(t, first, answer(200, "", `{"data":{"slideId":"s1","recorded":true}}`))
			_, err := s.client(t).RecordCarouselImpression(context.Background(), s.srv.URL+"/carousel?pos=clover&sig=x", "s1")
			if err == nil {
				t.Fatal("no error")
			}
			if name == "503" && !errors.Is(err, client.ErrUnavailable) {
				t.Fatalf("%v: want ErrUnavailable", err)
			}
			got := s.requests()
			if len(got) != 1 || got[0].Key != "" || got[0].Auth != "" {
				t.Fatalf("%+v: want one request without key or token", got)
			}
		})
	}
}

// TestGivesUpAfterMaxAttempts: a server that stays at 503 is tried
// MaxAttempts times, then the 503 is the answer.
func TestGivesUpAfterMaxAttempts(t *testing.T) {
	s := newScript(t, answer(503, "", problem503))
	_, err := s.client(t).Admin.ListPosSystems(context.Background())
	var pe *client.Error
	if !errors.As(err, &pe) || !errors.Is(err, client.ErrUnavailable) || pe.StatusCode != 503 || pe.Detail == "" {
		t.Fatalf("%v", err)
	}
	if n := len(s.requests()); n != 4 {
		t.Fatalf("%d attempts, want 4", n)
	}
}

// TestBackoffGrows: without Retry-After the waits grow exponentially (with
// jitter between half and all of each wait).
func TestBackoffGrows(t *testing.T) {
	s := newScript(t, answer(503, "", problem503))
	c := s.client(t, client.WithRetry(client.RetryPolicy{MaxAttempts: 4, BaseDelay: 200 * time.Millisecond, MaxDelay: 10 * time.Second}))
	c.Admin.ListPosSystems(context.Background())
	got := s.requests()
	if len(got) != 4 {
		t.Fatalf("%d attempts", len(got))
	}
	for i, want := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
		gap := got[i+1].At.Sub(got[i].At)
		if gap < want/2-10*time.Millisecond || gap > want+2*time.Second {
			t.Errorf("wait %d: %v, want within [%v, %v] (plus slack)", i+1, gap, want/2, want)
		}
	}
}

// TestRetryAfterBeyondTheDeadline: a Retry-After longer than the call has
// left is answered at once instead of waited for.
func TestRetryAfterBeyondTheDeadline(t *testing.T) {
	s := newScript(t, answer(503, "60", problem503), answer(200, "", okSystem))
	start := time.Now()
	_, err := s.client(t).Admin.GetPosSystem(context.Background(), "clover")
	var pe *client.Error
	if !errors.As(err, &pe) || pe.RetryAfter != time.Minute {
		t.Fatalf("%v", err)
	}
	if d := time.Since(start); d > 5*time.Second || len(s.requests()) != 1 {
		t.Fatalf("took %v and %d requests", d, len(s.requests()))
	}
}

// TestAttemptTimeout: an attempt that takes longer than its limit is given
// up and, the call being safe, sent again.
func TestAttemptTimeout(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	s := newScript(t, slow, answer(200, "", okSystem))
	start := time.Now()
	_, err := s.client(t, client.WithTimeouts(500*time.Millisecond, 20*time.Second)).Admin.GetPosSystem(context.Background(), "clover")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 450*time.Millisecond || d > 8*time.Second || len(s.requests()) != 2 {
		t.Fatalf("took %v and %d requests", d, len(s.requests()))
	}
}

// TestTotalTimeout: the whole call with its retries stops at its limit.
func TestTotalTimeout(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	s := newScript(t, slow)
	start := time.Now()
	_, err := s.client(t, client.WithTimeouts(400*time.Millisecond, 1*time.Second),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 100, BaseDelay: 10 * time.Millisecond, MaxDelay: 10 * time.Millisecond})).
		Admin.GetPosSystem(context.Background(), "clover")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v: want a deadline error", err)
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 6*time.Second {
		t.Fatalf("took %v, want about 1 s", d)
	}
}

// TestDefaultTimeouts: the defaults fit a checkout.
func TestDefaultTimeouts(t *testing.T) {
	if client.DefaultAttemptTimeout != 5*time.Second || client.DefaultTotalTimeout != 15*time.Second {
		t.Fatalf("%v %v", client.DefaultAttemptTimeout, client.DefaultTotalTimeout)
	}
	if testing.Short() {
		t.Skip("-short: not waiting out the 5 s attempt timeout")
	}
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}
	s := newScript(t, slow, answer(200, "", okSystem))
	c, err := client.New(s.srv.URL, client.WithToken("t"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Admin.GetPosSystem(context.Background(), "clover"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 4900*time.Millisecond || d > 12*time.Second {
		t.Fatalf("the first attempt was given up after %v, want 5 s", d)
	}
}

// TestConflictInFlightIsRetried: 409 with Retry-After on a keyed POST (the
// same key still running, docs/api.md §14) is waited out; a 409 without it
// is a conflict answered at once.
func TestConflictInFlightIsRetried(t *testing.T) {
	s := newScript(t, answer(409, "1", problem409), answer(200, "", okStart))
	if _, err := s.client(t).StartInteraction(context.Background(), "clover", startReq()); err != nil {
		t.Fatal(err)
	}
	s2 := newScript(t, answer(409, "", problem409), answer(200, "", okStart))
	_, err := s2.client(t).StartInteraction(context.Background(), "clover", startReq())
	if !errors.Is(err, client.ErrConflict) || len(s2.requests()) != 1 {
		t.Fatalf("%v after %d requests", err, len(s2.requests()))
	}
}

// TestUserAgent: every request names the integration and the client.
func TestUserAgent(t *testing.T) {
	s := newScript(t, answer(200, "", okSystem))
	s.client(t, client.WithUserAgent("acme-till/4.2")).Admin.GetPosSystem(context.Background(), "clover")
	s.client(t).Admin.GetPosSystem(context.Background(), "clover")
	got := s.requests()
	if got[0].UserAgent != "acme-till/4.2 posgate-go/"+client.Version || got[1].UserAgent != "posgate-go/"+client.Version {
		t.Fatalf("%q, %q", got[0].UserAgent, got[1].UserAgent)
	}
}

// TestContextCancel: a cancelled context stops the call, also while it
// waits to retry.
func TestContextCancel(t *testing.T) {
	s := newScript(t, answer(503, "3", problem503))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.client(t).Admin.GetPosSystem(ctx, "clover")
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
}

// tokenServer is an identity provider and API on one socket: tokens are
// "tok-1", "tok-2", …, each living ttl; the API refuses the tokens in
// revoked.
type tokenServer struct {
	*script
	issued  atomic.Int32
	revoked sync.Map
}

func newTokenServer(t *testing.T, ttl string) *tokenServer {
	ts := &tokenServer{}
	ts.script = newScript(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/connect/token" {
			id, secret, _ := r.BasicAuth()
			if id != "till" || secret != "s3cret" || r.FormValue("grant_type") != "client_credentials" || r.FormValue("scope") != "pos_integration" {
				answer(401, "", `{"error":"invalid_client","error_description":"Client authentication failed."}`)(w, r)
				return
			}
			n := ts.issued.Add(1)
			answer(200, "", `{"access_token":"tok-`+strconv.Itoa(int(n))+`","token_type":"Bearer","expires_in":`+ttl+`,"scope":"pos_integration"}`)(w, r)
			return
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, bad := ts.revoked.Load(tok); bad || tok == "" {
			answer(401, "", problem401)(w, r)
			return
		}
		answer(200, "", okStart)(w, r)
	})
	return ts
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (ts *tokenServer) tokensUsed() []string {
	var out []string
	for _, r := range ts.requests() {
		if r.Path != "/connect/token" {
			out = append(out, strings.TrimPrefix(r.Auth, "Bearer "))
		}
	}
	return out
}

// TestTokenCachedUntilFiveMinutesBeforeExpiry: one token serves every call
// until 5 minutes before it expires, by the client's clock; then a new one
// is fetched.
func TestTokenCachedUntilFiveMinutesBeforeExpiry(t *testing.T) {
	ts := newTokenServer(t, "3600")
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	c, err := client.New(ts.srv.URL, client.WithCredentials("till", "s3cret", "pos_integration"), client.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := func() {
		t.Helper()
		if _, err := c.StartInteraction(ctx, "clover", startReq()); err != nil {
			t.Fatal(err)
		}
	}
	call()
	call()
	clock.Advance(55*time.Minute - time.Second) // 5 min 1 s before expiry
	call()
	if n := ts.issued.Load(); n != 1 {
		t.Fatalf("%d tokens fetched, want 1", n)
	}
	clock.Advance(time.Second) // exactly 5 minutes before expiry
	call()
	call()
	if n := ts.issued.Load(); n != 2 {
		t.Fatalf("%d tokens fetched, want 2", n)
	}
	if got := strings.Join(ts.tokensUsed(), ","); got != "tok-1,tok-1,tok-1,tok-2,tok-2" {
		t.Fatalf("tokens sent: %s", got)
	}
}

// TestShortTokensRenewAtHalfLife: a token living 10 minutes or less is
// renewed after half its life, not fetched on every call.
func TestShortTokensRenewAtHalfLife(t *testing.T) {
	ts := newTokenServer(t, "120")
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	c, _ := client.New(ts.srv.URL, client.WithCredentials("till", "s3cret", "pos_integration"), client.WithClock(clock.Now))
	c.StartInteraction(context.Background(), "clover", startReq())
	clock.Advance(59 * time.Second)
	c.StartInteraction(context.Background(), "clover", startReq())
	clock.Advance(time.Second)
	c.StartInteraction(context.Background(), "clover", startReq())
	if got := strings.Join(ts.tokensUsed(), ","); got != "tok-1,tok-1,tok-2" {
		t.Fatalf("tokens sent: %s", got)
	}
}

// TestTokenFetchedOnceBy401: a 401 drops the cached token and the call is
// sent once more with a new one; a second 401 is the answer.
func TestTokenFetchedOnceBy401(t *testing.T) {
	ts := newTokenServer(t, "3600")
	c, _ := client.New(ts.srv.URL, client.WithCredentials("till", "s3cret", "pos_integration"))
	ctx := context.Background()
	if _, err := c.StartInteraction(ctx, "clover", startReq()); err != nil {
		t.Fatal(err)
	}
	ts.revoked.Store("tok-1", true)
	if _, err := c.StartInteraction(ctx, "clover", startReq()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ts.tokensUsed(), ","); got != "tok-1,tok-1,tok-2" {
		t.Fatalf("tokens sent: %s", got)
	}
	// Every token refused: one refresh, then the 401.
	ts.revoked.Store("tok-2", true)
	ts.revoked.Store("tok-3", true)
	_, err := c.StartInteraction(ctx, "clover", startReq())
	if !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("%v: want ErrUnauthorized", err)
	}
	if got := strings.Join(ts.tokensUsed(), ","); got != "tok-1,tok-1,tok-2,tok-2,tok-3" {
		t.Fatalf("tokens sent: %s", got)
	}
}

// TestConcurrentCallsFetchOneToken: calls that start together wait for one
// token fetch.
func TestConcurrentCallsFetchOneToken(t *testing.T) {
	ts := newTokenServer(t, "3600")
	c, _ := client.New(ts.srv.URL, client.WithCredentials("till", "s3cret", "pos_integration"))
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.StartInteraction(context.Background(), "clover", startReq()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := ts.issued.Load(); n != 1 {
		t.Fatalf("%d tokens fetched, want 1", n)
	}
}

// TestBadCredentials: the token endpoint's refusal is the call's error, an
// *Error with the OAuth error.
func TestBadCredentials(t *testing.T) {
	ts := newTokenServer(t, "3600")
	c, _ := client.New(ts.srv.URL, client.WithCredentials("till", "wrong", "pos_integration"))
	_, err := c.StartInteraction(context.Background(), "clover", startReq())
	var pe *client.Error
	if !errors.As(err, &pe) || pe.OAuthError != "invalid_client" || !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("%v", err)
	}
	if n := len(ts.requests()); n != 1 {
		t.Fatalf("%d requests, want the token request alone", n)
	}
}

// TestPUTAndDELETEAreRetried: PUT and DELETE are idempotent by definition
// and retried like GET.
func TestPUTAndDELETEAreRetried(t *testing.T) {
	okClient := `{"data":{"clientId":"c","name":"","posSystemId":"p","scopes":[],"companyIds":[],"disabled":false,"createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z","rateLimit":null}}`
	s := newScript(t, drop, answer(503, "", problem503), answer(200, "", okClient))
	c := s.client(t)
	if _, err := c.Admin.PutClientRateLimit(context.Background(), "c", client.RateLimit{RequestsPerSecond: 1, Burst: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Admin.DeleteClientRateLimit(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}
	got := s.requests()
	if len(got) != 4 || got[0].Method != "PUT" || got[2].Method != "PUT" || got[3].Method != "DELETE" || got[0].Body != got[2].Body {
		t.Fatalf("%+v", got)
	}
}
