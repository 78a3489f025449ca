// Package fleettest tests a running posgate fleet: three instances behind
// haproxy on one PostgreSQL primary with a streaming standby, through
// pgbouncer in transaction pooling mode, as `deploy/local-fleet up` starts
// it (docs/fleet.md). The tests skip unless POSGATE_FLEET_URL is set:
//
//	eval "$(deploy/local-fleet up /tmp/fleet)"
//	go test -count=1 -v ./internal/fleettest
//	deploy/local-fleet down /tmp/fleet
//
// They talk to the fleet only as its users do: the Go client (its retries and
// Idempotency-Keys) through haproxy, each instance's own address for what one
// instance sees, the database for what it holds, and signals and the
// fleet's command files for the processes. They run in file order; the
// database failover runs last, since it leaves the fleet without a standby.
package fleettest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
)

// fleet is the running fleet, as deploy/local-fleet's exports describe it.
type fleet struct {
	url       string
	dir       string
	instances []string // each instance's own base URL
	dsn       string   // posgate's DSN (pgbouncer)
	primary   string
	standby   string
	cacheTTL  time.Duration
	failover  string
	admin     *client.Client

	mu   sync.Mutex
	pids []int
}

var (
	shared     *fleet
	sharedErr  error
	sharedOnce sync.Once
)

