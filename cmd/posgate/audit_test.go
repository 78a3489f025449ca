package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestAuditListCommand: the CLI's writes are in the log as channel "cli"
// by the local operator, a failed one is not, and `audit list` shows them
// as a table, as JSON lines with before and after, filtered and paged.
func TestAuditListCommand(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, env map[string]string) {
		mustCLI(t, env, "pos-system", "create", "pax", "--name", "PAX")
		mustCLI(t, env, "company", "create", "acme", "--pos", "pax", "--name", "Acme")
		mustCLI(t, env, "company", "update", "acme", "--pos", "pax", "--name", "Acme Corp", "--disable", "carousel")
		mustFail(t, env, "status", "company", "update", "acme", "--pos", "pax", "--status", "Sleeping")

		out := mustCLI(t, env, "audit", "list")
		row := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +api +test-operator +(\S+) +(\S+ \S+) +(\S*)\s*$`)
		var got []string
		for _, m := range row.FindAllStringSubmatch(out, -1) {
			got = append(got, m[1]+" "+m[2]+" "+m[3])
		}
		want := []string{"company.update company acme pax/acme", "company.create company acme pax/acme", "pos-system.create pos-system pax pax"}
		if strings.Join(got, "|") != strings.Join(want, "|") || !strings.HasPrefix(out, "TIME ") {
			t.Fatalf("audit list:\n%s\nrows %q, want %q", out, got, want)
		}

		out = mustCLI(t, env, "audit", "list", "--output", "json", "--action", "company.update")
		var es []struct {
			Channel string
			Actor   struct{ Subject, Kind, ClientID string }
			Before  struct {
				Name     string
				Features struct{ Carousel bool }
			}
			After struct {
				Name     string
				Features struct{ Carousel bool }
			}
			UserAgent string
		}
		if err := json.Unmarshal([]byte(out), &es); err != nil || len(es) != 1 {
			t.Fatalf("audit list --output json: %v\n%s", err, out)
		}
		e := es[0]
		// The CLI is a client of the operator API like any other: channel
		// api, its operator client, and its own User-Agent.
		if e.Channel != "api" || e.Actor.Kind != "client" || e.Actor.ClientID != "test-operator" || !strings.HasPrefix(e.UserAgent, "posgate-cli/") ||
			e.Before.Name != "Acme" || !e.Before.Features.Carousel || e.After.Name != "Acme Corp" || e.After.Features.Carousel {
			t.Fatalf("audit list --output json: %+v\n%s", e, out)
		}

		out = mustCLI(t, env, "audit", "list", "--limit", "1")
		cursor := regexp.MustCompile(`more entries: --cursor (\S+)`).FindStringSubmatch(out)
		if cursor == nil || !strings.Contains(out, "company.update") {
			t.Fatalf("audit list --limit 1:\n%s", out)
		}
		out = mustCLI(t, env, "audit", "list", "--limit", "5", "--cursor", cursor[1])
		if strings.Contains(out, "company.update") || !strings.Contains(out, "company.create") || strings.Contains(out, "more entries") {
			t.Fatalf("audit list --cursor:\n%s", out)
		}
		mustFail(t, env, "The cursor parameter must be a nextCursor of an earlier answer.", "audit", "list", "--cursor", "x")
		mustFail(t, env, "The from parameter must be a date-time (RFC 3339).", "audit", "list", "--from", "today")
	})
}
