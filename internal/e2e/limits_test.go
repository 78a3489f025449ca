package e2e

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/buildinfo"
	"github.com/posgate/posgate/internal/syncbuf"
)

// mustRateLimit checks the RateLimit fields of an answer.
func mustRateLimit(t *testing.T, r response, policy, limit string) {
	t.Helper()
	if got := r.Header.Get("RateLimit-Policy"); got != policy {
		t.Fatalf("RateLimit-Policy %q, want %q", got, policy)
	}
	if got := r.Header.Get("RateLimit"); got != limit {
		t.Fatalf("RateLimit %q, want %q", got, limit)
	}
}

// TestRateLimit: a client's bucket (1 request/s, bursts of 3) admits its
// burst, then answers 429 with Retry-After and the RateLimit fields; every
// answer of an authenticated route carries them (errors too), refilling
// follows the clock, and another client has a bucket of its own.
func TestRateLimit(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.RateLimit, c.RateBurst = 1, 3 })
		pos, admin := s.posToken(t), s.adminToken(t)
		const policy = `"client";q=3;w=3`

		mustRateLimit(t, s.api(t, pos).start("TERM-05", "LOC123"), policy, `"client";r=2;t=1`)
		bad := s.call(t, pos, "POST", "/pos/clover/startInteraction", `{"terminalId":5}`)
		mustStatus(t, bad, 400)
		mustRateLimit(t, bad, policy, `"client";r=1;t=2`)
		mustRateLimit(t, s.call(t, pos, "GET", "/pos/clover/receipt/promotion/location/LOC123", ""), policy, `"client";r=0;t=3`)

		over := s.api(t, pos).start("TERM-05", "LOC123")
		mustProblem(t, over, 429, "This client's rate limit is 1 requests per second in bursts of up to 3; retry after 1 s.", nil)
		mustRateLimit(t, over, policy, `"client";r=0;t=3`)
		if got := over.Header.Get("Retry-After"); got != "1" {
			t.Fatalf("Retry-After %q, want 1", got)
		}
		// Refused requests do not drain the bucket further, and a POS
		// request of another POS system is counted before it is refused.
		mustStatus(t, s.api(t, pos).start("TERM-05", "LOC123"), 429)
		mustStatus(t, s.call(t, pos, "POST", "/pos/pax/startInteraction", `{}`), 429)

		// Another client is not affected; no token, no client: no fields.
		mustRateLimit(t, s.call(t, admin, "GET", "/admin/v1/clients", ""), policy, `"client";r=2;t=1`)
		anon := s.api(t, "").start("TERM-05", "LOC123")
		mustStatus(t, anon, 401)
		if anon.Header.Get("RateLimit") != "" || anon.Header.Get("RateLimit-Policy") != "" {
			t.Fatalf("401 without a token carries RateLimit fields: %v", anon.Header)
		}

		s.clock.Advance(time.Second)
		mustRateLimit(t, s.api(t, pos).start("TERM-05", "LOC123"), policy, `"client";r=0;t=3`)
		mustStatus(t, s.api(t, pos).start("TERM-05", "LOC123"), 429)
		s.clock.Advance(3 * time.Second)
		mustRateLimit(t, s.api(t, pos).start("TERM-05", "LOC123"), policy, `"client";r=2;t=1`)
	})
}

