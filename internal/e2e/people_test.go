package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/demo"
)

// agent is a browser without JavaScript: a cookie jar, no automatic
// redirects, and the Origin header a browser sends with its form posts.
type agent struct {
	s *server
	c *http.Client
}

func newAgent(t *testing.T, s *server) *agent {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &agent{s: s, c: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get fetches a path (or an absolute URL) of the server.
func (a *agent) get(t *testing.T, path string) response {
	t.Helper()
	if !strings.HasPrefix(path, "http") {
		path = a.s.base + path
	}
	resp, err := a.c.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// post sends a form with the given Origin ("" for none).
func (a *agent) post(t *testing.T, path string, form url.Values, origin string) response {
	t.Helper()
	r, err := http.NewRequest("POST", a.s.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	resp, err := a.c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token of a page's form.
func csrf(t *testing.T, r response) string {
	t.Helper()
	m := csrfInput.FindSubmatch(r.Body)
	if m == nil {
		t.Fatalf("no CSRF token in the page (%d): %s", r.Status, r.Body)
	}
	return string(m[1])
}

// pageError is the error message a page shows, "" for none.
func pageError(r response) string {
	m := regexp.MustCompile(`<p class="error" id="error" role="alert">([^<]*)</p>`).FindSubmatch(r.Body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(string(m[1]))
}

// signIn signs in through the login form and checks the redirect.
func (a *agent) signIn(t *testing.T, email, password string) {
	t.Helper()
	page := a.get(t, "/Account/Login")
	mustStatus(t, page, 200)
	r := a.post(t, "/Account/Login", url.Values{"csrf": {csrf(t, page)}, "email": {email}, "password": {password}, "ReturnUrl": {"/swagger"}}, a.s.base)
	if r.Status != 303 || r.Header.Get("Location") != "/swagger" {
		t.Fatalf("sign-in of %s: %d %s %q", email, r.Status, r.Header.Get("Location"), pageError(r))
	}
}

// authorize opens /connect/authorize with q and returns the answer.
func (a *agent) authorize(t *testing.T, q url.Values) response {
	t.Helper()
	return a.get(t, "/connect/authorize?"+q.Encode())
}

func (s *server) swaggerRedirect() string { return s.base + demo.SwaggerRedirectPath }

// implicitToken runs the implicit flow for the signed-in agent.
func (a *agent) implicitToken(t *testing.T, scope string) string {
	t.Helper()
	r := a.authorize(t, url.Values{"response_type": {"token"}, "client_id": {"swagger-ui"}, "redirect_uri": {a.s.swaggerRedirect()},
		"scope": {scope}, "state": {"s1"}})
	frag := redirectParams(t, r, a.s.swaggerRedirect(), true)
	if frag.Get("state") != "s1" || frag.Get("token_type") != "Bearer" || frag.Get("expires_in") != "3600" || frag.Get("scope") != scope || frag.Get("access_token") == "" {
		t.Fatalf("implicit flow answer: %v", frag)
	}
	return frag.Get("access_token")
}

// redirectParams checks that r redirects to target and returns the
// parameters of its fragment or query.
func redirectParams(t *testing.T, r response, target string, fragment bool) url.Values {
	t.Helper()
	loc := r.Header.Get("Location")
	if r.Status != 302 {
		t.Fatalf("status %d (Location %q), want a redirect to %s; page error %q", r.Status, loc, target, pageError(r))
	}
	sep := "?"
	if fragment {
		sep = "#"
	}
	if !strings.HasPrefix(loc, target+sep) {
		t.Fatalf("Location %q, want %s%s…", loc, target, sep)
	}
	v, err := url.ParseQuery(loc[len(target)+1:])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// pkce returns a code verifier and its S256 challenge.
func pkce(seed string) (verifier, challenge string) {
	verifier = strings.Repeat(seed, 43/len(seed)+1)[:43]
	h := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(h[:])
}

// TestSignIn: the sign-in form, its cookies, CSRF and Origin checks, the
// throttling of wrong passwords, and signing out.
func TestSignIn(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		a := newAgent(t, s)
		page := a.get(t, "/Account/Login")
		mustStatus(t, page, 200)
		if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			page.Header.Get("X-Frame-Options") != "DENY" || page.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("security headers %v", page.Header)
		}
		var csrfCookie *http.Cookie
		for _, c := range (&http.Response{Header: page.Header}).Cookies() {
			if c.Name == "posgate-csrf" {
				csrfCookie = c
			}
		}
		// Over http the cookies cannot be Secure, so they lack the __Host-
		// prefix (which browsers allow only on Secure cookies).
		if csrfCookie == nil || !csrfCookie.HttpOnly || csrfCookie.SameSite != http.SameSiteLaxMode || csrfCookie.Path != "/" || csrfCookie.Secure {
			t.Fatalf("CSRF cookie %+v", csrfCookie)
		}
		token := csrf(t, page)
		good := url.Values{"csrf": {token}, "email": {demo.ManagerEmail}, "password": {demo.ManagerPassword}}

		// Refused forms: no token, a wrong one, another site's Origin, no Origin.
		for name, tc := range map[string]struct {
			form   url.Values
			origin string
			want   string
		}{
			"no CSRF token":    {url.Values{"email": {demo.ManagerEmail}, "password": {demo.ManagerPassword}}, s.base, "The form's CSRF token is missing or wrong; reload the page and try again."},
			"wrong CSRF token": {url.Values{"csrf": {strings.Repeat("A", 43)}, "email": {demo.ManagerEmail}, "password": {demo.ManagerPassword}}, s.base, "The form's CSRF token is missing or wrong; reload the page and try again."},
			"another Origin":   {good, "https://evil.example", "The form was sent from another site (Origin)."},
			"no Origin":        {good, "", "The form was sent from another site (Origin)."},
		} {
			r := a.post(t, "/Account/Login", tc.form, tc.origin)
			if r.Status != 403 || pageError(r) != tc.want || r.Header.Get("Set-Cookie") != "" && strings.Contains(r.Header.Get("Set-Cookie"), "posgate-session") {
				t.Fatalf("%s: %d %q", name, r.Status, pageError(r))
			}
		}

		// Five wrong passwords lock the account: the sixth attempt is 429
		// with Retry-After even with the right password.
		bad := url.Values{"csrf": {token}, "email": {demo.AdminEmail}, "password": {"wrong password!"}}
		for i := range 5 {
			r := a.post(t, "/Account/Login", bad, s.base)
			if r.Status != 200 || pageError(r) != "The e-mail address or the password is wrong." {
				t.Fatalf("wrong password %d: %d %q", i+1, r.Status, pageError(r))
			}
		}
		r := a.post(t, "/Account/Login", url.Values{"csrf": {token}, "email": {demo.AdminEmail}, "password": {demo.AdminPassword}}, s.base)
		if r.Status != 429 || r.Header.Get("Retry-After") != "300" || pageError(r) != "Too many failed sign-ins; try again in 300 s." {
			t.Fatalf("sixth attempt: %d Retry-After %q %q", r.Status, r.Header.Get("Retry-After"), pageError(r))
		}
		// An unknown address fails exactly like a wrong password.
		r = a.post(t, "/Account/Login", url.Values{"csrf": {token}, "email": {"nobody@demo.posgate"}, "password": {"whatever it is"}}, s.base)
		if r.Status != 200 || pageError(r) != "The e-mail address or the password is wrong." {
			t.Fatalf("unknown address: %d %q", r.Status, pageError(r))
		}
		// The lockout ends with its window.
		s.clock.Advance(5*time.Minute + time.Second)

		// The right password: a session cookie and a redirect to ReturnUrl
		// (only a local path; anything else goes to /).
		r = a.post(t, "/Account/Login", url.Values{"csrf": {token}, "email": {" Manager@Demo.posgate "}, "password": {demo.ManagerPassword}, "ReturnUrl": {"//evil.example/x"}}, s.base)
		if r.Status != 303 || r.Header.Get("Location") != "/" {
			t.Fatalf("sign-in: %d %q %q", r.Status, r.Header.Get("Location"), pageError(r))
		}
		var session *http.Cookie
		for _, c := range (&http.Response{Header: r.Header}).Cookies() {
			if c.Name == "posgate-session" {
				session = c
			}
		}
		if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Path != "/" || session.MaxAge != 8*3600 || len(session.Value) != 43 {
			t.Fatalf("session cookie %+v", session)
		}
		// The store holds only the hash of the session id.
		st := s.openStore(t)
		if _, err := st.FindSignIn(t.Context(), []byte(session.Value), s.clock.Now()); posgate.ErrorCode(err) != posgate.ENOTFOUND {
			t.Fatalf("the session id itself is a key of the store: %v", err)
		}
		if page := a.get(t, "/Account/Login"); !strings.Contains(string(page.Body), "Signed in as manager@demo.posgate.") {
			t.Fatalf("signed-in page: %s", page.Body)
		}
		// The session is in the store: a second instance on the same
		// database knows it.
		if s.cfg.Database != dsn {
			t.Fatal("unexpected database")
		}
		s2 := start(t, dsn)
		jar := a.c.Jar
		u2, _ := url.Parse(s2.base)
		u1, _ := url.Parse(s.base)
		jar.SetCookies(u2, jar.Cookies(u1))
		a2 := &agent{s: s2, c: &http.Client{Jar: jar, CheckRedirect: a.c.CheckRedirect}}
		if page := a2.get(t, "/Account/Login"); !strings.Contains(string(page.Body), "Signed in as manager@demo.posgate.") {
			t.Fatalf("the other instance does not know the session: %s", page.Body)
		}

		// Signing out needs the form's token too, then ends the session.
		page = a.get(t, "/Account/Login")
		if r := a.post(t, "/Account/Logout", url.Values{}, s.base); r.Status != 403 {
			t.Fatalf("sign-out without a CSRF token: %d", r.Status)
		}
		r = a.post(t, "/Account/Logout", url.Values{"csrf": {csrf(t, page)}}, s.base)
		if r.Status != 303 || r.Header.Get("Location") != "/Account/Login" {
			t.Fatalf("sign-out: %d %v", r.Status, r.Header)
		}
		if page := a2.get(t, "/Account/Login"); !strings.Contains(string(page.Body), `id="signin"`) {
			t.Fatalf("still signed in after signing out: %s", page.Body)
		}
	})
}

// TestImplicitFlow: a signed-in person gets a token in the redirect URI's
// fragment, which the POS API honours; every refusal of the authorization
// endpoint, as a page or as an RFC 6749 error at the redirect URI.
func TestImplicitFlow(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		a := newAgent(t, s)
		q := url.Values{"response_type": {"token"}, "client_id": {"swagger-ui"}, "redirect_uri": {s.swaggerRedirect()}, "state": {"s1"}}

		// Not signed in: the sign-in form, which comes back here.
		r := a.authorize(t, q)
		if r.Status != 200 || !strings.Contains(string(r.Body), `name="ReturnUrl" value="/connect/authorize?`) {
			t.Fatalf("authorize before signing in: %d %s", r.Status, r.Body)
		}
		form := url.Values{"csrf": {csrf(t, r)}, "email": {demo.AdminEmail}, "password": {demo.AdminPassword},
			"ReturnUrl": {"/connect/authorize?" + q.Encode()}}
		r = a.post(t, "/Account/Login", form, s.base)
		if r.Status != 303 || r.Header.Get("Location") != "/connect/authorize?"+q.Encode() {
			t.Fatalf("sign-in: %d %q", r.Status, r.Header.Get("Location"))
		}
		token := a.implicitToken(t, "service_api")
		mustStatus(t, s.do(t, startReq(token, "TERM-05", "LOC123")), 200)
		// The token is a person's: the operator API wants scope admin.
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems", Token: token}), 403,
			"The access token lacks the scope this operation needs (admin).", nil)
		admin := a.implicitToken(t, "admin service_api")
		mustStatus(t, s.do(t, req{Method: "GET", Path: "/admin/v1/clients", Token: admin}), 200)

		// Shown as a page, never redirected: no client, an unknown one, a
		// redirect URI not registered (shown).
		for name, tc := range map[string]struct {
			q    url.Values
			want string
		}{
			"no client":         {url.Values{"response_type": {"token"}}, "The client_id parameter is required."},
			"unknown client":    {url.Values{"response_type": {"token"}, "client_id": {"nope"}, "redirect_uri": {s.swaggerRedirect()}}, "The client 'nope' is unknown or disabled."},
			"no browser client": {url.Values{"response_type": {"token"}, "client_id": {"demo-pos"}}, "The client 'demo-pos' is not registered for the browser flows."},
			"bad redirect URI": {url.Values{"response_type": {"token"}, "client_id": {"swagger-ui"}, "redirect_uri": {"https://evil.example/cb"}},
				"The redirect_uri 'https://evil.example/cb' is not registered for the client 'swagger-ui'."},
			"almost the redirect URI": {url.Values{"response_type": {"token"}, "client_id": {"swagger-ui"}, "redirect_uri": {s.swaggerRedirect() + "?x=1"}},
				"The redirect_uri '" + s.swaggerRedirect() + "?x=1' is not registered for the client 'swagger-ui'."},
			"redirect URI required": {url.Values{"response_type": {"token"}, "client_id": {"swagger-ui"}}, "The redirect_uri parameter is required: the client has several registered."},
		} {
			r := a.authorize(t, tc.q)
			if r.Status != 400 || r.Header.Get("Location") != "" || pageError(r) != tc.want {
				t.Errorf("%s: %d Location %q, error %q; want 400 %q", name, r.Status, r.Header.Get("Location"), pageError(r), tc.want)
			}
		}
		// Redirected with error and state.
		for name, tc := range map[string]struct {
			responseType, scope, code string
		}{
			"no response type":      {"", "", "invalid_request"},
			"unknown response type": {"id_token", "", "unsupported_response_type"},
			"unknown scope":         {"token", "everything", "invalid_scope"},
			"scope not allowed":     {"token", "pos_integration", "invalid_scope"},
		} {
			q := url.Values{"client_id": {"swagger-ui"}, "redirect_uri": {s.swaggerRedirect()}, "state": {"st"}, "response_type": {tc.responseType}, "scope": {tc.scope}}
			v := redirectParams(t, a.authorize(t, q), s.swaggerRedirect(), tc.responseType == "token")
			if v.Get("error") != tc.code || v.Get("state") != "st" || v.Get("error_description") == "" || v.Has("access_token") {
				t.Errorf("%s: %v, want error %s with state", name, v, tc.code)
			}
		}
		// Discovery lists it all, at both addresses.
		for _, p := range []string{"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"} {
			r := s.do(t, req{Method: "GET", Path: p})
			mustStatus(t, r, 200)
			var d struct {
				Authorization  string   `json:"authorization_endpoint"`
				Grants         []string `json:"grant_types_supported"`
				ResponseTypes  []string `json:"response_types_supported"`
				Challenge      []string `json:"code_challenge_methods_supported"`
				TokenEndpoint  string   `json:"token_endpoint"`
				TokenAuthMeths []string `json:"token_endpoint_auth_methods_supported"`
			}
			json.Unmarshal(r.Body, &d)
			if d.Authorization != s.base+"/connect/authorize" || !slices.Equal(d.ResponseTypes, []string{"token", "code"}) ||
				!slices.Equal(d.Challenge, []string{"S256"}) || !slices.Contains(d.Grants, "authorization_code") || !slices.Contains(d.Grants, "refresh_token") ||
				!slices.Contains(d.TokenAuthMeths, "none") {
				t.Errorf("%s: %s", p, r.Body)
			}
		}
	})
}

// codeExchange posts the authorization_code grant as a public client.
func (s *server) codeExchange(t *testing.T, code, verifier, redirectURI string) response {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "client_id": {"swagger-ui"}, "code": {code}, "code_verifier": {verifier}}
	if redirectURI != "" {
		form.Set("redirect_uri", redirectURI)
	}
	return s.tokenRequest(t, form, "", "")
}

