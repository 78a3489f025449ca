package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
)

// posRoutes are one valid request on every POS route, for a token.
func posRoutes(tok string) []req {
	j := func(path, body string) req {
		return req{Method: "POST", Path: path, Token: tok, ContentType: "application/json", Body: body}
	}
	return []req{
		j("/pos/clover/startInteraction", `{"terminalId":"TERM-05","posLocationId":"LOC123"}`),
		j("/pos/clover/coupon/couponCode/search", `{"code":"10OFFmq8kl8"}`),
		j("/v2/pos/clover/coupon/couponCodes/lookup", `{"posLocationId":"LOC123","code":"10OFFmq8kl8"}`),
		j("/v2/pos/clover/loyaltyCard/users/lookup", `{"posLocationId":"LOC123","keyword":"john"}`),
		j("/v2/pos/clover/carousel", `{"posLocationId":"LOC123","terminalId":"TERM-05"}`),
		{Method: "GET", Path: "/pos/clover/receipt/promotion/location/LOC123", Token: tok},
		j("/pos/clover/company/demo-company/import/promotions", `{"items":[]}`),
	}
}

// Disabling a client revokes its tokens on every route and scope: through
// this instance's operator API at once, behind its back (the CLI, another
// instance) within --cache-ttl (docs/api.md §3.6). This is the attack that
// was measured before: a disabled operator client whose token still
// created a new operator client and re-enabled itself.
func TestDisabledClientTokensAreRevoked(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.CacheTTL = time.Second })
		admin := s.adminToken(t)
		r := s.call(t, admin, "POST", "/admin/v1/clients", `{"clientId":"rogue","name":"Rogue operator","scopes":["admin"]}`)
		mustStatus(t, r, 201)
		rogue := s.token(t, "rogue", r.JSON(t)["data"].(map[string]any)["clientSecret"].(string), "admin")
		asRogue := func(method, path, body string) response {
			t.Helper()
			return s.admin(t, rogue, method, path, body)
		}
		mustStatus(t, asRogue("GET", "/admin/v1/clients/rogue", ""), 200)

		// Disabled by another operator through this instance: refused at once,
		// so it can neither create an operator client nor re-enable itself.
		mustStatus(t, s.call(t, admin, "POST", "/admin/v1/clients/rogue/disable", ""), 200)
		for _, q := range []struct{ method, path, body string }{
			{"POST", "/admin/v1/clients", `{"clientId":"rogue-2","scopes":["admin"]}`},
			{"POST", "/admin/v1/clients/rogue/enable", ""},
			{"GET", "/admin/v1/clients", ""},
			{"POST", "/admin/v1/keys/rotate", ""},
			{"PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Disabled"}`},
		} {
			mustRevoked(t, asRogue(q.method, q.path, q.body))
		}
		mustProblem(t, s.call(t, admin, "GET", "/admin/v1/clients/rogue-2", ""), 404, "*", nil)
		r = s.call(t, admin, "GET", "/admin/v1/clients/rogue", "")
		if mustStatus(t, r, 200); r.JSON(t)["data"].(map[string]any)["disabled"] != true {
			t.Fatalf("rogue re-enabled itself: %s", r.Body)
		}
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/demo-company", "")
		if mustStatus(t, r, 200); r.JSON(t)["data"].(map[string]any)["status"] != "Active" {
			t.Fatalf("the company was changed: %s", r.Body)
		}

		// A POS client disabled behind this instance's back (another
		// instance, the CLI): its token works until the cached client is a
		// TTL old, then no route takes it.
		pos := s.posToken(t)
		for _, q := range posRoutes(pos) {
			mustStatus(t, s.request(t, q), 200)
		}
		yes := true
		if _, err := s.openStore(t).UpdateClient(context.Background(), "demo-pos", posgate.ClientUpdate{Disabled: &yes}); err != nil {
			t.Fatal(err)
		}
		mustStatus(t, s.request(t, posRoutes(pos)[0]), 200)
		s.clock.Advance(time.Second)
		for _, q := range posRoutes(pos) {
			t.Run(q.Method+" "+q.Path, func(t *testing.T) { mustRevoked(t, s.request(t, q)) })
		}
		// Re-enabled: the operator's deliberate act makes its unexpired
		// tokens good again (posgate keeps no time of disabling).
		no := false
		if _, err := s.openStore(t).UpdateClient(context.Background(), "demo-pos", posgate.ClientUpdate{Disabled: &no}); err != nil {
			t.Fatal(err)
		}
		s.clock.Advance(time.Second)
		mustStatus(t, s.request(t, posRoutes(pos)[0]), 200)
	})
}

// mustRevoked checks the answer to a revoked token: 401 with the Bearer
// challenge naming invalid_token (RFC 6750 §3).
func mustRevoked(t *testing.T, r response) {
	t.Helper()
	const msg = "The access token is revoked: its client is disabled or no longer registered."
	mustProblem(t, r, 401, msg, nil)
	want := fmt.Sprintf(`Bearer realm="posgate", error="invalid_token", error_description="%s"`, msg)
	if got := r.Header.Get("WWW-Authenticate"); got != want {
		t.Fatalf("WWW-Authenticate %q, want %q", got, want)
	}
}
