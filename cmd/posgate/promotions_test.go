package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/importfile"
)

// serveDemo runs posgate with the demo data on a SQLite file in-process and
// returns its base URL and the file.
func serveDemo(t *testing.T) (string, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "import.db")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan app.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- app.Serve(ctx, app.Config{Listen: "127.0.0.1:0", Database: db, Demo: true}, func(a app.Addrs) { ready <- a })
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return a.BaseURL, db
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not start")
	}
	return "", ""
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportPromotionsCommand(t *testing.T) {
	base, db := serveDemo(t)
	env := map[string]string{"POSGATE_SERVER": base, "POSGATE_CLIENT_ID": "demo-pos", "POSGATE_CLIENT_SECRET": "demo-pos-secret", "POSGATE_DATABASE": db}

	csvFile := writeFile(t, "promotions.csv", "\ufeffid,name,useForAllProducts,locationIds,categoryIds,startDate,endDate,daysOfWeek,recurrenceStartDate,recurrenceEndDate,promotionType,value\n"+
		"P1,Two validities,true,LOC123;LOC456,COFFEE,2030-01-01T00:00:00Z,2030-06-30T23:59:59Z,,,,Amount,2.5\n"+
		"P1,,,,,2030-07-01,,Saturday;Sunday,2030-07-06T08:00:00Z,2030-07-06T12:00:00Z,Percentage,10\n"+
		"P2,\"Negative, with a comma\",,,,,,,,,Amount,-1\n"+
		"P3,Elsewhere,,NOWHERE,,,,,,,,\n"+
		"P4,Fine,no,,,,,,,,,\n")
	out := mustCLI(t, withTerminal(env), "import", "promotions", csvFile, "--company", "demo-company")
	for _, want := range []string{
		"promotions.csv [##############################] 100%",
		"status:   CompletedWithErrors\ncreated:  2\nupdated:  0\nerrors:   2\nwarnings: 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	for _, re := range []string{
		`ROW\s+LINE\s+ID\s+ERROR\s+DETAILS`,
		`2\s+4\s+P2\s+The value must not be negative\.\s+promotionResults\[0\]\.value: -1`,
		`3\s+5\s+P3\s+The locationIds name locations that are not locations of company 'demo-company'\.\s+locationIds: "NOWHERE"`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Fatalf("output does not match %s:\n%s", re, out)
		}
	}
	// The operator commands: the demo's operator, by default on a
	// loopback server.
	ops := map[string]string{"POSGATE_SERVER": base}
	list := mustCLI(t, ops, "promotions", "list", "--pos", "clover", "--company", "demo-company")
	if !regexp.MustCompile(`P1\s+Two validities\s+LOC123,LOC456\s+2\s+Amount 2.5,Percentage 10`).MatchString(list) ||
		!regexp.MustCompile(`P4\s+Fine\s+all\s+0`).MatchString(list) {
		t.Fatalf("promotions list:\n%s", list)
	}
	// Saturday 2030-07-06 09:00 at LOC456: P1 (its weekend window) and P4.
	list = mustCLI(t, ops, "promotions", "list", "--pos", "clover", "--company", "demo-company", "--location", "LOC456", "--valid-at", "2030-07-06T09:00:00Z")
	if !strings.Contains(list, "P1") || !strings.Contains(list, "P4") {
		t.Fatalf("valid at:\n%s", list)
	}
	list = mustCLI(t, ops, "promotions", "list", "--pos", "clover", "--company", "demo-company", "--location", "LOC456", "--valid-at", "2030-07-06T13:00:00Z")
	if strings.Contains(list, "P1") || !strings.Contains(list, "P4") {
		t.Fatalf("valid after the window:\n%s", list)
	}

	// JSON, flags instead of the environment, no progress bar; with a
	// catalogue, warnings.
	mustCLI(t, ops, "catalogue", "set", "--pos", "clover", "--company", "demo-company", "--categories", "C1,C2", "--products", "S1")
	if out := mustCLI(t, ops, "catalogue", "show", "--pos", "clover", "--company", "demo-company"); !regexp.MustCompile(`(?s)category\s+C1\n.*category\s+C2\n.*product\s+S1`).MatchString(out) {
		t.Fatalf("catalogue show:\n%s", out)
	}
	jsonFile := writeFile(t, "promotions.json", `{"items":[{"id":"P4","name":"Fine","categoryIds":["C3"]},{"id":"P5","name":"new"}]}`)
	out = mustCLI(t, map[string]string{"POSGATE_DATABASE": db}, "import", "promotions", jsonFile, "--company", "demo-company", "--quiet",
		"--server", base, "--client-id", "demo-pos", "--client-secret", "demo-pos-secret", "--pos", "clover")
	if strings.Contains(out, "[#") || !strings.Contains(out, "status:   Completed\ncreated:  1\nupdated:  1\nerrors:   0\nwarnings: 1\n") ||
		!regexp.MustCompile(`ROW\s+ID\s+WARNING\s+DETAILS\n1\s+P4\s+The promotion names categories .*categoryIds: "C3"`).MatchString(out) {
		t.Fatalf("JSON import:\n%s", out)
	}

	// Failures.
	for _, tc := range []struct {
		args []string
		file string
		want string
	}{
		{nil, "id,name,colour\nP1,n,red\n", `line 1: unknown column "colour"`},
		{nil, "name\nn\n", "line 1: the header has no id column"},
		{nil, "id,useForAllProducts\nP1,maybe\n", `line 2: useForAllProducts: "maybe" is not true or false`},
		{nil, "id,name,value,promotionType\nP1,n,\"2,5\",Amount\n", `line 2: value "2,5" is not a number`},
		{nil, "id,name,startDate\nP1,n,tomorrow\n", `line 2: startDate "tomorrow" is not an ISO 8601 date-time`},
		{nil, "id,name\nP1,a\nP1,b\n", `line 3: name "b" differs from the first line of promotion "P1" ("a")`},
		{nil, "", "the file is empty"},
		{nil, "id,name\nP9\n", "import failed: no promotion was stored"},
		{[]string{"--company", "nope"}, "id,name\nP1,n\n", "404 Not Found: Company 'nope' is not registered."},
		{[]string{"--format", "xml"}, "id\n", `--format must be json or csv, not "xml"`},
	} {
		args := append([]string{"import", "promotions", writeFile(t, "f.csv", tc.file), "--company", "demo-company", "--quiet"}, tc.args...)
		_, err := runCLI(t, env, args...)
		if err == nil || !strings.Contains(describe(err), tc.want) {
			t.Errorf("%q: error %v, want it to say %q", tc.file, err, tc.want)
		}
	}
	// A malformed JSON file: the server's 400, field by field.
	_, err := runCLI(t, env, "import", "promotions", writeFile(t, "bad.json", `{"items":[{"id":1}]}`), "--company", "demo-company", "--quiet")
	if got := describe(err); !strings.Contains(got, "400 Bad Request") || !strings.Contains(got, "items[0].id: The items[0].id field must be a string.") {
		t.Fatalf("malformed JSON: %s", got)
	}
	_, err = runCLI(t, map[string]string{"POSGATE_SERVER": base}, "import", "promotions", csvFile, "--company", "demo-company")
	if err == nil || !strings.Contains(err.Error(), "--client-id and --client-secret") {
		t.Fatalf("no credentials: %v", err)
	}
	_, err = runCLI(t, map[string]string{"POSGATE_SERVER": base, "POSGATE_CLIENT_ID": "demo-pos", "POSGATE_CLIENT_SECRET": "wrong"}, "import", "promotions", csvFile, "--company", "demo-company")
	if err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("wrong secret: %v", err)
	}
}

