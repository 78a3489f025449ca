package storetest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/webhook"
	"github.com/posgate/posgate/internal/webhook/endpoint"
)

// Webhook endpoints, the outbox and its delivery (docs/api.md §19): events
// written in the transaction of their change, claimed in order per user,
// and sent by the real sender to a real HTTP receiver, on both stores.

// add moves the clock on by d.
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// endpoint registers an enabled endpoint of acme for types at url.
func (e *env) endpoint(url string, types ...string) *posgate.WebhookEndpoint {
	e.t.Helper()
	ep := &posgate.WebhookEndpoint{ID: "wh_" + uid(), POSSystemID: "clover",
		CompanyID: "acme", URL: url, EventTypes: types, Enabled: true, Secret: endpoint.NewSecret()}
	if err := e.s.CreateWebhookEndpoint(e.t.Context(), ep); err != nil {
		e.t.Fatalf("CreateWebhookEndpoint: %v", err)
	}
	return ep
}

// deliveries lists an endpoint's deliveries, oldest first.
func (e *env) deliveries(ep *posgate.WebhookEndpoint) []*posgate.WebhookDelivery {
	e.t.Helper()
	list, _, err := e.s.ListWebhookDeliveries(e.t.Context(), posgate.WebhookDeliveryQuery{EndpointID: ep.ID, Limit: 1000})
	if err != nil {
		e.t.Fatalf("ListWebhookDeliveries: %v", err)
	}
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return list
}

func deliveryTypes(list []*posgate.WebhookDelivery) []string {
	out := []string{}
	for _, d := range list {
		out = append(out, d.EventType)
	}
	return out
}

func testWebhookEndpoints(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	ep := e.endpoint("https://hooks.example.com/a", posgate.EventTransactionRecorded)
	at := e.clk.stamp()
	got := must[*posgate.WebhookEndpoint](t, "FindWebhookEndpoint")(e.s.FindWebhookEndpoint(ctx, "clover", "acme", ep.ID))
	want := *ep
	want.CreatedAt, want.UpdatedAt = at, at
	check(t, "found endpoint", got, &want)
	_, err := e.s.FindWebhookEndpoint(ctx, "clover", "zeta", ep.ID)
	checkErr(t, "another company's endpoint", err, posgate.ErrNotFound, `webhook endpoint "`+ep.ID+`" not found`)
	if ok := must[bool](t, "HasEnabledWebhook")(e.s.HasEnabledWebhook(ctx, "clover", "acme")); !ok {
		t.Fatal("acme has an enabled endpoint")
	}
	if ok := must[bool](t, "HasEnabledWebhook")(e.s.HasEnabledWebhook(ctx, "clover", "zeta")); ok {
		t.Fatal("zeta has no endpoint")
	}

	// Update: disabled, another URL, a rotated secret.
	until := e.clk.advance().Add(24 * time.Hour)
	got.Enabled, got.URL, got.PreviousSecret, got.PreviousSecretUntil, got.Secret = false, "https://hooks.example.com/b", got.Secret, &until, endpoint.NewSecret()
	must[struct{}](t, "UpdateWebhookEndpoint")(struct{}{}, e.s.UpdateWebhookEndpoint(ctx, got))
	again := must[*posgate.WebhookEndpoint](t, "FindWebhookEndpoint")(e.s.FindWebhookEndpoint(ctx, "clover", "acme", ep.ID))
	check(t, "updated endpoint", again, got)
	if ok := must[bool](t, "HasEnabledWebhook")(e.s.HasEnabledWebhook(ctx, "clover", "acme")); ok {
		t.Fatal("acme's only endpoint is disabled")
	}
	check(t, "secrets within the overlap", len(again.Secrets(until.Add(-time.Second))), 2)
	check(t, "secrets after the overlap", len(again.Secrets(until)), 1)

	list := must[[]*posgate.WebhookEndpoint](t, "ListWebhookEndpoints")(e.s.ListWebhookEndpoints(ctx, "clover", "acme"))
	check(t, "list", list, []*posgate.WebhookEndpoint{again})
	err = e.s.CreateWebhookEndpoint(ctx, &posgate.WebhookEndpoint{ID: "wh_x", POSSystemID: "clover", CompanyID: "nope", URL: "https://x.example/",
		EventTypes: []string{posgate.EventCouponIssued}, Secret: endpoint.NewSecret()})
	checkErr(t, "endpoint of an unknown company", err, posgate.ErrNotFound, `company "nope" not found`)
	for i := 1; i < posgate.MaxWebhookEndpoints; i++ {
		e.endpoint("https://hooks.example.com/"+strconv.Itoa(i), posgate.EventCouponIssued)
	}
	err = e.s.CreateWebhookEndpoint(ctx, &posgate.WebhookEndpoint{ID: "wh_11", POSSystemID: "clover", CompanyID: "acme", URL: "https://x.example/",
		EventTypes: []string{posgate.EventCouponIssued}, Secret: endpoint.NewSecret()})
	checkErr(t, "an eleventh endpoint", err, posgate.ErrConflict, "Company 'acme' has 10 webhook endpoints already, the most it may have.")
	must[struct{}](t, "DeleteWebhookEndpoint")(struct{}{}, e.s.DeleteWebhookEndpoint(ctx, "clover", "acme", ep.ID))
	checkErr(t, "deleting it again", e.s.DeleteWebhookEndpoint(ctx, "clover", "acme", ep.ID), posgate.ErrNotFound, `webhook endpoint "`+ep.ID+`" not found`)
}

