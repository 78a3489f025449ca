package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
)

// serveOn runs posgate serve in-process with cfg until the test ends and
// returns its base URL.
func serveOn(t *testing.T, cfg app.Config) string {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan app.Addrs, 1)
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, cfg, func(a app.Addrs) { ready <- a }) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return a.BaseURL
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start")
	}
	return ""
}

// TestSandboxClockCommand shows and moves a demo server's sandbox clock from
// the command line (the demo operator's credentials are the defaults), and
// says plainly when a server has none.
func TestSandboxClockCommand(t *testing.T) {
	base, _ := serveDemo(t)
	env := map[string]string{"POSGATE_SERVER": base}
	ahead := regexp.MustCompile(`^sandbox time (\S+) \(real time (\S+), (\S+) ahead\)\n$`)
	if m := ahead.FindStringSubmatch(mustCLI(t, env, "sandbox", "clock")); m == nil || m[1] != m[2] || m[3] != "0s" {
		t.Fatalf("sandbox clock: %v", m)
	}
	if m := ahead.FindStringSubmatch(mustCLI(t, env, "sandbox", "clock", "advance", "24h")); m == nil || m[3] != "24h0m0s" {
		t.Fatalf("advance 24h: %v", m)
	}
	var view struct {
		Now           time.Time `json:"now"`
		RealNow       time.Time `json:"realNow"`
		OffsetSeconds int64     `json:"offsetSeconds"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, env, "sandbox", "clock", "--output", "json")), &view); err != nil || view.OffsetSeconds != 86400 || view.Now.Sub(view.RealNow) != 24*time.Hour {
		t.Fatalf("--output json: %+v %v", view, err)
	}
	target := view.RealNow.Add(72 * time.Hour).Truncate(time.Second)
	if m := ahead.FindStringSubmatch(mustCLI(t, env, "sandbox", "clock", "set", target.Format(time.RFC3339))); m == nil || m[1] != target.Format(time.RFC3339) {
		t.Fatalf("set: %v", m)
	}
	mustFail(t, env, "The sandbox clock only moves forward: 2000-01-01T00:00:00Z is before its time", "sandbox", "clock", "set", "2000-01-01T00:00:00Z")
	for _, args := range [][]string{{"sandbox", "clock", "advance", "soon"}, {"sandbox", "clock", "set", "tomorrow"}, {"sandbox", "clock", "rewind"}} {
		if _, err := runCLI(t, env, args...); exitCode(err) != 2 {
			t.Fatalf("posgate %v: %v, want a usage error", args, err)
		}
	}

	// A server not in demo mode has no sandbox clock.
	db := filepath.Join(t.TempDir(), "plain.db")
	out := mustCLI(t, map[string]string{"POSGATE_DATABASE": db}, "client", "bootstrap", "--id", "ops")
	secret := regexp.MustCompile(`client_secret: (\S+)`).FindStringSubmatch(out)[1]
	plain := serveOn(t, app.Config{Database: db})
	mustFail(t, nil, "this server has no sandbox clock: only a demo server (posgate serve --demo) has one (server "+plain+")",
		"sandbox", "clock", "--server", plain, "--client-id", "ops", "--client-secret", secret)
}

// TestDemoReset: `posgate demo reset` (on posgate-demo.db unless told
// otherwise) and `serve --demo --reset` leave exactly the demo data set.
func TestDemoReset(t *testing.T) {
	dir := t.TempDir()
	if code, out, errOut := runBinary(t, dir, "demo", "load"); code != 0 || out != "demo data set loaded\n" {
		t.Fatalf("demo load: %d %q %q", code, out, errOut)
	}
	demoDB := map[string]string{"POSGATE_SERVER": serveOn(t, app.Config{Database: filepath.Join(dir, "posgate-demo.db")})}
	fresh := mustCLI(t, demoDB, "company", "list", "--pos", "clover")
	mustCLI(t, demoDB, "company", "create", "acme", "--pos", "clover")
	mustCLI(t, demoDB, "terminal", "disable", "TERM-05", "--pos", "clover", "--location", "LOC123")
	if out := mustCLI(t, demoDB, "company", "list", "--pos", "clover"); !strings.Contains(out, "acme") {
		t.Fatalf("company list: %s", out)
	}
	code, out, errOut := runBinary(t, dir, "demo", "reset")
	if code != 0 || !strings.HasPrefix(out, "the store holds exactly the demo data set again") {
		t.Fatalf("demo reset: %d %q %q", code, out, errOut)
	}
	if out := mustCLI(t, demoDB, "company", "list", "--pos", "clover"); out != fresh {
		t.Fatalf("after the reset:\n%s\nwant:\n%s", out, fresh)
	}
	if out := mustCLI(t, demoDB, "terminal", "list", "--pos", "clover", "--location", "LOC123"); !regexp.MustCompile(`TERM-05\s+Till TERM-05\s+Active`).MatchString(out) {
		t.Fatalf("terminals after the reset:\n%s", out)
	}

	// serve --demo --reset does the same before it serves.
	mustCLI(t, demoDB, "company", "create", "acme", "--pos", "clover")
	again := map[string]string{"POSGATE_SERVER": serveOn(t, app.Config{Database: filepath.Join(dir, "posgate-demo.db"), Demo: true, DemoReset: true})}
	if out := mustCLI(t, again, "company", "list", "--pos", "clover"); out != fresh {
		t.Fatalf("after serve --demo --reset:\n%s", out)
	}
	if _, err := runCLI(t, nil, "serve", "--reset"); exitCode(err) != 2 || describe(err) != "--reset works only with --demo" {
		t.Fatalf("serve --reset without --demo: %v", err)
	}
}

// TestDemoResetRestartsTheSandboxClock: `posgate demo reset` on the store
// of a running demo server brings its sandbox clock back to the real time,
// and so does another `serve --demo --reset` on that store.
func TestDemoResetRestartsTheSandboxClock(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "posgate-demo.db")
	env := map[string]string{"POSGATE_SERVER": serveOn(t, app.Config{Database: db, Demo: true})}
	ahead := regexp.MustCompile(`, (\S+) ahead\)\n$`)
	waitFor := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			m := ahead.FindStringSubmatch(mustCLI(t, env, "sandbox", "clock"))
			if m != nil && m[1] == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the sandbox clock is %v ahead, want %s", what, m, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	mustCLI(t, env, "sandbox", "clock", "advance", "24h")
	waitFor("advanced", "24h0m0s")
	if code, out, errOut := runBinary(t, dir, "demo", "reset"); code != 0 {
		t.Fatalf("demo reset: %d %q %q", code, out, errOut)
	}
	waitFor("after posgate demo reset", "0s")

	mustCLI(t, env, "sandbox", "clock", "advance", "1h")
	waitFor("advanced again", "1h0m0s")
	serveOn(t, app.Config{Database: db, Demo: true, DemoReset: true})
	waitFor("after another serve --demo --reset", "0s")
}

// TestDemoListensOnLoopback: serve --demo without --listen binds
// 127.0.0.1:8080, not every interface (the demo's secrets are public). Port
// 8080 may be taken on a shared machine: the failure then names the address
// too.
func TestDemoListensOnLoopback(t *testing.T) {
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--demo", "--drain-delay", "0")
	cmd.Dir = t.TempDir()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 64)
	for _, r := range []*bufio.Scanner{bufio.NewScanner(stdout), bufio.NewScanner(stderr)} {
		go func() {
			for r.Scan() {
				lines <- r.Text()
			}
		}()
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l := <-lines:
			if strings.HasPrefix(l, "posgate demo is serving ") {
				if !strings.HasPrefix(l, "posgate demo is serving http://localhost:8080 on 127.0.0.1:8080 ") {
					t.Fatalf("banner: %s", l)
				}
				return
			}
			if strings.Contains(l, "address already in use") {
				if !strings.Contains(l, "127.0.0.1:8080") {
					t.Fatalf("listen error: %s", l)
				}
				t.Logf("port 8080 is taken here; the refusal names 127.0.0.1:8080: %s", l)
				return
			}
		case <-deadline:
			t.Fatal("no banner")
		}
	}
}
