package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
)

func startReq(token, terminal, location string) req {
	return req{Method: "POST", Path: "/pos/clover/startInteraction", Token: token, ContentType: "application/json",
		Body: `{"terminalId":"` + terminal + `","posLocationId":"` + location + `"}`}
}

// uuidRE is a session id: a time-ordered UUID, version 7 (docs/api.md §4.1).
var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

type interaction struct {
	TerminalID    string  `json:"terminalId"`
	PosLocationID string  `json:"posLocationId"`
	SessionID     *string `json:"sessionId"`
	PosStatus     string  `json:"posStatus"`
}

// mustInteraction decodes a 200 answer strictly and checks its echo fields.
func mustInteraction(t *testing.T, r response, terminal, location, status string) interaction {
	t.Helper()
	mustStatus(t, r, 200)
	var env struct {
		Data interaction `json:"data"`
	}
	dec := json.NewDecoder(strings.NewReader(string(r.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	d := env.Data
	if d.TerminalID != terminal || d.PosLocationID != location || d.PosStatus != status {
		t.Fatalf("got %s", r.Body)
	}
	if status == "Accepted" && (d.SessionID == nil || !uuidRE.MatchString(*d.SessionID)) {
		t.Fatalf("sessionId not a random UUID: %s", r.Body)
	}
	if status == "Disabled" && (d.SessionID != nil || !strings.Contains(string(r.Body), `"sessionId":null`)) {
		t.Fatalf("a Disabled answer must carry sessionId null: %s", r.Body)
	}
	return d
}

func TestStartInteraction(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok := s.posToken(t)
		admin := s.adminToken(t)
		st := s.openStore(t)
		ctx := context.Background()

		t.Run("accepted and persisted", func(t *testing.T) {
			d := mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Accepted")
			sess, err := st.FindSession(ctx, *d.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if sess.POSSystemID != "clover" || sess.CompanyID != "demo-company" || sess.LocationID != "LOC123" || sess.TerminalID != "TERM-05" ||
				!sess.CreatedAt.Equal(s.clock.Now()) || sess.ExpiresAt.Sub(sess.CreatedAt).Hours() != 24 {
				t.Fatalf("stored session %+v", sess)
			}
			op := s.api(t, admin)
			got, err := op.Admin.GetSession(ctx, *d.SessionID)
			if op.ok(err); got.SessionID != *d.SessionID || got.TerminalID != "TERM-05" || got.PosCompanyID != "demo-company" {
				t.Fatalf("session via the operator API: %s", op.answer(nil).Body)
			}
			_, err = op.Admin.GetSession(ctx, "nope")
			mustProblem(t, op.answer(err), 404, "*", nil)
			d2 := mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Accepted")
			if *d2.SessionID == *d.SessionID {
				t.Fatal("two interactions got the same session")
			}
		})
		t.Run("content types", func(t *testing.T) {
			jsonBody := `{"terminalId":"TERM-06","posLocationId":"LOC123"}`
			xmlBody := `<StartInteractionDto><terminalId>TERM-06</terminalId><posLocationId>LOC123</posLocationId></StartInteractionDto>`
			for ct, body := range map[string]string{
				"application/json-patch+json":     jsonBody,
				"application/json":                jsonBody,
				"application/json; charset=utf-8": jsonBody,
				"text/json":                       jsonBody,
				"application/vnd.pos+json":        jsonBody,
				"application/xml":                 xmlBody,
				"text/xml":                        xmlBody,
				"application/vnd.pos+xml":         xmlBody,
				"application/xml; charset=utf-8":  `<?xml version="1.0" encoding="utf-8"?>` + xmlBody,
			} {
				r := s.do(t, req{Method: "POST", Path: "/pos/clover/startInteraction", Token: tok, ContentType: ct, Body: body})
				d := mustInteraction(t, r, "TERM-06", "LOC123", "Accepted")
				if _, err := st.FindSession(ctx, *d.SessionID); err != nil {
					t.Fatalf("%s: session not stored: %v", ct, err)
				}
			}
		})
		t.Run("response media type follows Accept", func(t *testing.T) {
			for accept, want := range map[string]string{
				"":                 "application/json; charset=utf-8",
				"text/json":        "text/json; charset=utf-8",
				"text/plain":       "text/plain; charset=utf-8",
				"application/json": "application/json; charset=utf-8",
			} {
				q := startReq(tok, "TERM-05", "LOC123")
				q.Header = map[string]string{"Accept": accept}
				r := s.do(t, q)
				mustInteraction(t, r, "TERM-05", "LOC123", "Accepted")
				if got := r.Header.Get("Content-Type"); got != want {
					t.Fatalf("Accept %q: Content-Type %q, want %q", accept, got, want)
				}
			}
		})
		t.Run("unknown properties are ignored", func(t *testing.T) { // raw: the client sends none
			r := s.call(t, tok, "POST", "/pos/clover/startInteraction", `{"terminalId":"TERM-05","posLocationId":"LOC123","cashier":"ann"}`)
			mustInteraction(t, r, "TERM-05", "LOC123", "Accepted")
		})
		t.Run("disabled terminal", func(t *testing.T) {
			mustInteraction(t, s.api(t, tok).start("TERM-99", "LOC123"), "TERM-99", "LOC123", "Disabled")
		})
		t.Run("unregistered terminal", func(t *testing.T) {
			mustProblem(t, s.api(t, tok).start("TERM-404", "LOC123"), 404, "Terminal 'TERM-404' is not registered at location 'LOC123'.", nil)
		})
		t.Run("terminal of another location", func(t *testing.T) {
			mustProblem(t, s.api(t, tok).start("TERM-07", "LOC123"), 404, "Terminal 'TERM-07' is not registered at location 'LOC123'.", nil)
		})
		t.Run("ids are case-sensitive", func(t *testing.T) {
			mustProblem(t, s.api(t, tok).start("term-05", "LOC123"), 404, "Terminal 'term-05' is not registered at location 'LOC123'.", nil)
		})
		t.Run("unknown location", func(t *testing.T) {
			mustProblem(t, s.api(t, tok).start("TERM-05", "LOC999"), 404, "Location 'LOC999' is not registered.", nil)
		})
		bad := func(body string, errs map[string][]string) {
			t.Helper()
			r := s.call(t, tok, "POST", "/pos/clover/startInteraction", body)
			mustProblem(t, r, 400, "*", errs)
		}
		t.Run("missing fields", func(t *testing.T) {
			bad(`{}`, map[string][]string{"terminalId": {"The terminalId field is required."}, "posLocationId": {"The posLocationId field is required."}})
			bad(`{"posLocationId":"LOC123"}`, map[string][]string{"terminalId": {"The terminalId field is required."}})
			bad(`{"terminalId":null,"posLocationId":"LOC123"}`, map[string][]string{"terminalId": {"The terminalId field is required."}})
		})
		t.Run("empty fields", func(t *testing.T) {
			bad(`{"terminalId":"","posLocationId":""}`, map[string][]string{"terminalId": {"The terminalId field is required."}, "posLocationId": {"The posLocationId field is required."}})
		})
		t.Run("guide spelling terminalID is not terminalId", func(t *testing.T) {
			bad(`{"terminalID":"TERM-05","posLocationId":"LOC123"}`, map[string][]string{"terminalId": {"The terminalId field is required."}})
		})
		t.Run("wrong types", func(t *testing.T) {
			bad(`{"terminalId":5,"posLocationId":"LOC123"}`, map[string][]string{"terminalId": {"The terminalId field must be a string."}})
			bad(`{"terminalId":"TERM-05","posLocationId":["LOC123"]}`, map[string][]string{"posLocationId": {"The posLocationId field must be a string."}})
		})
		t.Run("malformed bodies", func(t *testing.T) {
			for _, body := range []string{`{"terminalId":"TERM-05"`, `[]`, `"x"`, `{"terminalId":"TERM-05","posLocationId":"LOC123"} {}`, `{"terminalId":"A","terminalId":"B","posLocationId":"LOC123"}`} {
				r := s.call(t, tok, "POST", "/pos/clover/startInteraction", body)
				mustProblem(t, r, 400, "*", r400Fields(t, r))
			}
			r := s.do(t, req{Method: "POST", Path: "/pos/clover/startInteraction", Token: tok, ContentType: "application/xml", Body: `<a><terminalId>x</a>`})
			mustProblem(t, r, 400, "*", r400Fields(t, r))
		})
		t.Run("empty body", func(t *testing.T) {
			r := s.do(t, req{Method: "POST", Path: "/pos/clover/startInteraction", Token: tok, ContentType: "application/json"})
			mustProblem(t, r, 400, "*", r400Fields(t, r))
		})
		t.Run("XML entities are refused", func(t *testing.T) {
			body := `<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "TERM-05">]><a><terminalId>&x;</terminalId><posLocationId>LOC123</posLocationId></a>`
			r := s.do(t, req{Method: "POST", Path: "/pos/clover/startInteraction", Token: tok, ContentType: "application/xml", Body: body})
			mustProblem(t, r, 400, "*", r400Fields(t, r))
		})
		t.Run("other content types", func(t *testing.T) {
			for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
				r := s.do(t, req{Method: "POST", Path: "/pos/clover/startInteraction", Token: tok, ContentType: ct, Body: `{"terminalId":"TERM-05","posLocationId":"LOC123"}`})
				mustProblem(t, r, 415, "*", nil)
			}
		})
		t.Run("body too large", func(t *testing.T) {
			body := `{"terminalId":"TERM-05","posLocationId":"LOC123","pad":"` + strings.Repeat("x", 70<<10) + `"}`
			r := s.call(t, tok, "POST", "/pos/clover/startInteraction", body)
			mustProblem(t, r, 413, "*", nil)
		})
		t.Run("wrong method", func(t *testing.T) {
			r := s.do(t, req{Method: "GET", Path: "/pos/clover/startInteraction", Token: tok, Undocumented: true})
			mustProblem(t, r, 405, "*", nil)
		})
		t.Run("disabled location, company and feature", func(t *testing.T) {
			op := s.api(t, admin)
			status := func(st client.Status) *client.Status { return &st }
			flag := func(b bool) *bool { return &b }
			_, err := op.Admin.UpdateLocation(ctx, "clover", "LOC456", client.UpdateLocationRequest{Status: status(client.StatusDisabled)})
			op.ok(err)
			mustInteraction(t, s.api(t, tok).start("TERM-07", "LOC456"), "TERM-07", "LOC456", "Disabled")
			_, err = op.Admin.UpdateLocation(ctx, "clover", "LOC456", client.UpdateLocationRequest{Status: status(client.StatusActive)})
			op.ok(err)
			mustInteraction(t, s.api(t, tok).start("TERM-07", "LOC456"), "TERM-07", "LOC456", "Accepted")

			_, err = op.Admin.UpdateCompany(ctx, "clover", "demo-company", client.UpdateCompanyRequest{Features: &client.FeaturesUpdate{Transactions: flag(false)}})
			op.ok(err)
			mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Disabled")
			_, err = op.Admin.UpdateCompany(ctx, "clover", "demo-company", client.UpdateCompanyRequest{Features: &client.FeaturesUpdate{Transactions: flag(true)}})
			op.ok(err)

			_, err = op.Admin.UpdateCompany(ctx, "clover", "demo-company", client.UpdateCompanyRequest{Status: status(client.StatusDisabled)})
			op.ok(err)
			mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Disabled")
			_, err = op.Admin.UpdateCompany(ctx, "clover", "demo-company", client.UpdateCompanyRequest{Status: status(client.StatusActive)})
			op.ok(err)
			mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Accepted")

			_, err = op.Admin.DisableTerminal(ctx, "clover", "LOC123", "TERM-06")
			op.ok(err)
			mustInteraction(t, s.api(t, tok).start("TERM-06", "LOC123"), "TERM-06", "LOC123", "Disabled")
			_, err = op.Admin.EnableTerminal(ctx, "clover", "LOC123", "TERM-06")
			op.ok(err)
			mustInteraction(t, s.api(t, tok).start("TERM-06", "LOC123"), "TERM-06", "LOC123", "Accepted")
		})
		t.Run("another tenant", func(t *testing.T) {
			// A second POS system with the same location and terminal ids, and
			// a client restricted to another company of clover.
			a := s.api(t, admin).Admin
			must := func(_ any, err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			pos := []client.Scope{client.ScopePosIntegration}
			must(a.CreatePosSystem(ctx, client.CreatePosSystemRequest{ID: "pax", Name: "PAX"}))
			must(a.CreateCompany(ctx, "pax", client.CreateCompanyRequest{PosCompanyID: "demo-company"}))
			must(a.CreateLocation(ctx, "pax", client.CreateLocationRequest{PosLocationID: "LOC123", PosCompanyID: "demo-company"}))
			must(a.CreateTerminal(ctx, "pax", "LOC123", client.CreateTerminalRequest{TerminalID: "TERM-X"}))
			paxClient, err := a.CreateClient(ctx, client.CreateAPIClientRequest{ClientID: "pax-pos", PosSystemID: "pax", Scopes: pos})
			must(paxClient, err)
			pax := s.api(t, s.token(t, "pax-pos", paxClient.ClientSecret, "pos_integration"))
			// pax's LOC123 knows only TERM-X; clover's TERM-05 is not there.
			_, err = pax.StartInteraction(ctx, "pax", client.StartInteractionRequest{TerminalID: "TERM-05", PosLocationID: "LOC123"})
			mustProblem(t, pax.answer(err), 404, "Terminal 'TERM-05' is not registered at location 'LOC123'.", nil)
			_, err = pax.StartInteraction(ctx, "pax", client.StartInteractionRequest{TerminalID: "TERM-X", PosLocationID: "LOC123"})
			mustInteraction(t, pax.answer(err), "TERM-X", "LOC123", "Accepted")
			// pax's token on clover's path is forbidden.
			mustProblem(t, pax.start("TERM-05", "LOC123"), 403, "*", nil)

			must(a.CreateCompany(ctx, "clover", client.CreateCompanyRequest{PosCompanyID: "other-co"}))
			must(a.CreateLocation(ctx, "clover", client.CreateLocationRequest{PosLocationID: "OTHER-1", PosCompanyID: "other-co"}))
			must(a.CreateTerminal(ctx, "clover", "OTHER-1", client.CreateTerminalRequest{TerminalID: "T1"}))
			restricted, err := a.CreateClient(ctx, client.CreateAPIClientRequest{ClientID: "only-other", PosSystemID: "clover", Scopes: pos, CompanyIds: []string{"other-co"}})
			must(restricted, err)
			rt := s.token(t, "only-other", restricted.ClientSecret, "pos_integration")
			mustInteraction(t, s.api(t, rt).start("T1", "OTHER-1"), "T1", "OTHER-1", "Accepted")
			// demo-company's location is as absent as an unknown one: 404, not 403.
			mustProblem(t, s.api(t, rt).start("TERM-05", "LOC123"), 404, "Location 'LOC123' is not registered.", nil)
		})
	})
}

// r400Fields returns the errors map of a 400 after checking it is not empty:
// malformed bodies name what is wrong, and the exact text is the codec's.
func r400Fields(t *testing.T, r response) map[string][]string {
	t.Helper()
	var p problem
	json.Unmarshal(r.Body, &p)
	if len(p.Errors) == 0 {
		t.Fatalf("400 without errors: %s", r.Body)
	}
	return p.Errors
}

// TestRestart shows that a token and a session made before a restart still
// work after it: keys and sessions live in the store.
func TestRestart(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok := s.posToken(t)
		d := mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Accepted")
		s.restart(t)
		mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Accepted")
		sess, err := s.openStore(t).FindSession(context.Background(), *d.SessionID)
		if err != nil || sess.TerminalID != "TERM-05" {
			t.Fatalf("session after restart: %+v %v", sess, err)
		}
		// The demo data set was loaded twice and is unchanged.
		ts, err := s.openStore(t).ListTerminals(context.Background(), "clover", "")
		if err != nil || len(ts) != 4 {
			t.Fatalf("terminals after second demo load: %d %v", len(ts), err)
		}
		for _, term := range ts {
			if want := term.ID != "TERM-99"; (term.Status == posgate.StatusActive) != want {
				t.Fatalf("terminal %s is %s", term.ID, term.Status)
			}
		}
	})
}