// testWebhookOutbox: a change emits its events in its own transaction, for
// the endpoints subscribed to them only; a rolled-back change emits
// nothing; balance changes carry the user's sequence number.
func testWebhookOutbox(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.coupon(issued("C1"))
	// Before any endpoint: nothing is written.
	e.apply(e.txInput(1, "T0", 1000))
	all := e.endpoint("https://hooks.example.com/all", posgate.EventTypes...)
	balances := e.endpoint("https://hooks.example.com/b", posgate.EventLoyaltyBalanceChanged)
	off := e.endpoint("https://hooks.example.com/off", posgate.EventTypes...)
	off.Enabled = false
	must[struct{}](t, "UpdateWebhookEndpoint")(struct{}{}, e.s.UpdateWebhookEndpoint(ctx, off))

	out := e.apply(e.txInput(1, "T1", 1234, func(in *posgate.TransactionInput) { in.CouponCodes = []string{"C1"} }))
	check(t, "sale", out[0].Status, posgate.OutcomeCreated)
	check(t, "events of a sale", deliveryTypes(e.deliveries(all)),
		[]string{posgate.EventCouponRedeemed, posgate.EventLoyaltyBalanceChanged, posgate.EventTransactionRecorded})
	check(t, "the balance endpoint's", deliveryTypes(e.deliveries(balances)), []string{posgate.EventLoyaltyBalanceChanged})
	check(t, "the disabled endpoint's", deliveryTypes(e.deliveries(off)), []string{})

	// A lone item rejected (same id, other content) emits nothing; in a
	// batch, a rejected refund's events are rolled back with it and the
	// accepted sale's stay.
	rej := e.apply(e.txInput(1, "T1", 999, func(in *posgate.TransactionInput) { in.RequestHash = "other" }))
	check(t, "conflicting duplicate", rej[0].Status, posgate.OutcomeRejected)
	batch := e.apply(e.txInput(1, "T2", 500), e.txInput(2, "R1", -99999, func(in *posgate.TransactionInput) {
		in.Type, in.OriginalTransactionID = posgate.TransactionRefund, "T1"
	}))
	check(t, "batch", []string{batch[0].Status, batch[1].Status}, []string{posgate.OutcomeCreated, posgate.OutcomeRejected})
	list := e.deliveries(all)
	check(t, "events after the batch", deliveryTypes(list), []string{posgate.EventCouponRedeemed, posgate.EventLoyaltyBalanceChanged,
		posgate.EventTransactionRecorded, posgate.EventLoyaltyBalanceChanged, posgate.EventTransactionRecorded})
	for _, d := range list {
		check(t, "user of "+d.EventType, d.UserID, "u1")
		check(t, "status", d.Status, posgate.DeliveryPending)
	}

	// A refund: transaction.refunded and the balance back.
	e.apply(e.txInput(1, "R2", -1234, func(in *posgate.TransactionInput) {
		in.Type, in.OriginalTransactionID = posgate.TransactionRefund, "T1"
	}))
	tasks := must[[]*posgate.DeliveryTask](t, "ClaimDeliveries")(e.s.ClaimDeliveries(ctx, "me", e.clk.Now(), time.Minute, 100))
	// Only the first of u1's events can be claimed: the rest wait for it.
	if len(tasks) != 2 || tasks[0].EventType != posgate.EventCouponRedeemed || tasks[1].EventType != posgate.EventLoyaltyBalanceChanged {
		t.Fatalf("claimed %d tasks, want the first event of u1 at each endpoint", len(tasks))
	}
	var seqs []int64
	// Read every payload of the balance endpoint by delivering in turn.
	for {
		tasks := must[[]*posgate.DeliveryTask](t, "ClaimDeliveries")(e.s.ClaimDeliveries(ctx, "me", e.clk.Now().Add(2*time.Minute), time.Minute, 100))
		if len(tasks) == 0 {
			break
		}
		for _, tk := range tasks {
			if tk.Endpoint.ID == balances.ID {
				var body struct {
					Type string                   `json:"type"`
					Data posgate.BalanceEventData `json:"data"`
				}
				if err := json.Unmarshal(tk.Payload, &body); err != nil {
					t.Fatal(err)
				}
				seqs = append(seqs, body.Data.Sequence)
			}
			ok := must[bool](t, "RecordDelivery")(e.s.RecordDelivery(ctx, "me", &posgate.DeliveryResult{ID: tk.ID, Status: posgate.DeliveryDelivered,
				At: e.clk.Now(), StatusCode: 204}))
			if !ok {
				t.Fatal("the lease holder could not record")
			}
		}
	}
	// T0, before any endpoint, was u1's first balance change: numbers
	// count changes, not events sent.
	check(t, "balance sequence numbers", seqs, []int64{2, 3, 4})
	check(t, "refund's events", deliveryTypes(e.deliveries(all))[5:], []string{posgate.EventLoyaltyBalanceChanged, posgate.EventTransactionRefunded})

	// An operator's adjustment is a balance change too (sequence 5); a
	// change of name alone is not.
	name := "Johnny"
	must[*posgate.LoyaltyUser](t, "UpdateLoyaltyUser")(e.s.UpdateLoyaltyUser(ctx, "clover", "acme", "u1", posgate.LoyaltyUserUpdate{FirstName: &name}))
	must[*posgate.LoyaltyUser](t, "UpdateLoyaltyUser")(e.s.UpdateLoyaltyUser(ctx, "clover", "acme", "u1", posgate.LoyaltyUserUpdate{AddPoints: 7}))
	adj := must[[]*posgate.DeliveryTask](t, "ClaimDeliveries")(e.s.ClaimDeliveries(ctx, "me", e.clk.Now().Add(2*time.Minute), time.Minute, 100))
	if len(adj) != 2 {
		t.Fatalf("claimed %d after the adjustment, want its event at each balance endpoint", len(adj))
	}
	var body struct {
		Data posgate.BalanceEventData `json:"data"`
	}
	json.Unmarshal(adj[0].Payload, &body)
	check(t, "adjustment event", body.Data, posgate.BalanceEventData{POSSystemID: "clover", CompanyID: "acme", UserID: "u1",
		Points: body.Data.Points, Stamps: body.Data.Stamps, PointsDelta: 7, Sequence: 5})

	// A session emits interaction.started, with no user.
	e.terminal("clover", "A1", "T1")
	s := &posgate.Session{ID: "5f1c1e0a-8d4b-4f5e-9a61-0c2b7d9e4a11", POSSystemID: "clover", CompanyID: "acme", LocationID: "A1", TerminalID: "T1",
		CreatedAt: e.clk.Now(), ExpiresAt: e.clk.Now().Add(time.Hour)}
	must[struct{}](t, "CreateSession")(struct{}{}, e.s.CreateSession(ctx, s))
	last := e.deliveries(all)
	check(t, "session event", last[len(last)-1].EventType, posgate.EventInteractionStarted)
	check(t, "session event's user", last[len(last)-1].UserID, "")
}

