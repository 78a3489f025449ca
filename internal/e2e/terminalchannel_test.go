package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/pgtest"
)

const termEvents = "/pos/clover/location/LOC123/terminal/TERM-05/events"

// sse is one raw terminal channel connection: its frames, each the text
// between blank lines, arrive on frames.
type sse struct {
	resp   *http.Response
	frames chan string
	cancel context.CancelFunc
}

func openSSE(t *testing.T, base, path, token, lastID string) (*sse, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		r.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		cancel()
		return nil, resp
	}
	s := &sse{resp: resp, frames: make(chan string, 100), cancel: cancel}
	go func() {
		defer close(s.frames)
		sc := bufio.NewScanner(resp.Body)
		var cur []string
		for sc.Scan() {
			if sc.Text() == "" {
				s.frames <- strings.Join(cur, "\n")
				cur = nil
				continue
			}
			cur = append(cur, sc.Text())
		}
	}()
	t.Cleanup(s.close)
	return s, resp
}

func (s *sse) close() { s.cancel(); s.resp.Body.Close() }

// next is the next frame that is not a heartbeat.
func (s *sse) next(t *testing.T) string {
	t.Helper()
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				t.Fatal("the stream ended")
			}
			if f != ": heartbeat" {
				return f
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no frame within 10 s")
		}
	}
}

// idOf is the id of a frame.
func idOf(t *testing.T, frame string) int64 {
	t.Helper()
	line, _, _ := strings.Cut(frame, "\n")
	n, err := strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
	if err != nil {
		t.Fatalf("frame without id: %q", frame)
	}
	return n
}

func frame(id int64, typ, data string) string {
	return fmt.Sprintf("id: %d\nevent: %s\ndata: %s", id, typ, data)
}

func heartbeatFast(c *app.Config) { c.StreamHeartbeat = 200 * time.Millisecond }

