package e2e

import (
	"net/url"
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
			"/portal":                                       {200, []string{"Demo Company", "1 transactions in the last 24 hours", "LOC456"}},
			"/portal/places":                                {200, []string{"LOC123", "LOC456", "Add a POS system"}},
			"/portal/terminals":                             {200, []string{"TERM-05", "TERM-07"}},
			"/portal/content":                               {200, []string{`data-slide-id="welcome"`, "receipt-LOC123"}},
			"/portal/coupons?code=Sl75Ev":                   {200, []string{"Coupon Sl75Ev", `id="redeem"`}},
			"/portal/loyalty-users?user=john-doe":           {200, []string{`id="points">120<`}},
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
			"/portal/coupons?company=clover/demo-company&code=Sl75Ev":         404,
			"/portal/loyalty-users?company=clover/demo-company&user=john-doe": 404,
			"/portal/transactions?company=clover/demo-company":                404,
			"/portal/catalogue?company=clover/demo-company":                   404,
			"/portal/content?company=clover/demo-company":                     404,
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
