package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUserCommands creates an installation's first person (an admin)
// through the API with the operator client that client bootstrap made on
// the database, then a location manager; lists, disables and enables them,
// and shows the refusals of bad input; registers a browser client's
// redirect URIs.
func TestUserCommands(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "people.db"), false)
	env := srv.env(t)
	if out := mustCLI(t, env, "user", "list"); out != "EMAIL  NAME  ROLE  POS  COMPANIES  LOCATIONS  DISABLED\n" {
		t.Fatalf("user list before anyone: %q", out)
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("a long enough secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustCLI(t, env, "pos-system", "create", "pax")
	mustCLI(t, env, "company", "create", "acme", "--pos", "pax")
	mustCLI(t, env, "location", "create", "S1", "--pos", "pax", "--company", "acme")

	if out := mustCLI(t, env, "user", "create", "Boss@Example.com", "--password-file", pw); !regexp.MustCompile(`^person boss@example\.com \(\S+\) created: role admin\n$`).MatchString(out) {
		t.Fatalf("user create: %q", out)
	}
	mustCLI(t, env, "user", "create", "ann@example.com", "--name", "Ann", "--role", "location-manager", "--pos", "pax", "--locations", "S1", "--password-file", pw)
	out := mustCLI(t, env, "user", "list")
	if !regexp.MustCompile(`ann@example\.com\s+Ann\s+location-manager\s+pax\s+S1\s+false`).MatchString(out) ||
		!regexp.MustCompile(`boss@example\.com\s+boss@example\.com\s+admin\s+false`).MatchString(out) || strings.Contains(out, "argon2") {
		t.Fatalf("user list: %s", out)
	}
	if out := mustCLI(t, env, "user", "disable", "ann@example.com"); out != "person ann@example.com disabled=true\n" {
		t.Fatalf("user disable: %q", out)
	}
	if out := mustCLI(t, env, "user", "enable", "ANN@example.com"); out != "person ann@example.com disabled=false\n" {
		t.Fatalf("user enable: %q", out)
	}

	mustCLI(t, env, "client", "create", "--pos", "pax", "--scopes", "service_api,admin", "--id", "web")
	if out := mustCLI(t, env, "client", "redirect-uris", "web", "--uris", "https://app.example/cb,http://localhost:3000/cb"); out != "client web: 2 redirect URIs\n  https://app.example/cb\n  http://localhost:3000/cb\n" {
		t.Fatalf("client redirect-uris: %q", out)
	}
	for uri, want := range map[string]string{"http://app.example/cb": "is not an absolute https URL", "https://app.example/cb#x": "without a fragment", "/cb": "is not an absolute"} {
		out, err := runCLI(t, env, "client", "redirect-uris", "web", "--uris", uri)
		if err == nil || !strings.Contains(out+describe(err), want) {
			t.Errorf("redirect URI %q: %v %q", uri, err, out+describe(err))
		}
	}
	if out, err := runCLI(t, env, "client", "redirect-uris", "nope", "--uris", "https://a.example/cb"); err == nil || !strings.Contains(describe(err), "Client 'nope' not found.") {
		t.Errorf("unknown client: %v %q", err, out)
	}

	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("short"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "create", "x@example.com"}, "--password-file is required"},
		{[]string{"user", "create", "x@example.com", "--password-file", short}, "A password has 10 to 1024 characters."},
		{[]string{"user", "create", "not-an-address", "--password-file", pw}, "A lower-case e-mail address"},
		{[]string{"user", "create", "boss@example.com", "--password-file", pw}, "A person with the e-mail address 'boss@example.com' exists already."},
		{[]string{"user", "create", "x@example.com", "--role", "location-manager", "--pos", "pax", "--locations", "S9", "--password-file", pw}, "Location 'S9' of POS system 'pax' not found."},
		{[]string{"user", "create", "x@example.com", "--role", "owner", "--password-file", pw}, `Unknown role "owner"`},
		{[]string{"user", "disable", "nobody@example.com"}, "Person 'nobody@example.com' not found."},
	} {
		out, err := runCLI(t, env, tc.args...)
		if err == nil || !strings.Contains(out+describe(err), tc.want) {
			t.Errorf("posgate %s: %v %q, want an error with %q", strings.Join(tc.args, " "), err, out+describe(err), tc.want)
		}
	}
}
