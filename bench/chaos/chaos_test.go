// Package chaos holds the chaos test of posgate serve, kept in the
// repository and run by hand (it takes about a minute per store and wants
// the machine to itself):
//
//	go test ./bench/chaos -chaos -v                                  # SQLite
//	POSGATE_TEST_POSTGRES_DSN=postgres://… go test ./bench/chaos -chaos -v   # and PostgreSQL
//
// It builds cmd/posgate, starts `posgate serve --demo` as a real process and
// puts write load on it: startInteraction from many goroutines, each
// answered session remembered, and on every other goroutine the sale that
// follows the interaction (docs/api.md §13.1), each answered transaction
// remembered. It kills the process with SIGKILL three times at random
// moments, restarting it each time, then checks that every session and
// every transaction that was answered is in the store: an Accepted answer is
// sent only once what it reports is stored (docs/api.md §4.1, §13). A second run stops the
// process with SIGTERM under the same load and checks that no request the
// server had taken failed: graceful shutdown finishes what is in flight.
// docs/performance.md holds its figures.
package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/pgtest"
)

var (
	run     = flag.Bool("chaos", false, "run the chaos test (a real posgate serve, SIGKILLed and SIGTERMed under write load)")
	workers = flag.Int("chaos-workers", 32, "goroutines sending startInteraction (every other one also the sale that follows)")
)

func TestChaos(t *testing.T) {
	if !*run {
		t.Skip("the chaos test runs with -chaos")
	}
	bin := filepath.Join(t.TempDir(), "posgate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/posgate")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Run("sqlite", func(t *testing.T) {
		dsn := filepath.Join(t.TempDir(), "posgate.db")
		killRun(t, bin, dsn)
		termRun(t, bin, dsn)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		killRun(t, bin, dsn)
		termRun(t, bin, dsn)
	})
}

// proc is one posgate serve process.
type proc struct {
	cmd  *exec.Cmd
	base string
	done chan error
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs posgate serve on addr (the same one across restarts: it is
// the tokens' issuer) and returns once it is ready, with the time that took.
func start(t *testing.T, bin, dsn, addr string) (*proc, time.Duration) {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(t.TempDir(), "posgate.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	began := time.Now()
	p := &proc{base: "http://" + addr, done: make(chan error, 1)}
	// The rate limit is far above the load (as in the bench): the test is of
	// durability and shutdown, not of the limiter. The drain keeps serving
	// for 2 s after SIGTERM (docs/api.md §16).
	p.cmd = exec.Command(bin, "serve", "--demo", "--listen", addr, "--database", dsn, "--log-level", "warn",
		"--rate-limit", "1000000", "--rate-burst", "1000000", "--drain-delay", "2s")
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done; p.done <- nil })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(p.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p, time.Since(began)
			}
		}
	}
	t.Fatal("posgate did not become ready")
	return nil, 0
}

func (p *proc) token(t *testing.T) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"pos_integration"}}
	req, _ := http.NewRequest("POST", p.base+"/connect/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("demo-pos", "demo-pos-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || tr.AccessToken == "" {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return tr.AccessToken
}

// load is the write load: workers sending startInteraction to the current
// process until stopped, remembering every answered session.
type load struct {
	base     string
	token    string
	client   *http.Client
	mu       sync.Mutex
	sessions []string
	sales    []string // transactionIds of answered, recorded sales
	run      string   // makes this load's transactionIds unique across loads
	answered atomic.Int64
	failed   atomic.Int64 // no answer, or not 200 Accepted
	// cutoff (UnixNano; 0: none) is when a shutdown began: requests
	// written before it were in the server's hands.
	cutoff       atomic.Int64
	inFlight     atomic.Int64 // written before cutoff, answered after it
	failedBefore atomic.Int64
	failures     sync.Map // error text → count, for the report
	lastErr      atomic.Value
	stop         chan struct{}
	wg           sync.WaitGroup
}

var places = [][2]string{{"TERM-05", "LOC123"}, {"TERM-06", "LOC123"}, {"TERM-07", "LOC456"}}

func newLoad(base, token string, n int) *load {
	l := &load{base: base, token: token, stop: make(chan struct{}), run: fmt.Sprintf("%08x", rand.Uint32()),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: n}}}
	for i := range n {
		l.wg.Add(1)
		go l.work(i)
	}
	return l
}

func (l *load) work(i int) {
	defer l.wg.Done()
	for n := 0; ; n++ {
		select {
		case <-l.stop:
			return
		default:
		}
		pl := places[(i+n)%len(places)]
		body := fmt.Sprintf(`{"terminalId":%q,"posLocationId":%q}`, pl[0], pl[1])
		req, _ := http.NewRequest("POST", l.base+"/pos/clover/startInteraction", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+l.token)
		var wrote atomic.Int64
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(time.Now().UnixNano()) },
		}))
		id, err := l.send(req)
		cut := l.cutoff.Load()
		before := cut != 0 && wrote.Load() != 0 && wrote.Load() < cut
		if err != nil {
			l.failed.Add(1)
			l.lastErr.Store(err.Error())
			if before {
				l.failedBefore.Add(1)
				v, _ := l.failures.LoadOrStore(err.Error(), new(atomic.Int64))
				v.(*atomic.Int64).Add(1)
			}
			time.Sleep(5 * time.Millisecond) // the process is down; do not spin
			continue
		}
		if before {
			l.inFlight.Add(1)
		}
		l.answered.Add(1)
		l.mu.Lock()
		l.sessions = append(l.sessions, id)
		l.mu.Unlock()
		if i%2 == 1 {
			continue
		}
		txID := fmt.Sprintf("CH-%s-%d-%d", l.run, i, n)
		sale := fmt.Sprintf(`{"sessionId":%q,"transactionId":%q,"terminalId":%q,"posLocationId":%q,"transactionAmount":1.00,`+
			`"transactionDate":%q,"loyalty":{"cardNumber":"john-doe"}}`, id, txID, pl[0], pl[1], time.Now().UTC().Format(time.RFC3339))
		req, _ = http.NewRequest("POST", l.base+"/pos/clover/transaction", strings.NewReader(sale))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+l.token)
		if err := l.sendSale(req); err != nil {
			l.failed.Add(1)
			l.lastErr.Store(err.Error())
			continue
		}
		l.answered.Add(1)
		l.mu.Lock()
		l.sales = append(l.sales, txID)
		l.mu.Unlock()
	}
}

