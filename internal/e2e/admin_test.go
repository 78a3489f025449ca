package e2e

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestOperatorAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		call := func(method, path, body string) response {
			t.Helper()
			q := req{Method: method, Path: path, Token: admin, Body: body}
			if body != "" {
				q.ContentType = "application/json"
			}
			return s.do(t, q)
		}
		data := func(r response) map[string]any {
			t.Helper()
			return r.JSON(t)["data"].(map[string]any)
		}

		t.Run("POS token is forbidden", func(t *testing.T) {
			r := s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems", Token: s.posToken(t)})
			mustProblem(t, r, 403, "The access token lacks the scope this operation needs (admin).", nil)
			mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems"}), 401, "*", nil)
		})
		t.Run("create and list the tenancy", func(t *testing.T) {
			r := call("POST", "/admin/v1/pos-systems", `{"id":"cova","name":"Cova"}`)
			mustStatus(t, r, 201)
			if d := data(r); d["id"] != "cova" || d["name"] != "Cova" || d["createdAt"] != s.clock.Now().Format("2006-01-02T15:04:05Z") {
				t.Fatalf("pos system %s", r.Body)
			}
			r = call("POST", "/admin/v1/pos-systems/cova/companies", `{"posCompanyId":"acme","name":"Acme","features":{"carousel":false}}`)
			mustStatus(t, r, 201)
			f := data(r)["features"].(map[string]any)
			if f["carousel"] != false || f["coupons"] != true || data(r)["status"] != "Active" {
				t.Fatalf("company %s", r.Body)
			}
			mustStatus(t, call("POST", "/admin/v1/pos-systems/cova/locations", `{"posLocationId":"S1","posCompanyId":"acme","name":"Shop 1"}`), 201)
			mustStatus(t, call("POST", "/admin/v1/pos-systems/cova/locations", `{"posLocationId":"S2","posCompanyId":"acme","status":"Disabled"}`), 201)
			r = call("POST", "/admin/v1/pos-systems/cova/locations/S1/terminals", `{"terminalId":"T1","name":"Till 1"}`)
			mustStatus(t, r, 201)
			if d := data(r); d["terminalId"] != "T1" || d["posLocationId"] != "S1" || d["status"] != "Active" {
				t.Fatalf("terminal %s", r.Body)
			}

			r = call("GET", "/admin/v1/pos-systems", "")
			mustStatus(t, r, 200)
			if n := len(r.JSON(t)["data"].([]any)); n != 2 {
				t.Fatalf("%d POS systems: %s", n, r.Body)
			}
			r = call("GET", "/admin/v1/pos-systems/cova/locations?posCompanyId=acme", "")
			mustStatus(t, r, 200)
			if !strings.Contains(string(r.Body), `"posLocationId":"S1"`) || !strings.Contains(string(r.Body), `"posLocationId":"S2"`) {
				t.Fatalf("locations %s", r.Body)
			}
			r = call("GET", "/admin/v1/pos-systems/cova/locations/S1/terminals", "")
			mustStatus(t, r, 200)
			if n := len(r.JSON(t)["data"].([]any)); n != 1 {
				t.Fatalf("terminals %s", r.Body)
			}
			mustStatus(t, call("GET", "/admin/v1/pos-systems/cova/companies/acme", ""), 200)
			mustStatus(t, call("GET", "/admin/v1/pos-systems/cova", ""), 200)
			mustStatus(t, call("GET", "/admin/v1/pos-systems/cova/locations/S1/terminals/T1", ""), 200)
			r = call("GET", "/admin/v1/pos-systems/cova/companies", "")
			mustStatus(t, r, 200)
		})
		t.Run("empty lists are arrays", func(t *testing.T) {
			mustStatus(t, call("POST", "/admin/v1/pos-systems", `{"id":"empty"}`), 201)
			r := call("GET", "/admin/v1/pos-systems/empty/companies", "")
			mustStatus(t, r, 200)
			if string(r.Body) != `{"data":[]}` {
				t.Fatalf("body %s", r.Body)
			}
		})
		t.Run("conflicts", func(t *testing.T) {
			mustProblem(t, call("POST", "/admin/v1/pos-systems", `{"id":"clover"}`), 409, "*", nil)
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"demo-company"}`), 409, "*", nil)
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/locations", `{"posLocationId":"LOC123","posCompanyId":"demo-company"}`), 409, "*", nil)
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/locations/LOC123/terminals", `{"terminalId":"TERM-05"}`), 409, "*", nil)
			mustProblem(t, call("POST", "/admin/v1/clients", `{"clientId":"demo-pos","posSystemId":"clover","scopes":["pos_integration"]}`), 409, "*", nil)
		})
		t.Run("missing parents", func(t *testing.T) {
			mustProblem(t, call("POST", "/admin/v1/pos-systems/nope/companies", `{"posCompanyId":"a"}`), 404, "*", nil)
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/locations", `{"posLocationId":"L","posCompanyId":"nope"}`), 404, "*", nil)
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/locations/NOPE/terminals", `{"terminalId":"T"}`), 404, "*", nil)
			mustProblem(t, call("GET", "/admin/v1/pos-systems/clover/locations/NOPE/terminals", ""), 404, "*", nil)
			mustProblem(t, call("POST", "/admin/v1/clients", `{"posSystemId":"nope","scopes":["pos_integration"]}`), 404, "POS system 'nope' not found.", nil)
			mustProblem(t, call("POST", "/admin/v1/clients", `{"posSystemId":"clover","scopes":["pos_integration"],"companyIds":["nope"]}`), 404, "Company 'nope' of POS system 'clover' not found.", nil)
			mustProblem(t, call("PATCH", "/admin/v1/pos-systems/clover/companies/nope", `{"status":"Disabled"}`), 404, "*", nil)
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/locations/LOC123/terminals/NOPE/disable", ""), 404, "*", nil)
			mustProblem(t, call("POST", "/admin/v1/clients/nope/disable", ""), 404, "*", nil)
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
			r := call("POST", "/admin/v1/clients", `{"name":"Till app","posSystemId":"clover","scopes":["pos_integration","pos_integration"]}`)
			mustStatus(t, r, 201)
			d := data(r)
			id, secret := d["clientId"].(string), d["clientSecret"].(string)
			if !strings.HasPrefix(id, "client-") || len(secret) < 43 || d["scopes"].([]any)[0] != "pos_integration" || len(d["scopes"].([]any)) != 1 {
				t.Fatalf("created client %s", r.Body)
			}
			// The secret is never shown again.
			for _, path := range []string{"/admin/v1/clients", "/admin/v1/clients/" + id} {
				got := call("GET", path, "")
				mustStatus(t, got, 200)
				if strings.Contains(string(got.Body), secret) || strings.Contains(string(got.Body), "ecret") {
					t.Fatalf("%s shows a secret: %s", path, got.Body)
				}
			}
			tok := s.token(t, id, secret, "pos_integration")
			mustInteraction(t, s.do(t, startReq(tok, "TERM-05", "LOC123")), "TERM-05", "LOC123", "Accepted")
			mustStatus(t, call("POST", "/admin/v1/clients/"+id+"/disable", ""), 200)
			r = s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}}, id, secret)
			mustStatus(t, r, 401)
			mustStatus(t, call("POST", "/admin/v1/clients/"+id+"/enable", ""), 200)
			s.token(t, id, secret, "pos_integration")
		})
		t.Run("key rotation", func(t *testing.T) {
			old := s.posToken(t)
			oldKid, _ := claimsOf(t, old)
			r := call("POST", "/admin/v1/keys/rotate", "")
			mustStatus(t, r, 201)
			newKid := data(r)["kid"].(string)
			if newKid == oldKid["kid"] {
				t.Fatal("rotation kept the kid")
			}
			r = call("GET", "/admin/v1/keys", "")
			var keys struct {
				Data []struct {
					Kid     string `json:"kid"`
					Signing bool   `json:"signing"`
				} `json:"data"`
			}
			json.Unmarshal(r.Body, &keys)
			if len(keys.Data) != 2 || keys.Data[1].Kid != newKid || !keys.Data[1].Signing || keys.Data[0].Signing {
				t.Fatalf("keys %s", r.Body)
			}
			jwks := string(s.do(t, req{Method: "GET", Path: "/.well-known/openid-configuration/jwks"}).Body)
			if !strings.Contains(jwks, oldKid["kid"].(string)) || !strings.Contains(jwks, newKid) {
				t.Fatalf("JWKS %s", jwks)
			}
			fresh := s.posToken(t)
			if h, _ := claimsOf(t, fresh); h["kid"] != newKid {
				t.Fatalf("new token signed with %v", h["kid"])
			}
			mustStatus(t, s.do(t, startReq(old, "TERM-05", "LOC123")), 200)
			mustStatus(t, s.do(t, startReq(fresh, "TERM-05", "LOC123")), 200)
		})
	})
}

func TestHealthAndDocument(t *testing.T) {
	s := start(t, t.TempDir()+"/p.db")
	r := s.do(t, req{Method: "GET", Path: "/healthz"})
	mustStatus(t, r, 200)
	if string(r.Body) != `{"status":"ok"}` {
		t.Fatalf("healthz %s", r.Body)
	}
	r = s.do(t, req{Method: "GET", Path: "/readyz"})
	if r.Status != 200 || string(r.Body) != `{"status":"ready"}` {
		t.Fatalf("readyz %d %s", r.Status, r.Body)
	}
	r = s.do(t, req{Method: "GET", Path: "/swagger/v1/swagger.json", Undocumented: true})
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
