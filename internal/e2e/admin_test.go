package e2e

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/buildinfo"
)

func TestOperatorAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		op := s.api(t, admin)
		a, ctx := op.Admin, t.Context()
		call := func(method, path, body string) response {
			t.Helper()
			return s.admin(t, admin, method, path, body)
		}

		t.Run("POS token is forbidden", func(t *testing.T) {
			pos := s.posAPI(t)
			_, err := pos.Admin.ListPosSystems(ctx)
			mustProblem(t, pos.answer(err), 403, "The access token lacks the scope this operation needs (admin).", nil)
			noToken := s.api(t, "")
			_, err = noToken.Admin.ListPosSystems(ctx)
			mustProblem(t, noToken.answer(err), 401, "*", nil)
		})
		t.Run("create and list the tenancy", func(t *testing.T) {
			sys, err := a.CreatePosSystem(ctx, client.CreatePosSystemRequest{ID: "cova", Name: "Cova"})
			mustStatus(t, op.answer(err), 201)
			if sys.ID != "cova" || sys.Name != "Cova" || !sys.CreatedAt.Equal(s.clock.Now()) {
				t.Fatalf("pos system %s", op.answer(nil).Body)
			}
			off := false
			co, err := a.CreateCompany(ctx, "cova", client.CreateCompanyRequest{PosCompanyID: "acme", Name: "Acme", Features: &client.FeaturesUpdate{Carousel: &off}})
			mustStatus(t, op.answer(err), 201)
			if co.Features.Carousel || !co.Features.Coupons || co.Status != client.StatusActive {
				t.Fatalf("company %s", op.answer(nil).Body)
			}
			_, err = a.CreateLocation(ctx, "cova", client.CreateLocationRequest{PosLocationID: "S1", PosCompanyID: "acme", Name: "Shop 1"})
			mustStatus(t, op.answer(err), 201)
			_, err = a.CreateLocation(ctx, "cova", client.CreateLocationRequest{PosLocationID: "S2", PosCompanyID: "acme", Status: client.StatusDisabled})
			mustStatus(t, op.answer(err), 201)
			term, err := a.CreateTerminal(ctx, "cova", "S1", client.CreateTerminalRequest{TerminalID: "T1", Name: "Till 1"})
			mustStatus(t, op.answer(err), 201)
			if term.TerminalID != "T1" || term.PosLocationID != "S1" || term.Status != client.StatusActive {
				t.Fatalf("terminal %s", op.answer(nil).Body)
			}

			systems, err := a.ListPosSystems(ctx)
			if op.ok(err); len(systems) != 2 {
				t.Fatalf("%d POS systems: %s", len(systems), op.answer(nil).Body)
			}
			locs, err := a.ListLocations(ctx, "cova", "acme")
			if op.ok(err); len(locs) != 2 || locs[0].PosLocationID != "S1" || locs[1].PosLocationID != "S2" {
				t.Fatalf("locations %s", op.answer(nil).Body)
			}
			terms, err := a.ListTerminals(ctx, "cova", "S1")
			if op.ok(err); len(terms) != 1 {
				t.Fatalf("terminals %s", op.answer(nil).Body)
			}
			_, err = a.GetCompany(ctx, "cova", "acme")
			op.ok(err)
			_, err = a.GetPosSystem(ctx, "cova")
			op.ok(err)
			_, err = a.GetTerminal(ctx, "cova", "S1", "T1")
			op.ok(err)
			_, err = a.ListCompanies(ctx, "cova")
			op.ok(err)
		})
		t.Run("empty lists are arrays", func(t *testing.T) {
			_, err := a.CreatePosSystem(ctx, client.CreatePosSystemRequest{ID: "empty"})
			mustStatus(t, op.answer(err), 201)
			_, err = a.ListCompanies(ctx, "empty")
			mustBody(t, op.ok(err), `{"data":[]}`)
		})
		t.Run("conflicts", func(t *testing.T) {
			_, err := a.CreatePosSystem(ctx, client.CreatePosSystemRequest{ID: "clover"})
			mustProblem(t, op.answer(err), 409, "*", nil)
			_, err = a.CreateCompany(ctx, "clover", client.CreateCompanyRequest{PosCompanyID: "demo-company"})
			mustProblem(t, op.answer(err), 409, "*", nil)
			_, err = a.CreateLocation(ctx, "clover", client.CreateLocationRequest{PosLocationID: "LOC123", PosCompanyID: "demo-company"})
			mustProblem(t, op.answer(err), 409, "*", nil)
			_, err = a.CreateTerminal(ctx, "clover", "LOC123", client.CreateTerminalRequest{TerminalID: "TERM-05"})
			mustProblem(t, op.answer(err), 409, "*", nil)
			_, err = a.CreateClient(ctx, client.CreateAPIClientRequest{ClientID: "demo-pos", PosSystemID: "clover", Scopes: []client.Scope{client.ScopePosIntegration}})
			mustProblem(t, op.answer(err), 409, "*", nil)
		})
		t.Run("missing parents", func(t *testing.T) {
			_, err := a.CreateCompany(ctx, "nope", client.CreateCompanyRequest{PosCompanyID: "a"})
			mustProblem(t, op.answer(err), 404, "*", nil)
			_, err = a.CreateLocation(ctx, "clover", client.CreateLocationRequest{PosLocationID: "L", PosCompanyID: "nope"})
			mustProblem(t, op.answer(err), 404, "*", nil)
			_, err = a.CreateTerminal(ctx, "clover", "NOPE", client.CreateTerminalRequest{TerminalID: "T"})
			mustProblem(t, op.answer(err), 404, "*", nil)
			_, err = a.ListTerminals(ctx, "clover", "NOPE")
			mustProblem(t, op.answer(err), 404, "*", nil)
			_, err = a.CreateClient(ctx, client.CreateAPIClientRequest{PosSystemID: "nope", Scopes: []client.Scope{client.ScopePosIntegration}})
			mustProblem(t, op.answer(err), 404, "POS system 'nope' not found.", nil)
			_, err = a.CreateClient(ctx, client.CreateAPIClientRequest{PosSystemID: "clover", Scopes: []client.Scope{client.ScopePosIntegration}, CompanyIds: []string{"nope"}})
			mustProblem(t, op.answer(err), 404, "Company 'nope' of POS system 'clover' not found.", nil)
			disabled := client.StatusDisabled
			_, err = a.UpdateCompany(ctx, "clover", "nope", client.UpdateCompanyRequest{Status: &disabled})
			mustProblem(t, op.answer(err), 404, "*", nil)
			_, err = a.DisableTerminal(ctx, "clover", "LOC123", "NOPE")
			mustProblem(t, op.answer(err), 404, "*", nil)
			_, err = a.DisableClient(ctx, "nope")
			mustProblem(t, op.answer(err), 404, "*", nil)
		})
		t.Run("bad input changes nothing", func(t *testing.T) {
			before := call("GET", "/admin/v1/pos-systems/clover/companies", "").Body
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"x","colour":"red"}`), 400, "*",
				map[string][]string{"colour": {"The property 'colour' is not allowed."}})
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":""}`), 400, "*",
				map[string][]string{"posCompanyId": {"The posCompanyId field is required."}})
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"a/b"}`), 400, "*",
				map[string][]string{"posCompanyId": {"The posCompanyId field must be 1-128 printable characters without '/', '\\', '?', '#', '%' or surrounding spaces."}})
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"x","status":"Sleeping"}`), 400, "*",
				map[string][]string{"status": {"The status field must be Active or Disabled."}})
			mustProblem(t, call("PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Sleeping"}`), 400, "*",
				map[string][]string{"status": {"The status field must be Active or Disabled."}})
			mustProblem(t, call("PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"teleport":true}}`), 400, "*",
				map[string][]string{"features.teleport": {"The property 'features.teleport' is not allowed."}})
			mustProblem(t, call("POST", "/admin/v1/clients", `{"posSystemId":"clover","scopes":["root"]}`), 400, "*",
				map[string][]string{"scopes": {`Unknown scope "root" (known: pos_integration, service_api, admin).`}})
			mustProblem(t, call("POST", "/admin/v1/clients", `{"scopes":["pos_integration"]}`), 400, "*",
				map[string][]string{"posSystemId": {"A client with a POS scope must be bound to a POS system."}})
			if after := call("GET", "/admin/v1/pos-systems/clover/companies", "").Body; string(after) != string(before) {
				t.Fatalf("companies changed:\n%s\n%s", before, after)
			}
			r := s.do(t, req{Method: "POST", Path: "/admin/v1/pos-systems", Token: admin, ContentType: "text/plain", Body: `{"id":"x"}`})
			mustProblem(t, r, 415, "*", nil)
		})
		t.Run("clients", func(t *testing.T) {
			cl, err := a.CreateClient(ctx, client.CreateAPIClientRequest{Name: "Till app", PosSystemID: "clover",
				Scopes: []client.Scope{client.ScopePosIntegration, client.ScopePosIntegration}})
			mustStatus(t, op.answer(err), 201)
			id, secret := cl.ClientID, cl.ClientSecret
			if !strings.HasPrefix(id, "client-") || len(secret) < 43 || len(cl.Scopes) != 1 || cl.Scopes[0] != client.ScopePosIntegration {
				t.Fatalf("created client %s", op.answer(nil).Body)
			}
			// The secret is never shown again.
			_, err = a.ListClients(ctx)
			list := op.ok(err)
			_, err = a.GetClient(ctx, id)
			one := op.ok(err)
			for _, got := range []response{list, one} {
				if strings.Contains(string(got.Body), secret) || strings.Contains(string(got.Body), "ecret") {
					t.Fatalf("a secret is shown: %s", got.Body)
				}
			}
			// The client fetches its own token.
			till, err := client.New(s.base, client.WithHTTPClient(s.http), client.WithCredentials(id, secret, "pos_integration"))
			if err != nil {
				t.Fatal(err)
			}
			if res, err := till.StartInteraction(ctx, "clover", client.StartInteractionRequest{TerminalID: "TERM-05", PosLocationID: "LOC123"}); err != nil || res.PosStatus != client.PosStatusAccepted {
				t.Fatalf("%+v %v", res, err)
			}
			_, err = a.DisableClient(ctx, id)
			op.ok(err)
			_, err = till.RequestToken(ctx, client.TokenRequest{ClientID: id, ClientSecret: secret})
			var pe *client.Error
			if !errors.As(err, &pe) || pe.StatusCode != 401 || pe.OAuthError != "invalid_client" {
				t.Fatalf("token of a disabled client: %v", err)
			}
			_, err = a.EnableClient(ctx, id)
			op.ok(err)
			s.token(t, id, secret, "pos_integration")
		})
		t.Run("key rotation", func(t *testing.T) {
			old := s.posToken(t)
			oldKid, _ := claimsOf(t, old)
			key, err := a.RotateSigningKey(ctx)
			mustStatus(t, op.answer(err), 201)
			newKid := key.Kid
			if newKid == oldKid["kid"] {
				t.Fatal("rotation kept the kid")
			}
			keys, err := a.ListSigningKeys(ctx)
			if op.ok(err); len(keys) != 2 || keys[1].Kid != newKid || !keys[1].Signing || keys[0].Signing {
				t.Fatalf("keys %s", op.answer(nil).Body)
			}
			jwks, err := op.GetJWKS(ctx)
			op.ok(err)
			if len(jwks.Keys) != 2 || jwks.Keys[0].Kid != newKid || jwks.Keys[1].Kid != oldKid["kid"] {
				t.Fatalf("JWKS %s", op.answer(nil).Body)
			}
			fresh := s.posToken(t)
			if h, _ := claimsOf(t, fresh); h["kid"] != newKid {
				t.Fatalf("new token signed with %v", h["kid"])
			}
			mustStatus(t, s.api(t, old).start("TERM-05", "LOC123"), 200)
			mustStatus(t, s.api(t, fresh).start("TERM-05", "LOC123"), 200)
		})
	})
}