// testWebhookClaims: leases keep a claimed delivery from a second claim
// until they expire; a delivery retried later holds back its user's next
// events; redelivery makes dead deliveries due again.
func testWebhookClaims(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	ep := e.endpoint("https://hooks.example.com/a", posgate.EventLoyaltyBalanceChanged)
	e.apply(e.txInput(1, "T1", 100))
	e.apply(e.txInput(1, "T2", 200))
	testID := must[string](t, "EmitTestEvent")(e.s.EmitTestEvent(ctx, ep, &posgate.Event{Type: posgate.EventTest, POSSystemID: "clover",
		CompanyID: "acme", Time: e.clk.Now(), Data: map[string]string{}}))
	now := e.clk.stamp()
	a := must[[]*posgate.DeliveryTask](t, "claim A")(e.s.ClaimDeliveries(ctx, "A", now, time.Minute, 10))
	if len(a) != 2 || a[1].EventID != testID {
		t.Fatalf("A claimed %d, want u1's first and the test event", len(a))
	}
	check(t, "endpoint with its secret", a[0].Endpoint.Secret, ep.Secret)
	b := must[[]*posgate.DeliveryTask](t, "claim B")(e.s.ClaimDeliveries(ctx, "B", now.Add(59*time.Second), time.Minute, 10))
	check(t, "B's claim within A's lease", len(b), 0)
	b = must[[]*posgate.DeliveryTask](t, "claim B")(e.s.ClaimDeliveries(ctx, "B", now.Add(time.Minute), time.Minute, 10))
	check(t, "B's claim after A's lease", len(b), 2)
	ok := must[bool](t, "RecordDelivery by A")(e.s.RecordDelivery(ctx, "A", &posgate.DeliveryResult{ID: a[0].ID, Status: posgate.DeliveryDelivered, At: now}))
	check(t, "A records after losing its lease", ok, false)
	// B fails u1's first: retried in 10 s, and u1's second waits.
	next := now.Add(70 * time.Second)
	ok = must[bool](t, "RecordDelivery by B")(e.s.RecordDelivery(ctx, "B", &posgate.DeliveryResult{ID: b[0].ID, Status: posgate.DeliveryPending,
		At: now.Add(time.Minute), NextAttemptAt: next, StatusCode: 503, Error: "The endpoint answered 503.", Response: "busy"}))
	check(t, "B records", ok, true)
	must[bool](t, "RecordDelivery by B")(e.s.RecordDelivery(ctx, "B", &posgate.DeliveryResult{ID: b[1].ID, Status: posgate.DeliveryDead,
		At: now.Add(time.Minute), StatusCode: 500}))
	check(t, "claims before the retry", len(must[[]*posgate.DeliveryTask](t, "claim")(e.s.ClaimDeliveries(ctx, "B", next.Add(-time.Microsecond), time.Minute, 10))), 0)
	c := must[[]*posgate.DeliveryTask](t, "claim")(e.s.ClaimDeliveries(ctx, "B", next, time.Minute, 10))
	if len(c) != 1 || c[0].ID != b[0].ID || c[0].Attempts != 1 {
		t.Fatalf("claim at the retry: %d tasks", len(c))
	}
	list := e.deliveries(ep)
	d := list[0]
	check(t, "failed delivery", []any{d.Status, d.Attempts, d.LastStatusCode, d.LastError, d.LastResponse, d.NextAttemptAt.Equal(next)},
		[]any{posgate.DeliveryPending, 1, 503, "The endpoint answered 503.", "busy", true})
	check(t, "dead test event", list[2].Status, posgate.DeliveryDead)

	// Redelivery: one dead delivery, then every one; a pending one is not
	// redelivered.
	n := must[int](t, "RedeliverWebhooks")(e.s.RedeliverWebhooks(ctx, "clover", "acme", ep.ID, list[0].ID, now))
	check(t, "redelivering a pending one", n, 0)
	n = must[int](t, "RedeliverWebhooks")(e.s.RedeliverWebhooks(ctx, "clover", "zeta", ep.ID, 0, now))
	check(t, "redelivering through another company", n, 0)
	later := next.Add(time.Hour)
	n = must[int](t, "RedeliverWebhooks")(e.s.RedeliverWebhooks(ctx, "clover", "acme", ep.ID, 0, later))
	check(t, "redelivered", n, 1)
	d = e.deliveries(ep)[2]
	check(t, "redelivered delivery", []any{d.Status, d.Attempts, d.NextAttemptAt.Equal(later)}, []any{posgate.DeliveryPending, 0, true})
	// Deleting the endpoint removes its deliveries.
	must[struct{}](t, "DeleteWebhookEndpoint")(struct{}{}, e.s.DeleteWebhookEndpoint(ctx, "clover", "acme", ep.ID))
	check(t, "claims after the endpoint is gone", len(must[[]*posgate.DeliveryTask](t, "claim")(e.s.ClaimDeliveries(ctx, "B", later.Add(time.Hour), time.Minute, 10))), 0)
}

