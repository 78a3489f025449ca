package auth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
)

const (
	contentTypeJSON = "application/json; charset=utf-8"
	formContentType = "application/x-www-form-urlencoded"
	// maxTokenBody caps the token request body; a legitimate one is a few
	// hundred bytes.
	maxTokenBody = 16 << 10
)

// oauthError is an RFC 6749 §5.2 error answer. Descriptions hold only the
// characters §5.2 allows (no quotes, no backslashes).
type oauthError struct {
	status      int
	Code        string        `json:"error"`
	Description string        `json:"error_description"`
	retryAfter  time.Duration // a 429's Retry-After
}

// oauthErr is an error answer without Retry-After.
func oauthErr(status int, code, desc string) *oauthError {
	return &oauthError{status: status, Code: code, Description: desc}
}

func invalidRequest(desc string) *oauthError {
	return oauthErr(http.StatusBadRequest, "invalid_request", desc)
}

func invalidClient(desc string) *oauthError {
	return oauthErr(http.StatusUnauthorized, "invalid_client", desc)
}

var errServer = &oauthError{status: http.StatusInternalServerError, Code: "server_error", Description: "Internal error."}

// lockedOut is the answer during a lockout (docs/api.md §16.2): 429 with
// RFC 6749's temporarily_unavailable, the nearest of its error codes.
func lockedOut(wait time.Duration) *oauthError {
	secs := retryAfterSeconds(wait)
	return &oauthError{status: http.StatusTooManyRequests, Code: "temporarily_unavailable",
		Description: "Too many failed client authentications; retry in " + strconv.Itoa(secs) + " s.", retryAfter: wait}
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1, as
// Retry-After counts them.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
	// RefreshToken is issued by the browser flows' grants only.
	RefreshToken string `json:"refresh_token,omitempty"`
}

// TokenHandler serves {auth_url}/connect/token: the client credentials grant
// (RFC 6749 §4.4). Mount it for every method: it answers non-POST requests
// itself with an OAuth error body.
func (a *Auth) TokenHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		resp, oerr := a.token(r)
		if oerr == errServer && errors.Is(r.Context().Err(), context.Canceled) {
			// The client went away (and the store call failed for that
			// reason): nobody to answer, nothing of posgate's failed. The
			// request log records it as 499.
			return
		}
		if oerr != nil {
			switch oerr.status {
			case http.StatusMethodNotAllowed:
				h.Set("Allow", http.MethodPost)
			case http.StatusUnauthorized:
				h.Set("WWW-Authenticate", `Basic realm="posgate"`)
			case http.StatusTooManyRequests:
				h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(oerr.retryAfter)))
			}
			a.log.Debug("auth: token request refused", "error", oerr.Code, "description", oerr.Description)
			a.writeJSON(w, oerr.status, oerr)
			return
		}
		a.writeJSON(w, http.StatusOK, resp)
	})
}

// token checks a token request in the order request shape, client
// authentication, grant type, scope, and issues the token.
func (a *Auth) token(r *http.Request) (*tokenResponse, *oauthError) {
	if r.Method != http.MethodPost {
		return nil, oauthErr(http.StatusMethodNotAllowed, "invalid_request", "The token endpoint accepts only POST.")
	}
	form, oerr := readForm(r)
	if oerr != nil {
		return nil, oerr
	}
	grant := form.Get("grant_type")
	browserGrant := grant == "authorization_code" || grant == "refresh_token"
	var c *posgate.Client
	if a.browser != nil && browserGrant && r.Header.Get("Authorization") == "" && !form.Has("client_secret") {
		c, oerr = a.publicClient(r.Context(), form.Get("client_id"))
	} else {
		c, oerr = a.authenticate(r.Context(), r, form)
	}
	if oerr != nil {
		return nil, oerr
	}
	switch {
	case grant == "":
		return nil, invalidRequest("The grant_type parameter is required.")
	case grant == "client_credentials":
	case a.browser == nil && grant == "refresh_token":
		return nil, oauthErr(http.StatusBadRequest, "invalid_grant", "The refresh token is invalid: posgate issues no refresh tokens.")
	case a.browser != nil && grant == "authorization_code":
		return a.codeGrant(r.Context(), c, form)
	case a.browser != nil && grant == "refresh_token":
		return a.refreshGrant(r.Context(), c, form)
	case a.browser != nil:
		return nil, oauthErr(http.StatusBadRequest, "unsupported_grant_type", "Supported grant types: client_credentials, authorization_code, refresh_token.")
	default:
		return nil, oauthErr(http.StatusBadRequest, "unsupported_grant_type", "Only the client_credentials grant type is supported.")
	}
	if a.browser != nil {
		// A browser client's secret (if it has one) is not meant for
		// machine-to-machine tokens that carry no person.
		uris, err := a.browser.people.ClientRedirectURIs(r.Context(), c.ID)
		if err != nil {
			a.log.Error("auth: looking up redirect URIs failed", "client_id", c.ID, "err", err)
			return nil, errServer
		}
		if len(uris) > 0 {
			return nil, oauthErr(http.StatusBadRequest, "unauthorized_client", "The client is registered for the browser flows and may not use client_credentials.")
		}
	}
	scopes, oerr := grantScopes(c, form.Get("scope"))
	if oerr != nil {
		return nil, oerr
	}
	token, _, err := a.Issue(r.Context(), c, scopes)
	if err != nil {
		a.log.Error("auth: issuing a token failed", "client_id", c.ID, "err", err)
		return nil, errServer
	}
	scope := strings.Join(scopes, " ")
	a.log.Debug("auth: token issued", "client_id", c.ID, "scope", scope)
	return &tokenResponse{AccessToken: token, TokenType: "Bearer", ExpiresIn: int64(a.ttl.Seconds()), Scope: scope}, nil
}