// TestClientRateLimitOverride: an operator gives a client its own rate
// limit (it applies to the client's next request), the client view shows
// it, bad input is refused naming the fields and changes nothing, and
// removing it brings the default back.
func TestClientRateLimitOverride(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.RateLimit, c.RateBurst = 100, 200 })
		pos, admin := s.posToken(t), s.adminToken(t)
		const path = "/admin/v1/clients/demo-pos/rate-limit"
		put := func(tok, body string) response {
			return s.call(t, tok, "PUT", path, body)
		}
		mustRateLimit(t, s.api(t, pos).start("TERM-05", "LOC123"), `"client";q=200;w=2`, `"client";r=199;t=1`)

		for _, tc := range []struct {
			body   string
			status int
			detail string
			errs   map[string][]string
		}{
			{`{"requestsPerSecond":0,"burst":0}`, 400, "*", map[string][]string{
				"requestsPerSecond": {"requestsPerSecond must be between 0.01 and 1000000."}, "burst": {"burst must be between 1 and 1000000."}}},
			{`{"requestsPerSecond":5,"burst":2000000}`, 400, "*", map[string][]string{"burst": {"burst must be between 1 and 1000000."}}},
			{`{"requestsPerSecond":5,"burst":2,"window":1}`, 400, "*", nil},
			{`{"requestsPerSecond":"5","burst":2}`, 400, "*", nil},
			{`{"requestsPerSecond":5,"burst":2.5}`, 400, "*", nil},
			{strings.Repeat(" ", 70<<10) + `{}`, 413, "*", nil},
		} {
			r := put(admin, tc.body)
			if tc.errs != nil {
				mustProblem(t, r, tc.status, tc.detail, tc.errs)
			} else {
				mustStatus(t, r, tc.status)
			}
		}
		mustProblem(t, s.do(t, req{Method: "PUT", Path: path, Token: admin, ContentType: "application/xml",
			Body: `<RateLimit><requestsPerSecond>5</requestsPerSecond><burst>2</burst></RateLimit>`}), 415, "Send the body as application/json.", nil)
		mustStatus(t, put(pos, `{"requestsPerSecond":5,"burst":2}`), 403)
		mustProblem(t, s.call(t, admin, "PUT", "/admin/v1/clients/nobody/rate-limit", `{"requestsPerSecond":5,"burst":2}`), 404, "*", nil)
		// An operator restricted to one company may not change clients.
		created := s.call(t, admin, "POST", "/admin/v1/clients", `{"clientId":"shop-admin","posSystemId":"clover","scopes":["admin"],"companyIds":["demo-company"]}`)
		mustStatus(t, created, 201)
		secret := created.JSON(t)["data"].(map[string]any)["clientSecret"].(string)
		restricted := s.token(t, "shop-admin", secret, "admin")
		mustStatus(t, put(restricted, `{"requestsPerSecond":5,"burst":2}`), 403)
		if got := s.call(t, admin, "GET", "/admin/v1/clients/demo-pos", "").JSON(t)["data"].(map[string]any)["rateLimit"]; got != nil {
			t.Fatalf("rate limit after refused changes: %v", got)
		}
		// The POS client's refused PUT counted against its own bucket.
		mustRateLimit(t, s.api(t, pos).start("TERM-05", "LOC123"), `"client";q=200;w=2`, `"client";r=197;t=1`)

		r := put(admin, `{"requestsPerSecond":0.5,"burst":2}`)
		mustStatus(t, r, 200)
		data := r.JSON(t)["data"].(map[string]any)
		if rl, _ := data["rateLimit"].(map[string]any); data["clientId"] != "demo-pos" || rl["requestsPerSecond"] != 0.5 || rl["burst"] != 2.0 {
			t.Fatalf("PUT answer: %s", r.Body)
		}
		if got := s.call(t, admin, "GET", "/admin/v1/clients/demo-pos", "").JSON(t)["data"].(map[string]any)["rateLimit"]; got == nil {
			t.Fatal("GET does not show the rate limit")
		}
		mustRateLimit(t, s.api(t, pos).start("TERM-05", "LOC123"), `"client";q=2;w=4`, `"client";r=1;t=2`)
		mustRateLimit(t, s.api(t, pos).start("TERM-05", "LOC123"), `"client";q=2;w=4`, `"client";r=0;t=4`)
		over := s.api(t, pos).start("TERM-05", "LOC123")
		mustProblem(t, over, 429, "This client's rate limit is 0.5 requests per second in bursts of up to 2; retry after 2 s.", nil)
		if over.Header.Get("Retry-After") != "2" {
			t.Fatalf("Retry-After %q, want 2", over.Header.Get("Retry-After"))
		}
		// The operator's own client keeps the default; its 12 requests so
		// far (refused ones too) and this one came out of its bucket.
		mustRateLimit(t, s.call(t, admin, "GET", "/admin/v1/clients", ""), `"client";q=200;w=2`, `"client";r=187;t=1`)

		r = s.call(t, admin, "DELETE", path, "")
		mustStatus(t, r, 200)
		if d := r.JSON(t)["data"].(map[string]any); d["rateLimit"] != nil || d["clientId"] != "demo-pos" {
			t.Fatalf("DELETE answer: %s", r.Body)
		}
		mustRateLimit(t, s.api(t, pos).start("TERM-05", "LOC123"), `"client";q=200;w=2`, `"client";r=199;t=1`)
		mustProblem(t, s.call(t, admin, "DELETE", "/admin/v1/clients/nobody/rate-limit", ""), 404, "*", nil)
	})
}

