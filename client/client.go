// Package client is the Go client of posgate: its POS API, its identity
// provider (OAuth2 client credentials) and its operator API.
//
// A Client is made once and shared by every goroutine:
//
//	c, err := client.New("https://posgate.example.com",
//		client.WithCredentials("my-pos", secret, "pos_integration"))
//	res, err := c.StartInteraction(ctx, "clover", client.StartInteractionRequest{
//		PosLocationID: "LOC123", TerminalID: "TERM-01"})
//
// # Shape
//
// The POS API and the identity provider are methods of *Client named after
// their operations in the OpenAPI document (StartInteraction, SearchCoupons,
// CreateTransaction, RequestToken, …); the operator API (/admin/v1) is the
// same kind of methods on c.Admin (c.Admin.CreateCompany, …). Every method
// takes a context.Context first, then the path parameters in the order of
// the path, then the request body or the query; it answers the "data" of the
// answer's envelope, unwrapped.
//
// # Tokens
//
// WithCredentials makes the client fetch its own access tokens at the token
// endpoint: a token is cached and reused until 5 minutes before it expires
// (half its lifetime for tokens living 10 minutes or less), and fetched again
// once when the API answers 401 (a key rotation, a re-enabled client). Calls
// that need a token at the same moment wait for one fetch. WithToken sends a
// fixed token instead; WithTokenSource plugs in any other source.
//
// # Browser flows
//
// The authorization endpoint (/connect/authorize, docs/api.md §21.3) answers
// a person in a browser, not a program: a sign-in page, then a redirect to
// the application's redirect URI. So the client has no call for it:
// AuthorizeURL builds the address to send the browser to, and ExchangeCode
// and RefreshToken trade what comes back at the token endpoint.
//
// # Retries and time limits
//
// A call is retried with exponential backoff and jitter when the connection
// fails or times out and when posgate answers 429 or 503 (after the seconds
// of Retry-After when it gives them), but only when repeating it is safe:
// GET, PUT and DELETE, and the POSTs that take an Idempotency-Key. The
// client sends every such POST with an Idempotency-Key of its own, one per
// call and the same on each of its attempts (WithIdempotencyKey chooses it),
// so a retried sale is recorded once (docs/api.md §14); a 409 with
// Retry-After (that key's first attempt still running) is waited out the
// same way. The token request is retried too: it changes nothing on the
// server. A POST without a key (the carousel impression) is never retried.
// The defaults fit a checkout: 5
// seconds per attempt and 15 in all (WithTimeouts); a context deadline
// shorter than that wins.
//
// # Errors
//
// posgate's errors are problem documents (docs/api.md §2.6); a call answers
// them as *Error, which matches ErrNotFound, ErrConflict, ErrForbidden,
// ErrValidation (with the field messages in Error.Errors) and the others
// with errors.Is. The token endpoint's OAuth errors are *Error too, with
// OAuthError set.
//
// # The terminal channel
//
// WatchTerminal keeps a till's channel (docs/api.md §25) open and calls a
// function with each event, reconnecting with Last-Event-ID when the
// connection ends, so that the function sees every event once, in order:
//
//	err := c.WatchTerminal(ctx, "clover", "LOC123", "TERM-05", "", func(ev *client.TerminalEvent) error {
//		log.Printf("%s %s %s", ev.ID, ev.Type, ev.Data)
//		return nil
//	})
//
// GetTerminalEvents opens one connection without reconnecting.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Version is the client's version, sent in its User-Agent.
const Version = "1.0.0"

// Default time limits and retry policy: they fit a till, where a customer
// waits for the answer and the cashier needs a verdict within seconds.
const (
	DefaultAttemptTimeout = 5 * time.Second
	DefaultTotalTimeout   = 15 * time.Second
)

// DefaultRetry is the retry policy of a client made without WithRetry.
var DefaultRetry = RetryPolicy{MaxAttempts: 4, BaseDelay: 200 * time.Millisecond, MaxDelay: 2 * time.Second}

// RetryPolicy says how often and how long apart a safe call is tried.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included; 1 turns
	// retries off.
	MaxAttempts int
	// BaseDelay is the wait before the second attempt; it doubles with each
	// attempt up to MaxDelay, and each wait is drawn at random between half
	// and all of it, so that tills that failed together do not come back
	// together.
	BaseDelay, MaxDelay time.Duration
}

// Client calls one posgate installation. It is safe for concurrent use.
type Client struct {
	// Admin holds the operator API (/admin/v1); it needs a token of scope
	// admin.
	Admin *Admin

	baseURL, authURL string
	hc               *http.Client
	tokens           TokenSource
	userAgent        string
	retry            RetryPolicy
	attemptTimeout   time.Duration
	totalTimeout     time.Duration
	now              func() time.Time
	newKey           func() string
	credentials      *credentials
}

