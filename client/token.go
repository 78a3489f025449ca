package client

import (
	"context"
	"net/url"
	"sync"
	"time"
)

// TokenSource gives the client the access token to send.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// Invalidator is a TokenSource that can drop a token posgate refused (401),
// so that the next Token fetches a new one.
type Invalidator interface {
	Invalidate(token string)
}

type staticToken string

func (s staticToken) Token(context.Context) (string, error) { return string(s), nil }

// refreshBefore is how long before its expiry a cached token is replaced, so
// that a token never expires on its way to posgate.
const refreshBefore = 5 * time.Minute

// CredentialsSource fetches tokens by the client credentials grant
// (docs/api.md §3.2) and caches the current one. WithCredentials makes one;
// its zero value is not usable.
type CredentialsSource struct {
	c                 *Client
	id, secret, scope string

	sem     chan struct{} // one fetch at a time; a waiter can give up
	once    sync.Once
	mu      sync.Mutex
	token   string
	renewAt time.Time
}

func (s *CredentialsSource) lock(ctx context.Context) error {
	s.once.Do(func() { s.sem = make(chan struct{}, 1) })
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cached answers the current token while it is fresh.
func (s *CredentialsSource) cached() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.c.now().Before(s.renewAt) {
		return s.token, true
	}
	return "", false
}

// Token answers the cached token, or fetches a new one when there is none or
// it expires within 5 minutes (within half its lifetime for tokens living 10
// minutes or less).
func (s *CredentialsSource) Token(ctx context.Context) (string, error) {
	if t, ok := s.cached(); ok {
		return t, nil
	}
	if err := s.lock(ctx); err != nil {
		return "", err
	}
	defer func() { <-s.sem }()
	if t, ok := s.cached(); ok { // another call fetched it meanwhile
		return t, nil
	}
	issued := s.c.now()
	tok, err := s.c.RequestToken(ctx, TokenRequest{ClientID: s.id, ClientSecret: s.secret, Scope: s.scope})
	if err != nil {
		return "", err
	}
	life := time.Duration(tok.ExpiresIn) * time.Second
	margin := refreshBefore
	if life <= 2*refreshBefore {
		margin = life / 2
	}
	s.mu.Lock()
	s.token, s.renewAt = tok.AccessToken, issued.Add(life-margin)
	s.mu.Unlock()
	return tok.AccessToken, nil
}

// Invalidate drops token if it is still the cached one.
func (s *CredentialsSource) Invalidate(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == token {
		s.token = ""
	}
}

// TokenRequest is a client credentials grant (docs/api.md §3.2); the client
// authenticates with HTTP Basic.
type TokenRequest struct {
	ClientID, ClientSecret string
	// Scope lists scopes separated by spaces; empty asks for all of the
	// client's.
	Scope string
}

// RequestToken asks the token endpoint for an access token (operation
// requestToken). It is retried like an idempotent call: a token request
// changes nothing on the server.
func (c *Client) RequestToken(ctx context.Context, r TokenRequest) (*Token, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if r.Scope != "" {
		form.Set("scope", r.Scope)
	}
	var out Token
	err := c.do(ctx, request{method: "POST", base: c.authURL, path: "/connect/token", form: form, safe: true,
		noAuth: true, basic: &[2]string{r.ClientID, r.ClientSecret}}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetDiscovery answers the identity provider's metadata (operation
// getDiscovery, docs/api.md §3.5).
func (c *Client) GetDiscovery(ctx context.Context) (*Discovery, error) {
	var out Discovery
	err := c.do(ctx, request{method: "GET", base: c.authURL, path: "/.well-known/openid-configuration", noAuth: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetJWKS answers the keys that verify posgate's tokens (operation getJwks).
func (c *Client) GetJWKS(ctx context.Context) (*JWKS, error) {
	var out JWKS
	err := c.do(ctx, request{method: "GET", base: c.authURL, path: "/.well-known/openid-configuration/jwks", noAuth: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetAuthorizationServerMetadata answers the identity provider's RFC 8414
// metadata, the same as GetDiscovery at the OAuth path (operation
// getAuthorizationServerMetadata).
func (c *Client) GetAuthorizationServerMetadata(ctx context.Context) (*Discovery, error) {
	var out Discovery
	err := c.do(ctx, request{method: "GET", base: c.authURL, path: "/.well-known/oauth-authorization-server", noAuth: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// AuthorizeRequest is the start of a browser flow (docs/api.md §21.3):
// ResponseType "code" (with PKCE: CodeChallenge, the base64url SHA-256 of
// the verifier, and CodeChallengeMethod "S256") or "token" (implicit).
type AuthorizeRequest struct {
	ResponseType, ClientID, RedirectURI, Scope, State string
	CodeChallenge, CodeChallengeMethod, Prompt        string
}

// AuthorizeURL is the address to open in a person's browser (operation
// authorize). It is the only operation without a call: the authorization
// endpoint answers a person, not a program (a sign-in page, then a
// redirect to the client's redirect URI carrying the code or token), so a
// program sends the browser there and exchanges the code it gets back with
// ExchangeCode.
func (c *Client) AuthorizeURL(r AuthorizeRequest) string {
	q := url.Values{}
	setIf(q, "response_type", r.ResponseType)
	setIf(q, "client_id", r.ClientID)
	setIf(q, "redirect_uri", r.RedirectURI)
	setIf(q, "scope", r.Scope)
	setIf(q, "state", r.State)
	setIf(q, "code_challenge", r.CodeChallenge)
	setIf(q, "code_challenge_method", r.CodeChallengeMethod)
	setIf(q, "prompt", r.Prompt)
	return c.authURL + "/connect/authorize?" + q.Encode()
}

// CodeExchange is an authorization code (or a refresh token) to exchange at
// the token endpoint. ClientSecret is empty for a public client (a browser
// application), which identifies itself by ClientID alone.
type CodeExchange struct {
	ClientID, ClientSecret string
	Code, RedirectURI      string
	CodeVerifier           string
}

// ExchangeCode exchanges the code of the authorization code flow for an
// access token and a refresh token (operation requestToken, grant
// authorization_code). A code is good once, so the call is not retried.
func (c *Client) ExchangeCode(ctx context.Context, r CodeExchange) (*Token, error) {
	form := url.Values{"grant_type": {"authorization_code"}}
	setIf(form, "code", r.Code)
	setIf(form, "redirect_uri", r.RedirectURI)
	setIf(form, "code_verifier", r.CodeVerifier)
	return c.browserToken(ctx, r.ClientID, r.ClientSecret, form)
}

// RefreshToken exchanges a refresh token of the browser flows for a new
// access token (operation requestToken, grant refresh_token); not retried,
// as the refresh token may be replaced by the answer's.
func (c *Client) RefreshToken(ctx context.Context, clientID, clientSecret, refreshToken string) (*Token, error) {
	form := url.Values{"grant_type": {"refresh_token"}}
	setIf(form, "refresh_token", refreshToken)
	return c.browserToken(ctx, clientID, clientSecret, form)
}

func (c *Client) browserToken(ctx context.Context, clientID, clientSecret string, form url.Values) (*Token, error) {
	r := request{method: "POST", base: c.authURL, path: "/connect/token", form: form, noAuth: true}
	if clientSecret != "" {
		r.basic = &[2]string{clientID, clientSecret}
	} else {
		form.Set("client_id", clientID)
	}
	var out Token
	if err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