func TestCSVToJSON(t *testing.T) {
	in := "id, name ,locationIds,daysOfWeek,promotionType,value\n" +
		"A,first,L1; L2,,Amount,1\n" +
		"A,,,Monday,,\n" +
		",no id,,,,\n" +
		",another without id,,,,\n" +
		"B,\"quoted \"\"name\"\"\",,,Percentage,\n"
	var out bytes.Buffer
	lines, err := importfile.PromotionsCSV(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"items":[{"id":"A","name":"first","locationIds":["L1","L2"],"promotionValidities":[{"recurrence":{"daysOfWeek":["Monday"]}}],` +
		`"promotionResults":[{"promotionType":"Amount","value":1}]},{"id":"","name":"no id"},{"id":"","name":"another without id"},` +
		`{"id":"B","name":"quoted \"name\"","promotionResults":[{"promotionType":"Percentage"}]}]}`
	if out.String() != want {
		t.Fatalf("got  %s\nwant %s", out.String(), want)
	}
	if got := lines; len(got) != 4 || got[0] != 2 || got[1] != 4 || got[2] != 5 || got[3] != 6 {
		t.Fatalf("lines %v", got)
	}
}

// TestCSVToJSONPromotionModel converts the columns of the promotion model's
// conditions and buy-X-get-Y results.
func TestCSVToJSONPromotionModel(t *testing.T) {
	in := "id,name,productIds,priority,stackable,minQuantity,minBasketAmount,requiresCoupon,promotionType,value,buyQuantity,getQuantity,getProductIds,maxApplications\n" +
		"MUFFIN,Free muffin,SANDWICH,2,no,1.5,10.00,yes,BuyXGetY,100,1,1,MUFFIN;COOKIE,3\n" +
		"FIX,Coffee at 2,COFFEE,,true,,,,FixedPrice,2,,,,\n"
	var out bytes.Buffer
	if _, err := importfile.PromotionsCSV(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"items":[{"id":"MUFFIN","name":"Free muffin","productIds":["SANDWICH"],` +
		`"promotionResults":[{"promotionType":"BuyXGetY","value":100,"buyQuantity":1,"getQuantity":1,"getProductIds":["MUFFIN","COOKIE"],"maxApplications":3}],` +
		`"priority":2,"stackable":false,"minQuantity":1.5,"minBasketAmount":10,"requiresCoupon":true},` +
		`{"id":"FIX","name":"Coffee at 2","productIds":["COFFEE"],"promotionResults":[{"promotionType":"FixedPrice","value":2}],"stackable":true}]}`
	if out.String() != want {
		t.Fatalf("got  %s\nwant %s", out.String(), want)
	}
	for _, bad := range []string{"id,priority\nA,high\n", "id,promotionType,buyQuantity\nA,BuyXGetY,one\n"} {
		if _, err := importfile.PromotionsCSV(strings.NewReader(bad), &out); err == nil || !strings.Contains(describe(err), "is not a number") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