// credentials are those WithCredentials gave, turned into a token source
// once the client exists.
type credentials struct{ id, secret, scope string }

// Option configures a Client.
type Option func(*Client) error

// New returns a client of the posgate at baseURL (the API's public address,
// docs/api.md §1.1, e.g. "https://posgate.example.com").
func New(baseURL string, opts ...Option) (*Client, error) {
	base, err := cleanBase(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{
		baseURL:        base,
		authURL:        base,
		hc:             &http.Client{},
		userAgent:      "posgate-go/" + Version,
		retry:          DefaultRetry,
		attemptTimeout: DefaultAttemptTimeout,
		totalTimeout:   DefaultTotalTimeout,
		now:            time.Now,
		newKey:         randomKey,
	}
	c.Admin = &Admin{c: c}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.credentials != nil && c.tokens == nil {
		c.tokens = &CredentialsSource{c: c, id: c.credentials.id, secret: c.credentials.secret, scope: c.credentials.scope}
	}
	return c, nil
}

func cleanBase(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("posgate client: %q is not an http(s) URL", u)
	}
	return strings.TrimRight(u, "/"), nil
}

// WithAuthURL sets the identity provider's address when it differs from the
// API's (posgate's --auth-listen, docs/api.md §1.1).
func WithAuthURL(authURL string) Option {
	return func(c *Client) error {
		u, err := cleanBase(authURL)
		c.authURL = u
		return err
	}
}

// WithHTTPClient makes the client send its requests with hc (its Transport,
// proxy and TLS settings). hc's own Timeout should be 0: the client sets the
// time limits of each attempt itself (WithTimeouts).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("posgate client: nil *http.Client")
		}
		c.hc = hc
		return nil
	}
}

// WithCredentials makes the client get its access tokens itself, by the
// client credentials grant with the API client's id and secret, asking for
// scopes (all of the client's when none are given).
func WithCredentials(clientID, clientSecret string, scopes ...string) Option {
	return func(c *Client) error {
		c.credentials = &credentials{id: clientID, secret: clientSecret, scope: strings.Join(scopes, " ")}
		return nil
	}
}

// WithTokenSource makes the client take its access tokens from ts instead.
func WithTokenSource(ts TokenSource) Option {
	return func(c *Client) error {
		c.tokens = ts
		return nil
	}
}

// WithToken makes the client send one fixed access token (for scripts and
// tests; it is never refreshed).
func WithToken(accessToken string) Option {
	return WithTokenSource(staticToken(accessToken))
}

// WithUserAgent puts product (e.g. "acme-till/4.2") before the client's
// own User-Agent, so that posgate's logs tell integrations apart.
func WithUserAgent(product string) Option {
	return func(c *Client) error {
		if product != "" {
			c.userAgent = product + " posgate-go/" + Version
		}
		return nil
	}
}

// WithTimeouts sets the time limit of each attempt and of a whole call with
// its retries and waits; 0 leaves a limit out.
func WithTimeouts(perAttempt, total time.Duration) Option {
	return func(c *Client) error {
		c.attemptTimeout, c.totalTimeout = perAttempt, total
		return nil
	}
}

// WithRetry sets the retry policy.
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) error {
		if p.MaxAttempts < 1 {
			p.MaxAttempts = 1
		}
		c.retry = p
		return nil
	}
}

// WithClock gives the client the clock it judges token lifetimes by (tests
// set one they can move).
func WithClock(now func() time.Time) Option {
	return func(c *Client) error {
		c.now = now
		return nil
	}
}

type keyCtx struct{}

// WithIdempotencyKey returns a context whose call sends key as its
// Idempotency-Key instead of a fresh random one: a till that stores the key
// with a sale it could not confirm can send the sale again after a restart
// and still have it recorded once (docs/api.md §14). The key only applies to
// POSTs that take one.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, keyCtx{}, key)
}

// randomKey is a fresh Idempotency-Key: 128 random bits in hex.
func randomKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// request is one operation to send.
type request struct {
	method string
	base   string // c.baseURL or c.authURL
	path   string // escaped
	query  url.Values
	body   any        // JSON-encoded when not nil
	form   url.Values // the token endpoint's form
	// idempotencyKey marks the POSTs that take an Idempotency-Key.
	idempotencyKey bool
	// safe marks a POST that may be repeated without a key (the token
	// request: it changes nothing on the server).
	safe bool
	// noAuth leaves the bearer token out (identity provider, carousel page
	// routes, health).
	noAuth bool
	basic  *[2]string
	// noRetry answers the first outcome (the readiness probe).
	noRetry bool
	// raw receives the body as it is instead of decoding an envelope.
	raw *[]byte
	// envelope says the answer wraps its result in {"data": …}.
	envelope bool
	// header holds extra request headers (If-None-Match); answered, when
	// not nil, receives the answer's status and headers.
	header   http.Header
	answered *answerMeta
}

