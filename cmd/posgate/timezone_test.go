package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestTimeZoneCommands: company and location commands set, show and remove
// time zones; an unknown zone is refused with the field's message and
// changes nothing; a CSV promotion date without an offset comes back as a
// wall-clock time, one with an offset as the instant in UTC.
func TestTimeZoneCommands(t *testing.T) {
	forEachStore(t, false, func(t *testing.T, s *server, env map[string]string) {
		mustCLI(t, env, "pos-system", "create", "pax")
		if out := mustCLI(t, env, "company", "create", "acme", "--pos", "pax", "--time-zone", "America/New_York"); out != "created company pax/acme\n" {
			t.Fatalf("company create: %q", out)
		}
		mustCLI(t, env, "location", "create", "S1", "--pos", "pax", "--company", "acme", "--name", "Midtown")
		mustCLI(t, env, "location", "create", "S2", "--pos", "pax", "--company", "acme", "--name", "Mitte", "--time-zone", "Europe/Berlin")
		want := "ID  COMPANY  NAME     STATUS  TIME ZONE\n" +
			"S1  acme     Midtown  Active  -\n" +
			"S2  acme     Mitte    Active  Europe/Berlin\n"
		if out := mustCLI(t, env, "location", "list", "--pos", "pax"); out != want {
			t.Fatalf("location list:\n%s\nwant:\n%s", out, want)
		}
		if out := mustCLI(t, env, "company", "list", "--pos", "pax"); !strings.HasPrefix(out, "ID    NAME  STATUS  TIME ZONE         FEATURES\nacme        Active  America/New_York  ") {
			t.Fatalf("company list:\n%s", out)
		}

		// Unknown zones: the field's message, nothing changed.
		_, err := runCLI(t, env, "location", "update", "S1", "--pos", "pax", "--time-zone", "America/NewYork")
		if got := describe(err); !strings.Contains(got, `timeZone: The timeZone field must be an IANA time zone name such as Europe/Berlin or America/New_York (or empty for none); "America/NewYork" is not one.`) {
			t.Fatalf("location update with a bad zone: %q", got)
		}
		_, err = runCLI(t, env, "company", "create", "mars", "--pos", "pax", "--time-zone", "Mars/Olympus_Mons")
		if got := describe(err); !strings.Contains(got, `"Mars/Olympus_Mons" is not one.`) {
			t.Fatalf("company create with a bad zone: %q", got)
		}
		if out := mustCLI(t, env, "location", "list", "--pos", "pax"); out != want {
			t.Fatalf("location list after the refusals:\n%s", out)
		}

		// Update and remove.
		if out := mustCLI(t, env, "location", "update", "S1", "--pos", "pax", "--time-zone", "America/Chicago"); out != "updated location pax/S1: Active, time zone America/Chicago\n" {
			t.Fatalf("location update: %q", out)
		}
		if out := mustCLI(t, env, "location", "update", "S1", "--pos", "pax", "--name", "Loop"); out != "updated location pax/S1: Active, time zone America/Chicago\n" {
			t.Fatalf("location update of the name: %q", out)
		}
		if out := mustCLI(t, env, "location", "update", "S1", "--pos", "pax", "--time-zone", ""); out != "updated location pax/S1: Active, time zone -\n" {
			t.Fatalf("location update removing the zone: %q", out)
		}
		out := mustCLI(t, env, "company", "update", "acme", "--pos", "pax", "--time-zone", "")
		if !strings.HasPrefix(out, "updated company pax/acme: Active, time zone -, features ") {
			t.Fatalf("company update removing the zone: %q", out)
		}
		var loc map[string]any
		if err := json.Unmarshal([]byte(mustCLI(t, env, "location", "update", "S1", "--pos", "pax", "--time-zone", "Asia/Tokyo", "--output", "json")), &loc); err != nil ||
			loc["timeZone"] != "Asia/Tokyo" || loc["name"] != "Loop" {
			t.Fatalf("location update --output json: %v %v", loc, err)
		}
	})
}

// TestImportPromotionsKeepsLocalTimes: a CSV date without an offset is a
// wall-clock time, kept and shown as one.
func TestImportPromotionsKeepsLocalTimes(t *testing.T) {
	base, _ := serveDemo(t)
	pos := map[string]string{"POSGATE_SERVER": base, "POSGATE_CLIENT_ID": "demo-pos", "POSGATE_CLIENT_SECRET": "demo-pos-secret"}
	csvFile := writeFile(t, "local.csv", "id,name,productIds,startDate,endDate,daysOfWeek,recurrenceStartDate,recurrenceEndDate,promotionType,value\n"+
		"L1,Breakfast,SKU-LATTE-M,2030-01-01,2030-06-30T23:59:59-04:00,Saturday;Sunday,2030-01-05T07:00:00,2030-01-05T11:00:00,Percentage,10\n")
	mustCLI(t, pos, "import", "promotions", csvFile, "--company", "demo-company", "--quiet")
	ops := map[string]string{"POSGATE_SERVER": base}
	var ps []struct {
		ID         string            `json:"id"`
		Validities []json.RawMessage `json:"promotionValidities"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, ops, "promotions", "list", "--pos", "clover", "--company", "demo-company", "--output", "json")), &ps); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.ID != "L1" {
			continue
		}
		want := `{"startDate":"2030-01-01T00:00:00","endDate":"2030-07-01T03:59:59Z","recurrence":{"daysOfWeek":["Sunday","Saturday"],"startDate":"2030-01-05T07:00:00","endDate":"2030-01-05T11:00:00"}}`
		var got bytes.Buffer
		if len(p.Validities) != 1 || json.Compact(&got, p.Validities[0]) != nil || got.String() != want {
			t.Fatalf("L1's validities: %s\nwant %s", p.Validities, want)
		}
		return
	}
	t.Fatalf("no L1 in %v", ps)
}