// TestTerminalChannelEvents: each event type reaches the terminal's stream
// with its exact frame; heartbeats keep an idle stream alive; a resumed
// stream gets every event after its Last-Event-ID, once.
func TestTerminalChannelEvents(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, heartbeatFast)
		pos, admin := s.posToken(t), s.adminToken(t)
		st, _ := openSSE(t, s.base, termEvents, pos, "")
		if st == nil {
			t.Fatal("the stream was refused")
		}
		if ct := st.resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
			t.Fatalf("Content-Type %q", ct)
		}
		if f := <-st.frames; f != "retry: 1000" {
			t.Fatalf("first frame %q", f)
		}
		if f := <-st.frames; f != ": heartbeat" {
			t.Fatalf("idle stream sent %q, want a heartbeat", f)
		}

		mustStatus(t, s.admin(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"carousel":false}}`), 200)
		first := st.next(t)
		id := idOf(t, first)
		if want := frame(id, "SettingsChanged", `{"changed":"company"}`); first != want {
			t.Fatalf("got %q, want %q", first, want)
		}
		mustStatus(t, s.admin(t, admin, "PUT", "/admin/v1/pos-systems/clover/locations/LOC123/receipt-promotion",
			`{"primaryText":"Hi","secondaryText":"there","targetUrl":"https://example.com/p"}`), 200)
		if got, want := st.next(t), frame(id+1, "SettingsChanged", `{"changed":"content","posLocationId":"LOC123"}`); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		// Another location's content is not this terminal's.
		mustStatus(t, s.admin(t, admin, "PUT", "/admin/v1/pos-systems/clover/locations/LOC456/receipt-promotion",
			`{"primaryText":"Hi","secondaryText":"there","targetUrl":"https://example.com/p"}`), 200)

		// A coupon issued to the customer of the terminal's open session.
		mustStatus(t, s.pos(t, pos, "/pos/clover/startInteraction",
			`{"terminalId":"TERM-05","posLocationId":"LOC123","loyalty":{"cardNumber":"john-doe"}}`), 200)
		mustStatus(t, s.admin(t, admin, "POST", "/admin/v1/pos-systems/clover/companies/demo-company/coupons",
			`{"code":"PUSH-1","name":"Pushed","title":"A pushed coupon","userId":"jane-doe"}`), 201)
		mustStatus(t, s.admin(t, admin, "POST", "/admin/v1/pos-systems/clover/companies/demo-company/coupons",
			`{"code":"PUSH-2","name":"Pushed","title":"A pushed coupon","userId":"john-doe"}`), 201)
		if got, want := st.next(t), frame(id+4, "CouponIssued", `{"rewardProvider":"TwoReward","code":"PUSH-2","name":"Pushed",`+
			`"title":"A pushed coupon","pictureUrl":null,"availableUntil":null,"status":"Issued","info":null,"promotionId":null}`); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		mustStatus(t, s.admin(t, admin, "POST", "/admin/v1/pos-systems/clover/locations/LOC123/terminals/TERM-06/disable", ""), 200)
		mustStatus(t, s.admin(t, admin, "POST", "/admin/v1/pos-systems/clover/locations/LOC123/terminals/TERM-05/disable", ""), 200)
		last := st.next(t)
		if want := frame(id+6, "TerminalDisabled", `{"posLocationId":"LOC123","terminalId":"TERM-05"}`); last != want {
			t.Fatalf("got %q, want %q", last, want)
		}
		st.close()

		// Resume after the first event: the three after it, in order,
		// once, and nothing else.
		mustStatus(t, s.admin(t, admin, "POST", "/admin/v1/pos-systems/clover/locations/LOC123/terminals/TERM-05/enable", ""), 200)
		again, _ := openSSE(t, s.base, termEvents, pos, strconv.FormatInt(id, 10))
		if f := <-again.frames; f != "retry: 1000" {
			t.Fatalf("first frame %q", f)
		}
		for _, want := range []string{
			frame(id+1, "SettingsChanged", `{"changed":"content","posLocationId":"LOC123"}`),
			frame(id+4, "CouponIssued", `{"rewardProvider":"TwoReward","code":"PUSH-2","name":"Pushed",`+
				`"title":"A pushed coupon","pictureUrl":null,"availableUntil":null,"status":"Issued","info":null,"promotionId":null}`),
			frame(id+6, "TerminalDisabled", `{"posLocationId":"LOC123","terminalId":"TERM-05"}`),
			frame(id+7, "SettingsChanged", `{"changed":"terminal","posLocationId":"LOC123"}`),
		} {
			if got := again.next(t); got != want {
				t.Fatalf("resumed: got %q, want %q", got, want)
			}
		}
		select {
		case f := <-again.frames:
			if f != ": heartbeat" {
				t.Fatalf("resumed: an extra frame %q", f)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no heartbeat")
		}

		// An id the channel never gave: Resync, then the events from now.
		resync, _ := openSSE(t, s.base, termEvents, pos, "999999999")
		<-resync.frames
		if got, want := resync.next(t), frame(id+7, "Resync", `{"reason":"Event 999999999 was never sent on this channel."}`); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}

		// Past the retention: the events after id are gone, and a till
		// resuming after it is told to resync.
		if _, err := s.openStore(t).DeleteTerminalEventsBefore(context.Background(), s.clock.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		gone, _ := openSSE(t, s.base, termEvents, pos, strconv.FormatInt(id+1, 10))
		<-gone.frames
		if got, want := gone.next(t), frame(id+7, "Resync", fmt.Sprintf(`{"reason":"Events after %d are no longer kept."}`, id+1)); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		// The till resumes from the Resync's id: nothing is missing.
		fresh, _ := openSSE(t, s.base, termEvents, pos, strconv.FormatInt(id+7, 10))
		<-fresh.frames
		if f := <-fresh.frames; f != ": heartbeat" {
			t.Fatalf("resumed after the Resync: %q", f)
		}
	})
}

// TestTerminalChannelRefusals: another POS system, an unknown terminal, a
// bad Last-Event-ID, the bound per client and per instance.
func TestTerminalChannelRefusals(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.MaxClientStreams, c.MaxStreams = 2, 3 })
		pos := s.posToken(t)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/pos/pax/location/LOC123/terminal/TERM-05/events", Token: pos}), 403, "*", nil)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/pos/clover/location/LOC123/terminal/TERM-07/events", Token: pos}), 404,
			"Terminal 'TERM-07' is not registered at location 'LOC123'.", nil)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/pos/clover/location/LOC999/terminal/TERM-05/events", Token: pos}), 404,
			"Location 'LOC999' is not registered.", nil)
		mustProblem(t, s.do(t, req{Method: "GET", Path: termEvents, Token: pos, Header: map[string]string{"Last-Event-ID": "x"}}), 400,
			"*", map[string][]string{"Last-Event-ID": {"The Last-Event-ID must be the id of an event of this channel."}})

		// A resumed stream sends what it missed at once, not at its
		// first heartbeat (15 s here).
		mustStatus(t, s.admin(t, s.adminToken(t), "PUT", "/admin/v1/pos-systems/clover/locations/LOC123/receipt-promotion",
			`{"primaryText":"Hi","secondaryText":"there","targetUrl":"https://example.com/p"}`), 200)
		time.Sleep(1500 * time.Millisecond) // past the watcher's poll, which wakes the streams open then
		resumed, _ := openSSE(t, s.base, termEvents, pos, "0")
		<-resumed.frames
		select {
		case f := <-resumed.frames:
			if want := frame(idOf(t, f), "SettingsChanged", `{"changed":"content","posLocationId":"LOC123"}`); f != want {
				t.Fatalf("resumed: %q, want %q", f, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a resumed stream did not send what it missed within 5 s")
		}
		resumed.close()

		a, _ := openSSE(t, s.base, termEvents, pos, "")
		b, _ := openSSE(t, s.base, termEvents, pos, "")
		if a == nil || b == nil {
			t.Fatal("a stream within the bound was refused")
		}
		r := s.do(t, req{Method: "GET", Path: termEvents, Token: pos})
		mustProblem(t, r, 429, "This client has 2 terminal streams open on this instance, its limit; close one or retry later.", nil)
		if r.Header.Get("Retry-After") != "5" {
			t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
		}
		mustStatus(t, s.do(t, req{Method: "GET", Path: "/healthz"}), 200)
		// The instance's bound, for any client.
		one := start(t, dsn, func(c *app.Config) { c.MaxStreams = 1 })
		if c, _ := openSSE(t, one.base, termEvents, one.posToken(t), ""); c == nil {
			t.Fatal("the first stream was refused")
		}
		r = one.do(t, req{Method: "GET", Path: termEvents, Token: one.posToken(t)})
		mustProblem(t, r, 503, "This instance serves as many terminal streams as it can; retry later.", nil)
		mustStatus(t, one.do(t, req{Method: "GET", Path: "/readyz"}), 200)
		// A closed stream gives its place back.
		a.close()
		waitFor(t, func() bool {
			c, _ := openSSE(t, s.base, termEvents, pos, "")
			if c != nil {
				c.close()
			}
			return c != nil
		})
	})
}

// TestTerminalChannelAcrossInstances: a change made through instance A
// reaches the till connected to instance B of the same PostgreSQL.
func TestTerminalChannelAcrossInstances(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := start(t, dsn)
	b := start(t, dsn, heartbeatFast)
	st, _ := openSSE(t, b.base, termEvents, b.posToken(t), "")
	<-st.frames
	mustStatus(t, a.admin(t, a.adminToken(t), "PUT", "/admin/v1/pos-systems/clover/locations/LOC123/receipt-promotion",
		`{"primaryText":"Hi","secondaryText":"there","targetUrl":"https://example.com/p"}`), 200)
	got := st.next(t)
	if want := frame(idOf(t, got), "SettingsChanged", `{"changed":"content","posLocationId":"LOC123"}`); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestTillSimulatorAcrossRestart: a till watching its channel with the Go
// client stays connected across a restart of its instance and misses no
// event, the one made while it was away included, and gets none twice.
func TestTillSimulatorAcrossRestart(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, heartbeatFast)
		c, err := client.New(s.base, client.WithCredentials("demo-pos", "demo-pos-secret", "pos_integration"))
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var got []string
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- c.WatchTerminal(ctx, "clover", "LOC123", "TERM-05", "", func(ev *client.TerminalEvent) error {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, ev.ID+" "+ev.Type+" "+string(ev.Data))
				return nil
			})
		}()
		defer func() {
			cancel()
			<-done
		}()
		count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
		admin := s.adminToken(t)
		content := func(text string) {
			mustStatus(t, s.admin(t, admin, "PUT", "/admin/v1/pos-systems/clover/locations/LOC123/receipt-promotion",
				`{"primaryText":"`+text+`","secondaryText":"there","targetUrl":"https://example.com/p"}`), 200)
		}
		// The watch is connected once a change made now reaches it.
		waitFor(t, func() bool { content("one"); return count() > 0 })
		s.restart(t)
		admin = s.adminToken(t)
		content("while away") // before the till is back: it must still get it
		content("after")
		waitFor(t, func() bool { return count() >= 3 })
		time.Sleep(500 * time.Millisecond) // nothing more may come
		mu.Lock()
		defer mu.Unlock()
		n := len(got)
		last, _ := strconv.Atoi(strings.Fields(got[n-1])[0])
		for i, g := range got {
			if want := fmt.Sprintf("%d SettingsChanged {\"changed\":\"content\",\"posLocationId\":\"LOC123\"}", last-(n-1-i)); g != want {
				t.Fatalf("event %d: got %q, want %q (all: %q)", i, g, want, got)
			}
		}
	})
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTerminalChannelSettingsSources: the other changes a till reads at
// start each reach it as a SettingsChanged naming what changed: a
// promotion import by the POS, the loyalty program, a location's state, a
// slide of the company.
func TestTerminalChannelSettingsSources(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, heartbeatFast)
		pos, admin := s.posToken(t), s.adminToken(t)
		st, _ := openSSE(t, s.base, termEvents, pos, "")
		<-st.frames
		co := "/admin/v1/pos-systems/clover/companies/demo-company"
		mustStatus(t, s.pos(t, pos, "/pos/clover/company/demo-company/import/promotions",
			`{"items":[{"id":"P1","name":"x","productIds":["SKU-TEA"],"promotionResults":[{"promotionType":"Amount","value":1}]}]}`), 200)
		first := st.next(t)
		id := idOf(t, first)
		if want := frame(id, "SettingsChanged", `{"changed":"promotions"}`); first != want {
			t.Fatalf("got %q, want %q", first, want)
		}
		mustStatus(t, s.admin(t, admin, "PUT", co+"/loyalty-program", `{"pointsPerCurrencyUnit":2,"stampsPerSale":1,"minimumAmountForStamp":0,"autoEnroll":false}`), 200)
		mustStatus(t, s.admin(t, admin, "PATCH", "/admin/v1/pos-systems/clover/locations/LOC123", `{"status":"Disabled"}`), 200)
		mustStatus(t, s.admin(t, admin, "POST", co+"/slides", `{"title":"New","imageUrl":"https://cdn.example.com/n.png"}`), 201)
		for i, want := range []string{`{"changed":"loyaltyProgram"}`, `{"changed":"location","posLocationId":"LOC123"}`, `{"changed":"content"}`} {
			if got := st.next(t); got != frame(id+1+int64(i), "SettingsChanged", want) {
				t.Fatalf("got %q, want %q", got, frame(id+1+int64(i), "SettingsChanged", want))
			}
		}
	})
}

// TestTerminalStreamOutlivesServerTimeouts: a stream lives on past the
// server's read and write timeouts (here 1 s), which bound every other
// request: each of its writes sets its own deadline.
func TestTerminalStreamOutlivesServerTimeouts(t *testing.T) {
	s := start(t, t.TempDir()+"/p.db", heartbeatFast, func(c *app.Config) { c.ServerTimeout = time.Second })
	st, _ := openSSE(t, s.base, termEvents, s.posToken(t), "")
	<-st.frames
	time.Sleep(2500 * time.Millisecond)
	mustStatus(t, s.admin(t, s.adminToken(t), "PUT", "/admin/v1/pos-systems/clover/locations/LOC123/receipt-promotion",
		`{"primaryText":"Hi","secondaryText":"there","targetUrl":"https://example.com/p"}`), 200)
	if got := st.next(t); !strings.HasSuffix(got, "\nevent: SettingsChanged\ndata: {\"changed\":\"content\",\"posLocationId\":\"LOC123\"}") {
		t.Fatalf("after 2.5 s: %q", got)
	}
	// A shutdown ends the stream at once (the till reconnects), rather
	// than waiting for it as for a request in flight.
	began := time.Now()
	stopped := make(chan struct{})
	go func() { s.stop(t); close(stopped) }()
	for range st.frames {
	}
	<-stopped
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("the shutdown took %s with a stream open", d)
	}
}

// TestTerminalStreamsHoldNoRequestSlot: streams do not count against
// --max-in-flight: with one slot and two streams open, requests are still
// served; the metrics count the open streams.
func TestTerminalStreamsHoldNoRequestSlot(t *testing.T) {
	s := start(t, t.TempDir()+"/p.db", func(c *app.Config) {
		c.MaxInFlight, c.MaxQueued, c.QueueWait, c.MetricsListen = 1, 0, time.Millisecond, "127.0.0.1:0"
	})
	pos := s.posToken(t)
	waitMetric(t, s, "posgate_terminal_streams_open 0")
	var streams []*sse
	for range 2 {
		st, _ := openSSE(t, s.base, termEvents, pos, "")
		if st == nil {
			t.Fatal("a stream was refused")
		}
		streams = append(streams, st)
	}
	waitMetric(t, s, "posgate_terminal_streams_open 2")
	defer func() { // a closed stream is counted no more
		streams[0].close()
		waitMetric(t, s, "posgate_terminal_streams_open 1")
	}()
	for range 3 {
		mustStatus(t, s.do(t, req{Method: "GET", Path: "/pos/clover/receipt/promotion/location/LOC123", Token: pos}), 200)
	}
}