// sendSale posts one sale and succeeds when it was recorded (Accepted, with
// posgate's id).
func (l *load) sendSale(req *http.Request) error {
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Data struct {
			ID        *string `json:"id"`
			PosStatus string  `json:"posStatus"`
		} `json:"data"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &env) != nil || env.Data.ID == nil || env.Data.PosStatus != "Accepted" {
		return fmt.Errorf("sale: status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	return nil
}

// send posts one startInteraction and returns the session id of an
// Accepted answer.
func (l *load) send(req *http.Request) (string, error) {
	resp, err := l.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var env struct {
		Data struct {
			SessionID *string `json:"sessionId"`
			PosStatus string  `json:"posStatus"`
		} `json:"data"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &env) != nil || env.Data.SessionID == nil || env.Data.PosStatus != "Accepted" {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	return *env.Data.SessionID, nil
}

func (l *load) end() {
	close(l.stop)
	l.wg.Wait()
}

// checkStored fails unless every answered session and sale is in the
// store.
func checkStored(t *testing.T, dsn string, sessions, sales []string) {
	t.Helper()
	st, err := app.OpenStore(context.Background(), dsn, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	missing := 0
	for _, id := range sessions {
		if _, err := st.FindSession(context.Background(), id); err != nil {
			missing++
			if missing <= 5 {
				t.Errorf("answered session %s: %v", id, err)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d answered sessions are missing", missing, len(sessions))
	}
	missing = 0
	for _, id := range sales {
		if _, err := st.FindTransaction(context.Background(), "clover", "demo-company", id); err != nil {
			missing++
			if missing <= 5 {
				t.Errorf("answered sale %s: %v", id, err)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d answered sales are missing", missing, len(sales))
	}
}

// killRun SIGKILLs the process three times at random moments under load.
func killRun(t *testing.T, bin, dsn string) {
	addr := freeAddr(t)
	p, ready := start(t, bin, dsn, addr)
	l := newLoad(p.base, p.token(t), *workers)
	began := time.Now()
	var restarts []time.Duration
	for round := range 3 {
		time.Sleep(time.Duration(500+rand.IntN(1500)) * time.Millisecond)
		before := l.answered.Load()
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.done
		p.done <- nil
		t.Logf("round %d: SIGKILL after %d answered sessions (last error %v)", round+1, before, l.lastErr.Load())
		p, ready = start(t, bin, dsn, addr)
		restarts = append(restarts, ready)
	}
	time.Sleep(time.Second)
	l.end()
	elapsed := time.Since(began)
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	p.done <- nil
	checkStored(t, dsn, l.sessions, l.sales)
	t.Logf("SIGKILL run: %d sessions and %d sales answered in %v (%.0f requests/s), all found after restart; %d requests failed while the process was down; restart to ready: %v",
		len(l.sessions), len(l.sales), elapsed.Round(time.Millisecond), float64(len(l.sessions)+len(l.sales))/elapsed.Seconds(), l.failed.Load(), restarts)
}

// termRun stops the process with SIGTERM under load: every request written
// before the signal must be answered Accepted.
func termRun(t *testing.T, bin, dsn string) {
	p, _ := start(t, bin, dsn, freeAddr(t))
	l := newLoad(p.base, p.token(t), *workers)
	time.Sleep(2 * time.Second)
	l.cutoff.Store(time.Now().UnixNano())
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := <-p.done
	p.done <- nil
	stopped := time.Since(sent)
	l.end()
	if err != nil {
		t.Errorf("posgate exited with %v after SIGTERM", err)
	}
	checkStored(t, dsn, l.sessions, l.sales)
	var reasons []string
	l.failures.Range(func(k, v any) bool {
		reasons = append(reasons, fmt.Sprintf("%d× %s", v.(*atomic.Int64).Load(), k))
		return true
	})
	t.Logf("SIGTERM run: %d sessions and %d sales answered, %d requests in flight at SIGTERM answered after it, %d of those failed %v; exit %v after %v; %d requests refused once the listener closed",
		len(l.sessions), len(l.sales), l.inFlight.Load(), l.failedBefore.Load(), reasons, err, stopped.Round(time.Millisecond), l.failed.Load()-l.failedBefore.Load())
	if n := l.failedBefore.Load(); n > 0 {
		t.Errorf("%d requests written before SIGTERM failed", n)
	}
}