// received is one request a receiver got.
type received struct {
	ID, Timestamp, Signature string
	Body                     []byte
}

// receiver is a real HTTP server that records what it gets and answers
// with the status answer gives for the n-th request (1-based).
type receiver struct {
	mu     sync.Mutex
	got    []received
	answer func(n int) int
	srv    *httptest.Server
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	r := &receiver{answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
			Signature: req.Header.Get("webhook-signature"), Body: body})
		n := len(r.got)
		r.mu.Unlock()
		w.WriteHeader(r.answer(n))
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// sender is the real sender on e's store and clock, with jitter fixed at
// the middle (no spread), so that the schedule is exact.
func (e *env) sender(retryFor time.Duration) *webhook.Sender {
	return webhook.New(webhook.Config{Store: e.s, Now: e.clk.Now, Timeout: 5 * time.Second, RetryFor: retryFor, AllowLoopback: true,
		Jitter: func() float64 { return 0.5 }})
}

// runOnce runs one round of the sender and returns how many it attempted.
func runOnce(t *testing.T, s *webhook.Sender) int {
	t.Helper()
	n, err := s.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return n
}

// testWebhookSenderOrderAndBackoff: a receiver that fails the first two
// attempts gets every event of the user in order, each signed with the
// endpoint's secret; retries follow the backoff schedule on the store's
// clock.
func testWebhookSenderOrderAndBackoff(t *testing.T, e *env) {
	couponFixture(e)
	r := newReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	ep := e.endpoint(r.srv.URL+"/hook", posgate.EventLoyaltyBalanceChanged, posgate.EventTransactionRecorded)
	e.apply(e.txInput(1, "T1", 1000))
	e.apply(e.txInput(1, "T2", 2000))
	s := e.sender(72 * time.Hour)
	t0 := e.clk.stamp()
	check(t, "first round", runOnce(t, s), 1)
	d := e.deliveries(ep)[0]
	check(t, "after a 503", []any{d.Status, d.Attempts, d.LastStatusCode, *d.NextAttemptAt}, []any{posgate.DeliveryPending, 1, 503, t0.Add(5 * time.Second)})
	check(t, "nothing due before the retry", runOnce(t, s), 0)
	e.clk.add(5 * time.Second)
	check(t, "second round", runOnce(t, s), 1)
	d = e.deliveries(ep)[0]
	check(t, "after a second 503", []any{d.Attempts, *d.NextAttemptAt}, []any{2, t0.Add(15 * time.Second)})
	e.clk.add(10 * time.Second)
	for runOnce(t, s) > 0 {
	}
	got := r.requests()
	if len(got) != 6 {
		t.Fatalf("receiver got %d requests, want 6 (2 failed, 4 delivered)", len(got))
	}
	var order []string
	for i, g := range got {
		ts, _ := strconv.ParseInt(g.Timestamp, 10, 64)
		if !webhook.Verify(ep.Secret, g.ID, ts, g.Body, g.Signature) {
			t.Fatalf("request %d: signature %q does not verify", i, g.Signature)
		}
		var body struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(g.Body, &body); err != nil {
			t.Fatal(err)
		}
		if i >= 2 {
			order = append(order, body.Type+" "+body.Data["transactionId"].(string))
		}
	}
	check(t, "the first request was retried as it was", got[0].ID == got[1].ID && got[1].ID == got[2].ID, true)
	check(t, "order of delivery", order, []string{"loyalty.balance_changed T1", "transaction.recorded T1", "loyalty.balance_changed T2", "transaction.recorded T2"})
	for _, d := range e.deliveries(ep) {
		check(t, "delivered", d.Status, posgate.DeliveryDelivered)
	}
}

