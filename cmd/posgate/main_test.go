package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// onTerminal, as a key of runCLI's env, runs the command as if its
// standard error were a terminal (where progress is drawn).
const onTerminal = "(stderr is a terminal)"

// runCLI runs a command in-process with its own output and environment.
func runCLI(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string {
		if v, ok := env[k]; ok || k != "POSGATE_CREDENTIALS" {
			return v
		}
		return filepath.Join(os.TempDir(), "posgate-test-no-such-dir", "credentials.json") // never the user's saved login
	}
	c := &cli{stdout: &out, stderr: &errOut, getenv: getenv, terminal: env[onTerminal] != ""}
	err := c.run(context.Background(), args)
	return out.String() + errOut.String(), err
}

func mustCLI(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	out, err := runCLI(t, env, args...)
	if err != nil {
		t.Fatalf("posgate %s: %v\n%s", strings.Join(args, " "), describe(err), out)
	}
	return out
}

func TestOperatorCommands(t *testing.T) {
	env := startServer(t, filepath.Join(t.TempDir(), "ops.db"), false).env(t)
	mustCLI(t, env, "pos-system", "create", "pax", "--name", "PAX")
	mustCLI(t, env, "company", "create", "acme", "--pos", "pax", "--features", "coupons,transactions")
	mustCLI(t, env, "location", "create", "S1", "--pos", "pax", "--company", "acme")
	if out := mustCLI(t, env, "terminal", "register", "T1", "--pos", "pax", "--location", "S1"); !strings.Contains(out, "registered terminal T1 at pax/S1") {
		t.Fatalf("register: %s", out)
	}
	out := mustCLI(t, env, "client", "create", "--pos", "pax", "--scopes", "pos_integration", "--id", "pax-till")
	m := regexp.MustCompile(`client_secret: (\S+)`).FindStringSubmatch(out)
	if m == nil || len(m[1]) != 43 || !strings.Contains(out, "client_id:     pax-till") {
		t.Fatalf("client create: %s", out)
	}
	if out := mustCLI(t, env, "client", "list"); strings.Contains(out, m[1]) || !strings.Contains(out, "pax-till") {
		t.Fatalf("client list: %s", out)
	}
	out = mustCLI(t, env, "client", "rotate-secret", "pax-till")
	rotated := regexp.MustCompile(`client_secret: (\S+)`).FindStringSubmatch(out)
	if rotated == nil || len(rotated[1]) != 43 || rotated[1] == m[1] || !strings.Contains(out, "The old secret no longer works") {
		t.Fatalf("client rotate-secret: %s", out)
	}
	if out := mustCLI(t, env, "audit", "list", "--action", "client.secret.rotate"); !strings.Contains(out, "client pax-till") || strings.Contains(out, rotated[1]) {
		t.Fatalf("audit of the rotation: %s", out)
	}
	mustCLI(t, env, "terminal", "disable", "T1", "--pos", "pax", "--location", "S1")
	if out := mustCLI(t, env, "terminal", "list", "--pos", "pax"); !regexp.MustCompile(`S1\s+T1\s+Disabled`).MatchString(out) {
		t.Fatalf("terminal list: %s", out)
	}
	mustCLI(t, env, "terminal", "enable", "T1", "--pos", "pax", "--location", "S1")
	out = mustCLI(t, env, "company", "update", "acme", "--pos", "pax", "--enable", "carousel", "--disable", "coupons")
	if !strings.Contains(out, "features carousel,transactions") {
		t.Fatalf("company update: %s", out)
	}
	if out := mustCLI(t, env, "company", "list", "--pos", "pax"); !strings.Contains(out, "carousel,transactions") {
		t.Fatalf("company list: %s", out)
	}
	mustCLI(t, env, "location", "disable", "S1", "--pos", "pax")
	if out := mustCLI(t, env, "location", "list", "--pos", "pax"); !regexp.MustCompile(`S1\s+acme\s+Disabled`).MatchString(out) {
		t.Fatalf("location list: %s", out)
	}
	mustCLI(t, env, "keys", "rotate")
	mustCLI(t, env, "keys", "rotate")
	if out := mustCLI(t, env, "keys", "list"); strings.Count(out, "ES256") != 3 || strings.Count(out, "true") != 1 { // the server's first key and two rotations
		t.Fatalf("keys list: %s", out)
	}

	// Bad input: a clear error, and nothing changes.
	before := mustCLI(t, env, "terminal", "list", "--pos", "pax")
	for _, args := range [][]string{
		{"terminal", "register", "T2", "--pos", "pax", "--location", "NOPE"},
		{"terminal", "register", "T1", "--pos", "pax", "--location", "S1"},
		{"terminal", "register", "", "--pos", "pax", "--location", "S1"},
		{"terminal", "register", "--pos", "pax", "--location", "S1"},
		{"company", "create", "x", "--pos", "pax", "--features", "teleport"},
		{"client", "create", "--pos", "pax", "--scopes", "root"},
		{"terminal", "frobnicate"},
	} {
		out, err := runCLI(t, env, args...)
		if err == nil {
			t.Fatalf("posgate %v succeeded: %s", args, out)
		}
	}
	_, err := runCLI(t, env, "terminal", "register", "T1", "--pos", "pax", "--location", "S1")
	if got := describe(err); got != `terminal "T1" already exists` && !strings.Contains(got, "T1") {
		t.Fatalf("duplicate terminal error: %q", got)
	}
	_, err = runCLI(t, env, "company", "create", "x", "--pos", "pax", "--features", "teleport")
	if got := describe(err); got != `unknown feature "teleport" (known: coupons, receiptPromotion, carousel, promotionImport, transactions, productsImport) (server `+env["POSGATE_SERVER"]+`)` {
		t.Fatalf("feature error: %q", got)
	}
	if after := mustCLI(t, env, "terminal", "list", "--pos", "pax"); after != before {
		t.Fatalf("terminals changed:\n%s\n%s", before, after)
	}
}

