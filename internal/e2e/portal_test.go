package e2e

import (
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/demo"
)

// portalSignIn signs the agent in and checks it lands on the portal.
func (a *agent) portalSignIn(t *testing.T, email, password string) {
	t.Helper()
	r := a.get(t, "/portal")
	if r.Status != 303 || r.Header.Get("Location") != "/Account/Login?ReturnUrl=%2Fportal" {
		t.Fatalf("/portal without a session: %d %q", r.Status, r.Header.Get("Location"))
	}
	page := a.get(t, "/Account/Login?ReturnUrl=%2Fportal")
	r = a.post(t, "/Account/Login", url.Values{"csrf": {csrf(t, page)}, "email": {email}, "password": {password}, "ReturnUrl": {"/portal"}}, a.s.base)
	if r.Status != 303 || r.Header.Get("Location") != "/portal" {
		t.Fatalf("sign-in of %s: %d %q", email, r.Status, r.Header.Get("Location"))
	}
}

// TestPortalPages opens every page of the portal as the demo's admin and
// as its location manager: each answers with its status and shows what
// the role reaches (a sale, the demo's promotions and catalogue, the
// people), with the security headers; a bad filter names its field; a
// session is found by its id.
func TestPortalPages(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		pos := s.posToken(t)
		in := mustInteraction(t, s.do(t, startReq(pos, "TERM-05", "LOC123")), "TERM-05", "LOC123", "Accepted")
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/pos/clover/transaction", Token: pos, ContentType: "application/json",
			Body: `{"sessionId":"` + *in.SessionID + `","transactionId":"SALE-PAGES","terminalId":"TERM-05","posLocationId":"LOC123","transactionType":"Sale",` +
				`"transactionAmount":7.5,"transactionDate":"` + s.clock.Now().UTC().Format(time.RFC3339) + `"}`}), 200)

		admin := newAgent(t, s)
		admin.portalSignIn(t, demo.AdminEmail, demo.AdminPassword)
		for path, want := range map[string]struct {
			status int
			has    []string
		}{
			"/portal":                                       {200, []string{"Demo Company", "1 interactions and 1 transactions in the last 24 hours", "LOC456"}},
			"/portal/places":                                {200, []string{"LOC123", "LOC456", "Add a POS system"}},
			"/portal/terminals":                             {200, []string{"TERM-05", "TERM-07"}},
			"/portal/content":                               {200, []string{`data-slide-id="welcome"`, "receipt-LOC123"}},
			"/portal/coupons?code=Sl75Ev":                   {200, []string{"Coupon Sl75Ev", `id="redeem"`}},
			"/portal/loyalty-users?user=john-doe":           {200, []string{`id="points">120<`}},
			"/portal/loyalty-users?keyword=doe":             {200, []string{"jane-doe", "john-doe", "ava-doerr"}},
			"/portal/loyalty-users?keyword=x":               {400, []string{"keyword"}},
			"/portal/coupons?email=john.doe@example.com":    {200, []string{"5 coupons found", "COOKIE1", "FREECOFFEE1", "SUMMER24"}},
			"/portal/coupons?phone=abc":                     {400, []string{"The phone field must contain digits."}},
			"/portal/transactions":                          {200, []string{"SALE-PAGES", "1 transactions"}},
			"/portal/transactions?session=" + *in.SessionID: {200, []string{"Session " + *in.SessionID, "terminal TERM-05"}},
			"/portal/transactions?day=yesterday":            {400, []string{"<b>day</b>: The day parameter must be a date (YYYY-MM-DD)."}},
			"/portal/catalogue":                             {200, []string{"DEMO-COFFEE-2OFF", "SKU-LATTE-L", "PASTRY"}},
			"/portal/companies/clover/demo-company":         {200, []string{"Feature switches", "Loyalty program"}},
			"/portal/people":                                {200, []string{demo.ManagerEmail, demo.AdminEmail}},
			"/portal/clients":                               {200, []string{"demo-pos", "swagger-ui"}},
			"/portal/audit":                                 {200, []string{"No entries."}},
			"/portal/nothing":                               {404, []string{"There is no such page."}},
		} {
			r := admin.get(t, path)
			if r.Status != want.status {
				t.Errorf("admin %s: %d, want %d: %.500s", path, r.Status, want.status, r.Body)
				continue
			}
			for _, h := range want.has {
				if !strings.Contains(string(r.Body), h) {
					t.Errorf("admin %s lacks %q", path, h)
				}
			}
			if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
				r.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("admin %s: headers %v", path, r.Header)
			}
		}

		manager := newAgent(t, s)
		manager.portalSignIn(t, demo.ManagerEmail, demo.ManagerPassword)
		for path, want := range map[string]int{
			"/portal": 200, "/portal/terminals": 200, "/portal/places": 200, "/portal/audit": 200, "/portal/people": 200,
			"/portal/clients": 403, "/portal/companies/clover/demo-company": 404, "/portal/locations/clover/LOC456": 404,
			"/portal/coupons?company=clover/demo-company&code=Sl75Ev":                404,
			"/portal/loyalty-users?company=clover/demo-company&user=john-doe":        404,
			"/portal/loyalty-users?company=clover/demo-company&keyword=doe":          404,
			"/portal/coupons?company=clover/demo-company&email=john.doe@example.com": 404,
			"/portal/transactions?company=clover/demo-company":                       404,
			"/portal/catalogue?company=clover/demo-company":                          404,
			"/portal/content?company=clover/demo-company":                            404,
		} {
			r := manager.get(t, path)
			if r.Status != want {
				t.Errorf("manager %s: %d, want %d: %.300s", path, r.Status, want, r.Body)
			}
			if r.Status != 404 && strings.Contains(string(r.Body), "LOC456") {
				t.Errorf("manager %s shows LOC456", path)
			}
		}
	})
}

