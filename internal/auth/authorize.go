package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
)

// The browser flows (docs/api.md §21.3): GET {auth_url}/connect/authorize
// for the implicit flow (response_type=token) and the authorization code
// flow with PKCE (response_type=code, S256 only), after the person signs
// in; the token endpoint's authorization_code and refresh_token grants.

// pkceValue is the syntax of a code verifier (RFC 7636 §4.1); an S256
// challenge is 43 characters of the same alphabet.
var pkceValue = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// authzError is an error of an authorization request that goes back to the
// client's redirect URI (RFC 6749 §4.1.2.1, §4.2.2.1).
type authzError struct{ code, desc string }

// AuthorizeHandler serves GET {auth_url}/connect/authorize. An unknown
// client or a redirect URI that is not registered is shown as a page and
// never redirected to (RFC 6749 §4.1.2.1); every other error goes back to
// the redirect URI with "state". Mount it for GET.
func (a *Auth) AuthorizeHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := a.browser
		if b == nil {
			http.NotFound(w, r)
			return
		}
		securityHeaders(w)
		q := r.URL.Query()
		for k, v := range q {
			if len(v) > 1 && k != "resource" {
				a.writePage(w, http.StatusBadRequest, page{Title: "Sign-in request refused", Error: "The parameter " + k + " was sent more than once."})
				return
			}
		}
		c, redirectURI, msg, err := a.authzClient(r.Context(), q.Get("client_id"), q.Get("redirect_uri"))
		if err != nil {
			a.serverError(w, r, err)
			return
		}
		if msg != "" {
			a.writePage(w, http.StatusBadRequest, page{Title: "Sign-in request refused", Error: msg})
			return
		}
		responseType := q.Get("response_type")
		fragment := responseType == "token"
		fail := func(e authzError) {
			v := url.Values{"error": {e.code}, "error_description": {e.desc}}
			if s := q.Get("state"); s != "" {
				v.Set("state", s)
			}
			if !fragment {
				v.Set("iss", a.issuer)
			}
			http.Redirect(w, r, withResponse(redirectURI, v, fragment), http.StatusFound)
		}
		switch responseType {
		case "":
			fail(authzError{"invalid_request", "The response_type parameter is required."})
			return
		case "token", "code":
		default:
			fail(authzError{"unsupported_response_type", "Only the response types code and token are supported."})
			return
		}
		scopes, e := authzScopes(c, q.Get("scope"))
		if e != nil {
			fail(*e)
			return
		}
		challenge := q.Get("code_challenge")
		if responseType == "code" {
			switch method := q.Get("code_challenge_method"); {
			case challenge == "":
				fail(authzError{"invalid_request", "PKCE is required: send code_challenge and code_challenge_method=S256."})
				return
			case method != "S256":
				fail(authzError{"invalid_request", "The code_challenge_method must be S256."})
				return
			case len(challenge) != 43 || !pkceValue.MatchString(challenge):
				fail(authzError{"invalid_request", "The code_challenge must be the base64url SHA-256 of the code verifier (43 characters)."})
				return
			}
		}
		p, err := a.SignedIn(r)
		if err != nil {
			a.serverError(w, r, err)
			return
		}
		if p == nil {
			if q.Get("prompt") == "none" {
				fail(authzError{"login_required", "The person is not signed in."})
				return
			}
			// The sign-in form itself, which comes back here once the
			// person has signed in.
			a.writePage(w, http.StatusOK, page{Title: "Sign in", Action: LoginPath, CSRF: a.CSRFToken(w, r), ReturnURL: r.URL.RequestURI(), Login: true})
			return
		}
		v := url.Values{}
		if s := q.Get("state"); s != "" {
			v.Set("state", s)
		}
		if responseType == "token" {
			token, _, err := a.IssueForPerson(r.Context(), c, p, scopes)
			if err != nil {
				a.serverError(w, r, err)
				return
			}
			v.Set("access_token", token)
			v.Set("token_type", "Bearer")
			v.Set("expires_in", itoa(int64(a.ttl/time.Second)))
			v.Set("scope", strings.Join(scopes, " "))
			a.log.Info("auth: token issued by the implicit flow", "client_id", c.ID, "person", p.ID)
			http.Redirect(w, r, withResponse(redirectURI, v, true), http.StatusFound)
			return
		}
		code, err := randomToken()
		if err != nil {
			a.serverError(w, r, err)
			return
		}
		if err := b.people.CreateAuthCode(r.Context(), &posgate.AuthCode{CodeHash: hashToken(code), FamilyID: uuid.NewString(), ClientID: c.ID,
			PersonID: p.ID, RedirectURI: redirectURI, Scopes: scopes, CodeChallenge: challenge, ExpiresAt: a.now().Add(b.codeTTL)}); err != nil {
			a.serverError(w, r, err)
			return
		}
		v.Set("code", code)
		v.Set("iss", a.issuer) // RFC 9207
		http.Redirect(w, r, withResponse(redirectURI, v, false), http.StatusFound)
	})
}

