package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runBinary runs the built posgate in dir and returns its exit code,
// standard output and standard error.
func runBinary(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("posgate %v: %v", args, err)
	return 0, "", ""
}

// TestHelpExitsZero runs the binary: help, --help and -h print a short
// overview on stdout and exit 0; a group's --help lists its subcommands; a
// command's --help and `help COMMAND` print its own help with an example.
func TestHelpExitsZero(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, out, errOut := runBinary(t, dir, args...)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: posgate COMMAND [flags]\n") ||
			!strings.Contains(out, "  loyalty-user       create, update, adjust, show\n") || strings.Count(out, "\n") > 40 {
			t.Fatalf("posgate %v: exit %d, stderr %q, stdout (%d lines):\n%s", args, code, errOut, strings.Count(out, "\n"), out)
		}
	}
	code, out, _ := runBinary(t, dir, "loyalty-user", "--help")
	if code != 0 || !strings.HasPrefix(out, "usage: posgate loyalty-user SUBCOMMAND [flags]\n") || !strings.Contains(out, "  adjust         add or take stamps and points\n") ||
		strings.Contains(out, "company create") {
		t.Fatalf("loyalty-user --help: exit %d:\n%s", code, out)
	}
	for _, args := range [][]string{{"loyalty-user", "adjust", "--help"}, {"help", "loyalty-user", "adjust"}, {"loyalty-user", "adjust", "-h"}} {
		code, out, errOut := runBinary(t, dir, args...)
		want := "usage: posgate loyalty-user adjust ID --pos P --company C [--stamps N] [--points N]\n\nAdd or take stamps and points.\n\n" +
			"Example:\n  posgate loyalty-user adjust john-doe --pos clover --company demo-company --points 50 --stamps -1\n"
		// Flags are listed as the documents write them, with two dashes.
		if code != 0 || errOut != "" || !strings.HasPrefix(out, want) || !strings.Contains(out, "  --stamps int\n") || !strings.Contains(out, "  --output string\n") ||
			regexp.MustCompile(`(?m)^\s*-[a-z]`).MatchString(out) {
			t.Fatalf("posgate %v: exit %d, stderr %q:\n%s", args, code, errOut, out)
		}
	}
	// Asking for help creates no database.
	if _, err := os.Stat(filepath.Join(dir, "posgate.db")); !os.IsNotExist(err) {
		t.Fatalf("help created posgate.db: %v", err)
	}
}