// TestTokenLockout: failed client authentications lock the client id, and
// from one address every client, out of the token endpoint for the window;
// the right secret waits too; the lockout ends with the window.
func TestTokenLockout(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.AuthClientFailures, c.AuthAddressFailures, c.AuthLockout = 3, 5, time.Minute })
		cc := url.Values{"grant_type": {"client_credentials"}}
		for range 3 {
			mustOAuthError(t, s.tokenRequest(t, cc, "demo-pos", "wrong"), 401, "invalid_client")
		}
		locked := s.tokenRequest(t, cc, "demo-pos", "demo-pos-secret")
		mustOAuthError(t, locked, 429, "temporarily_unavailable")
		if string(locked.Body) != `{"error":"temporarily_unavailable","error_description":"Too many failed client authentications; retry in 60 s."}` ||
			locked.Header.Get("Retry-After") != "60" {
			t.Fatalf("locked out: %v %s", locked.Header, locked.Body)
		}
		s.token(t, "demo-admin", "demo-admin-secret", "admin") // another client id, same address

		// Two more failures from this address (5 in the window) lock it.
		mustOAuthError(t, s.tokenRequest(t, cc, "nobody", "wrong"), 401, "invalid_client")
		mustOAuthError(t, s.tokenRequest(t, cc, "demo-admin", "wrong"), 401, "invalid_client")
		mustOAuthError(t, s.tokenRequest(t, cc, "demo-admin", "demo-admin-secret"), 429, "temporarily_unavailable")

		s.clock.Advance(59 * time.Second)
		if r := s.tokenRequest(t, cc, "demo-pos", "demo-pos-secret"); r.Status != 429 || r.Header.Get("Retry-After") != "1" {
			t.Fatalf("a second before the end: %d %v", r.Status, r.Header)
		}
		s.clock.Advance(time.Second)
		s.token(t, "demo-pos", "demo-pos-secret", "pos_integration")
		s.token(t, "demo-admin", "demo-admin-secret", "admin")
	})
}