// binary builds posgate once per test run.
var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "posgate-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "posgate")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// proc is a running posgate process.
type proc struct {
	cmd    *exec.Cmd
	base   string
	stderr *bytes.Buffer
	mu     *sync.Mutex
}

var baseRE = regexp.MustCompile(`posgate demo is serving \S+ on (\S+) `)

// startProcess runs `posgate serve --demo` and waits for its banner.
func startProcess(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--demo", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "POSGATE_LOG_FORMAT=json")
	stdout, _ := cmd.StdoutPipe()
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}, mu: &sync.Mutex{}}
	cmd.Stderr = lockedWriter{p.mu, p.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := baseRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case addr := <-found:
		p.base = "http://" + addr
	case <-time.After(30 * time.Second):
		p.mu.Lock()
		defer p.mu.Unlock()
		t.Fatalf("no banner; stderr:\n%s", p.stderr)
	}
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func token(t *testing.T, base, id, secret string) string {
	t.Helper()
	resp, err := http.PostForm(base+"/connect/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != 200 {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return tr.AccessToken
}

// TestSIGTERMFinishesInFlightRequests starts a request whose body arrives
// slowly, sends SIGTERM in the middle of it, and checks the request is
// answered in full and the process then exits cleanly.
func TestSIGTERMFinishesInFlightRequests(t *testing.T) {
	p := startProcess(t, t.TempDir(), "--drain-delay", "0")
	tok := token(t, p.base, "demo-pos", "demo-pos-secret")

	pr, pw := io.Pipe()
	r, _ := http.NewRequest("POST", p.base+"/pos/clover/startInteraction", pr)
	r.Header.Set("Authorization", "Bearer "+tok)
	r.Header.Set("Content-Type", "application/json")
	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- result{status: resp.StatusCode, body: string(b)}
	}()
	io.WriteString(pw, `{"terminalId":"TERM-05",`)
	time.Sleep(300 * time.Millisecond) // the request is now in flight
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	io.WriteString(pw, `"posLocationId":"LOC123"}`)
	pw.Close()
	res := <-done
	if res.err != nil || res.status != 200 || !strings.Contains(res.body, `"posStatus":"Accepted"`) {
		t.Fatalf("in-flight request: %d %q %v", res.status, res.body, res.err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- p.cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("process did not exit after SIGTERM")
	}
	// New connections are refused once it is down.
	if _, err := http.Get(p.base + "/healthz"); err == nil {
		t.Fatal("server still answering after exit")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	logs := p.stderr.String()
	if strings.Contains(logs, tok) || strings.Contains(logs, "demo-pos-secret") {
		t.Fatal("a token or secret reached the log")
	}
	if !strings.Contains(logs, `"msg":"request"`) || !strings.Contains(logs, `"clientId":"demo-pos"`) {
		t.Fatalf("request log lines missing:\n%s", logs)
	}
}

// TestSIGTERMDrains puts a real posgate under continuous load from several
// goroutines (keep-alive connections, as a POS fleet behind a load balancer
// holds them) and sends SIGTERM with a drain delay: /readyz turns 503 at
// once, the load stops when it sees that (as a load balancer would), and not
// one request fails or meets a socket error; answers during the drain
// close their connections; the process then exits cleanly.
func TestSIGTERMDrains(t *testing.T) {
	p := startProcess(t, t.TempDir(), "--drain-delay", "2s", "--rate-limit", "0")
	tok := token(t, p.base, "demo-pos", "demo-pos-secret")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 10 * time.Second}
	var (
		mu          sync.Mutex
		ok, closing int
		failures    []string
		stop        = make(chan struct{})
		wg          sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, _ := http.NewRequest("POST", p.base+"/pos/clover/startInteraction", strings.NewReader(`{"terminalId":"TERM-05","posLocationId":"LOC123"}`))
				r.Header.Set("Authorization", "Bearer "+tok)
				r.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(r)
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case resp.StatusCode != 200:
					failures = append(failures, resp.Status)
				default:
					ok++
					if resp.Close {
						closing++
					}
				}
				mu.Unlock()
				if resp != nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	for {
		resp, err := client.Get(p.base + "/readyz")
		if err != nil {
			t.Fatalf("readyz during the drain: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 503 {
			break
		}
		if time.Since(signalled) > time.Second {
			t.Fatal("readyz still ready a second after SIGTERM")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the load balancer's reaction time
	close(stop)
	wg.Wait()
	waitErr := make(chan error, 1)
	go func() { waitErr <- p.cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("process did not exit after the drain")
	}
	if since := time.Since(signalled); since < 2*time.Second {
		t.Fatalf("exited %v after SIGTERM, before the 2 s drain delay", since)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 || ok < 100 || closing == 0 {
		t.Fatalf("%d answered, %d with Connection: close, %d failed: %v", ok, closing, len(failures), failures[:min(len(failures), 5)])
	}
	t.Logf("%d requests answered across SIGTERM, %d of them with Connection: close during the drain; none failed", ok, closing)
}

// TestClientRateLimitCommand sets, shows and removes a client's own rate
// limit from the command line, and refuses bad values.
func TestClientRateLimitCommand(t *testing.T) {
	env := startServer(t, filepath.Join(t.TempDir(), "rl.db"), false).env(t)
	mustCLI(t, env, "pos-system", "create", "pax", "--name", "PAX")
	mustCLI(t, env, "client", "create", "--pos", "pax", "--scopes", "pos_integration", "--id", "till")
	if out := mustCLI(t, env, "client", "rate-limit", "till", "--rps", "2.5"); out != "client till may send 2.5 requests per second in bursts of up to 5 (servers apply it within a second)\n" {
		t.Fatalf("set: %q", out)
	}
	if out := mustCLI(t, env, "client", "rate-limit", "till", "--rps", "10", "--burst", "3"); !strings.Contains(out, "10 requests per second in bursts of up to 3") {
		t.Fatalf("change: %q", out)
	}
	for _, args := range [][]string{
		{"client", "rate-limit", "till", "--rps", "0"},
		{"client", "rate-limit", "till", "--rps", "5", "--burst", "-1"},
		{"client", "rate-limit", "till", "--default", "--rps", "5"},
		{"client", "rate-limit", "nobody", "--rps", "5"},
		{"client", "rate-limit", "--rps", "5"},
	} {
		if out, err := runCLI(t, env, args...); err == nil {
			t.Fatalf("posgate %v succeeded: %s", args, out)
		}
	}
	if out := mustCLI(t, env, "client", "rate-limit", "till", "--default"); out != "client till has the default rate limit\n" {
		t.Fatalf("default: %q", out)
	}
}

// withTerminal is env with stderr taken for a terminal.
func withTerminal(env map[string]string) map[string]string {
	out := map[string]string{onTerminal: "yes"}
	for k, v := range env {
		out[k] = v
	}
	return out
}