// testWebhookSenderDeadAndGone: retries end once the next would fall after
// RetryFor (dead, then redelivered by the operator); a 410 answer kills the
// delivery and disables the endpoint, whose company then emits nothing.
func testWebhookSenderDeadAndGone(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	status := http.StatusInternalServerError
	var mu sync.Mutex
	r := newReceiver(t, func(int) int { mu.Lock(); defer mu.Unlock(); return status })
	ep := e.endpoint(r.srv.URL, posgate.EventTransactionRecorded)
	e.apply(e.txInput(1, "T1", 1000))
	s := e.sender(30 * time.Second)
	runOnce(t, s) // t0: retry at t0+5 s
	e.clk.add(5 * time.Second)
	runOnce(t, s) // t0+5 s: retry at t0+15 s
	e.clk.add(10 * time.Second)
	runOnce(t, s) // t0+15 s: the next, t0+35 s, is past t0+30 s: dead
	d := e.deliveries(ep)[0]
	check(t, "dead", []any{d.Status, d.Attempts, d.NextAttemptAt == nil}, []any{posgate.DeliveryDead, 3, true})
	e.clk.add(time.Hour)
	check(t, "a dead delivery is not retried", runOnce(t, s), 0)
	check(t, "redeliver", must[int](t, "RedeliverWebhooks")(e.s.RedeliverWebhooks(ctx, "clover", "acme", ep.ID, 0, e.clk.Now())), 1)
	mu.Lock()
	status = http.StatusOK
	mu.Unlock()
	check(t, "redelivered round", runOnce(t, s), 1)
	check(t, "delivered after redelivery", e.deliveries(ep)[0].Status, posgate.DeliveryDelivered)

	mu.Lock()
	status = http.StatusGone
	mu.Unlock()
	e.apply(e.txInput(1, "T2", 1000))
	check(t, "round against 410", runOnce(t, s), 1)
	d = e.deliveries(ep)[1]
	check(t, "delivery answered 410", []any{d.Status, d.LastStatusCode}, []any{posgate.DeliveryDead, 410})
	got := must[*posgate.WebhookEndpoint](t, "FindWebhookEndpoint")(e.s.FindWebhookEndpoint(ctx, "clover", "acme", ep.ID))
	check(t, "endpoint after 410", []any{got.Enabled, got.DisabledReason}, []any{false, "The endpoint answered 410 Gone."})
	e.apply(e.txInput(1, "T3", 1000))
	check(t, "events after the endpoint is disabled", len(e.deliveries(ep)), 2)
}