func (s *server) refresh(t *testing.T, token string) response {
	t.Helper()
	return s.tokenRequest(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {"swagger-ui"}, "refresh_token": {token}}, "", "")
}

// tokens decodes a successful token answer with its refresh token.
func tokens(t *testing.T, r response) (access, refresh string) {
	t.Helper()
	mustStatus(t, r, 200)
	var tr struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		Scope        string `json:"scope"`
	}
	if err := json.Unmarshal(r.Body, &tr); err != nil || tr.AccessToken == "" || len(tr.RefreshToken) != 43 || tr.Scope != "service_api" {
		t.Fatalf("token answer %s", r.Body)
	}
	return tr.AccessToken, tr.RefreshToken
}

// TestCodeFlowWithPKCE: the authorization code flow end to end with every
// refusal: PKCE missing or not S256, a wrong verifier, a reused code (which
// revokes its refresh tokens), an expired code, another client, another
// redirect URI; refresh tokens rotate and a reused one revokes its family.
func TestCodeFlowWithPKCE(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		a := newAgent(t, s)
		a.signIn(t, demo.AdminEmail, demo.AdminPassword)
		verifier, challenge := pkce("verifier-")
		code := func(state string) string {
			t.Helper()
			q := url.Values{"response_type": {"code"}, "client_id": {"swagger-ui"}, "redirect_uri": {s.swaggerRedirect()}, "state": {state},
				"code_challenge": {challenge}, "code_challenge_method": {"S256"}}
			v := redirectParams(t, a.authorize(t, q), s.swaggerRedirect(), false)
			if v.Get("state") != state || v.Get("iss") != s.base || len(v.Get("code")) != 43 {
				t.Fatalf("code answer %v", v)
			}
			return v.Get("code")
		}
		// PKCE is required, S256 only.
		for name, q := range map[string]url.Values{
			"no challenge":    {},
			"plain":           {"code_challenge": {challenge}, "code_challenge_method": {"plain"}},
			"short challenge": {"code_challenge": {"abc"}, "code_challenge_method": {"S256"}},
		} {
			q.Set("response_type", "code")
			q.Set("client_id", "swagger-ui")
			q.Set("redirect_uri", s.swaggerRedirect())
			q.Set("state", "p")
			v := redirectParams(t, a.authorize(t, q), s.swaggerRedirect(), false)
			if v.Get("error") != "invalid_request" || v.Get("state") != "p" || v.Has("code") {
				t.Errorf("%s: %v", name, v)
			}
		}

		// A wrong verifier: invalid_grant, and the code is left as it was
		// (a refused request changes nothing): the right one gets tokens.
		c := code("a")
		wrong, _ := pkce("other-")
		mustOAuthError(t, s.codeExchange(t, c, wrong, s.swaggerRedirect()), 400, "invalid_grant")
		tokens(t, s.codeExchange(t, c, verifier, s.swaggerRedirect()))
		mustOAuthError(t, s.codeExchange(t, code("b"), "", ""), 400, "invalid_request")

		// The right verifier: an access token the POS API honours and a
		// refresh token.
		c = code("c")
		access, refresh := tokens(t, s.codeExchange(t, c, verifier, s.swaggerRedirect()))
		mustStatus(t, s.do(t, startReq(access, "TERM-05", "LOC123")), 200)
		// The code again: refused, and the refresh token it gave is revoked.
		r := s.codeExchange(t, c, verifier, s.swaggerRedirect())
		mustOAuthError(t, r, 400, "invalid_grant")
		if !strings.Contains(string(r.Body), "used already") {
			t.Fatalf("reused code: %s", r.Body)
		}
		mustOAuthError(t, s.refresh(t, refresh), 400, "invalid_grant")

		// Refresh tokens rotate; presenting a spent one revokes the family.
		_, r1 := tokens(t, s.codeExchange(t, code("d"), verifier, ""))
		_, r2 := tokens(t, s.refresh(t, r1))
		_, r3 := tokens(t, s.refresh(t, r2))
		r = s.refresh(t, r1)
		mustOAuthError(t, r, 400, "invalid_grant")
		if !strings.Contains(string(r.Body), "every refresh token of its family is revoked") {
			t.Fatalf("reused refresh token: %s", r.Body)
		}
		mustOAuthError(t, s.refresh(t, r3), 400, "invalid_grant")
		mustOAuthError(t, s.refresh(t, "made-up"), 400, "invalid_grant")

		// Another redirect URI, an expired code, another client.
		mustOAuthError(t, s.codeExchange(t, code("e"), verifier, "http://localhost:8080/swagger/oauth2-redirect.html"), 400, "invalid_grant")
		c = code("f")
		s.clock.Advance(61 * time.Second)
		r = s.codeExchange(t, c, verifier, "")
		mustOAuthError(t, r, 400, "invalid_grant")
		if !strings.Contains(string(r.Body), "expired") {
			t.Fatalf("expired code: %s", r.Body)
		}
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code("g")}, "code_verifier": {verifier}}
		mustOAuthError(t, s.tokenRequest(t, form, "demo-pos", "demo-pos-secret"), 400, "invalid_grant")
		// A client that is not a browser client must authenticate.
		form.Set("client_id", "demo-pos")
		mustOAuthError(t, s.tokenRequest(t, form, "", ""), 401, "invalid_client")
		// The browser client may not use client credentials.
		mustOAuthError(t, s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {"swagger-ui"}}, "", ""), 401, "invalid_client")
	})
}

