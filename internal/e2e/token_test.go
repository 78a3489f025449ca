package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
)

// claimsOf decodes a JWT's header and payload without verifying it.
func claimsOf(t *testing.T, tok string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(tok, ".")
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

func mustNoStore(t *testing.T, r response) {
	t.Helper()
	if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Pragma") != "no-cache" {
		t.Fatalf("token answer %d lacks no-store headers: %v", r.Status, r.Header)
	}
}

func mustOAuthError(t *testing.T, r response, status int, code string) {
	t.Helper()
	mustStatus(t, r, status)
	mustNoStore(t, r)
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error != code || e.Description == "" {
		t.Fatalf("want error %q with a description, got %s", code, r.Body)
	}
	if status == 401 && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("401 without WWW-Authenticate: Basic: %v", r.Header)
	}
}

func TestTokenEndpoint(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		cc := url.Values{"grant_type": {"client_credentials"}, "scope": {"pos_integration"}}

		t.Run("basic", func(t *testing.T) {
			r := s.tokenRequest(t, cc, "demo-pos", "demo-pos-secret")
			mustStatus(t, r, 200)
			mustNoStore(t, r)
			var tr tokenResponse
			json.Unmarshal(r.Body, &tr)
			if tr.TokenType != "Bearer" || tr.ExpiresIn != 3600 || tr.Scope != "pos_integration" || tr.AccessToken == "" {
				t.Fatalf("token response %s", r.Body)
			}
			h, c := claimsOf(t, tr.AccessToken)
			if h["alg"] != "ES256" || h["typ"] != "at+jwt" || h["kid"] == "" {
				t.Fatalf("header %v", h)
			}
			if c["iss"] != s.base || c["aud"] != "posgate" || c["sub"] != "demo-pos" || c["client_id"] != "demo-pos" ||
				c["scope"] != "pos_integration" || c["pos_system_id"] != "clover" || c["jti"] == "" {
				t.Fatalf("claims %v", c)
			}
			if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 3600 || int64(iat) != s.clock.Now().Unix() {
				t.Fatalf("iat %v exp %v", iat, exp)
			}
			// The kid is published.
			jwks := s.call(t, "", "GET", "/.well-known/openid-configuration/jwks", "")
			mustStatus(t, jwks, 200)
			if !strings.Contains(string(jwks.Body), `"kid":"`+h["kid"].(string)+`"`) {
				t.Fatalf("kid %v not in JWKS %s", h["kid"], jwks.Body)
			}
		})
		t.Run("form fields", func(t *testing.T) {
			f := url.Values{"grant_type": {"client_credentials"}, "scope": {"pos_integration"},
				"client_id": {"demo-pos"}, "client_secret": {"demo-pos-secret"}}
			r := s.tokenRequest(t, f, "", "")
			mustStatus(t, r, 200)
			mustNoStore(t, r)
		})
		t.Run("no scope grants the client's scopes", func(t *testing.T) {
			r := s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}}, "demo-admin", "demo-admin-secret")
			mustStatus(t, r, 200)
			if !strings.Contains(string(r.Body), `"scope":"admin"`) {
				t.Fatalf("scope: %s", r.Body)
			}
		})
		t.Run("wrong secret", func(t *testing.T) {
			mustOAuthError(t, s.tokenRequest(t, cc, "demo-pos", "wrong"), 401, "invalid_client")
		})
		t.Run("unknown client", func(t *testing.T) {
			mustOAuthError(t, s.tokenRequest(t, cc, "nobody", "demo-pos-secret"), 401, "invalid_client")
		})
		t.Run("no credentials", func(t *testing.T) {
			mustOAuthError(t, s.tokenRequest(t, cc, "", ""), 401, "invalid_client")
		})
		t.Run("missing grant type", func(t *testing.T) {
			mustOAuthError(t, s.tokenRequest(t, url.Values{"scope": {"pos_integration"}}, "demo-pos", "demo-pos-secret"), 400, "invalid_request")
		})
		t.Run("unsupported grant type", func(t *testing.T) {
			mustOAuthError(t, s.tokenRequest(t, url.Values{"grant_type": {"password"}}, "demo-pos", "demo-pos-secret"), 400, "unsupported_grant_type")
		})
		t.Run("refresh token", func(t *testing.T) {
			mustOAuthError(t, s.tokenRequest(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}, "demo-pos", "demo-pos-secret"), 400, "invalid_grant")
		})
		t.Run("scope not allowed", func(t *testing.T) {
			f := url.Values{"grant_type": {"client_credentials"}, "scope": {"admin"}}
			mustOAuthError(t, s.tokenRequest(t, f, "demo-pos", "demo-pos-secret"), 400, "invalid_scope")
		})
		t.Run("GET", func(t *testing.T) {
			r := s.do(t, req{Method: "GET", Path: "/connect/token?grant_type=client_credentials", Undocumented: true})
			mustOAuthError(t, r, 405, "invalid_request")
			if r.Header.Get("Allow") != "POST" {
				t.Fatalf("Allow %q", r.Header.Get("Allow"))
			}
		})
		t.Run("implicit-flow client", func(t *testing.T) {
			admin := s.adminToken(t)
			r := s.call(t, admin, "POST", "/admin/v1/clients", `{"clientId":"spa","posSystemId":"clover","scopes":["service_api"]}`)
			mustStatus(t, r, 201)
			secret := r.JSON(t)["data"].(map[string]any)["clientSecret"].(string)
			mustOAuthError(t, s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}}, "spa", secret), 400, "unauthorized_client")
		})
		t.Run("disabled client", func(t *testing.T) {
			admin := s.adminToken(t)
			r := s.call(t, admin, "POST", "/admin/v1/clients", `{"clientId":"soon-off","posSystemId":"clover","scopes":["pos_integration"]}`)
			mustStatus(t, r, 201)
			secret := r.JSON(t)["data"].(map[string]any)["clientSecret"].(string)
			mustStatus(t, s.tokenRequest(t, cc, "soon-off", secret), 200)
			mustStatus(t, s.call(t, admin, "POST", "/admin/v1/clients/soon-off/disable", ""), 200)
			mustOAuthError(t, s.tokenRequest(t, cc, "soon-off", secret), 401, "invalid_client")
		})
		t.Run("discovery", func(t *testing.T) {
			r := s.call(t, "", "GET", "/.well-known/openid-configuration", "")
			mustStatus(t, r, 200)
			d := r.JSON(t)
			if d["issuer"] != s.base || d["token_endpoint"] != s.base+"/connect/token" || d["jwks_uri"] != s.base+"/.well-known/openid-configuration/jwks" {
				t.Fatalf("discovery %s", r.Body)
			}
		})
	})
}