// testWebhookImportEvents: coupons issued (alone or imported) and the
// imports of promotions, products and categories emit their events.
func testWebhookImportEvents(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	ep := e.endpoint("https://hooks.example.com/i", posgate.EventCouponIssued, posgate.EventPromotionsImported, posgate.EventCatalogueImported)
	e.coupon(issued("N1"))
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "N2", Status: posgate.CouponCancelled})
	n, err := e.s.ImportCoupons(ctx, func(yield func(*posgate.Coupon, error) bool) {
		for _, code := range []string{"I1", "I2"} {
			c := issued(code)
			c.UserID = "u1"
			if !yield(c, nil) {
				return
			}
		}
	})
	if err != nil || n != 2 {
		t.Fatalf("ImportCoupons: %d, %v", n, err)
	}
	p := promo("P1", "A1")
	accept(t, "acme", []string{"A1", "A2"}, p)
	e.importPromotions("clover", "acme", 1, 0, p)
	e.importCategories("clover", "acme", 1, 0, &posgate.Category{ID: "C1", Name: "Drinks"})
	if _, _, err := e.s.ImportProducts(ctx, "clover", "acme", []*posgate.Product{{ID: "P1", Name: "Tea", CategoryID: "C1"}, {ID: "P2", Name: "Coffee", CategoryID: "C1"}}); err != nil {
		t.Fatal(err)
	}
	list := e.deliveries(ep)
	check(t, "events", deliveryTypes(list), []string{posgate.EventCouponIssued, posgate.EventCouponIssued, posgate.EventCouponIssued,
		posgate.EventPromotionsImported, posgate.EventCatalogueImported, posgate.EventCatalogueImported})
	check(t, "imported coupons' user", []string{list[0].UserID, list[1].UserID, list[2].UserID}, []string{"", "u1", "u1"})
	var datas []string
	for {
		tasks := must[[]*posgate.DeliveryTask](t, "ClaimDeliveries")(e.s.ClaimDeliveries(ctx, "me", e.clk.Now(), time.Minute, 100))
		if len(tasks) == 0 {
			break
		}
		for _, tk := range tasks {
			var body struct {
				Data map[string]any `json:"data"`
			}
			json.Unmarshal(tk.Payload, &body)
			if k, ok := body.Data["kind"]; ok {
				datas = append(datas, k.(string)+" "+strconv.Itoa(int(body.Data["count"].(float64))))
			} else {
				datas = append(datas, body.Data["code"].(string))
			}
			must[bool](t, "RecordDelivery")(e.s.RecordDelivery(ctx, "me", &posgate.DeliveryResult{ID: tk.ID, Status: posgate.DeliveryDelivered, At: e.clk.Now()}))
		}
	}
	check(t, "event data", datas, []string{"N1", "I1", "promotions 1", "productCategories 1", "products 2", "I2"})
}