// TestLocationManagerReach: a location manager's token reaches LOC123 and
// nothing else, on the POS API and the operator API alike (hidden =
// absent); disabling the person revokes their token and session.
func TestLocationManagerReach(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		a := newAgent(t, s)
		a.signIn(t, demo.ManagerEmail, demo.ManagerPassword)
		pos := a.implicitToken(t, "service_api")
		op := a.implicitToken(t, "admin")

		mustStatus(t, s.do(t, startReq(pos, "TERM-05", "LOC123")), 200)
		mustProblem(t, s.do(t, startReq(pos, "TERM-07", "LOC456")), 404, "Location 'LOC456' is not registered.", nil)
		mustProblem(t, s.do(t, startReq(pos, "TERM-07", "NOPE")), 404, "Location 'NOPE' is not registered.", nil)
		// Company-wide data is not the manager's.
		r := s.do(t, req{Method: "POST", Path: "/pos/clover/coupon/couponCode/search", Token: pos, ContentType: "application/json", Body: `{"code":"Sl75Ev"}`})
		mustStatus(t, r, 200)
		if !strings.Contains(string(r.Body), `"data":[]`) {
			t.Fatalf("coupon search without a location: %s", r.Body)
		}

		ids := func(path, key string) []string {
			t.Helper()
			r := s.do(t, req{Method: "GET", Path: path, Token: op})
			mustStatus(t, r, 200)
			var body struct {
				Data []map[string]any `json:"data"`
			}
			json.Unmarshal(r.Body, &body)
			var out []string
			for _, d := range body.Data {
				out = append(out, d[key].(string))
			}
			return out
		}
		if got := ids("/admin/v1/pos-systems/clover/locations", "posLocationId"); !slices.Equal(got, []string{"LOC123"}) {
			t.Fatalf("locations: %v", got)
		}
		if got := ids("/admin/v1/pos-systems/clover/companies", "posCompanyId"); len(got) != 0 {
			t.Fatalf("companies: %v", got)
		}
		terms := ids("/admin/v1/pos-systems/clover/locations/LOC123/terminals", "terminalId")
		if !slices.Equal(terms, []string{"TERM-05", "TERM-06", "TERM-99"}) {
			t.Fatalf("terminals of LOC123: %v", terms)
		}
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/locations/LOC456", Token: op}), 404, `location "LOC456" not found`, nil)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/locations/LOC456/terminals", Token: op}), 404, `location "LOC456" not found`, nil)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/companies/demo-company", Token: op}), 404, `company "demo-company" not found`, nil)
		mustStatus(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/locations/LOC123", Token: op}), 200)
		// The manager registers a terminal at their location, not elsewhere.
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/admin/v1/pos-systems/clover/locations/LOC123/terminals", Token: op, ContentType: "application/json",
			Body: `{"terminalId":"TERM-M1"}`}), 201)
		mustProblem(t, s.do(t, req{Method: "POST", Path: "/admin/v1/pos-systems/clover/locations/LOC456/terminals", Token: op, ContentType: "application/json",
			Body: `{"terminalId":"TERM-M2"}`}), 404, `location "LOC456" not found`, nil)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/clients", Token: op}), 403,
			"This operation acts on the whole installation; your access is limited to some POS systems, companies or locations.", nil)
		// The audit log shows the manager their own location's entries,
		// made by them as a person; the sandbox clock is the installation's.
		r = s.do(t, req{Method: "GET", Path: "/admin/v1/audit", Token: op})
		mustStatus(t, r, 200)
		var log struct {
			Data struct {
				Entries []posgate.AuditEntry `json:"entries"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &log); err != nil {
			t.Fatal(err)
		}
		if len(log.Data.Entries) != 1 || log.Data.Entries[0].Target.ID != "LOC123/TERM-M1" ||
			log.Data.Entries[0].Actor != (posgate.AuditActor{Subject: "demo-manager-person", Kind: posgate.ActorPerson, ClientID: "swagger-ui"}) {
			t.Fatalf("the manager's audit log: %s", r.Body)
		}
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/sandbox/clock", Token: op}), 403,
			"This operation acts on the whole installation; your access is limited to some POS systems, companies or locations.", nil)

		// Disabled: the tokens and the session stop working.
		st := s.openStore(t)
		p, err := st.FindPersonByEmail(t.Context(), demo.ManagerEmail)
		if err != nil {
			t.Fatal(err)
		}
		disabled := true
		if _, err := st.UpdatePerson(t.Context(), p.ID, posgate.PersonUpdate{Disabled: &disabled}); err != nil {
			t.Fatal(err)
		}
		r = s.do(t, startReq(pos, "TERM-05", "LOC123"))
		mustStatus(t, r, 401)
		if !strings.Contains(r.Header.Get("WWW-Authenticate"), "the person it was issued to is disabled") {
			t.Fatalf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
		}
		if page := a.get(t, "/Account/Login"); !strings.Contains(string(page.Body), `id="signin"`) {
			t.Fatalf("a disabled person is still signed in: %s", page.Body)
		}
		page := a.get(t, "/Account/Login")
		r = a.post(t, "/Account/Login", url.Values{"csrf": {csrf(t, page)}, "email": {demo.ManagerEmail}, "password": {demo.ManagerPassword}}, s.base)
		if r.Status != 200 || pageError(r) != "The e-mail address or the password is wrong." {
			t.Fatalf("a disabled person signs in: %d %q", r.Status, pageError(r))
		}
	})
}

// TestStartPages: / and /docs lead to the Swagger UI, which is served from
// posgate itself with a Content-Security-Policy of 'self'.
func TestStartPages(t *testing.T) {
	s := start(t, t.TempDir()+"/p.db")
	a := newAgent(t, s)
	for _, p := range []string{"/", "/docs"} {
		if r := a.get(t, p); r.Status != 302 || r.Header.Get("Location") != "/swagger" {
			t.Errorf("%s: %d %q", p, r.Status, r.Header.Get("Location"))
		}
	}
	for _, p := range []string{"/swagger", "/swagger/", "/swagger/index.html"} {
		r := a.get(t, p)
		if r.Status != 200 || !strings.Contains(string(r.Body), `<script src="/swagger/swagger-ui-bundle.js">`) ||
			!strings.HasPrefix(r.Header.Get("Content-Security-Policy"), "default-src 'none'; script-src 'self';") {
			t.Errorf("%s: %d %v", p, r.Status, r.Header)
		}
	}
	r := a.get(t, "/swagger/swagger-initializer.js")
	if r.Status != 200 || !strings.Contains(string(r.Body), `clientId: "swagger-ui"`) || !strings.Contains(string(r.Body), "usePkceWithAuthorizationCodeGrant: true") ||
		!strings.Contains(string(r.Body), `url: "/swagger/v1/swagger.json"`) {
		t.Fatalf("initializer: %d %s", r.Status, r.Body)
	}
	r = a.get(t, "/swagger/swagger-ui-bundle.js")
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") || len(r.Body) < 100_000 {
		t.Fatalf("bundle: %d %v %d bytes", r.Status, r.Header, len(r.Body))
	}
	r = a.get(t, "/swagger/oauth2-redirect.html")
	if r.Status != 200 || !strings.Contains(r.Header.Get("Content-Security-Policy"), "script-src 'sha256-") {
		t.Fatalf("redirect page: %d %v", r.Status, r.Header)
	}
	if r := a.get(t, "/swagger/secret.txt"); r.Status != 404 {
		t.Fatalf("an unknown file: %d", r.Status)
	}
}

// TestPeopleOperatorAPI: /admin/v1/people creates, lists, reads, disables
// and enables people, within the caller's reach only; every error status.
func TestPeopleOperatorAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		post := func(tok, path, body string) response {
			return s.do(t, req{Method: "POST", Path: path, Token: tok, ContentType: "application/json", Body: body})
		}
		mustStatus(t, post(admin, "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"other","name":"Other"}`), 201)
		mustStatus(t, post(admin, "/admin/v1/pos-systems/clover/locations", `{"posLocationId":"LOC-O","posCompanyId":"other","name":"Other's"}`), 201)

		r := post(admin, "/admin/v1/people", `{"email":"Ann@Example.com","name":"Ann","password":"a long password","role":"location-manager","posSystemId":"clover","locationIds":["LOC456"]}`)
		mustStatus(t, r, 201)
		var created struct {
			Data map[string]any `json:"data"`
		}
		json.Unmarshal(r.Body, &created)
		id, _ := created.Data["personId"].(string)
		delete(created.Data, "personId")
		delete(created.Data, "createdAt")
		delete(created.Data, "updatedAt")
		want := `{"companyIds":[],"disabled":false,"email":"ann@example.com","locationIds":["LOC456"],"name":"Ann","posSystemId":"clover","role":"location-manager"}`
		if got, _ := json.Marshal(created.Data); string(got) != want || len(id) != 36 || strings.Contains(string(r.Body), "argon2") || strings.Contains(string(r.Body), "password") {
			t.Fatalf("created %s", r.Body)
		}
		mustStatus(t, post(admin, "/admin/v1/people", `{"email":"cao@example.com","name":"Other's admin","password":"a long password","role":"company-admin","posSystemId":"clover","companyIds":["other"]}`), 201)

		emails := func(tok string) []string {
			t.Helper()
			r := s.do(t, req{Method: "GET", Path: "/admin/v1/people", Token: tok})
			mustStatus(t, r, 200)
			var l struct {
				Data []struct {
					Email string `json:"email"`
				} `json:"data"`
			}
			json.Unmarshal(r.Body, &l)
			var out []string
			for _, p := range l.Data {
				out = append(out, p.Email)
			}
			return out
		}
		if got := emails(admin); !slices.Equal(got, []string{demo.AdminEmail, "ann@example.com", "cao@example.com", demo.ManagerEmail}) {
			t.Fatalf("people: %v", got)
		}
		for _, key := range []string{id, "ANN@example.com"} {
			r := s.do(t, req{Method: "GET", Path: "/admin/v1/people/" + url.PathEscape(key), Token: admin})
			if r.Status != 200 || !strings.Contains(string(r.Body), `"email":"ann@example.com"`) {
				t.Fatalf("get %s: %d %s", key, r.Status, r.Body)
			}
		}
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/people/nobody", Token: admin}), 404, "Person 'nobody' not found.", nil)
		mustProblem(t, post(admin, "/admin/v1/people", `{"email":"ann@example.com","name":"Ann","password":"a long password","role":"admin"}`), 409,
			"A person with the e-mail address 'ann@example.com' exists already.", nil)
		mustProblem(t, post(admin, "/admin/v1/people", `{"email":"x@example.com","name":"X","password":"a long password","role":"location-manager","posSystemId":"clover","locationIds":["NOPE"]}`), 404,
			"Location 'NOPE' of POS system 'clover' not found.", nil)
		mustProblem(t, post(admin, "/admin/v1/people", `{"email":"Not an address","name":"","password":"short","role":"owner","companyIds":["a"]}`), 400,
			`A lower-case e-mail address (name@example.com) of at most 254 characters is required. A name is required. A password has 10 to 1024 characters. Unknown role "owner" (known: admin, pos-admin, company-admin, location-manager).`, map[string][]string{
				"email":    {"A lower-case e-mail address (name@example.com) of at most 254 characters is required."},
				"name":     {"A name is required."},
				"password": {"A password has 10 to 1024 characters."},
				"role":     {`Unknown role "owner" (known: admin, pos-admin, company-admin, location-manager).`},
			})
		mustProblem(t, post(admin, "/admin/v1/people", `{"email":"x@example.com","name":"X","password":"a long password","role":"admin","posSystemId":"clover"}`), 400,
			"An admin reaches everything: give no POS system, companies or locations.", map[string][]string{"role": {"An admin reaches everything: give no POS system, companies or locations."}})
		if r := post(admin, "/admin/v1/people", `{"email":"x@example.com","name":"X","password":"a long password","role":"admin","colour":"red"}`); r.Status != 400 || !strings.Contains(string(r.Body), "colour") {
			t.Fatalf("unknown property: %d %s", r.Status, r.Body)
		}
		if r := post(admin, "/admin/v1/people", `{"email":7,"name":"X","password":"a long password","role":"admin"}`); r.Status != 400 || !strings.Contains(string(r.Body), "email") {
			t.Fatalf("wrong type: %d %s", r.Status, r.Body)
		}
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/admin/v1/people", Token: admin, ContentType: "application/xml", Body: `<p><email>x@example.com</email></p>`}), 415)
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/admin/v1/people", Token: admin, ContentType: "application/json", Body: `{"name":"` + strings.Repeat("x", 70<<10) + `"}`}), 413)
		mustStatus(t, s.do(t, req{Method: "GET", Path: "/admin/v1/people"}), 401)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/people", Token: s.posToken(t)}), 403, "The access token lacks the scope this operation needs (admin).", nil)

		// A client restricted to demo-company sees and makes only people
		// within it: the admin and the other company's admin are absent.
		r = post(admin, "/admin/v1/clients", `{"clientId":"demo-ops","posSystemId":"clover","scopes":["admin"],"companyIds":["demo-company"]}`)
		mustStatus(t, r, 201)
		restricted := s.token(t, "demo-ops", r.JSON(t)["data"].(map[string]any)["clientSecret"].(string), "admin")
		if got := emails(restricted); !slices.Equal(got, []string{"ann@example.com", demo.ManagerEmail}) {
			t.Fatalf("people of a restricted client: %v", got)
		}
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/people/cao@example.com", Token: restricted}), 404, "Person 'cao@example.com' not found.", nil)
		mustProblem(t, post(restricted, "/admin/v1/people/cao@example.com/disable", ""), 404, "Person 'cao@example.com' not found.", nil)
		mustProblem(t, post(restricted, "/admin/v1/people", `{"email":"y@example.com","name":"Y","password":"a long password","role":"admin"}`), 403,
			"This operation acts on the whole installation; your access is limited to some POS systems, companies or locations.", nil)
		mustProblem(t, post(restricted, "/admin/v1/people", `{"email":"y@example.com","name":"Y","password":"a long password","role":"location-manager","posSystemId":"clover","locationIds":["LOC-O"]}`), 404,
			"Location 'LOC-O' of POS system 'clover' not found.", nil)
		mustStatus(t, post(restricted, "/admin/v1/people", `{"email":"y@example.com","name":"Y","password":"a long password","role":"company-admin","posSystemId":"clover","companyIds":["demo-company"]}`), 201)

		// Disable and enable.
		r = post(restricted, "/admin/v1/people/ann@example.com/disable", "")
		if r.Status != 200 || !strings.Contains(string(r.Body), `"disabled":true`) {
			t.Fatalf("disable: %d %s", r.Status, r.Body)
		}
		r = post(admin, "/admin/v1/people/"+id+"/enable", "")
		if r.Status != 200 || !strings.Contains(string(r.Body), `"disabled":false`) {
			t.Fatalf("enable: %d %s", r.Status, r.Body)
		}
		mustProblem(t, post(admin, "/admin/v1/people/nobody/enable", ""), 404, "Person 'nobody' not found.", nil)
	})
}