// authzClient finds the client of an authorization request and the redirect
// URI to answer at: the one given, when registered exactly, or the only
// one registered when none is given. msg, when not empty, is the page to
// show instead (never a redirect).
func (a *Auth) authzClient(ctx context.Context, clientID, redirectURI string) (*posgate.Client, string, string, error) {
	if clientID == "" {
		return nil, "", "The client_id parameter is required.", nil
	}
	var c *posgate.Client
	if posgate.ValidKey(clientID) {
		found, err := a.store.FindClient(ctx, clientID)
		switch {
		case err == nil:
			c = found
		case !errors.Is(err, posgate.ErrNotFound):
			return nil, "", "", err
		}
	}
	if c == nil || c.Disabled {
		return nil, "", "The client '" + clientID + "' is unknown or disabled.", nil
	}
	uris, err := a.browser.people.ClientRedirectURIs(ctx, c.ID)
	if err != nil {
		return nil, "", "", err
	}
	switch {
	case len(uris) == 0:
		return nil, "", "The client '" + clientID + "' is not registered for the browser flows.", nil
	case redirectURI == "" && len(uris) == 1:
		return c, uris[0], "", nil
	case redirectURI == "":
		return nil, "", "The redirect_uri parameter is required: the client has several registered.", nil
	case !slices.Contains(uris, redirectURI):
		return nil, "", "The redirect_uri '" + redirectURI + "' is not registered for the client '" + clientID + "'.", nil
	}
	return c, redirectURI, "", nil
}

// authzScopes decides the scopes of a browser flow's token: those
// requested, all of which the client must be allowed; none requested means
// service_api (the interface's scope for the implicit flow) when the client
// has it, else all of the client's.
func authzScopes(c *posgate.Client, requested string) ([]string, *authzError) {
	want := strings.Fields(requested)
	if len(want) == 0 {
		want = c.Scopes
		if c.HasScope(posgate.ScopeServiceAPI) {
			want = []string{posgate.ScopeServiceAPI}
		}
	}
	var granted []string
	for _, s := range want {
		switch {
		case !slices.Contains(posgate.KnownScopes, s):
			return nil, &authzError{"invalid_scope", "A requested scope is unknown; known scopes: " + strings.Join(posgate.KnownScopes, " ") + "."}
		case !c.HasScope(s):
			return nil, &authzError{"invalid_scope", "The client may not request the scope " + s + "."}
		case !slices.Contains(granted, s):
			granted = append(granted, s)
		}
	}
	return granted, nil
}