func TestHealthAndDocument(t *testing.T) {
	s := start(t, t.TempDir()+"/p.db")
	c := s.api(t, "")
	h, err := c.GetHealth(t.Context())
	// The build is the test binary's (internal/buildinfo); the instance is
	// this process's id, which a restart changes.
	bi := buildinfo.Read()
	healthBody := func(instance string) string {
		return fmt.Sprintf(`{"status":"ok","version":%q,"revision":%q,"revisionTime":%q,"modified":%t,"goVersion":%q,"instance":%q}`,
			bi.Version, bi.Revision, bi.RevisionTime, bi.Modified, bi.GoVersion, instance)
	}
	mustBody(t, c.ok(err), healthBody(h.Instance))
	if _, err := uuid.Parse(h.Instance); err != nil || bi.GoVersion != runtime.Version() {
		t.Fatalf("instance %q (%v), goVersion %q", h.Instance, err, bi.GoVersion)
	}
	again, err := c.GetHealth(t.Context())
	mustBody(t, c.ok(err), healthBody(h.Instance))
	s.restart(t)
	c = s.api(t, "")
	again, err = c.GetHealth(t.Context())
	mustBody(t, c.ok(err), healthBody(again.Instance))
	if again.Instance == h.Instance {
		t.Fatalf("a restarted process answered the same instance %q", h.Instance)
	}
	_, err = c.GetReadiness(t.Context())
	mustBody(t, c.ok(err), `{"status":"ready"}`)
	r := s.do(t, req{Method: "GET", Path: "/swagger/v1/swagger.json", Undocumented: true})
	mustStatus(t, r, 200)
	doc := r.JSON(t)
	if doc["openapi"] != "3.0.1" || doc["info"].(map[string]any)["version"] != "v1" {
		t.Fatalf("document head: %v %v", doc["openapi"], doc["info"])
	}
	if strings.Contains(string(r.Body), "{base_url}") || !strings.Contains(string(r.Body), s.base) {
		t.Fatal("document servers not filled in")
	}
	mustProblem(t, s.do(t, req{Method: "GET", Path: "/no/such/route", Undocumented: true}), 404, "No such route: GET /no/such/route.", nil)
}