// WebhookRollback checks that events roll back with their change: s is a
// fresh store and abortEvent makes the database fail, from then on, the
// insert of an outbox row of that event type, which the ledger writes
// after the sale's coupon and balance events: the failed sale leaves no
// transaction, no balance change and no event behind.
func WebhookRollback(t *testing.T, s posgate.Store, abortEvent func(t *testing.T, eventType string)) {
	clk := &clock{now: time.Date(2031, 5, 17, 10, 20, 30, 0, time.UTC)}
	e := &env{t: t, s: s, clk: clk}
	ctx := t.Context()
	couponFixture(e)
	e.coupon(issued("C1"))
	ep := e.endpoint("https://hooks.example.com/r", posgate.EventTypes...)
	abortEvent(t, posgate.EventTransactionRecorded)
	in := e.txInput(1, "T1", 1000, func(in *posgate.TransactionInput) { in.CouponCodes = []string{"C1"} })
	in.ID = uid()
	if _, err := s.ApplyTransactions(ctx, []*posgate.TransactionInput{in}); err == nil {
		t.Fatal("the sale succeeded although its event could not be written")
	}
	check(t, "events of the failed sale", deliveryTypes(e.deliveries(ep)), []string{})
	_, err := s.FindTransaction(ctx, "clover", "acme", "T1")
	checkErr(t, "the failed sale", err, posgate.ErrNotFound, `transaction "T1" not found`)
	u := must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(s.FindLoyaltyUser(ctx, "clover", "acme", "u1"))
	check(t, "balance after the failed sale", u.Points, int32(120))
	c := must[*posgate.Coupon](t, "FindCoupon")(s.FindCoupon(ctx, "clover", "acme", "C1"))
	check(t, "coupon after the failed sale", c.Status, posgate.CouponIssued)
}

