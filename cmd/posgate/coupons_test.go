package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/posgate/posgate/internal/coupongen"
)

// forEachDatabase runs fn with the environment of the CLI against a fresh
// server on a SQLite file and, when configured, one on a fresh PostgreSQL
// schema (forEachStore).
func forEachDatabase(t *testing.T, fn func(t *testing.T, env map[string]string)) {
	forEachStore(t, false, func(t *testing.T, _ *server, env map[string]string) { fn(t, env) })
}

// mustFail runs a command that must fail with a message containing want.
func mustFail(t *testing.T, env map[string]string, want string, args ...string) {
	t.Helper()
	out, err := runCLI(t, env, args...)
	if err == nil {
		t.Fatalf("posgate %s succeeded: %s", strings.Join(args, " "), out)
	}
	if got := describe(err); !strings.Contains(got, want) {
		t.Fatalf("posgate %s: error %q, want it to contain %q", strings.Join(args, " "), got, want)
	}
}

func TestCouponCommands(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, env map[string]string) {
		mustCLI(t, env, "pos-system", "create", "clover")
		mustCLI(t, env, "company", "create", "acme", "--pos", "clover")
		mustCLI(t, env, "location", "create", "S1", "--pos", "clover", "--company", "acme")
		mustCLI(t, env, "location", "create", "S2", "--pos", "clover", "--company", "acme")
		co := []string{"--pos", "clover", "--company", "acme"}
		with := func(args ...string) []string { return append(args, co...) }

		t.Run("loyalty users", func(t *testing.T) {
			out := mustCLI(t, env, with("loyalty-user", "create", "--id", "u1", "--first-name", "Ann", "--last-name", "Lee",
				"--email", "ann@example.com", "--phone", "+1 555 0100", "--stamps", "2", "--points", "50")...)
			if want := "created loyalty user u1 of clover/acme: Ann Lee, gender -, phone +1 555 0100, e-mail ann@example.com, 2 stamps, 50 points\n"; out != want {
				t.Fatalf("create: %q, want %q", out, want)
			}
			out = mustCLI(t, env, with("loyalty-user", "update", "u1", "--last-name", "Leigh", "--gender", "Female")...)
			if !strings.Contains(out, "Ann Leigh, gender Female, phone +1 555 0100") {
				t.Fatalf("update: %s", out)
			}
			if out = mustCLI(t, env, with("loyalty-user", "adjust", "u1", "--stamps", "1", "--points", "-20")...); !strings.Contains(out, "3 stamps, 30 points") {
				t.Fatalf("adjust: %s", out)
			}
			mustFail(t, env, "Loyalty user u1 has 30 points: taking 31 would leave -1, below 0. Nothing was changed.", with("loyalty-user", "adjust", "u1", "--points", "-31")...)
			mustFail(t, env, "give --stamps or --points", with("loyalty-user", "adjust", "u1")...)
			mustFail(t, env, `loyalty user "u1" already exists`, with("loyalty-user", "create", "--id", "u1")...)
			mustFail(t, env, "email: The email field must be an e-mail address", with("loyalty-user", "create", "--id", "u2", "--email", "nope")...)
			mustFail(t, env, `loyalty user "u9" not found`, with("loyalty-user", "show", "u9")...)
			if out = mustCLI(t, env, with("loyalty-user", "show", "u1")...); !strings.Contains(out, "Ann Leigh, gender Female, phone +1 555 0100, e-mail ann@example.com, 3 stamps, 30 points") {
				t.Fatalf("show: %s", out)
			}
			if out = mustCLI(t, env, with("loyalty-user", "create", "--first-name", "Gen")...); !regexp.MustCompile(`created loyalty user u-[a-z2-7]{16} of`).MatchString(out) {
				t.Fatalf("generated id: %s", out)
			}
		})
		t.Run("issue, show, redeem, cancel", func(t *testing.T) {
			if out := mustCLI(t, env, with("coupon", "issue", "C-1", "--user", "u1", "--name", "Ten", "--title", "", "--until", "2099-01-01T00:00:00+01:00",
				"--locations", "S2,S1", "--info", `[{"title":"Terms","items":{"a":"b","c":null}}]`)...); out != "issued coupon C-1 of clover/acme\n" {
				t.Fatalf("issue: %q", out)
			}
			out := mustCLI(t, env, with("coupon", "show", "c-1")...)
			for _, want := range []string{"code:            C-1", "status:          Issued", "name:            Ten", "title:           -\n", // the API takes no empty title: absent
				"pictureUrl:      -", "availableUntil:  2098-12-31T23:00:00Z", `info:            [{"title":"Terms","items":{"a":"b","c":null}}]`,
				"userId:          u1", "email:           -", "locations:       S1,S2"} {
				if !strings.Contains(out, want) {
					t.Fatalf("show lacks %q:\n%s", want, out)
				}
			}
			if out := mustCLI(t, env, with("coupon", "redeem", "c-1")...); out != "coupon C-1 of clover/acme is Redeemed\n" {
				t.Fatalf("redeem: %q", out)
			}
			mustFail(t, env, `coupon "C-1" is Redeemed; only an Issued coupon can be redeemed`, with("coupon", "redeem", "C-1")...)
			mustCLI(t, env, with("coupon", "issue", "C-2", "--email", "guest@example.com", "--provider", "PJM")...)
			if out := mustCLI(t, env, with("coupon", "cancel", "C-2")...); out != "coupon C-2 of clover/acme is Cancelled\n" {
				t.Fatalf("cancel: %q", out)
			}
			mustCLI(t, env, with("coupon", "issue", "C-3", "--until", "2001-01-01T00:00:00Z")...)
			if out := mustCLI(t, env, with("coupon", "show", "C-3")...); !strings.Contains(out, "status:          Expired") || !strings.Contains(out, "locations:       every location") {
				t.Fatalf("expired coupon: %s", out)
			}
			mustFail(t, env, `coupon "C-3" is Expired; only an Issued coupon can be cancelled`, with("coupon", "cancel", "C-3")...)
			mustFail(t, env, `coupon "c-1" already exists`, with("coupon", "issue", "c-1")...)
			mustFail(t, env, `--until "tomorrow" is not an RFC 3339 date-time`, with("coupon", "issue", "C-4", "--until", "tomorrow")...)
			mustFail(t, env, "--info is not a JSON array", with("coupon", "issue", "C-4", "--info", "{")...)
			mustFail(t, env, "rewardProvider: The rewardProvider field must be one of TwoReward, PJM, Dummy.", with("coupon", "issue", "C-4", "--provider", "Acme")...)
			mustFail(t, env, `location "S9" of company "acme" not found`, with("coupon", "issue", "C-4", "--locations", "S9")...)
			mustFail(t, env, `loyalty user "u9" not found`, with("coupon", "issue", "C-4", "--user", "u9")...)
			mustFail(t, env, `coupon "C-4" not found`, with("coupon", "show", "C-4")...)
		})
		t.Run("import CSV with progress", func(t *testing.T) {
			var b strings.Builder
			b.WriteString("\uFEFFcode,name,userId,locationIds,availableUntil,status,info\n")
			for i := range 20_000 {
				fmt.Fprintf(&b, "CSV-%05d,Coupon %d,u1,S1;S2,2099-06-30T12:00:00Z,,\n", i, i)
			}
			b.WriteString(`CSV-LAST,"Quoted, name",,,,Redeemed,"[{""title"":""T"",""items"":null}]"` + "\n")
			out := mustCLI(t, withTerminal(env), with("coupon", "import", writeFile(t, "coupons.csv", b.String()))...)
			for _, want := range []string{"  10000 coupons read…", "  20000 coupons read…", "imported 20001 coupons into clover/acme in "} {
				if !strings.Contains(out, want) {
					t.Fatalf("import output lacks %q:\n%s", want, out)
				}
			}
			// Not on a terminal: no progress lines, only the result.
			b.Reset()
			b.WriteString("code\n")
			for i := range 10_001 {
				fmt.Fprintf(&b, "PIPE-%05d\n", i)
			}
			out = mustCLI(t, env, with("coupon", "import", writeFile(t, "piped.csv", b.String()))...)
			if strings.Contains(out, "coupons read") || !strings.HasPrefix(out, "imported 10001 coupons into clover/acme in ") {
				t.Fatalf("import output in a pipe:\n%s", out)
			}
			out = mustCLI(t, env, with("coupon", "show", "csv-19999")...)
			if !strings.Contains(out, "locations:       S1,S2") || !strings.Contains(out, "availableUntil:  2099-06-30T12:00:00Z") || !strings.Contains(out, "name:            Coupon 19999") {
				t.Fatalf("imported coupon: %s", out)
			}
			out = mustCLI(t, env, with("coupon", "show", "CSV-LAST")...)
			if !strings.Contains(out, "name:            Quoted, name") || !strings.Contains(out, "status:          Redeemed") || !strings.Contains(out, `info:            [{"title":"T","items":null}]`) {
				t.Fatalf("imported coupon: %s", out)
			}
		})
		t.Run("a bad import stores nothing", func(t *testing.T) {
			for _, tc := range []struct{ file, content, want string }{
				{"bad-row.csv", "code,status\nNEW-1,\nNEW-2,Used\n", "nothing was imported: 1 line is bad.\n  line 3: status: The status field must be Issued"},
				{"dup.csv", "code\nNEW-1\ncsv-00007\n", `nothing was imported: Item 2: coupon "csv-00007" already exists`},
				{"time.csv", "code,availableUntil\nNEW-1,\nNEW-2,soon\n", `line 3: availableUntil "soon" is not an RFC 3339 date-time`},
				{"header.csv", "code,colour\nNEW-1,red\n", `line 1: column "colour" is unknown or repeated`},
				{"nocode.csv", "name\nx\n", "line 1: the header has no code column"},
				{"quote.csv", "code\nNEW-1\n\"NEW-2\n", "line 3: the CSV record is malformed"},
				// Every bad line is named (in line order), the good ones are not stored.
				{"many.csv", "code,status,availableUntil\nNEW-1,,\n,,\nNEW-3,Used,\nNEW-4,,soon\nNEW-5,,\n" + strings.Repeat("NEW-X,Used,\n", 6),
					"nothing was imported: 9 lines are bad.\n  line 3: code: The code field is required.\n  line 4: status: The status field must be Issued, Redeemed or Cancelled (Expired is computed from availableUntil).\n" +
						"  line 5: availableUntil \"soon\" is not an RFC 3339 date-time\n  line 7: status: The status field must be Issued, Redeemed or Cancelled (Expired is computed from availableUntil).\n" +
						"  line 8: status:"},
				// At most 100 are named; the reading stops there.
				{"lots.csv", "code\nNEW-1\n" + strings.Repeat(",\n", 150), "nothing was imported: At least 100 lines are bad (the first 100 are listed).\n  line 3: the CSV record is malformed: wrong number of fields\n"},
				{"json-items.json", `{"items":[{"code":"NEW-1"},{"code":""},{"code":"NEW-3","status":"Used"}]}`,
					"nothing was imported: 2 items are bad.\n  item 2: code: The code field is required.\n  item 3: status: The status field must be"},
				{"bad.json", `{"items":[{"code":"NEW-1"},{"code":"NEW-2","colour":"red"}]}`, "items[1].colour: The property 'items[1].colour' is not allowed."},
				{"user.json", `{"items":[{"code":"NEW-1"},{"code":"NEW-2","userId":"ghost"}]}`, `Item 2: loyalty user "ghost" not found`},
				{"broken.json", `{"items":[{"code":"NEW-1"},`, "The request body is not valid JSON"},
			} {
				mustFail(t, env, tc.want, with("coupon", "import", writeFile(t, tc.file, tc.content))...)
				if tc.file == "lots.csv" {
					_, err := runCLI(t, env, with("coupon", "import", writeFile(t, tc.file, tc.content))...)
					if got := describe(err); strings.Count(got, "\n  line ") != 100 || !strings.Contains(got, "line 102:") || strings.Contains(got, "line 103:") {
						t.Fatalf("lots.csv: %s", got)
					}
				}
				mustFail(t, env, `coupon "NEW-1" not found`, with("coupon", "show", "NEW-1")...)
			}
			mustFail(t, env, "--format \"xml\": want csv or json", with("coupon", "import", writeFile(t, "x.csv", "code\n"), "--format", "xml")...)
		})
		t.Run("import JSON", func(t *testing.T) {
			file := writeFile(t, "coupons.json", `{"items":[{"code":"J-1","userId":"u1","locationIds":["S2"]},{"code":"J-2","email":"x@example.com","pictureUrl":"https://x.example/j.png"}]}`)
			if out := mustCLI(t, env, with("coupon", "import", file)...); !strings.Contains(out, "imported 2 coupons into clover/acme") {
				t.Fatalf("import: %s", out)
			}
			if out := mustCLI(t, env, with("coupon", "show", "J-2")...); !strings.Contains(out, "pictureUrl:      https://x.example/j.png") {
				t.Fatalf("show: %s", out)
			}
		})
		t.Run("generate", func(t *testing.T) {
			out := mustCLI(t, env, "generate", "coupons", "--pos", "clover", "--company", "acme", "--users", "10000", "--coupons", "10000", "--seed", "7")
			if !strings.Contains(out, "generated 10000 loyalty users") || !strings.Contains(out, "generated 10000 coupons") {
				t.Fatalf("generate: %s", out)
			}
			cfg := coupongen.Config{Seed: 7, Users: 10000, Coupons: 10000}
			if out := mustCLI(t, env, with("coupon", "show", cfg.Code(9999))...); !strings.Contains(out, "code:            "+cfg.Code(9999)) {
				t.Fatalf("generated coupon: %s", out)
			}
			if out := mustCLI(t, env, with("loyalty-user", "show", coupongen.UserID(9999))...); !strings.Contains(out, "loyalty user G0009999 of clover/acme") {
				t.Fatalf("generated user: %s", out)
			}
			mustFail(t, env, `Item 1: loyalty user "G0000000" already exists`, "generate", "coupons", "--pos", "clover", "--company", "acme", "--users", "5", "--coupons", "0")
			mustFail(t, env, `company "nope" not found`, "generate", "coupons", "--pos", "clover", "--company", "nope")
		})
	})
}