// TestUnknownCommand: the error comes first, then the nearest command, then
// where the list is; nothing else, exit 2.
func TestUnknownCommand(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compnay", "list", "--pos", "clover"}, "posgate: unknown command \"compnay list\"\ndid you mean company list?\nRun 'posgate help' for the list of commands.\n"},
		{[]string{"company", "lst"}, "posgate: unknown command \"company lst\"\ndid you mean company list?\nRun 'posgate help company' for its subcommands.\n"},
		{[]string{"serv"}, "posgate: unknown command \"serv\"\ndid you mean serve?\nRun 'posgate help' for the list of commands.\n"},
		{[]string{"loyalty-users", "adjust", "1001"}, "posgate: unknown command \"loyalty-users adjust\"\ndid you mean loyalty-user adjust?\nRun 'posgate help' for the list of commands.\n"},
		{[]string{"terminal", "frobnicate"}, "posgate: unknown command \"terminal frobnicate\"\nRun 'posgate help terminal' for its subcommands.\n"},
		{[]string{"xyzzy"}, "posgate: unknown command \"xyzzy\"\nRun 'posgate help' for the list of commands.\n"},
		{[]string{"help", "xyzzy"}, "posgate: unknown command \"xyzzy\"\nRun 'posgate help' for the list of commands.\n"},
	} {
		code, out, errOut := runBinary(t, dir, tc.args...)
		if code != 2 || out != "" || errOut != tc.want {
			t.Errorf("posgate %v: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", tc.args, code, out, errOut, tc.want)
		}
	}
	// No command: the overview on stderr, exit 2.
	if code, out, errOut := runBinary(t, dir); code != 2 || out != "" || !strings.HasPrefix(errOut, "usage: posgate COMMAND") {
		t.Fatalf("posgate: exit %d, %q, %q", code, out, errOut)
	}
	// A bad flag: one line that says so and where the help is; no usage dump.
	code, out, errOut := runBinary(t, dir, "company", "list", "--pos", "clover", "--bogus")
	if code != 2 || out != "" || errOut != "posgate: flag provided but not defined: --bogus (see 'posgate company list --help')\n" {
		t.Fatalf("bad flag: exit %d, %q, %q", code, out, errOut)
	}
	code, out, errOut = runBinary(t, dir, "company", "list", "--pos")
	if code != 2 || out != "" || errOut != "posgate: flag needs an argument: --pos (see 'posgate company list --help')\n" {
		t.Fatalf("a flag without its value: exit %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = runBinary(t, dir, "company", "list", "--pos", "clover", "--output", "xml")
	if code != 2 || errOut != "posgate: --output must be table or json, not \"xml\"\n" {
		t.Fatalf("bad --output: exit %d, %q", code, errOut)
	}
}

// TestErrorsNameTheDatabase: a failure after the database was opened names
// it (exit 1), and a not-found on the default database next to the demo's
// says where the demo's data is.
func TestErrorsNameTheDatabase(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runBinary(t, dir, "demo", "load"); code != 0 || errOut != "" {
		t.Fatalf("demo load: %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "posgate-demo.db")); err != nil {
		t.Fatalf("demo load did not use posgate-demo.db: %v", err)
	}
	code, _, errOut := runBinary(t, dir, "generate", "coupons", "--pos", "clover", "--company", "demo-company", "--users", "1", "--coupons", "1")
	want := "posgate: company \"demo-company\" not found (database posgate.db)\n(the demo's data is in posgate-demo.db: add --database posgate-demo.db)\n"
	if code != 1 || errOut != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}
	code, out, errOut := runBinary(t, dir, "generate", "coupons", "--pos", "clover", "--company", "demo-company", "--users", "1", "--coupons", "1", "--database", "posgate-demo.db")
	if code != 0 || !strings.HasPrefix(out, "generated 1 loyalty users in ") {
		t.Fatalf("with --database: exit %d %q %q", code, out, errOut)
	}
	// A PostgreSQL URL is named without its password.
	_, err := runCLI(t, nil, "client", "bootstrap", "--database", "postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=1")
	if got := describe(err); err == nil || strings.Contains(got, "hunter2") || !strings.Contains(got, "(database postgres://u:xxxxx@127.0.0.1:1/db?connect_timeout=1)") {
		t.Fatalf("postgres error: %q", got)
	}
}

// TestEveryCommandHasHelp asks each command for its help in-process: it
// exits 0 (flag.ErrHelp), starts with the command's synopsis and shows an
// example; every example names a command that exists.
func TestEveryCommandHasHelp(t *testing.T) {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
		out, err := runCLI(t, nil, append(strings.Fields(c.name), "--help")...)
		if !errors.Is(err, flag.ErrHelp) || exitCode(err) != 0 {
			t.Errorf("%s --help: %v", c.name, err)
		}
		if !strings.HasPrefix(out, "usage: posgate "+c.name+" ") || !strings.Contains(out, "\nExample:\n  posgate "+c.name+" ") || !strings.Contains(out, "\nFlags (each also POSGATE_<FLAG>):\n") {
			t.Errorf("%s --help:\n%s", c.name, out)
		}
	}
	for name := range examples {
		if !slices.Contains(names, name) {
			t.Errorf("example for %q, which is no command", name)
		}
	}
}

// TestOutputJSON: the commands that print data print JSON under --output
// json (the operator API's shapes), tables otherwise.
func TestOutputJSON(t *testing.T) {
	env := startServer(t, filepath.Join(t.TempDir(), "json.db"), true).env(t)
	var companies []map[string]any
	if err := json.Unmarshal([]byte(mustCLI(t, env, "company", "list", "--pos", "clover", "--output", "json")), &companies); err != nil ||
		len(companies) != 1 || companies[0]["posCompanyId"] != "demo-company" || companies[0]["status"] != "Active" {
		t.Fatalf("company list --output json: %v %v", companies, err)
	}
	if out := mustCLI(t, env, "company", "list", "--pos", "clover"); !strings.HasPrefix(out, "ID            NAME          STATUS  TIME ZONE  FEATURES\ndemo-company  Demo Company  Active  -          ") {
		t.Fatalf("company list table:\n%s", out)
	}
	var user map[string]any
	out := mustCLI(t, env, "loyalty-user", "adjust", "john-doe", "--pos", "clover", "--company", "demo-company", "--points", "5", "--output", "json")
	if err := json.Unmarshal([]byte(out), &user); err != nil || user["id"] != "john-doe" || strings.Contains(out, "adjusted") {
		t.Fatalf("adjust --output json: %s %v", out, err)
	}
	var coupon map[string]any
	env["POSGATE_OUTPUT"] = "json"
	out = mustCLI(t, env, "coupon", "show", "SUMMER24", "--pos", "clover", "--company", "demo-company")
	if err := json.Unmarshal([]byte(out), &coupon); err != nil || coupon["code"] != "SUMMER24" || coupon["status"] != "Expired" {
		t.Fatalf("coupon show (POSGATE_OUTPUT=json): %s %v", out, err)
	}
	var empty []any
	out = mustCLI(t, startServer(t, filepath.Join(t.TempDir(), "empty.db"), false).env(t), "pos-system", "list", "--output", "json")
	if err := json.Unmarshal([]byte(out), &empty); err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("an empty list is []: %q", out)
	}
}