// TestPersonReachByRole: a token issued to a person carries the person's
// role: a company admin reaches its company only, a POS admin its POS
// system only (another one's token is 403 on clover's paths), and a
// disabled person's refresh token is refused.
func TestPersonReachByRole(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		post := func(path, body string) {
			t.Helper()
			mustStatus(t, s.do(t, req{Method: "POST", Path: path, Token: admin, ContentType: "application/json", Body: body}), 201)
		}
		post("/admin/v1/pos-systems", `{"id":"pax","name":"PAX"}`)
		post("/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"other","name":"Other"}`)
		post("/admin/v1/pos-systems/clover/locations", `{"posLocationId":"LOC-O","posCompanyId":"other","name":"Other's"}`)
		post("/admin/v1/pos-systems/clover/locations/LOC-O/terminals", `{"terminalId":"T-O"}`)
		post("/admin/v1/people", `{"email":"co@example.com","name":"Co","password":"a long password","role":"company-admin","posSystemId":"clover","companyIds":["other"]}`)
		post("/admin/v1/people", `{"email":"pax@example.com","name":"Pax","password":"a long password","role":"pos-admin","posSystemId":"pax"}`)

		a := newAgent(t, s)
		a.signIn(t, "co@example.com", "a long password")
		co := a.implicitToken(t, "service_api")
		mustStatus(t, s.do(t, startReq(co, "T-O", "LOC-O")), 200)
		mustProblem(t, s.do(t, startReq(co, "TERM-05", "LOC123")), 404, "Location 'LOC123' is not registered.", nil)

		p := newAgent(t, s)
		p.signIn(t, "pax@example.com", "a long password")
		pax := p.implicitToken(t, "service_api")
		mustProblem(t, s.do(t, startReq(pax, "TERM-05", "LOC123")), 403, "The access token belongs to POS system 'pax'; this path is of POS system 'clover'.", nil)

		// The company admin's refresh token stops working once disabled.
		verifier, challenge := pkce("co-")
		v := redirectParams(t, a.authorize(t, url.Values{"response_type": {"code"}, "client_id": {"swagger-ui"}, "redirect_uri": {s.swaggerRedirect()},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}}), s.swaggerRedirect(), false)
		_, refresh := tokens(t, s.codeExchange(t, v.Get("code"), verifier, ""))
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/admin/v1/people/co@example.com/disable", Token: admin}), 200)
		r := s.refresh(t, refresh)
		mustOAuthError(t, r, 400, "invalid_grant")
		if !strings.Contains(string(r.Body), "disabled") {
			t.Fatalf("refresh of a disabled person: %s", r.Body)
		}
		mustStatus(t, s.do(t, startReq(co, "T-O", "LOC-O")), 401)
	})
}

