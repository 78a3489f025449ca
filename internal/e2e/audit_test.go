package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// auditEntry is an entry of GET /admin/v1/audit (docs/api.md §22).
type auditEntry struct {
	ID      string `json:"id"`
	Time    string `json:"time"`
	Actor   struct{ Subject, Kind, ClientID string }
	Channel string `json:"channel"`
	Action  string `json:"action"`
	Target  struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		POSSystemID string `json:"posSystemId"`
		CompanyID   string `json:"posCompanyId"`
		LocationID  string `json:"posLocationId"`
	} `json:"target"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
	TraceID   string          `json:"traceId"`
	UserAgent string          `json:"userAgent"`
}

// auditPage reads a page of the audit log.
func auditPage(t *testing.T, s *server, token, query string) ([]auditEntry, *string) {
	t.Helper()
	r := s.do(t, req{Method: "GET", Path: "/admin/v1/audit" + query, Token: token})
	mustStatus(t, r, 200)
	var body struct {
		Data struct {
			Entries    []auditEntry `json:"entries"`
			NextCursor *string      `json:"nextCursor"`
		} `json:"data"`
	}
	dec := json.NewDecoder(strings.NewReader(string(r.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("audit page: %v\n%s", err, r.Body)
	}
	return body.Data.Entries, body.Data.NextCursor
}

// name is the "name" of an entry's before or after.
func name(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v struct{ Name string }
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("resource %s: %v", raw, err)
	}
	return v.Name
}

// TestAuditLog: a change through the operator API and one through the CLI
// appear in the log with who, when, what, before and after; a refused
// write appears nowhere; a restricted operator sees only its company's
// entries; the list's filters, paging and errors.
func TestAuditLog(t *testing.T) {
	bin, err := posgateBinary()
	if err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		const company = "/admin/v1/pos-systems/clover/companies/demo-company"
		trace := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

		// Through the API, with the caller's trace and User-Agent.
		r := s.do(t, req{Method: "PATCH", Path: company, Token: admin, ContentType: "application/json",
			Body:   `{"name":"Renamed by API","features":{"carousel":false}}`,
			Header: map[string]string{"Traceparent": trace, "User-Agent": "ops-console/2.1"}})
		mustStatus(t, r, 200)
		entries, _ := auditPage(t, s, admin, "")
		if len(entries) != 1 {
			t.Fatalf("after one API change: %d entries, want 1: %+v", len(entries), entries)
		}
		api := entries[0]
		at, err := time.Parse(time.RFC3339Nano, api.Time)
		if err != nil || at.Location() != time.UTC || !at.Equal(s.clock.Now().Truncate(time.Microsecond)) {
			t.Fatalf("entry time %q: want the server clock's %s in UTC (%v)", api.Time, s.clock.Now(), err)
		}
		if api.Channel != "api" || api.Actor.Subject != "demo-admin" || api.Actor.Kind != "client" || api.Actor.ClientID != "demo-admin" ||
			api.Action != "company.update" || api.Target.Type != "company" || api.Target.ID != "demo-company" ||
			api.Target.POSSystemID != "clover" || api.Target.CompanyID != "demo-company" ||
			!strings.HasPrefix(api.TraceID, trace[:36]) || api.UserAgent != "ops-console/2.1" || len(api.ID) != 36 {
			t.Fatalf("API entry: %+v", api)
		}
		if name(t, api.Before) != "Demo Company" || name(t, api.After) != "Renamed by API" ||
			!strings.Contains(string(api.Before), `"carousel":true`) || !strings.Contains(string(api.After), `"carousel":false`) {
			t.Fatalf("API entry's before %s, after %s", api.Before, api.After)
		}

		// A refused write (validation, before anything is written) leaves
		// no entry.
		r = s.do(t, req{Method: "PATCH", Path: company, Token: admin, ContentType: "application/json", Body: `{"status":"Sleeping"}`})
		mustProblem(t, r, 400, "*", map[string][]string{"status": {"The status field must be Active or Disabled."}})
		r = s.do(t, req{Method: "POST", Path: "/admin/v1/pos-systems/clover/companies", Token: admin, ContentType: "application/json",
			Body: `{"posCompanyId":"demo-company"}`})
		mustStatus(t, r, 409)
		if entries, _ := auditPage(t, s, admin, ""); len(entries) != 1 {
			t.Fatalf("after refused writes: %d entries, want 1", len(entries))
		}

		// Through the CLI, a client of the operator API: its change is the
		// API's (channel api), by its operator client, and names the CLI
		// in its User-Agent.
		cliFlags := []string{"--server", s.base, "--client-id", "demo-admin", "--client-secret", "demo-admin-secret"}
		out, err := exec.Command(bin, append([]string{"company", "update", "demo-company", "--pos", "clover", "--name", "Renamed by CLI"}, cliFlags...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("posgate company update: %v\n%s", err, out)
		}
		entries, _ = auditPage(t, s, admin, "?action=company.update")
		if len(entries) != 2 {
			t.Fatalf("after the CLI change: %d entries, want 2", len(entries))
		}
		cli := entries[0]
		if cli.Channel != "api" || cli.Actor.ClientID != "demo-admin" || cli.Actor.Kind != "client" || !strings.HasPrefix(cli.UserAgent, "posgate-cli/") ||
			cli.TraceID == "" || cli.Target.ID != "demo-company" || name(t, cli.Before) != "Renamed by API" || name(t, cli.After) != "Renamed by CLI" {
			t.Fatalf("CLI entry: %+v (before %s, after %s)", cli, cli.Before, cli.After)
		}
		// The CLI lists them too.
		out, err = exec.Command(bin, append([]string{"audit", "list", "--action", "company.update", "--output", "json"}, cliFlags...)...).Output()
		if err != nil {
			t.Fatalf("posgate audit list: %v\n%s", err, out)
		}
		var listed []struct {
			Channel string
			After   struct{ Name string }
		}
		if err := json.Unmarshal(out, &listed); err != nil || len(listed) != 2 || listed[0].Channel != "api" || listed[0].After.Name != "Renamed by CLI" ||
			listed[1].Channel != "api" || listed[1].After.Name != "Renamed by API" {
			t.Fatalf("posgate audit list --output json: %v\n%s", err, out)
		}

		// A restricted operator sees its company's entries only: not
		// another company's, nor the installation's (the client created
		// for it).
		r = s.do(t, req{Method: "POST", Path: "/admin/v1/pos-systems/clover/companies", Token: admin, ContentType: "application/json",
			Body: `{"posCompanyId":"other-co"}`})
		mustStatus(t, r, 201)
		r = s.do(t, req{Method: "POST", Path: "/admin/v1/clients", Token: admin, ContentType: "application/json",
			Body: `{"clientId":"ops-demo","scopes":["admin"],"posSystemId":"clover","companyIds":["demo-company"]}`})
		mustStatus(t, r, 201)
		secret := r.JSON(t)["data"].(map[string]any)["clientSecret"].(string)
		all, _ := auditPage(t, s, admin, "")
		if len(all) != 4 || all[0].Action != "client.create" || all[1].Action != "company.create" || strings.Contains(string(all[0].After), secret) ||
			strings.Contains(strings.ToLower(string(all[0].After)), "secret") {
			t.Fatalf("the whole log: %+v", all)
		}
		restricted := s.token(t, "ops-demo", secret, "admin")
		mine, _ := auditPage(t, s, restricted, "")
		if len(mine) != 2 || !strings.HasPrefix(mine[0].UserAgent, "posgate-cli/") || mine[1].Channel != "api" {
			t.Fatalf("restricted operator's log: %+v", mine)
		}
		if other, _ := auditPage(t, s, restricted, "?posCompanyId=other-co"); len(other) != 0 {
			t.Fatalf("restricted operator asking for another company: %+v", other)
		}

		// Filters and paging.
		for q, want := range map[string]int{
			"?actor=ops-demo": 0, "?actor=demo-admin": 4, "?targetType=company&targetId=other-co": 1,
			"?posSystemId=clover&posCompanyId=demo-company": 2, "?from=" + at.Format(time.RFC3339Nano): 4,
			"?to=" + at.Format(time.RFC3339Nano): 0, "?action=nothing.ever": 0,
		} {
			if got, _ := auditPage(t, s, admin, q); len(got) != want {
				t.Errorf("GET /admin/v1/audit%s: %d entries, want %d", q, len(got), want)
			}
		}
		var paged []string
		query := "?pageSize=3"
		for {
			page, next := auditPage(t, s, admin, query)
			for _, e := range page {
				paged = append(paged, e.ID)
			}
			if next == nil {
				break
			}
			query = "?pageSize=3&cursor=" + *next
		}
		if len(paged) != 4 || paged[0] != all[0].ID || paged[3] != all[3].ID {
			t.Fatalf("paged ids %v, want those of %+v", paged, all)
		}

		// Errors.
		pageSize := map[string][]string{"pageSize": {"The pageSize parameter must be an integer from 1 to 500."}}
		for q, errs := range map[string]map[string][]string{"?pageSize=0": pageSize, "?pageSize=x": pageSize, "?pageSize=501": pageSize,
			"?cursor=nope":             {"cursor": {"The cursor parameter must be a nextCursor of an earlier answer."}},
			"?from=yesterday":          {"from": {"The from parameter must be a date-time (RFC 3339)."}},
			"?to=2031-13-01T00:00:00Z": {"to": {"The to parameter must be a date-time (RFC 3339)."}},
		} {
			mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/audit" + q, Token: admin}), 400, "*", errs)
		}
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/audit"}), 401, "*", nil)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/audit", Token: s.posToken(t)}), 403,
			"The access token lacks the scope this operation needs (admin).", nil)
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/admin/v1/audit", Token: admin, Undocumented: true}), 405)
	})
}