// TestAdjustNeverHalfApplied is the README's adjustment on a user with no
// stamps: refused as a whole, with the balance named, and the points are not
// added either; a change that stays within bounds applies.
func TestAdjustNeverHalfApplied(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, env map[string]string) {
		mustCLI(t, env, "demo", "load")
		with := func(args ...string) []string { return append(args, "--pos", "clover", "--company", "demo-company") }
		mustCLI(t, env, with("loyalty-user", "create", "--id", "1001", "--first-name", "Ann")...)
		mustFail(t, env, "Loyalty user 1001 has 0 stamps: taking 1 would leave -1, below 0. Nothing was changed.", with("loyalty-user", "adjust", "1001", "--points", "50", "--stamps", "-1")...)
		if out := mustCLI(t, env, with("loyalty-user", "show", "1001")...); !strings.Contains(out, "0 stamps, 0 points") {
			t.Fatalf("after the refused adjustment: %s", out)
		}
		if out := mustCLI(t, env, with("loyalty-user", "adjust", "1001", "--points", "50", "--stamps", "2")...); !strings.Contains(out, "2 stamps, 50 points") {
			t.Fatalf("adjust up: %s", out)
		}
		if out := mustCLI(t, env, with("loyalty-user", "adjust", "1001", "--points", "50", "--stamps", "-1")...); !strings.Contains(out, "1 stamps, 100 points") {
			t.Fatalf("the README's adjustment within bounds: %s", out)
		}
	})
}

// TestMissingRequiredFlags: a command without a flag it needs is refused
// before anything is sent, naming the flags (exit 2), rather than reaching
// the server with an empty path segment.
func TestMissingRequiredFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"terminal", "register", "T1", "--location", "LOC123"},
			"posgate: terminal register needs --pos (POS system id) (see 'posgate terminal register --help')\n"},
		{[]string{"terminal", "register", "T1"},
			"posgate: terminal register needs --location (location id) and --pos (POS system id) (see 'posgate terminal register --help')\n"},
		{[]string{"receipt-promotion", "set", "--pos", "clover", "--company", "demo-company"},
			"posgate: receipt-promotion set needs --primary (first line) and --target (the URL the QR code leads to) (see 'posgate receipt-promotion set --help')\n"},
		{[]string{"coupon", "show", "X1", "--pos", "clover"},
			"posgate: coupon show needs --company (company id) (see 'posgate coupon show --help')\n"},
	} {
		code, out, errOut := runBinary(t, dir, tc.args...)
		if code != 2 || out != "" || errOut != tc.want {
			t.Errorf("posgate %v: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestServerWithoutScheme: --server host:port is read as http://host:port
// (the demo's credentials are then the default, as for any loopback
// server); an address of another scheme is refused with what is expected.
func TestServerWithoutScheme(t *testing.T) {
	base, _ := serveDemo(t)
	hostPort := strings.TrimPrefix(base, "http://")
	if out := mustCLI(t, nil, "pos-system", "list", "--server", hostPort); !strings.Contains(out, "clover") {
		t.Fatalf("pos-system list --server %s:\n%s", hostPort, out)
	}
	_, err := runCLI(t, nil, "pos-system", "list", "--server", "ftp://"+hostPort)
	if want := `--server must be an http:// or https:// address such as http://localhost:8080 (a host:port alone means http://), not "ftp://` + hostPort + `"`; exitCode(err) != 2 || describe(err) != want {
		t.Fatalf("ftp server: %v %q", exitCode(err), describe(err))
	}
}
