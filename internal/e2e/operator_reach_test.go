package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestRestrictedOperator covers the operator principal's reach: an admin
// client bound to POS system clover and company demo-company sees that
// company and everything under it; another company of clover, and another
// POS system, answer exactly as if they did not exist (404 with the text of
// an unknown id, lists filtered); the installation-wide routes answer 403.
func TestRestrictedOperator(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		as := func(tok, method, path, body string) response {
			t.Helper()
			q := req{Method: method, Path: path, Token: tok, Body: body}
			if body != "" {
				q.ContentType = "application/json"
			}
			return s.request(t, q)
		}
		setup := func(method, path, body string) map[string]any {
			t.Helper()
			r := as(admin, method, path, body)
			if r.Status != 200 && r.Status != 201 {
				t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
			}
			return r.JSON(t)["data"].(map[string]any)
		}
		// Company other-co of clover, POS system cova, each with a location,
		// a terminal and content; a session at each company.
		const clover = "/admin/v1/pos-systems/clover"
		setup("POST", clover+"/companies", `{"posCompanyId":"other-co"}`)
		setup("POST", clover+"/locations", `{"posLocationId":"OTHER-1","posCompanyId":"other-co"}`)
		setup("POST", clover+"/locations/OTHER-1/terminals", `{"terminalId":"T1"}`)
		setup("POST", clover+"/companies/other-co/slides", `{"slideId":"s-other","title":"Other"}`)
		setup("POST", clover+"/companies/other-co/loyalty-users", `{"id":"u-other"}`)
		setup("POST", clover+"/companies/other-co/coupons", `{"code":"OTHER10"}`)
		setup("PUT", clover+"/locations/OTHER-1/receipt-promotion", `{"primaryText":"x","targetUrl":"https://example.com"}`)
		setup("POST", "/admin/v1/pos-systems", `{"id":"cova"}`)
		setup("POST", "/admin/v1/pos-systems/cova/companies", `{"posCompanyId":"acme"}`)
		setup("POST", "/admin/v1/pos-systems/cova/locations", `{"posLocationId":"S1","posCompanyId":"acme"}`)
		pos := s.posToken(t)
		session := func(terminal, location string) string {
			t.Helper()
			r := s.api(t, pos).start(terminal, location)
			mustStatus(t, r, 200)
			return r.JSON(t)["data"].(map[string]any)["sessionId"].(string)
		}
		ownSession, otherSession := session("TERM-05", "LOC123"), session("T1", "OTHER-1")
		secret := setup("POST", "/admin/v1/clients", `{"clientId":"ops-demo","scopes":["admin"],"posSystemId":"clover","companyIds":["demo-company"]}`)["clientSecret"].(string)
		tok := s.token(t, "ops-demo", secret, "admin")

		ids := func(r response, key string) []string {
			t.Helper()
			mustStatus(t, r, 200)
			var body struct {
				Data []map[string]any `json:"data"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, d := range body.Data {
				out = append(out, d[key].(string))
			}
			slices.Sort(out)
			return out
		}
		wantIDs := func(path, key string, want ...string) {
			t.Helper()
			if got := ids(as(tok, "GET", path, ""), key); !slices.Equal(got, want) {
				t.Fatalf("GET %s: %v, want %v", path, got, want)
			}
		}

		t.Run("own company and everything under it", func(t *testing.T) {
			const demo = clover + "/companies/demo-company"
			for _, path := range []string{clover, demo, clover + "/locations/LOC123", clover + "/locations/LOC123/terminals/TERM-05",
				demo + "/slides/welcome", demo + "/coupons/Sl75Ev", demo + "/loyalty-users/john-doe", demo + "/promotions/DEMO-COFFEE-2OFF",
				demo + "/catalogue", demo + "/carousel", clover + "/locations/LOC123/receipt-promotion", "/admin/v1/sessions/" + ownSession} {
				mustStatus(t, as(tok, "GET", path, ""), 200)
			}
			wantIDs(clover+"/locations/LOC123/terminals", "terminalId", "TERM-05", "TERM-06", "TERM-99")
			wantIDs(demo+"/slides", "slideId", "coffee", "loyalty", "welcome")
			wantIDs(demo+"/promotions", "id", "DEMO-AIRPORT-MUFFIN", "DEMO-COFFEE-2OFF", "DEMO-COUPON-COOKIE", "DEMO-CROISSANTS-3", "DEMO-LATTE-M-3", "DEMO-SANDWICH-MUFFIN", "DEMO-WEEKEND-BREAKFAST")
			mustStatus(t, as(tok, "POST", clover+"/locations", `{"posLocationId":"LOC789","posCompanyId":"demo-company"}`), 201)
			mustStatus(t, as(tok, "POST", clover+"/locations/LOC789/terminals", `{"terminalId":"TERM-08"}`), 201)
			// A loyalty user without an id gets one, as from the CLI.
			r := as(tok, "POST", demo+"/loyalty-users", `{"firstName":"Restricted"}`)
			mustStatus(t, r, 201)
			if id, _ := r.JSON(t)["data"].(map[string]any)["id"].(string); !strings.HasPrefix(id, "u-") || len(id) != 18 {
				t.Fatalf("generated loyalty user id %q", id)
			}
			mustStatus(t, as(tok, "POST", demo+"/coupons", `{"code":"OPS-A"}`), 201)
			mustStatus(t, as(tok, "POST", demo+"/coupons/OPS-A/cancel", ""), 200)
		})
		t.Run("lists are filtered", func(t *testing.T) {
			wantIDs("/admin/v1/pos-systems", "id", "clover")
			wantIDs(clover+"/companies", "posCompanyId", "demo-company")
			wantIDs(clover+"/locations", "posLocationId", "LOC123", "LOC456", "LOC789")
			mustBody(t, as(tok, "GET", clover+"/locations?posCompanyId=other-co", ""), `{"data":[]}`)
		})
		t.Run("another company is absent", func(t *testing.T) {
			const other = clover + "/companies/other-co"
			// Each hidden path answers as its unknown twin does.
			for _, c := range []struct{ method, hidden, unknown, body string }{
				{"GET", other, clover + "/companies/nope", ""},
				{"PATCH", other, clover + "/companies/nope", `{"name":"x"}`},
				{"GET", other + "/slides", clover + "/companies/nope/slides", ""},
				{"GET", other + "/slides/s-other", clover + "/companies/nope/slides/s-other", ""},
				{"POST", other + "/slides", clover + "/companies/nope/slides", `{"title":"x"}`},
				{"GET", other + "/coupons/OTHER10", clover + "/companies/nope/coupons/OTHER10", ""},
				{"POST", other + "/coupons/OTHER10/redeem", clover + "/companies/nope/coupons/OTHER10/redeem", ""},
				{"POST", other + "/coupons", clover + "/companies/nope/coupons", `{"code":"X1"}`},
				{"GET", other + "/loyalty-users/u-other", clover + "/companies/nope/loyalty-users/u-other", ""},
				{"POST", other + "/loyalty-users", clover + "/companies/nope/loyalty-users", `{"id":"x"}`},
				{"GET", other + "/promotions", clover + "/companies/nope/promotions", ""},
				{"GET", other + "/catalogue", clover + "/companies/nope/catalogue", ""},
				{"GET", other + "/carousel", clover + "/companies/nope/carousel", ""},
				{"GET", other + "/receipt-promotions", clover + "/companies/nope/receipt-promotions", ""},
				{"GET", other + "/impressions", clover + "/companies/nope/impressions", ""},
				{"GET", clover + "/locations/OTHER-1", clover + "/locations/NOPE-1", ""},
				{"PATCH", clover + "/locations/OTHER-1", clover + "/locations/NOPE-1", `{"name":"x"}`},
				{"GET", clover + "/locations/OTHER-1/terminals", clover + "/locations/NOPE-1/terminals", ""},
				{"GET", clover + "/locations/OTHER-1/terminals/T1", clover + "/locations/NOPE-1/terminals/T1", ""},
				{"POST", clover + "/locations/OTHER-1/terminals/T1/disable", clover + "/locations/NOPE-1/terminals/T1/disable", ""},
				{"POST", clover + "/locations/OTHER-1/terminals", clover + "/locations/NOPE-1/terminals", `{"terminalId":"T2"}`},
				{"GET", clover + "/locations/OTHER-1/receipt-promotion", clover + "/locations/NOPE-1/receipt-promotion", ""},
				{"POST", clover + "/locations", clover + "/locations", `{"posLocationId":"L9","posCompanyId":"other-co"}`},
			} {
				got := as(tok, c.method, c.hidden, c.body)
				mustProblem(t, got, 404, "*", nil)
				unknownBody := c.body
				if c.method == "POST" && c.hidden == c.unknown {
					unknownBody = `{"posLocationId":"L9","posCompanyId":"nope"}`
				}
				want := as(tok, c.method, c.unknown, unknownBody)
				mustProblem(t, want, 404, "*", nil)
				var g, w problem
				json.Unmarshal(got.Body, &g)
				json.Unmarshal(want.Body, &w)
				if twin := replaceIDs(w.Detail); g.Detail != twin {
					t.Errorf("%s %s: %q, its unknown twin %q", c.method, c.hidden, g.Detail, twin)
				}
			}
			mustProblem(t, as(tok, "GET", "/admin/v1/sessions/"+otherSession, ""), 404, `session "`+otherSession+`" not found`, nil)
			mustProblem(t, as(tok, "GET", "/admin/v1/sessions/no-such-session", ""), 404, `session "no-such-session" not found`, nil)
			// The unrestricted operator still sees all of it.
			mustStatus(t, as(admin, "GET", other+"/slides/s-other", ""), 200)
			mustStatus(t, as(admin, "GET", "/admin/v1/sessions/"+otherSession, ""), 200)
		})
		t.Run("another POS system is absent", func(t *testing.T) {
			for _, c := range []struct{ path, detail string }{
				{"/admin/v1/pos-systems/cova", `POS system "cova" not found`},
				{"/admin/v1/pos-systems/cova/companies", `POS system "cova" not found`},
				{"/admin/v1/pos-systems/cova/locations", `POS system "cova" not found`},
				{"/admin/v1/pos-systems/cova/companies/acme", `company "acme" not found`},
				{"/admin/v1/pos-systems/cova/companies/acme/slides", `company "acme" not found`},
				{"/admin/v1/pos-systems/cova/locations/S1", `location "S1" not found`},
			} {
				mustProblem(t, as(tok, "GET", c.path, ""), 404, c.detail, nil)
			}
			mustProblem(t, as(tok, "POST", "/admin/v1/pos-systems/cova/companies", `{"posCompanyId":"x"}`), 404, `POS system "cova" not found`, nil)
			mustProblem(t, as(tok, "GET", "/admin/v1/pos-systems/nope", ""), 404, `POS system "nope" not found`, nil)
		})
		t.Run("installation-wide routes are forbidden", func(t *testing.T) {
			const msg = "This operation acts on the whole installation; your access is limited to some POS systems, companies or locations."
			for _, c := range []struct{ method, path, body string }{
				{"GET", "/admin/v1/clients", ""},
				{"GET", "/admin/v1/clients/demo-pos", ""},
				{"POST", "/admin/v1/clients", `{"clientId":"x","scopes":["admin"]}`},
				{"POST", "/admin/v1/clients/demo-pos/disable", ""},
				{"GET", "/admin/v1/keys", ""},
				{"POST", "/admin/v1/keys/rotate", ""},
				{"POST", "/admin/v1/pos-systems", `{"id":"pax"}`},
			} {
				mustProblem(t, as(tok, c.method, c.path, c.body), 403, msg, nil)
			}
			// A company-restricted operator cannot register further companies.
			mustProblem(t, as(tok, "POST", clover+"/companies", `{"posCompanyId":"new-co"}`), 403,
				"Your access is limited to some companies: you cannot register other companies.", nil)
			mustStatus(t, as(admin, "GET", "/admin/v1/clients/demo-pos", ""), 200)
			wantIDs(clover+"/companies", "posCompanyId", "demo-company")
		})
	})
}

// replaceIDs turns the detail of an unknown id's 404 into the one its
// hidden twin must show: the same text, with the hidden id.
func replaceIDs(detail string) string {
	return strings.NewReplacer(`"nope"`, `"other-co"`, `"NOPE-1"`, `"OTHER-1"`).Replace(detail)
}