// TestClientRedirectURIsOperatorAPI: PUT /admin/v1/clients/{id}/redirect-uris
// registers a browser client's redirect URIs (audited), which the browser
// flows then accept, and an empty list takes the client out of them; the
// refusals of bad input, other principals and unknown clients.
func TestClientRedirectURIsOperatorAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		put := func(tok, id, body string) response {
			return s.do(t, req{Method: "PUT", Path: "/admin/v1/clients/" + id + "/redirect-uris", Token: tok, ContentType: "application/json", Body: body})
		}
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/admin/v1/clients", Token: admin, ContentType: "application/json",
			Body: `{"clientId":"web","scopes":["admin"]}`}), 201)

		r := put(admin, "web", `{"redirectUris":["http://localhost:3000/cb","https://app.example/cb","http://localhost:3000/cb"]}`)
		mustStatus(t, r, 200)
		if string(r.Body) != `{"data":{"clientId":"web","redirectUris":["http://localhost:3000/cb","https://app.example/cb"]}}` {
			t.Fatalf("put: %s", r.Body)
		}
		log := s.do(t, req{Method: "GET", Path: "/admin/v1/audit?action=client.redirect-uris.set", Token: admin})
		mustStatus(t, log, 200)
		if !strings.Contains(string(log.Body), `"after":{"clientId":"web","redirectUris":["http://localhost:3000/cb","https://app.example/cb"]}`) ||
			!strings.Contains(string(log.Body), `"before":{"clientId":"web","redirectUris":[]}`) {
			t.Fatalf("audit: %s", log.Body)
		}

		// The browser flows take the client now, with a person signed in.
		a := newAgent(t, s)
		a.signIn(t, demo.AdminEmail, demo.AdminPassword)
		q := url.Values{"response_type": {"token"}, "client_id": {"web"}, "redirect_uri": {"http://localhost:3000/cb"}, "scope": {"admin"}, "state": {"w"}}
		if frag := redirectParams(t, a.authorize(t, q), "http://localhost:3000/cb", true); frag.Get("access_token") == "" || frag.Get("state") != "w" {
			t.Fatalf("implicit flow of web: %v", frag)
		}
		r = put(admin, "web", `{"redirectUris":[]}`)
		mustStatus(t, r, 200)
		if string(r.Body) != `{"data":{"clientId":"web","redirectUris":[]}}` {
			t.Fatalf("put []: %s", r.Body)
		}
		if r := a.authorize(t, q); r.Status != 400 || !strings.Contains(string(r.Body), "The client &#39;web&#39; is not registered for the browser flows.") {
			t.Fatalf("authorize after the URIs were removed: %d %s", r.Status, r.Body)
		}

		mustProblem(t, put(admin, "web", `{"redirectUris":["http://app.example/cb","https://app.example/cb#x"]}`), 400, "*", map[string][]string{
			"redirectUris": {"'http://app.example/cb' is not an absolute https URL (http only on localhost) without a fragment.",
				"'https://app.example/cb#x' is not an absolute https URL (http only on localhost) without a fragment."}})
		mustProblem(t, put(admin, "web", `{}`), 400, "*", map[string][]string{"redirectUris": {"The redirectUris field is required."}})
		mustProblemStatus(t, put(admin, "web", `{"redirectUris":[],"x":1}`), 400)
		mustProblemStatus(t, put(admin, "web", `{"redirectUris":"https://app.example/cb"}`), 400)
		mustProblemStatus(t, s.do(t, req{Method: "PUT", Path: "/admin/v1/clients/web/redirect-uris", Token: admin, ContentType: "application/xml",
			Body: `<redirectUris/>`}), 415)
		mustProblem(t, put(admin, "nope", `{"redirectUris":["https://app.example/cb"]}`), 404, "Client 'nope' not found.", nil)
		mustProblemStatus(t, put("", "web", `{"redirectUris":[]}`), 401)
		mustProblemStatus(t, put(s.posToken(t), "web", `{"redirectUris":[]}`), 403)
		r = s.do(t, req{Method: "POST", Path: "/admin/v1/clients", Token: admin, ContentType: "application/json",
			Body: `{"clientId":"ops-co","scopes":["admin"],"posSystemId":"clover","companyIds":["demo-company"]}`})
		mustStatus(t, r, 201)
		restricted := s.token(t, "ops-co", r.JSON(t)["data"].(map[string]any)["clientSecret"].(string), "admin")
		mustProblemStatus(t, put(restricted, "web", `{"redirectUris":["https://app.example/cb"]}`), 403)
	})
}

