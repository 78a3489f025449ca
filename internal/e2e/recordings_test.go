package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/posgate/posgate/internal/app"
)

// TestRecordings reads and forgets what a demo server recorded of a POS
// client (docs/api.md §20.3), every answer validated against the served
// document: the token request and the POS call are there, the token and
// the secret are not; a restricted operator is refused, and a server that
// is no demo has no such route.
func TestRecordings(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin, pos := s.adminToken(t), s.posToken(t)
		body := `{"terminalId":"TERM-05","posLocationId":"LOC123"}`
		mustStatus(t, s.do(t, posJSON(pos, "/pos/clover/startInteraction", body)), 200)
		path := "/admin/v1/sandbox/recordings/demo-pos"
		r := s.do(t, req{Method: "GET", Path: path, Token: admin})
		mustStatus(t, r, 200)
		if strings.Contains(string(r.Body), pos) || strings.Contains(string(r.Body), "demo-pos-secret") {
			t.Fatalf("the recording holds the token or the secret: %s", r.Body)
		}
		var rec struct {
			Data struct {
				ClientID string `json:"clientId"`
				Capacity int    `json:"capacity"`
				Calls    []struct {
					Method, Path, RequestBody string
					Status                    int
					Token, Issued             *struct{ Fingerprint string }
				} `json:"calls"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &rec); err != nil {
			t.Fatal(err)
		}
		d := rec.Data
		if d.ClientID != "demo-pos" || d.Capacity != 500 || len(d.Calls) != 2 {
			t.Fatalf("recording: %s", r.Body)
		}
		tok, call := d.Calls[0], d.Calls[1]
		if tok.Path != "/connect/token" || tok.Issued == nil || tok.Token != nil || tok.RequestBody != "grant_type=client_credentials&scope=pos_integration" ||
			call.Method != "POST" || call.Path != "/pos/clover/startInteraction" || call.RequestBody != body || call.Status != 200 ||
			call.Token == nil || call.Token.Fingerprint != tok.Issued.Fingerprint || call.Issued != nil {
			t.Fatalf("recording: %s", r.Body)
		}
		mustBody(t, s.do(t, req{Method: "DELETE", Path: path, Token: admin}), `{"data":{"clientId":"demo-pos","capacity":500,"dropped":0,"calls":[]}}`)
		mustBody(t, s.do(t, req{Method: "GET", Path: path, Token: admin}), `{"data":{"clientId":"demo-pos","capacity":500,"dropped":0,"calls":[]}}`)

		// An operator restricted to a company does not see them.
		r = s.do(t, req{Method: "POST", Path: "/admin/v1/clients", Token: admin, ContentType: "application/json",
			Body: `{"clientId":"ops-demo","scopes":["admin"],"posSystemId":"clover","companyIds":["demo-company"]}`})
		mustStatus(t, r, 201)
		secret := r.JSON(t)["data"].(map[string]any)["clientSecret"].(string)
		mustProblem(t, s.do(t, req{Method: "GET", Path: path, Token: s.token(t, "ops-demo", secret, "admin")}), 403, "*", nil)

		plain := start(t, dsn, func(c *app.Config) { c.Demo = false })
		mustProblem(t, plain.do(t, req{Method: "GET", Path: path, Token: plain.adminToken(t)}), 404, "No such route: GET "+path+".", nil)
	})
}