// answerMeta is an answer's status and headers.
type answerMeta struct {
	status int
	header http.Header
}

// envelope is posgate's answer wrapper (docs/api.md §2.5).
type envelope[T any] struct {
	Data T `json:"data"`
}

// call sends r and answers the data of its envelope.
func call[T any](ctx context.Context, c *Client, r request) (*T, error) {
	var out T
	r.envelope = true
	if err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// path joins segments, escaping each parameter.
func path(format string, params ...string) string {
	esc := make([]any, len(params))
	for i, p := range params {
		esc[i] = url.PathEscape(p)
	}
	return fmt.Sprintf(format, esc...)
}

// do sends r until it is answered, retrying when that is safe, and decodes
// the answer into out.
func (c *Client) do(ctx context.Context, r request, out any) error {
	if c.totalTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.totalTimeout)
		defer cancel()
	}
	var body []byte
	contentType := ""
	switch {
	case r.body != nil:
		b, err := json.Marshal(r.body)
		if err != nil {
			return fmt.Errorf("posgate client: encoding the request: %w", err)
		}
		body, contentType = b, "application/json"
	case r.form != nil:
		body, contentType = []byte(r.form.Encode()), "application/x-www-form-urlencoded"
	}
	key := ""
	if r.idempotencyKey {
		key, _ = ctx.Value(keyCtx{}).(string)
		if key == "" {
			key = c.newKey()
		}
	}
	retryable := r.method == http.MethodGet || r.method == http.MethodPut || r.method == http.MethodDelete ||
		r.method == http.MethodHead || key != "" || r.safe
	retryable = retryable && !r.noRetry
	target := r.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	refreshed := false
	for attempt := 1; ; attempt++ {
		token := ""
		if !r.noAuth && c.tokens != nil {
			t, err := c.tokens.Token(ctx)
			if err != nil {
				return fmt.Errorf("posgate client: getting an access token: %w", err)
			}
			token = t
		}
		status, header, respBody, err := c.send(ctx, r.method, target, contentType, body, token, key, r.basic, r.header)
		last := attempt >= c.retry.MaxAttempts || !retryable
		if err != nil {
			if ctx.Err() != nil || last {
				return fmt.Errorf("posgate client: %s %s: %w", r.method, r.path, err)
			}
			if werr := c.wait(ctx, c.backoff(attempt)); werr != nil {
				return fmt.Errorf("posgate client: %s %s: %w", r.method, r.path, err)
			}
			continue
		}
		if status == http.StatusUnauthorized && token != "" && !refreshed {
			if inv, ok := c.tokens.(Invalidator); ok {
				inv.Invalidate(token)
				refreshed = true
				attempt-- // the refresh is not one of the retries
				continue
			}
		}
		if status >= 400 {
			apiErr := newError(r.method, r.path, status, header, respBody)
			again := status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable ||
				// another attempt with this key is still running (docs/api.md §14)
				status == http.StatusConflict && key != "" && header.Get("Retry-After") != ""
			if !again || last {
				return apiErr
			}
			d := c.backoff(attempt)
			if apiErr.RetryAfter > 0 {
				d = apiErr.RetryAfter
			}
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
				return apiErr // the wait would outlast the call: answer now
			}
			if c.wait(ctx, d) != nil {
				return apiErr
			}
			continue
		}
		if r.answered != nil {
			*r.answered = answerMeta{status: status, header: header}
		}
		if r.raw != nil {
			*r.raw = respBody
			return nil
		}
		if out == nil {
			return nil
		}
		var dst any = out
		if r.envelope {
			dst = &envelope[any]{Data: out}
		}
		if err := json.Unmarshal(respBody, dst); err != nil {
			return fmt.Errorf("posgate client: %s %s: decoding the answer: %w", r.method, r.path, err)
		}
		return nil
	}
}

// send makes one attempt, reading the whole answer within its time limit.
func (c *Client) send(ctx context.Context, method, target, contentType string, body []byte, token, key string, basic *[2]string, extra http.Header) (int, http.Header, []byte, error) {
	if c.attemptTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.attemptTimeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if basic != nil {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, b, nil
}

// backoff is the wait after attempt (1-based) failed: exponential, capped,
// with jitter between half and all of it.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.retry.BaseDelay
	for i := 1; i < attempt && d < c.retry.MaxDelay; i++ {
		d *= 2
	}
	if c.retry.MaxDelay > 0 && d > c.retry.MaxDelay {
		d = c.retry.MaxDelay
	}
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + time.Duration(mathrand.Int64N(int64(d-half)+1))
}

// wait sleeps d unless ctx ends first.
func (c *Client) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfter reads Retry-After as seconds or as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