// getFleet returns the fleet, or skips the test when none is running.
func getFleet(t *testing.T) *fleet {
	t.Helper()
	if os.Getenv("POSGATE_FLEET_URL") == "" {
		t.Skip("POSGATE_FLEET_URL is not set: start a fleet with deploy/local-fleet up DIR and eval its output")
	}
	sharedOnce.Do(func() { shared, sharedErr = newFleet() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func newFleet() (*fleet, error) {
	f := &fleet{
		url:       os.Getenv("POSGATE_FLEET_URL"),
		dir:       os.Getenv("POSGATE_FLEET_DIR"),
		instances: strings.Split(os.Getenv("POSGATE_FLEET_INSTANCE_URLS"), ","),
		dsn:       os.Getenv("POSGATE_FLEET_DSN"),
		primary:   os.Getenv("POSGATE_FLEET_PRIMARY_DSN"),
		standby:   os.Getenv("POSGATE_FLEET_STANDBY_DSN"),
		failover:  os.Getenv("POSGATE_FLEET_FAILOVER"),
	}
	for _, s := range strings.Split(os.Getenv("POSGATE_FLEET_INSTANCES"), ",") {
		pid, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("POSGATE_FLEET_INSTANCES: %q", s)
		}
		f.pids = append(f.pids, pid)
	}
	if len(f.pids) != len(f.instances) || f.dir == "" {
		return nil, errors.New("POSGATE_FLEET_INSTANCES, POSGATE_FLEET_INSTANCE_URLS and POSGATE_FLEET_DIR must describe the same instances")
	}
	ttl, err := time.ParseDuration(os.Getenv("POSGATE_FLEET_CACHE_TTL"))
	if err != nil {
		return nil, fmt.Errorf("POSGATE_FLEET_CACHE_TTL: %w", err)
	}
	f.cacheTTL = ttl
	f.admin, err = client.New(f.url, client.WithCredentials(os.Getenv("POSGATE_FLEET_CLIENT_ID"),
		os.Getenv("POSGATE_FLEET_CLIENT_SECRET"), string(client.ScopeAdmin)))
	return f, err
}

func (f *fleet) pid(i int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pids[i]
}

// start runs instance i's command file (with bin instead of the fleet's
// binary when not empty) and waits until it is ready.
func (f *fleet) start(t *testing.T, i int, bin string) {
	t.Helper()
	args := []string{filepath.Join(f.dir, fmt.Sprintf("instance-%d.sh", i+1))}
	if bin != "" {
		args = append(args, bin)
	}
	out, err := exec.Command("bash", args...).Output()
	if err != nil {
		t.Fatalf("start instance %d: %v", i+1, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("start instance %d: pid %q", i+1, out)
	}
	f.mu.Lock()
	f.pids[i] = pid
	f.mu.Unlock()
	f.waitReady(t, i, 30*time.Second)
}

// waitReady waits until instance i answers /readyz with 200 and then for
// haproxy's health checks to take it back (rise 2, inter 500 ms).
func (f *fleet) waitReady(t *testing.T, i int, within time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		resp, err := http.Get(f.instances[i] + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				took := time.Since(began)
				time.Sleep(1500 * time.Millisecond)
				return took
			}
		}
		if time.Since(began) > within {
			t.Fatalf("instance %d not ready within %s", i+1, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// signal sends sig to instance i and waits until the process is gone.
func (f *fleet) signal(t *testing.T, i int, sig syscall.Signal) {
	t.Helper()
	pid := f.pid(i)
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal instance %d (pid %d): %v", i+1, pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("instance %d (pid %d) still runs 30 s after %s", i+1, pid, sig)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// counting is a RoundTripper that counts what the client's retries hide:
// attempts that failed on the connection and 5xx answers.
type counting struct {
	base     http.RoundTripper
	attempts atomic.Int64
	connErrs atomic.Int64
	status5x atomic.Int64
	mu       sync.Mutex
	firstErr error
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.attempts.Add(1)
	resp, err := c.base.RoundTrip(r)
	if err != nil {
		c.connErrs.Add(1)
		c.mu.Lock()
		if c.firstErr == nil {
			c.firstErr = err
		}
		c.mu.Unlock()
	} else if resp.StatusCode >= 500 {
		c.status5x.Add(1)
	}
	return resp, err
}

// tenant is a POS system of its own for one test: a company with a loyalty
// program, a location with terminals, loyalty users and a POS client.
type tenant struct {
	pos      string
	company  string
	location string
	users    []string
	client   *client.Client
	wire     *counting
	clientID string
	secret   string
	// noLookups stops the load's loyalty-user lookup after each sale;
	// measurements turn them off to price sales alone.
	noLookups bool
	// tills is how many goroutines sell to each user at once (1 when 0):
	// two tills of a store selling to one loyalty card.
	tills int
}

func randomID(prefix string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// newTenant registers a tenant with n loyalty users (and as many terminals).
func (f *fleet) newTenant(t *testing.T, n int) *tenant {
	t.Helper()
	ctx := context.Background()
	tn := &tenant{pos: randomID("fleet-"), company: "C1", location: "L1"}
	a := f.admin.Admin
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.CreatePosSystem(ctx, client.CreatePosSystemRequest{ID: tn.pos}))
	must(a.CreateCompany(ctx, tn.pos, client.CreateCompanyRequest{PosCompanyID: tn.company}))
	must(a.CreateLocation(ctx, tn.pos, client.CreateLocationRequest{PosLocationID: tn.location, PosCompanyID: tn.company}))
	must(a.PutLoyaltyProgram(ctx, tn.pos, tn.company, client.PutLoyaltyProgramRequest{PointsPerCurrencyUnit: 1, StampsPerSale: 1}))
	for i := range n {
		u := fmt.Sprintf("U%03d", i)
		must(a.CreateLoyaltyUser(ctx, tn.pos, tn.company, client.CreateLoyaltyUserRequest{ID: u, FirstName: "Fleet", LastName: u}))
		must(a.CreateTerminal(ctx, tn.pos, tn.location, client.CreateTerminalRequest{TerminalID: "T" + u}))
		tn.users = append(tn.users, u)
	}
	c, err := a.CreateClient(ctx, client.CreateAPIClientRequest{PosSystemID: tn.pos, Scopes: []client.Scope{client.ScopePosIntegration}})
	if err != nil {
		t.Fatal(err)
	}
	tn.clientID, tn.secret = c.ClientID, c.ClientSecret
	tn.wire = &counting{base: &http.Transport{MaxIdleConnsPerHost: 256}}
	tn.client, err = client.New(f.url, client.WithCredentials(c.ClientID, c.ClientSecret, string(client.ScopePosIntegration)),
		client.WithHTTPClient(&http.Client{Transport: tn.wire}))
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// sale is one sale as the client saw it.
type sale struct {
	id       string
	user     string
	points   int
	answered time.Time
	err      error
}

// load is a steady mix of sales and lookups through haproxy: one goroutine
// per loyalty user and till, each selling to its user one sale after the
// other, and a lookup after every sale.
type load struct {
	mu      sync.Mutex
	sales   []*sale
	lookups int
	lookErr []error
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// startLoad runs sales at about rate per second in all until stop.
func (tn *tenant) startLoad(rate float64) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel}
	tills := max(tn.tills, 1)
	sellers := len(tn.users) * tills
	every := time.Duration(float64(sellers) / rate * float64(time.Second))
	for w := range sellers {
		u := tn.users[w%len(tn.users)]
		till := w / len(tn.users)
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			// Spread the users' first sales over one period.
			time.Sleep(every * time.Duration(w) / time.Duration(sellers))
			tick := time.NewTicker(every)
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				s := tn.sell(u, fmt.Sprintf("%s-%d-%d", u, till, n), 10+n%7)
				l.mu.Lock()
				l.sales = append(l.sales, s)
				l.mu.Unlock()
				if tn.noLookups {
					continue
				}
				_, err := tn.client.LookupLoyaltyUsers(context.Background(), tn.pos,
					client.LoyaltyUserLookupRequest{PosLocationID: tn.location, Keyword: u})
				l.mu.Lock()
				l.lookups++
				if err != nil {
					l.lookErr = append(l.lookErr, err)
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// stop ends the load and waits for the calls in flight.
func (l *load) stop() {
	l.cancel()
	l.done.Wait()
}

// sell starts an interaction at the user's terminal and records a sale of
// amount to the user.
func (tn *tenant) sell(user, id string, amount int) *sale {
	ctx := context.Background()
	s := &sale{id: id, user: user}
	si, err := tn.client.StartInteraction(ctx, tn.pos, client.StartInteractionRequest{TerminalID: "T" + user, PosLocationID: tn.location})
	if err == nil && si.SessionID == nil {
		err = fmt.Errorf("startInteraction: %s", si.PosStatus)
	}
	if err != nil {
		s.err = err
		return s
	}
	res, err := tn.client.CreateTransaction(ctx, tn.pos, client.TransactionRequest{SessionID: *si.SessionID, TransactionID: id,
		TerminalID: "T" + user, PosLocationID: tn.location, TransactionAmount: float64(amount),
		TransactionDate: time.Now().UTC().Truncate(time.Second), Loyalty: &client.LoyaltyCard{CardNumber: user}})
	s.answered = time.Now()
	switch {
	case err != nil:
		s.err = err
	case res.Loyalty == nil:
		s.err = fmt.Errorf("sale %s: no loyalty in the answer", id)
	default:
		s.points = res.Loyalty.PointsEarned
	}
	return s
}

// check asserts what the database holds against what the client was
// answered: every answered sale once with its points, no sale recorded
// twice, each user's balance the sum of its recorded sales. It reports the
// sales that failed as the client saw them.
func (tn *tenant) check(t *testing.T, f *fleet, l *load) (answered, failed int) {
	t.Helper()
	ctx := context.Background()
	recorded := map[string]client.Transaction{}
	for n, seen := 1, 0; ; n++ {
		page, err := f.admin.Admin.ListTransactions(ctx, tn.pos, tn.company, client.TransactionQuery{PageOptions: client.PageOptions{Page: n, PageSize: 100}})
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range page.Transactions {
			if _, dup := recorded[tx.TransactionID]; dup {
				t.Errorf("sale %s recorded twice", tx.TransactionID)
			}
			recorded[tx.TransactionID] = tx
		}
		seen += len(page.Transactions)
		if len(page.Transactions) == 0 || seen >= page.Page.Total {
			break
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.sales {
		if s.err != nil {
			failed++
			if failed <= 5 {
				t.Logf("sale %s failed: %v", s.id, s.err)
			}
			continue
		}
		answered++
		tx, ok := recorded[s.id]
		switch {
		case !ok:
			t.Errorf("answered sale %s is not in the database", s.id)
		case tx.PointsEarned != s.points:
			t.Errorf("sale %s: %d points answered, %d recorded", s.id, s.points, tx.PointsEarned)
		}
	}
	sums := map[string]int{}
	for _, tx := range recorded {
		sums[tx.UserID] += tx.PointsEarned
	}
	for _, u := range tn.users {
		lu, err := f.admin.Admin.GetLoyaltyUser(ctx, tn.pos, tn.company, u)
		if err != nil {
			t.Fatal(err)
		}
		if lu.Points != sums[u] {
			t.Errorf("user %s has %d points, its recorded sales earned %d (a sale applied twice or lost)", u, lu.Points, sums[u])
		}
	}
	return answered, failed
}
