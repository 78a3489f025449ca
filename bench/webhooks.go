package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// The transaction+webhooks row (docs/api.md §19): sales whose events are
// delivered, while they are made, to a receiver in this process.

const (
	// whSessionFormat and whIDFormat are the row's own session ids and
	// transactionIds, apart from the transaction row's.
	whSessionFormat = "00000000-0000-4000-9000-%012d"
	whIDFormat      = "TW%d"
	// whMaxLag is the delivery lag the row must keep at its p99.
	whMaxLag = time.Second
)

// whSequence is the row's requests: the transaction plan from its middle
// on (coupons the transaction row, which starts at the beginning, has not
// redeemed), sale i on session i.
func whSequence(e *env) (*sequence, error) {
	sales, _, err := txPlan(e)
	if err != nil {
		return nil, err
	}
	half := len(sales) / 2
	rotated := append(slices.Clone(sales[half:]), sales[:half]...)
	n := txSessions(e)
	return &sequence{Size: n, Formats: []string{whSessionFormat, whIDFormat}, Records: rotated[:min(len(rotated), n)]}, nil
}

// whPacedSequence is the paced row's requests: its own sessions and ids,
// the plan from three quarters on, each connection pacing its requests so
// that all of them make half the transaction row's rate (1,000/s when that
// row did not run).
func whPacedSequence(e *env) (*sequence, error) {
	sales, _, err := txPlan(e)
	if err != nil {
		return nil, err
	}
	q := len(sales) * 3 / 4
	rotated := append(slices.Clone(sales[q:]), sales[:q]...)
	n := txSessions(e)
	rate := e.Rates["transaction"] / 2
	if rate <= 0 {
		rate = 1000
	}
	pace := time.Duration(float64(time.Second) * float64(max(e.Conns, 1)) / rate)
	return &sequence{Size: n, Formats: []string{"00000000-0000-4000-a000-%012d", "TP%d"}, Records: rotated[:min(len(rotated), n)],
		Pace: pace}, nil
}

// whFleetSequence is the three-instance row's requests: its own sessions
// and ids, the plan from three eighths on (after the coupons the
// transaction row redeems, before the other webhook rows').
func whFleetSequence(e *env) (*sequence, error) {
	sales, _, err := txPlan(e)
	if err != nil {
		return nil, err
	}
	q := len(sales) * 3 / 8
	rotated := append(slices.Clone(sales[q:]), sales[:q]...)
	n := txSessions(e)
	return &sequence{Size: n, Formats: []string{"00000000-0000-4000-c000-%012d", "TF%d"}, Records: rotated[:min(len(rotated), n)]}, nil
}

// setupFleetWebhookTransactions creates the three-instance row's sessions.
func setupFleetWebhookTransactions(ctx context.Context, e *env) error {
	if err := loadCouponData(ctx, e); err != nil {
		return err
	}
	seq, err := whFleetSequence(e)
	if err != nil {
		return err
	}
	return createSessions(ctx, e, seq, "transaction+webhooks@3")
}

// setupPacedWebhookTransactions creates the paced row's sessions.
func setupPacedWebhookTransactions(ctx context.Context, e *env) error {
	if err := loadCouponData(ctx, e); err != nil {
		return err
	}
	seq, err := whPacedSequence(e)
	if err != nil {
		return err
	}
	return createSessions(ctx, e, seq, "transaction+webhooks@half")
}

// setupWebhookTransactions creates the row's sessions.
func setupWebhookTransactions(ctx context.Context, e *env) error {
	if err := loadCouponData(ctx, e); err != nil {
		return err
	}
	seq, err := whSequence(e)
	if err != nil {
		return err
	}
	return createSessions(ctx, e, seq, "transaction+webhooks")
}

