package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/pgtest"
)

// server is a running posgate the CLI talks to in a test, and its store.
type server struct {
	base, database string
	// id and secret are an operator client made by client bootstrap.
	id, secret string
}

// env is the environment of CLI runs against s: its address and the
// operator credentials, and a credentials file of the test's own (none
// yet), so that no test reads the user's saved login. POSGATE_DATABASE
// is there for the commands that act on the store (demo load, generate).
func (s *server) env(t *testing.T) map[string]string {
	return map[string]string{"POSGATE_SERVER": s.base, "POSGATE_CLIENT_ID": s.id, "POSGATE_CLIENT_SECRET": s.secret,
		"POSGATE_DATABASE": s.database, "POSGATE_CREDENTIALS": filepath.Join(t.TempDir(), "credentials.json")}
}

// startServer bootstraps an operator client in the store named by
// database (with the demo data set first when demo is set) and serves it
// on 127.0.0.1:0 in-process until the test ends, with the store cache on
// for an hour: any change the CLI makes must reach the API at once by the
// server's own invalidation, never by the cache expiring.
func startServer(t *testing.T, database string, demoData bool) *server {
	t.Helper()
	return startServerWith(t, database, demoData, app.Config{})
}

// startServerWith is startServer with more of the server's configuration
// (its Database, CacheTTL and Logger are startServer's).
func startServerWith(t *testing.T, database string, demoData bool, cfg app.Config) *server {
	t.Helper()
	boot := map[string]string{"POSGATE_DATABASE": database}
	if demoData {
		mustCLI(t, boot, "demo", "load")
	}
	out := mustCLI(t, boot, "client", "bootstrap", "--id", "test-operator")
	m := regexp.MustCompile(`client_secret: (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("client bootstrap: %s", out)
	}
	cfg.Database, cfg.CacheTTL, cfg.Logger = database, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil))
	base := serveOn(t, cfg)
	return &server{base: base, database: database, id: "test-operator", secret: m[1]}
}

// forEachStore runs fn against a fresh server on a SQLite file and, when
// POSGATE_TEST_POSTGRES_DSN is set, one on a fresh PostgreSQL schema.
func forEachStore(t *testing.T, demoData bool, fn func(t *testing.T, s *server, env map[string]string)) {
	t.Run("sqlite", func(t *testing.T) {
		s := startServer(t, filepath.Join(t.TempDir(), "posgate.db"), demoData)
		fn(t, s, s.env(t))
	})
	t.Run("postgres", func(t *testing.T) {
		s := startServer(t, pgtest.DSN(t), demoData)
		fn(t, s, s.env(t))
	})
}

// TestErrorsNameTheServer: a failure of an operator command names the
// server it talked to, whether posgate answered (a not-found) or could not
// be reached.
func TestErrorsNameTheServer(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "posgate.db"), false)
	env := s.env(t)
	_, err := runCLI(t, env, "company", "list", "--pos", "nope")
	if got := describe(err); got != `POS system "nope" not found (server `+s.base+`)` {
		t.Fatalf("not found: %q", got)
	}
	// Nothing listens on port 1.
	env["POSGATE_SERVER"] = "http://127.0.0.1:1"
	_, err = runCLI(t, env, "pos-system", "list")
	if got := describe(err); !strings.HasPrefix(got, "cannot reach the server") || !strings.HasSuffix(got, " (server http://127.0.0.1:1)") || exitCode(err) != 1 {
		t.Fatalf("unreachable: %q", got)
	}
}

// TestWrongCredentials: credentials the server refuses give a message that
// says so, names the client and the server, and changes nothing.
func TestWrongCredentials(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "posgate.db"), false)
	env := s.env(t)
	env["POSGATE_CLIENT_SECRET"] = "not-the-secret"
	_, err := runCLI(t, env, "pos-system", "create", "x")
	want := `the server refused the credentials of client "test-operator": `
	if got := describe(err); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " (server "+s.base+")") {
		t.Fatalf("wrong secret: %q", got)
	}
	// No credentials for a server that is not on this machine: the CLI
	// says what to give rather than trying the demo's.
	delete(env, "POSGATE_CLIENT_ID")
	delete(env, "POSGATE_CLIENT_SECRET")
	env["POSGATE_SERVER"] = "http://posgate.invalid:8080"
	_, err = runCLI(t, env, "pos-system", "list")
	if got := describe(err); got != "no credentials: give --client-id and --client-secret (or POSGATE_CLIENT_ID and POSGATE_CLIENT_SECRET), or run posgate login (server http://posgate.invalid:8080)" {
		t.Fatalf("no credentials: %q", got)
	}
	// On a loopback server that is no demo, the demo's credentials are
	// tried, and the refusal says so.
	env["POSGATE_SERVER"] = s.base
	_, err = runCLI(t, env, "pos-system", "list")
	if got := describe(err); !strings.HasPrefix(got, `the server refused the credentials of client "demo-admin"`) || !strings.Contains(got, "no credentials were given, so the demo's operator client was tried") {
		t.Fatalf("demo default on a non-demo server: %q", got)
	}
	env["POSGATE_CLIENT_ID"], env["POSGATE_CLIENT_SECRET"] = s.id, s.secret
	if out := mustCLI(t, env, "pos-system", "list", "--output", "json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("something was created: %s", out)
	}
}

// TestLogin: posgate login checks the credentials, saves them with the
// server in a file only the user can read, and later commands use them
// with no flag or variable; wrong credentials save nothing.
func TestLogin(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "posgate.db"), false)
	dir := t.TempDir()
	creds := filepath.Join(dir, "posgate", "credentials.json")
	env := map[string]string{"POSGATE_CREDENTIALS": creds}
	mustFail(t, env, "the server refused the credentials of client", "login", "--server", s.base, "--client-id", s.id, "--client-secret", "wrong")
	if _, err := os.Stat(creds); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused login saved something: %v", err)
	}
	out := mustCLI(t, env, "login", "--server", s.base, "--client-id", s.id, "--client-secret", s.secret)
	if out != "logged in to "+s.base+" as test-operator; saved in "+creds+"\n" {
		t.Fatalf("login: %q", out)
	}
	fi, err := os.Stat(creds)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi.Mode(), err)
	}
	if di, err := os.Stat(filepath.Dir(creds)); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("credentials dir: %v %v", di.Mode(), err)
	}
	// Later commands: no --server, no credentials; the saved login's.
	mustCLI(t, env, "pos-system", "create", "saved")
	if out := mustCLI(t, env, "pos-system", "list"); !strings.Contains(out, "saved") {
		t.Fatalf("pos-system list with the saved login: %s", out)
	}
	// The write is the saved client's, through the API, by the CLI.
	c, err := client.New(s.base, client.WithCredentials(s.id, s.secret, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.Admin.ListAuditEntries(context.Background(), client.AuditQuery{Action: "pos-system.create", TargetID: "saved"})
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("audit: %+v %v", page, err)
	}
	if e := page.Entries[0]; e.Channel != "api" || e.Actor.ClientID != s.id || !strings.HasPrefix(e.UserAgent, "posgate-cli/"+cliVersion+" ") {
		t.Fatalf("audit entry of the CLI's write: %+v", e)
	}
	// Flags still win over the saved login.
	mustFail(t, env, "(server http://127.0.0.1:1)", "pos-system", "list", "--server", "http://127.0.0.1:1", "--client-id", "x", "--client-secret", "y")
}

// TestCLIChangesAreSeenAtOnce: a change the CLI makes is what the API
// answers next, although the server caches what it found for an hour:
// the server's own write path drops the cached objects.
func TestCLIChangesAreSeenAtOnce(t *testing.T) {
	forEachStore(t, true, func(t *testing.T, s *server, env map[string]string) {
		ctx := context.Background()
		pos, err := client.New(s.base, client.WithCredentials(demo.POSClientID, demo.POSSecret, "pos_integration"))
		if err != nil {
			t.Fatal(err)
		}
		start := func() client.PosStatus {
			t.Helper()
			res, err := pos.StartInteraction(ctx, "clover", client.StartInteractionRequest{PosLocationID: "LOC123", TerminalID: "TERM-05"})
			if err != nil {
				t.Fatal(err)
			}
			return res.PosStatus
		}
		if got := start(); got != client.PosStatusAccepted {
			t.Fatalf("before: %s", got)
		}
		mustCLI(t, env, "terminal", "disable", "TERM-05", "--pos", "clover", "--location", "LOC123")
		if got := start(); got != client.PosStatusDisabled {
			t.Fatalf("right after the CLI disabled the terminal: %s", got)
		}
		mustCLI(t, env, "terminal", "enable", "TERM-05", "--pos", "clover", "--location", "LOC123")
		if got := start(); got != client.PosStatusAccepted {
			t.Fatalf("right after the CLI enabled the terminal: %s", got)
		}
		// A disabled client gets no token at once.
		mustCLI(t, env, "client", "disable", demo.POSClientID)
		if _, err := pos.RequestToken(ctx, client.TokenRequest{ClientID: demo.POSClientID, ClientSecret: demo.POSSecret}); err == nil {
			t.Fatal("a client the CLI disabled still gets tokens")
		}
	})
}

// TestOnlyTheseCommandsOpenTheDatabase: every command talks to a server
// (--server) except the few that act on the store itself (--database),
// and no command has both.
func TestOnlyTheseCommandsOpenTheDatabase(t *testing.T) {
	want := []string{"serve", "migrate", "backup", "restore", "demo load", "demo reset", "client bootstrap", "keys rotate-kek", "generate coupons"}
	var onDatabase []string
	for _, c := range commands() {
		out, _ := runCLI(t, nil, append(strings.Fields(c.name), "--help")...)
		server, database := strings.Contains(out, "\n  --server string"), strings.Contains(out, "\n  --database string")
		switch {
		case c.name == "version": // reads only the binary
		case c.name == "conformance run" && strings.Contains(out, "\n  --base-url string"): // examines any server implementing the interface, as a POS client
		case server && database:
			t.Errorf("%s takes both --server and --database", c.name)
		case database:
			onDatabase = append(onDatabase, c.name)
			if !strings.Contains(out, "Acts on the store named by --database itself") && c.name != "serve" {
				t.Errorf("%s --help does not say it acts on the database:\n%s", c.name, out)
			}
		case !server:
			t.Errorf("%s takes neither --server nor --database", c.name)
		case c.name != "login" && !strings.Contains(out, "Talks to a running posgate through its operator API"):
			t.Errorf("%s --help does not say it talks to a server:\n%s", c.name, out)
		}
	}
	if strings.Join(onDatabase, "|") != strings.Join(want, "|") {
		t.Fatalf("commands on the database: %q, want %q", onDatabase, want)
	}
}