// readForm reads the form-encoded body. Parameters without a value count as
// omitted (RFC 6749 §3.1); a repeated parameter is an error (§3.1 too).
func readForm(r *http.Request) (url.Values, *oauthError) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != formContentType {
		return nil, invalidRequest("The content type must be " + formContentType + ".")
	}
	if r.ContentLength > maxTokenBody { // at once, without waiting for it
		return nil, invalidRequest("The request body is larger than 16 KiB.")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxTokenBody+1))
	if err != nil {
		return nil, invalidRequest("The request body could not be read.")
	}
	if len(body) > maxTokenBody {
		return nil, invalidRequest("The request body is larger than 16 KiB.")
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, invalidRequest("The request body is not valid form data.")
	}
	for k, v := range form {
		if len(v) > 1 {
			return nil, invalidRequest("Each parameter may be sent only once.")
		}
		if v[0] == "" {
			delete(form, k)
		}
	}
	return form, nil
}

// authenticate finds the client by HTTP Basic or by the client_id and
// client_secret parameters and checks its secret. Unknown clients are
// compared against a dummy hash so that they cost the same as a wrong secret.
func (a *Auth) authenticate(ctx context.Context, r *http.Request, form url.Values) (*posgate.Client, *oauthError) {
	id, secret := form.Get("client_id"), form.Get("client_secret")
	if r.Header.Get("Authorization") != "" {
		if secret != "" {
			return nil, invalidRequest("Use one client authentication method: HTTP Basic or the client_secret parameter, not both.")
		}
		user, pass, ok := r.BasicAuth()
		if !ok {
			return nil, invalidClient("The Authorization header must carry HTTP Basic client credentials.")
		}
		// RFC 6749 §2.3.1: both halves are form-encoded before base64.
		bid, err1 := url.QueryUnescape(user)
		bsecret, err2 := url.QueryUnescape(pass)
		if err1 != nil || err2 != nil {
			return nil, invalidClient("The HTTP Basic client credentials are not form-encoded.")
		}
		if id != "" && id != bid {
			return nil, invalidRequest("The client_id parameter differs from the HTTP Basic user name.")
		}
		id, secret = bid, bsecret
	}
	if id == "" || secret == "" {
		return nil, invalidClient("Client authentication is required.")
	}
	// A locked-out client id or address waits even with the right secret:
	// were it let through, the lockout would tell a guesser which guess was
	// right, and guessing would go on at full speed.
	now, host := a.now(), remoteHost(r.RemoteAddr)
	if wait := max(a.clientLockout.wait(id, now), a.addressLockout.wait(host, now)); wait > 0 {
		return nil, lockedOut(wait)
	}
	var c *posgate.Client
	if posgate.ValidKey(id) {
		found, err := a.store.FindClient(ctx, id)
		switch {
		case err == nil:
			c = found
		case !errors.Is(err, posgate.ErrNotFound):
			if ctx.Err() == nil {
				a.log.Error("auth: looking up a client failed", "client_id", id, "err", err)
			}
			return nil, errServer
		}
	}
	if c == nil {
		credential.SecretMatches(a.dummyHash, secret)
		a.failed(id, host, now)
		return nil, invalidClient("The client credentials are invalid.")
	}
	if !credential.SecretMatches(c.SecretHash, secret) {
		a.failed(id, host, now)
		return nil, invalidClient("The client credentials are invalid.")
	}
	if c.Disabled {
		return nil, invalidClient("The client is disabled.")
	}
	return c, nil
}

// failed counts a failed client authentication against the client id (only
// a well-formed one: others cannot name a client, and would let a flood of
// long made-up ids fill memory) and the remote address.
func (a *Auth) failed(id, host string, now time.Time) {
	if posgate.ValidKey(id) && a.clientLockout.fail(id, now) {
		a.log.Warn("auth: client id locked out after failed authentications", "client_id", id, "for", a.clientLockout.window)
	}
	if a.addressLockout.fail(host, now) {
		a.log.Warn("auth: address locked out after failed authentications", "address", host, "for", a.addressLockout.window)
	}
}

// grantScopes decides the scopes of a client credentials token: the
// requested ones, or all of the client's when none are requested.
func grantScopes(c *posgate.Client, requested string) ([]string, *oauthError) {
	if !slices.ContainsFunc(c.Scopes, func(s string) bool { return s != posgate.ScopeServiceAPI }) {
		return nil, oauthErr(http.StatusBadRequest, "unauthorized_client", "The client is registered for the implicit flow and may not use client_credentials.")
	}
	want := strings.Fields(requested)
	if len(want) == 0 {
		want = c.Scopes
	}
	granted := make([]string, 0, len(want))
	for _, s := range want {
		switch {
		case !slices.Contains(posgate.KnownScopes, s):
			return nil, oauthErr(http.StatusBadRequest, "invalid_scope", "A requested scope is unknown; known scopes: "+strings.Join(posgate.KnownScopes, " ")+".")
		case !c.HasScope(s):
			return nil, oauthErr(http.StatusBadRequest, "invalid_scope", "The client may not request the scope "+s+".")
		case !slices.Contains(granted, s):
			granted = append(granted, s)
		}
	}
	return granted, nil
}

// writeJSON writes v as the JSON body of the answer.
func (a *Auth) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		a.log.Error("auth: encoding a response failed", "err", err)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentTypeJSON)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