// hold starts a POST whose body is not sent until release is called: the
// request holds its slot meanwhile. The answer's status comes on the channel.
func hold(t *testing.T, s *server, path, token string) (release func(body string), status <-chan int) {
	t.Helper()
	pr, pw := io.Pipe()
	r, err := http.NewRequest("POST", s.base+path, pr)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/json")
	ch := make(chan int, 1)
	go func() {
		resp, err := checkedClient(t).Do(r)
		if err != nil {
			ch <- -1
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ch <- resp.StatusCode
	}()
	io.WriteString(pw, " ") // the handler is now reading the body
	return func(body string) { io.WriteString(pw, body); pw.Close() }, ch
}

// waitMetric waits until the server's metrics hold line (name and value):
// a request is known to be in flight, waiting or importing, without timing.
func waitMetric(t *testing.T, s *server, line string) {
	t.Helper()
	var text string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get("http://" + s.addrs.Metrics.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if text = string(b); strings.Contains(text, "\n"+line+"\n") {
			return
		}
	}
	t.Fatalf("metrics never showed %q:\n%s", line, text)
}

// TestShedding: with one request in flight (held) and no room to wait, the
// next is answered 503 with Retry-After at once, on the token endpoint in
// its own error shape; the health routes still answer; once the held
// request finishes, requests are served again. A request that may wait is
// served when the slot frees.
func TestShedding(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) {
			c.MaxInFlight, c.MaxQueued, c.QueueWait, c.MetricsListen = 1, 0, time.Second, "127.0.0.1:0"
		})
		pos := s.posToken(t)
		release, status := hold(t, s, "/pos/clover/startInteraction", pos)
		waitMetric(t, s, "posgate_http_requests_in_flight 1")
		shed := s.api(t, pos).start("TERM-05", "LOC123")
		mustProblem(t, shed, 503, "posgate is at capacity; retry in a second.", nil)
		if shed.Header.Get("Retry-After") != "1" {
			t.Fatalf("Retry-After %q", shed.Header.Get("Retry-After"))
		}
		tok := s.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}}, "demo-pos", "demo-pos-secret")
		mustOAuthError(t, tok, 503, "temporarily_unavailable")
		if tok.Header.Get("Retry-After") != "1" {
			t.Fatalf("token endpoint Retry-After %q", tok.Header.Get("Retry-After"))
		}
		mustStatus(t, s.call(t, "", "GET", "/healthz", ""), 200)
		mustStatus(t, s.call(t, "", "GET", "/readyz", ""), 200)
		release(`{"terminalId":"TERM-05","posLocationId":"LOC123"}`)
		if st := <-status; st != 200 {
			t.Fatalf("held request: %d", st)
		}
		mustStatus(t, s.api(t, pos).start("TERM-05", "LOC123"), 200)
	})
	t.Run("wait", func(t *testing.T) {
		s := start(t, t.TempDir()+"/posgate.db", func(c *app.Config) {
			c.MaxInFlight, c.MaxQueued, c.QueueWait, c.MetricsListen = 1, 1, 10*time.Second, "127.0.0.1:0"
		})
		pos := s.posToken(t)
		release, held := hold(t, s, "/pos/clover/startInteraction", pos)
		waitMetric(t, s, "posgate_http_requests_in_flight 1")
		waiter := make(chan int, 1)
		go func() { waiter <- doTo(t, checkedClient(t), s.base, startReq(pos, "TERM-05", "LOC123")).Status }()
		waitMetric(t, s, "posgate_http_requests_waiting 1")
		// The waiter takes the one place in the queue: a third request is shed at once.
		r := s.api(t, pos).start("TERM-05", "LOC123")
		mustProblem(t, r, 503, "posgate is at capacity; retry in a second.", nil)
		release(`{"terminalId":"TERM-05","posLocationId":"LOC123"}`)
		if a, b := <-held, <-waiter; a != 200 || b != 200 {
			t.Fatalf("held %d, waiter %d; want 200 and 200", a, b)
		}
	})
}

// TestImportCap: with one import running, a second is refused 503 at once,
// while ordinary requests are served even with a single in-flight slot
// (an admitted import gives its slot back); after it, imports run again.
func TestImportCap(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.MaxInFlight, c.MaxImports, c.MetricsListen = 1, 1, "127.0.0.1:0" })
		pos, admin := s.posToken(t), s.adminToken(t)
		const coupons = "/admin/v1/pos-systems/clover/companies/demo-company/coupons/import"
		release, status := hold(t, s, coupons, admin)
		waitMetric(t, s, "posgate_imports_running 1")
		waitMetric(t, s, "posgate_http_requests_in_flight 0")
		second := req{Method: "POST", Path: "/pos/clover/company/demo-company/import/promotions", Token: pos, ContentType: "application/json",
			Body: `{"items":[{"id":"P-CAP","name":"Capped"}]}`}
		mustProblem(t, s.request(t, second), 503, "Too many imports are running on this instance; retry in a second.", nil)
		r := s.call(t, admin, "POST", coupons, `{"items":[{"code":"CAP-2"}]}`)
		mustProblem(t, r, 503, "Too many imports are running on this instance; retry in a second.", nil)
		mustStatus(t, s.api(t, pos).start("TERM-05", "LOC123"), 200)
		release(`{"items":[{"code":"CAP-1"}]}`)
		if st := <-status; st != 201 {
			t.Fatalf("held import: %d", st)
		}
		mustStatus(t, s.request(t, second), 200)
		mustStatus(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/demo-company/coupons/CAP-1", ""), 200)
		mustStatus(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/demo-company/coupons/CAP-2", ""), 404)
	})
}