// TestPortalClients: an admin creates an API client in the portal and sees
// its secret once (not on the next page), which gets a token; rotating the
// secret shows a new one, which works while the old one no longer does;
// a disabled client gets no token. A bad form changes nothing.
func TestPortalClients(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		a := newAgent(t, s)
		a.portalSignIn(t, demo.AdminEmail, demo.AdminPassword)
		page := a.get(t, "/portal/clients")
		token := csrf(t, page)
		secretRE := regexp.MustCompile(`<code id="created-secret">([^<]+)</code>`)
		tokenStatus := func(secret string) int {
			t.Helper()
			r, err := http.PostForm(s.base+"/connect/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {"till-9"},
				"client_secret": {secret}, "scope": {"pos_integration"}})
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			return r.StatusCode
		}

		r := a.post(t, "/portal/clients", url.Values{"csrf": {token}, "clientId": {"till-9"}, "name": {"Till 9"}, "posSystemId": {"nope"},
			"scopes": {"pos_integration"}}, s.base)
		if r.Status != 404 || !strings.Contains(string(r.Body), `id="error"`) || !strings.Contains(string(r.Body), "nope") {
			t.Fatalf("a client of an unknown POS system: %d %s", r.Status, r.Body)
		}
		r = a.post(t, "/portal/clients", url.Values{"csrf": {token}, "clientId": {"till-9"}, "name": {"Till 9"}, "posSystemId": {"clover"},
			"scopes": {"pos_integration"}}, s.base)
		m := secretRE.FindSubmatch(r.Body)
		if r.Status != 201 || m == nil {
			t.Fatalf("creating a client: %d %s", r.Status, r.Body)
		}
		first := string(m[1])
		if tokenStatus(first) != 200 {
			t.Fatal("the new client's secret gets no token")
		}
		if again := a.get(t, "/portal/clients"); strings.Contains(string(again.Body), first) || !strings.Contains(string(again.Body), `id="client-till-9"`) {
			t.Fatal("the secret is shown again, or the client is not listed")
		}

		r = a.post(t, "/portal/clients/till-9/rotate", url.Values{"csrf": {token}}, s.base)
		m = secretRE.FindSubmatch(r.Body)
		if r.Status != 200 || m == nil || string(m[1]) == first {
			t.Fatalf("rotating: %d %s", r.Status, r.Body)
		}
		if tokenStatus(first) != 401 || tokenStatus(string(m[1])) != 200 {
			t.Fatal("after the rotation the old secret should fail and the new one work")
		}
		r = a.post(t, "/portal/clients/till-9/disable", url.Values{"csrf": {token}}, s.base)
		if r.Status != 303 {
			t.Fatalf("disabling: %d", r.Status)
		}
		if tokenStatus(string(m[1])) == 200 {
			t.Fatal("a disabled client got a token")
		}
		actions := auditActions(t, s, "?targetId=till-9")
		if want := "client.disable,client.secret.rotate,client.create"; actions != want {
			t.Fatalf("audit of till-9: %s, want %s", actions, want)
		}
	})
}

// auditActions lists the actions of the audit entries the query selects,
// newest first, checking each came from the portal.
func auditActions(t *testing.T, s *server, query string) string {
	t.Helper()
	entries, _ := auditPage(t, s, s.adminToken(t), query)
	var out []string
	for _, e := range entries {
		if e.Channel != "portal" || e.Actor.Kind != "person" || e.Actor.ClientID != "portal" || strings.Contains(string(e.After), "ecret\":\"") {
			t.Errorf("entry %+v", e)
		}
		out = append(out, e.Action)
	}
	return strings.Join(out, ",")
}

// TestFavicon: /favicon.ico, which browsers ask every site for, is an
// icon (a PNG in an ICO container), not a 404.
func TestFavicon(t *testing.T) {
	s := start(t, filepath.Join(t.TempDir(), "posgate.db"))
	r := s.do(t, req{Method: "GET", Path: "/favicon.ico", Undocumented: true})
	mustStatus(t, r, 200)
	if ct := r.Header.Get("Content-Type"); ct != "image/x-icon" {
		t.Fatalf("content type %q", ct)
	}
	if b := r.Body; len(b) < 22+8 || string(b[:4]) != "\x00\x00\x01\x00" || string(b[22:30]) != "\x89PNG\r\n\x1a\n" {
		t.Fatalf("not an ICO holding a PNG: % x", b[:min(len(b), 32)])
	}
}