// verifyWebhookTransaction wants the probe's sales recorded and credited.
func verifyWebhookTransaction(body []byte) error {
	var out struct {
		Data txAnswer `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return err
	}
	return out.Data.check(false)
}

// hookSink is the receiver: it counts the events by type and keeps each
// one's lag.
type hookSink struct {
	mu       sync.Mutex
	byType   map[string]int
	ids      map[string]bool
	dups     int
	lags     []time.Duration
	srv      *http.Server
	endpoint string // the endpoint's operator URL
	stored0  int64  // transactions stored before the measurement
	// redeemed0 is the coupons redeemed by sales before the measurement
	// (transaction_coupons): a sale whose coupon another row redeemed
	// first writes no coupon.redeemed event.
	redeemed0 int64
	// sent0 is what each instance had delivered before the measurement,
	// when the row has several (fleet.go).
	sent0 []int64
}

func (h *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, _ := io.ReadAll(r.Body)
	var ev struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
	}
	json.Unmarshal(body, &ev)
	id := r.Header.Get("webhook-id")
	h.mu.Lock()
	if h.ids[id] {
		h.dups++
	} else {
		h.ids[id] = true
		h.byType[ev.Type]++
		h.lags = append(h.lags, at.Sub(ev.Timestamp))
	}
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// startWebhookReceiver starts the receiver and registers the endpoint
// (after the warm-up: the measured sales are the ones with events), and
// counts the stored transactions.
func startWebhookReceiver(ctx context.Context, e *env) (any, error) {
	h := &hookSink{byType: map[string]int{}, ids: map[string]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go h.srv.Serve(ln)
	company := fmt.Sprintf("%s/admin/v1/pos-systems/%s/companies/%s", e.BaseURL, e.Data.POSSystem, e.Data.Company)
	body := `{"url":"http://` + ln.Addr().String() + `/hook","eventTypes":["coupon.redeemed","loyalty.balance_changed","transaction.recorded"]}`
	var created struct {
		Data struct{ ID string } `json:"data"`
	}
	if err := e.adminSend(ctx, http.MethodPost, company+"/webhooks", body, http.StatusCreated, &created); err != nil {
		h.srv.Close()
		return nil, err
	}
	h.endpoint = company + "/webhooks/" + created.Data.ID
	if len(e.instances) > 1 {
		// The other instances see the endpoint once their cached
		// subscriptions expire; until then their sales write no events.
		time.Sleep(subscriptionWait)
		if h.sent0, err = delivered(ctx, e.instances); err != nil {
			return nil, err
		}
	}
	if h.stored0, err = e.stableCount(ctx, "transactions"); err != nil {
		return nil, err
	}
	if h.redeemed0, err = e.stableCount(ctx, "transaction_coupons"); err != nil {
		return nil, err
	}
	return h, nil
}

// checkWebhookDeliveries waits (up to a minute) until the receiver holds
// a transaction.recorded event for every sale the row stored, then
// disables the endpoint (the rows after this one send no events) and
// reports the counts and the lag; a p99 over whMaxLag fails the row.
func checkWebhookDeliveries(ctx context.Context, e *env, r *result, state any) (string, error) {
	h := state.(*hookSink)
	defer h.srv.Close()
	after, err := e.stableCount(ctx, "transactions")
	if err != nil {
		return "", err
	}
	redeemedAfter, err := e.stableCount(ctx, "transaction_coupons")
	if err != nil {
		return "", err
	}
	stored, ok, redeemed := after-h.stored0, r.Requests-r.Status, redeemedAfter-h.redeemed0
	deadline := time.Now().Add(time.Minute)
	// want is the events the row's sales wrote: each sale is a loyalty
	// user's, so it writes transaction.recorded and
	// loyalty.balance_changed; coupon.redeemed when it redeemed its coupon
	// (one that another row redeemed first is refused, and sends none).
	want := map[string]int64{"coupon.redeemed": redeemed, "loyalty.balance_changed": stored, "transaction.recorded": stored}
	// lost is the events of the row's sales that have not arrived.
	lost := func() int64 {
		var n int64
		for t, w := range want {
			n += max(0, w-int64(h.byType[t]))
		}
		return n
	}
	for {
		h.mu.Lock()
		missing := lost()
		h.mu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var perInstance string
	if h.sent0 != nil {
		sent, err := delivered(ctx, e.instances)
		if err != nil {
			return "", err
		}
		perInstance = "; " + describeDelivered(h.sent0, sent)
	}
	if err := e.adminSend(ctx, http.MethodPatch, h.endpoint, `{"enabled":false}`, http.StatusOK, nil); err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	lags := slices.Clone(h.lags)
	slices.Sort(lags)
	pct := func(p float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[min(len(lags)-1, int(p*float64(len(lags))))]
	}
	p50, p99, worst := pct(0.50), pct(0.99), pct(1)
	note := fmt.Sprintf("sales: %d answered with 200, %d stored; events delivered: %d transaction.recorded, %d loyalty.balance_changed, "+
		"%d coupon.redeemed (%d sent twice, %d lost; %d coupons redeemed); delivery lag p50 %s, p99 %s, max %s%s", ok, stored, h.byType["transaction.recorded"],
		h.byType["loyalty.balance_changed"], h.byType["coupon.redeemed"], h.dups, lost(), redeemed, p50.Round(time.Millisecond), p99.Round(time.Millisecond),
		worst.Round(time.Millisecond), perInstance)
	switch {
	case stored < ok || stored > ok+int64(r.Connections):
		return note, fmt.Errorf("transactions: %d answered with 200, %d stored", ok, stored)
	case lost() > 0:
		return note, fmt.Errorf("%d of the %d events of %d sales did not arrive within a minute", lost(), 2*stored+redeemed, stored)
	case p99 > whMaxLag:
		return note, fmt.Errorf("delivery lag p99 %s, over %s", p99.Round(time.Millisecond), whMaxLag)
	}
	return note, nil
}

// adminSend sends an operator request with a JSON body and decodes the
// answer, which must have status want, into out (when not nil).
func (e *env) adminSend(ctx context.Context, method, url, body string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+e.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d: %.300s", method, strings.TrimPrefix(url, e.BaseURL), resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