// TestDrain: once the server is told to stop with a drain delay, /readyz
// answers 503 at once while every route keeps serving, with Connection:
// close.
func TestDrain(t *testing.T) {
	s := start(t, t.TempDir()+"/posgate.db", func(c *app.Config) { c.DrainDelay = 2 * time.Second })
	pos := s.posToken(t)
	stopped := make(chan struct{})
	go func() { s.stop(t); close(stopped) }()
	var ready response
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ready = s.call(t, "", "GET", "/readyz", ""); ready.Status == 503 {
			break
		}
	}
	mustStatus(t, ready, 503)
	if string(ready.Body) != `{"status":"draining"}` {
		t.Fatalf("readyz while draining: %s", ready.Body)
	}
	r := s.api(t, pos).start("TERM-05", "LOC123")
	mustStatus(t, r, 200)
	if !r.Close {
		t.Fatal("no Connection: close during the drain")
	}
	select {
	case <-stopped:
		t.Fatal("stopped before the drain delay")
	default:
	}
	<-stopped
}

// TestMetrics: the metrics listener counts requests by route pattern and
// status, and publishes latency, store, pool, session-batch, shed,
// rate-limit and Go runtime metrics; the public listener has no /metrics.
func TestMetrics(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) {
			c.MetricsListen, c.RateLimit, c.RateBurst, c.MaxInFlight, c.CacheTTL = "127.0.0.1:0", 1, 3, 64, time.Second
		})
		pos := s.posToken(t)
		mustStatus(t, s.api(t, pos).start("TERM-05", "LOC123"), 200)
		mustStatus(t, s.api(t, pos).start("TERM-404", "LOC123"), 404)
		mustStatus(t, s.api(t, pos).start("TERM-05", "LOC123"), 200)
		mustStatus(t, s.api(t, pos).start("TERM-05", "LOC123"), 429)
		mustStatus(t, s.api(t, "").start("TERM-05", "LOC123"), 401)
		mustStatus(t, s.do(t, req{Method: "GET", Path: "/pos/clover/nope", Undocumented: true}), 404)
		mustStatus(t, s.do(t, req{Method: "GET", Path: "/metrics", Undocumented: true}), 404)

		resp, err := http.Get("http://" + s.addrs.Metrics.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text := string(b)
		bi := buildinfo.Read()
		for _, want := range []string{
			`posgate_http_requests_total{route="POST /pos/{posSystemId}/startInteraction",status="200"} 2`,
			`posgate_http_requests_total{route="POST /pos/{posSystemId}/startInteraction",status="404"} 1`,
			`posgate_http_requests_total{route="POST /pos/{posSystemId}/startInteraction",status="429"} 1`,
			`posgate_http_requests_total{route="POST /pos/{posSystemId}/startInteraction",status="401"} 1`,
			`posgate_http_requests_total{route="/connect/token",status="200"} 1`,
			`posgate_http_requests_total{route="/",status="404"} 2`, // the unknown route and /metrics
			`posgate_http_request_duration_seconds_count{route="POST /pos/{posSystemId}/startInteraction"} 5`,
			`posgate_http_requests_rate_limited_total{kind="client"} 1`,
			`posgate_http_requests_rate_limited_total{kind="token_lockout"} 0`,
			`posgate_http_requests_shed_total{reason="in_flight"} 0`,
			`posgate_http_requests_in_flight 0`,
			`posgate_session_writer_batch_size_sum 2`,
			`posgate_store_operation_duration_seconds_count{operation="CreateSession"} 2`,
			// TERM-05's miss reads its location's terminals; the unknown
			// terminal, which that list lacks, is read on its own.
			`posgate_store_operation_duration_seconds_count{operation="ListTerminals"} 2`,
			`posgate_store_operation_duration_seconds_count{operation="FindTerminal"} 1`,
			`go_goroutines `,
			`process_resident_memory_bytes `,
			fmt.Sprintf(`posgate_build_info{goversion=%q,modified="%t",revision=%q,version=%q} 1`, bi.GoVersion, bi.Modified, bi.Revision, bi.Version),
		} {
			if !strings.Contains(text, want+"\n") && !strings.Contains(text, want) {
				t.Errorf("metrics lack %q", want)
			}
		}
		// The session writer stored two sessions: its busy time is above 0.
		busy := regexp.MustCompile(`(?m)^posgate_store_group_writer_busy_seconds_total\{writer="sessions"\} (\S+)$`).FindStringSubmatch(text)
		if busy == nil {
			t.Errorf("metrics lack the session writer's busy time")
		} else if v, err := strconv.ParseFloat(busy[1], 64); err != nil || v <= 0 {
			t.Errorf("session writer busy %q seconds after two sessions, want more than 0", busy[1])
		}
		if !strings.HasPrefix(dsn, "postgres") && !strings.Contains(text, `posgate_store_group_writer_busy_seconds_total{writer="sales"} `) {
			t.Errorf("metrics lack the SQLite sales writer's busy time")
		}
		pool := `go_sql_open_connections{db_name="sqlite_read"} `
		if strings.HasPrefix(dsn, "postgres") {
			pool = "posgate_pgxpool_max_conns "
		}
		if !strings.Contains(text, pool) {
			t.Errorf("metrics lack the pool's %q", pool)
		}
		if t.Failed() {
			t.Logf("metrics:\n%s", text)
		}
	})
}