func TestTokenLifetimeIsConfigurable(t *testing.T) {
	s := start(t, t.TempDir()+"/p.db", func(c *app.Config) { c.TokenTTL = 10 * time.Minute })
	r := s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}}, "demo-pos", "demo-pos-secret")
	mustStatus(t, r, 200)
	if !strings.Contains(string(r.Body), `"expires_in":600`) {
		t.Fatalf("expires_in: %s", r.Body)
	}
}

// TestSeparateIdentityListener serves the identity provider on its own
// listener with its own advertised address.
func TestSeparateIdentityListener(t *testing.T) {
	s := start(t, t.TempDir()+"/p.db", func(c *app.Config) { c.AuthListen = "127.0.0.1:0" })
	authBase := "http://" + s.addrs.Auth.String()
	if s.addrs.AuthURL != authBase {
		t.Fatalf("auth URL %q, want %q", s.addrs.AuthURL, authBase)
	}
	// The API listener has no token endpoint…
	mustProblem(t, s.do(t, req{Method: "POST", Path: "/connect/token", ContentType: "application/x-www-form-urlencoded", Body: "grant_type=client_credentials", Undocumented: true}), 404, "*", nil)
	// …the identity listener has, and its tokens work on the API.
	r := doTo(t, s.http, authBase, req{Method: "POST", Path: "/connect/token", ContentType: "application/x-www-form-urlencoded",
		Body: "grant_type=client_credentials&client_id=demo-pos&client_secret=demo-pos-secret"})
	mustStatus(t, r, 200)
	var tr tokenResponse
	json.Unmarshal(r.Body, &tr)
	if _, c := claimsOf(t, tr.AccessToken); c["iss"] != authBase {
		t.Fatalf("iss %v", c["iss"])
	}
	mustStatus(t, s.api(t, tr.AccessToken).start("TERM-05", "LOC123"), 200)
}