// withResponse adds v to the redirect URI: to its query (the code flow and
// its errors) or as its fragment (the implicit flow, RFC 6749 §4.2.2).
func withResponse(redirectURI string, v url.Values, fragment bool) string {
	if fragment {
		return redirectURI + "#" + v.Encode()
	}
	u, err := url.Parse(redirectURI)
	if err != nil { // registered URIs parse (credential.ValidRedirectURI)
		return redirectURI
	}
	q := u.Query()
	for k, vs := range v {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// publicClient is the client of an authorization_code or refresh_token
// request that sends no secret: a client registered for the browser flows
// (a browser cannot keep a secret), whose codes PKCE protects.
func (a *Auth) publicClient(ctx context.Context, id string) (*posgate.Client, *oauthError) {
	if id == "" {
		return nil, invalidClient("Client authentication is required: send client_id (a browser client) or client credentials.")
	}
	refused := invalidClient("The client is unknown, disabled, or not a browser client; it must authenticate.")
	if !posgate.ValidKey(id) {
		return nil, refused
	}
	c, err := a.store.FindClient(ctx, id)
	if errors.Is(err, posgate.ErrNotFound) {
		return nil, refused
	}
	var uris []string
	if err == nil {
		uris, err = a.browser.people.ClientRedirectURIs(ctx, id)
	}
	if err != nil {
		a.log.Error("auth: looking up a client failed", "client_id", id, "err", err)
		return nil, errServer
	}
	if c.Disabled || len(uris) == 0 {
		return nil, refused
	}
	return c, nil
}

func invalidGrant(desc string) *oauthError {
	return oauthErr(http.StatusBadRequest, "invalid_grant", desc)
}

// codeGrant exchanges an authorization code (RFC 6749 §4.1.3, RFC 7636
// §4.6) for an access token and the first refresh token of its family. A
// code presented again revokes that family; any other refusal leaves the
// code as it was (it is read, checked, and only then spent).
func (a *Auth) codeGrant(ctx context.Context, c *posgate.Client, form url.Values) (*tokenResponse, *oauthError) {
	b := a.browser
	code, verifier := form.Get("code"), form.Get("code_verifier")
	switch {
	case code == "":
		return nil, invalidRequest("The code parameter is required.")
	case verifier == "":
		return nil, invalidRequest("The code_verifier parameter is required (PKCE).")
	case len(code) > 256:
		return nil, invalidGrant("The authorization code is invalid.")
	}
	hash := hashToken(code)
	ac, err := b.people.FindAuthCode(ctx, hash)
	if oerr := a.codeRefusal(ctx, c, ac, err); oerr != nil {
		return nil, oerr
	}
	switch {
	case ac.ClientID != c.ID:
		return nil, invalidGrant("The authorization code was issued to another client.")
	case !a.now().Before(ac.ExpiresAt):
		return nil, invalidGrant("The authorization code has expired.")
	case form.Has("redirect_uri") && form.Get("redirect_uri") != ac.RedirectURI:
		return nil, invalidGrant("The redirect_uri differs from the one of the authorization request.")
	case !pkceValue.MatchString(verifier) || sha256B64(verifier) != ac.CodeChallenge:
		return nil, invalidGrant("The code_verifier does not match the code_challenge.")
	}
	p, oerr := a.activePerson(ctx, ac.PersonID)
	if oerr != nil {
		return nil, oerr
	}
	// Spend it: of concurrent exchanges one finds it unused, the others
	// are replays.
	ac, err = b.people.UseAuthCode(ctx, hash)
	if oerr := a.codeRefusal(ctx, c, ac, err); oerr != nil {
		return nil, oerr
	}
	return a.personTokens(ctx, c, p, ac.FamilyID, ac.Scopes)
}

// codeRefusal is the answer to an unknown code, a failed read, or a code
// that was exchanged already (whose family it then revokes); nil otherwise.
func (a *Auth) codeRefusal(ctx context.Context, c *posgate.Client, ac *posgate.AuthCode, err error) *oauthError {
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
		return invalidGrant("The authorization code is invalid.")
	case err != nil:
		a.log.Error("auth: using an authorization code failed", "err", err)
		return errServer
	case ac.Used:
		if err := a.browser.people.RevokeRefreshFamily(ctx, ac.FamilyID); err != nil {
			a.log.Error("auth: revoking a refresh token family failed", "err", err)
			return errServer
		}
		a.log.Warn("auth: an authorization code was presented twice; its refresh tokens are revoked", "client_id", c.ID)
		return invalidGrant("The authorization code was used already; the refresh tokens issued for it are revoked.")
	}
	return nil
}

// refreshGrant exchanges a refresh token (RFC 6749 §6) for a new access
// token and a new refresh token of the same family; the old one is spent.
// A spent one presented again revokes the family (RFC 9700 §4.14.2); any
// other refusal leaves the token as it was (it is read, checked, and only
// then spent), so that a refused request changes nothing.
func (a *Auth) refreshGrant(ctx context.Context, c *posgate.Client, form url.Values) (*tokenResponse, *oauthError) {
	b := a.browser
	token := form.Get("refresh_token")
	if token == "" {
		return nil, invalidRequest("The refresh_token parameter is required.")
	}
	if len(token) > 256 {
		return nil, invalidGrant("The refresh token is invalid.")
	}
	hash := hashToken(token)
	rt, err := b.people.FindRefreshToken(ctx, hash)
	if oerr := a.refreshRefusal(ctx, c, rt, err); oerr != nil {
		return nil, oerr
	}
	switch {
	case rt.ClientID != c.ID:
		return nil, invalidGrant("The refresh token was issued to another client.")
	case !a.now().Before(rt.ExpiresAt):
		return nil, invalidGrant("The refresh token has expired.")
	}
	scopes := rt.Scopes
	if want := strings.Fields(form.Get("scope")); len(want) > 0 {
		for _, s := range want {
			if !slices.Contains(rt.Scopes, s) {
				return nil, oauthErr(http.StatusBadRequest, "invalid_scope", "The scope "+s+" was not granted to the refresh token.")
			}
		}
		scopes = want
	}
	p, oerr := a.activePerson(ctx, rt.PersonID)
	if oerr != nil {
		return nil, oerr
	}
	// Spend it: of concurrent refreshes one finds it unused, the others
	// are replays.
	rt, err = b.people.UseRefreshToken(ctx, hash)
	if oerr := a.refreshRefusal(ctx, c, rt, err); oerr != nil {
		return nil, oerr
	}
	return a.personTokens(ctx, c, p, rt.FamilyID, scopes)
}

// refreshRefusal is the answer to an unknown token, a failed read, a
// revoked token, or a spent one (whose family it then revokes); nil
// otherwise.
func (a *Auth) refreshRefusal(ctx context.Context, c *posgate.Client, rt *posgate.RefreshToken, err error) *oauthError {
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
		return invalidGrant("The refresh token is invalid.")
	case err != nil:
		a.log.Error("auth: using a refresh token failed", "err", err)
		return errServer
	case rt.Revoked:
		return invalidGrant("The refresh token is revoked.")
	case rt.Used:
		if err := a.browser.people.RevokeRefreshFamily(ctx, rt.FamilyID); err != nil {
			a.log.Error("auth: revoking a refresh token family failed", "err", err)
			return errServer
		}
		a.log.Warn("auth: a spent refresh token was presented again; its family is revoked", "client_id", c.ID)
		return invalidGrant("The refresh token was used already; every refresh token of its family is revoked.")
	}
	return nil
}