// testWebhookSweep: the retention sweep deletes Delivered deliveries once
// their last attempt is older than the delivered limit and Dead ones once
// older than the dead limit, in batches, on the store's clock, and keeps
// every Pending one however old; the backlog counts the Pending ones.
func testWebhookSweep(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	ok := newReceiver(t, func(int) int { return http.StatusNoContent })
	gone := newReceiver(t, func(int) int { return http.StatusGone })
	failing := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
	okEP := e.endpoint(ok.srv.URL, posgate.EventTransactionRecorded)
	goneEP := e.endpoint(gone.srv.URL, posgate.EventTransactionRecorded)
	failEP := e.endpoint(failing.srv.URL, posgate.EventTransactionRecorded)
	e.apply(e.txInput(1, "T1", 1000))
	e.apply(e.txInput(1, "T2", 1000))
	e.apply(e.txInput(1, "T3", 1000))
	s := e.sender(72 * time.Hour)
	for runOnce(t, s) > 0 {
	}
	statuses := func(ep *posgate.WebhookEndpoint) []string {
		out := []string{}
		for _, d := range e.deliveries(ep) {
			out = append(out, d.Status)
		}
		return out
	}
	P, D, X := posgate.DeliveryPending, posgate.DeliveryDelivered, posgate.DeliveryDead
	check(t, "delivered endpoint", statuses(okEP), []string{D, D, D})
	check(t, "endpoint that answered 410", statuses(goneEP), []string{X, P, P})
	check(t, "failing endpoint", statuses(failEP), []string{P, P, P})
	check(t, "backlog", must[int64](t, "WebhookBacklog")(e.s.WebhookBacklog(ctx)), 5)

	sweep := func(delivered, dead time.Duration) int64 {
		t.Helper()
		now := e.clk.Now()
		return must[int64](t, "SweepWebhookDeliveries")(e.s.SweepWebhookDeliveries(ctx, now.Add(-delivered), now.Add(-dead), 2))
	}
	const week, month = 168 * time.Hour, 720 * time.Hour
	check(t, "sweep within the retention", sweep(week, month), 0)
	e.clk.add(week - time.Second)
	check(t, "sweep a second before the delivered limit", sweep(week, month), 0)
	e.clk.add(2 * time.Second)
	check(t, "sweep past the delivered limit", sweep(week, month), 3)
	check(t, "delivered endpoint after the sweep", statuses(okEP), []string{})
	check(t, "dead kept", statuses(goneEP), []string{X, P, P})
	check(t, "pending kept", statuses(failEP), []string{P, P, P})
	e.clk.add(month - week)
	keepDead := webhook.Retention{Delivered: week} // Dead: 0 keeps them
	check(t, "the serve loop's sweep with dead deliveries kept", must[int64](t, "SweepOnce")(webhook.SweepOnce(ctx, e.s, e.clk.Now(), keepDead)), 0)
	check(t, "the serve loop's sweep", must[int64](t, "SweepOnce")(webhook.SweepOnce(ctx, e.s, e.clk.Now(),
		webhook.Retention{Delivered: week, Dead: month - time.Second})), 1)
	check(t, "sweep past the dead limit (already swept)", sweep(week, month), 0)
	check(t, "dead swept, pending kept", statuses(goneEP), []string{P, P})
	check(t, "pending kept however old", statuses(failEP), []string{P, P, P})
	check(t, "backlog after the sweeps", must[int64](t, "WebhookBacklog")(e.s.WebhookBacklog(ctx)), 5)
	check(t, "nothing left to sweep", sweep(week, month), 0)
}

// testWebhookSenderLeaseMargin: the sender claims more deliveries than it
// has workers; one that waits for a worker past its lease's margin (the
// lease minus the timeout) is not sent, and is sent once its lease expired
// and it is claimed again, so that no attempt can outlive its lease.
func testWebhookSenderLeaseMargin(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	release := make(chan struct{})
	r := newReceiver(t, func(n int) int {
		if n == 1 {
			<-release
		}
		return http.StatusNoContent
	})
	ep := e.endpoint(r.srv.URL, posgate.EventTransactionRecorded)
	for range 3 {
		if _, err := e.s.EmitTestEvent(ctx, ep, &posgate.Event{Type: posgate.EventTest, POSSystemID: "clover", CompanyID: "acme",
			Time: e.clk.Now(), Data: map[string]any{}}); err != nil {
			t.Fatalf("EmitTestEvent: %v", err)
		}
	}
	s := webhook.New(webhook.Config{Store: e.s, Now: e.clk.Now, Timeout: 5 * time.Second, Workers: 1, Claimed: 4, AllowLoopback: true,
		Jitter: func() float64 { return 0.5 }})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.Run(runCtx) }()
	for deadline := time.Now().Add(30 * time.Second); len(r.requests()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first delivery never arrived")
		}
	}
	e.clk.add(6 * time.Second) // past the margin of the lease (10 s) for the two waiting
	close(release)
	// The workers take the claimed deliveries in any order: count them.
	count := func() map[string]int {
		out := map[string]int{}
		for _, d := range e.deliveries(ep) {
			out[d.Status+" "+strconv.Itoa(d.Attempts)]++
		}
		return out
	}
	for deadline := time.Now().Add(30 * time.Second); count()[posgate.DeliveryDelivered+" 1"] == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first delivery was never recorded")
		}
	}
	stop()
	<-done
	check(t, "requests while the two waited", len(r.requests()), 1)
	check(t, "the two that waited past the margin", count(), map[string]int{posgate.DeliveryDelivered + " 1": 1, posgate.DeliveryPending + " 0": 2})
	check(t, "still leased", runOnce(t, s), 0)
	e.clk.add(5 * time.Second)
	check(t, "claimed again once the lease expired (one per worker)", runOnce(t, s)+runOnce(t, s), 2)
	check(t, "requests in all", len(r.requests()), 3)
}