// TestRotateClientSecret: the operator API's way to the use case the portal
// and the CLI share (docs/api.md §10): the new secret is answered once, the
// old one stops working at once, the change is audited without either.
func TestRotateClientSecret(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		rotate := func(tok, id string) response {
			return s.do(t, req{Method: "POST", Path: "/admin/v1/clients/" + id + "/rotate-secret", Token: tok})
		}
		r := s.do(t, req{Method: "POST", Path: "/admin/v1/clients", Token: admin, ContentType: "application/json",
			Body: `{"clientId":"till-9","scopes":["pos_integration"],"posSystemId":"clover"}`})
		mustStatus(t, r, 201)
		old := r.JSON(t)["data"].(map[string]any)["clientSecret"].(string)

		r = rotate(admin, "till-9")
		mustStatus(t, r, 200)
		data := r.JSON(t)["data"].(map[string]any)
		fresh, _ := data["clientSecret"].(string)
		if data["clientId"] != "till-9" || fresh == "" || fresh == old {
			t.Fatalf("rotate: %s", r.Body)
		}
		if tok := s.token(t, "till-9", fresh, "pos_integration"); tok == "" {
			t.Fatal("no token with the new secret")
		}
		form := url.Values{"grant_type": {"client_credentials"}, "scope": {"pos_integration"}}
		if r := s.tokenRequest(t, form, "till-9", old); r.Status != 401 || !strings.Contains(string(r.Body), `"error":"invalid_client"`) {
			t.Fatalf("old secret: %d %s", r.Status, r.Body)
		}
		log := s.do(t, req{Method: "GET", Path: "/admin/v1/audit?action=client.secret.rotate&targetId=till-9", Token: admin})
		mustStatus(t, log, 200)
		if strings.Count(string(log.Body), `"action":"client.secret.rotate"`) != 1 || strings.Contains(string(log.Body), fresh) || strings.Contains(string(log.Body), old) {
			t.Fatalf("audit: %s", log.Body)
		}

		mustProblem(t, rotate(admin, "nope"), 404, "Client 'nope' not found.", nil)
		mustProblemStatus(t, rotate("", "till-9"), 401)
		mustProblemStatus(t, rotate(s.posToken(t), "till-9"), 403)
		r = s.do(t, req{Method: "POST", Path: "/admin/v1/clients", Token: admin, ContentType: "application/json",
			Body: `{"clientId":"ops-co","scopes":["admin"],"posSystemId":"clover","companyIds":["demo-company"]}`})
		mustStatus(t, r, 201)
		restricted := s.token(t, "ops-co", r.JSON(t)["data"].(map[string]any)["clientSecret"].(string), "admin")
		mustProblemStatus(t, rotate(restricted, "till-9"), 403)
	})
}