// activePerson is the person a grant was issued to, unless disabled.
func (a *Auth) activePerson(ctx context.Context, personID string) (*posgate.Person, *oauthError) {
	p, err := a.browser.people.FindPerson(ctx, personID)
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND || (err == nil && p.Disabled):
		return nil, invalidGrant("The person the grant was issued to is disabled.")
	case err != nil:
		a.log.Error("auth: looking up a person failed", "err", err)
		return nil, errServer
	}
	return p, nil
}

// personTokens issues an access token for a person and a new refresh token
// of family.
func (a *Auth) personTokens(ctx context.Context, c *posgate.Client, p *posgate.Person, family string, scopes []string) (*tokenResponse, *oauthError) {
	b := a.browser
	access, _, err := a.IssueForPerson(ctx, c, p, scopes)
	if err != nil {
		a.log.Error("auth: issuing a token failed", "client_id", c.ID, "err", err)
		return nil, errServer
	}
	refresh, err := randomToken()
	if err != nil {
		return nil, errServer
	}
	if err := b.people.CreateRefreshToken(ctx, &posgate.RefreshToken{TokenHash: hashToken(refresh), FamilyID: family, ClientID: c.ID,
		PersonID: p.ID, Scopes: scopes, ExpiresAt: a.now().Add(b.refreshTTL)}); err != nil {
		a.log.Error("auth: storing a refresh token failed", "err", err)
		return nil, errServer
	}
	return &tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(a.ttl.Seconds()), Scope: strings.Join(scopes, " "), RefreshToken: refresh}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