// TestTraceparent: a valid W3C traceparent's trace id becomes the
// request's trace id, in the problem and in the log line; an invalid one
// is ignored.
func TestTraceparent(t *testing.T) {
	logs := &syncbuf.Buffer{}
	s := start(t, t.TempDir()+"/posgate.db", func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	r := s.do(t, req{Method: "POST", Path: "/pos/clover/startInteraction", ContentType: "application/json", Body: `{}`,
		Header: map[string]string{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"}})
	p := mustProblem(t, r, 401, "*", nil)
	if !regexp.MustCompile(`^00-`+trace+`-[0-9a-f]{16}-01$`).MatchString(p.TraceID) || strings.Contains(p.TraceID, "00f067aa0ba902b7") {
		t.Fatalf("traceId %q does not carry the caller's trace id with a span of posgate's own", p.TraceID)
	}
	for _, bad := range []string{"00-" + strings.Repeat("0", 32) + "-00f067aa0ba902b7-01", "00-" + strings.ToUpper(trace) + "-00f067aa0ba902b7-01",
		"ff-" + trace + "-00f067aa0ba902b7-01", "00-" + trace + "-00f067aa0ba902b7-01-extra", "garbage"} {
		r := s.do(t, req{Method: "POST", Path: "/pos/clover/startInteraction", ContentType: "application/json", Body: `{}`,
			Header: map[string]string{"traceparent": bad}})
		if p := mustProblem(t, r, 401, "*", nil); strings.Contains(p.TraceID, trace) || !strings.HasSuffix(p.TraceID, "-00") {
			t.Fatalf("traceparent %q was taken: traceId %q", bad, p.TraceID)
		}
	}
	s.stop(t)
	if !strings.Contains(logs.String(), `"traceId":"`+p.TraceID+`"`) {
		t.Fatalf("the log has no line with traceId %s:\n%s", p.TraceID, logs.String())
	}
}
