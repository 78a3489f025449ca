package auth

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/posgate/posgate/internal/auth/credential"
)

// TestBrowserCookies: over https the cookies are Secure and __Host-
// prefixed (Path=/, no Domain); over http (a developer's machine) neither,
// since a browser refuses the prefix on a cookie that is not Secure.
func TestBrowserCookies(t *testing.T) {
	people := struct{ People }{}
	for issuer, want := range map[string]string{"https://idp.example": "__Host-posgate-session", "http://localhost:8080": "posgate-session"} {
		b, err := newBrowser(issuer, Config{People: people})
		if err != nil {
			t.Fatal(err)
		}
		c := b.cookie(b.sessionCookie(), "v", 60)
		secure := strings.HasPrefix(issuer, "https:")
		if c.Name != want || c.Secure != secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" {
			t.Errorf("%s: cookie %+v", issuer, c)
		}
		if !strings.HasPrefix(b.csrfCookie(), strings.TrimSuffix(want, "session")) {
			t.Errorf("%s: CSRF cookie %q", issuer, b.csrfCookie())
		}
	}
}

// TestCheckForm: a form post passes only from an allowed origin (Origin,
// else Referer) with the CSRF field equal to the CSRF cookie.
func TestCheckForm(t *testing.T) {
	b, err := newBrowser("https://idp.example", Config{People: struct{ People }{}, Origins: []string{"https://portal.example/base"}})
	if err != nil {
		t.Fatal(err)
	}
	a := &Auth{browser: b}
	token := strings.Repeat("t", 43)
	form := func(origin, referer, csrf string) *http.Request {
		r := httptest.NewRequest("POST", "https://idp.example/Account/Login", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if referer != "" {
			r.Header.Set("Referer", referer)
		}
		r.AddCookie(&http.Cookie{Name: "__Host-posgate-csrf", Value: token})
		return r
	}
	for name, tc := range map[string]struct {
		r    *http.Request
		want error
	}{
		"same origin":           {form("https://idp.example", "", token), nil},
		"the portal's origin":   {form("https://PORTAL.example", "", token), nil},
		"referer only":          {form("", "https://idp.example/Account/Login?x", token), nil},
		"another origin":        {form("https://evil.example", "https://idp.example/", token), errBadOrigin},
		"no origin, no referer": {form("", "", token), errBadOrigin},
		"null origin":           {form("null", "", token), errBadOrigin},
		"wrong token":           {form("https://idp.example", "", strings.Repeat("u", 43)), errBadCSRF},
		"no token":              {form("https://idp.example", "", ""), errBadCSRF},
	} {
		if err := a.CheckForm(tc.r); err != tc.want {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

// The dummy hash that unknown e-mail addresses are checked against costs
// what a real one costs: it has credential.HashPassword's parameters, and its
// password is unknown (a likely guess does not match it).
func TestDummyPasswordHashHasTheCurrentParameters(t *testing.T) {
	real, err := credential.HashPassword("a password of someone")
	if err != nil {
		t.Fatal(err)
	}
	params := func(h string) string { return strings.Join(strings.Split(h, "$")[1:4], "$") }
	if got, want := params(dummyPasswordHash), params(real); got != want {
		t.Errorf("dummy hash parameters %s, credential.HashPassword's %s: regenerate dummyPasswordHash", got, want)
	}
	for _, guess := range []string{"", "password", "posgate-dummy-password-"} {
		if ok, err := credential.PasswordMatches(dummyPasswordHash, guess); ok || err != nil {
			t.Errorf("guess %q: match %v, error %v", guess, ok, err)
		}
	}
}
