package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/storetest"
	"github.com/posgate/posgate/internal/webhook"
	"github.com/posgate/posgate/internal/webhook/endpoint"
)

// TestWebhookRollback: a sale whose last event cannot be written leaves
// nothing behind, its earlier events included.
func TestWebhookRollback(t *testing.T) {
	db := openDB(t, pgtest.DSN(t))
	storetest.WebhookRollback(t, db, func(t *testing.T, eventType string) {
		if _, err := db.pool.Exec(t.Context(), `CREATE FUNCTION abort_event() RETURNS trigger LANGUAGE plpgsql
			AS $$ BEGIN RAISE EXCEPTION 'aborted by the test'; END $$`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.pool.Exec(t.Context(), `CREATE TRIGGER abort_event BEFORE INSERT ON webhook_deliveries FOR EACH ROW
			WHEN (NEW.event_type = '`+eventType+`') EXECUTE FUNCTION abort_event()`); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWebhookTwoInstances runs two senders, each on its own store handle
// (two instances), against one outbox: every event reaches the receiver
// exactly once, and each user's events in order.
func TestWebhookTwoInstances(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openDB(t, dsn), openDB(t, dsn)
	ctx := t.Context()
	if err := a.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover", Name: "Clover"}); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateCompany(ctx, &posgate.Company{POSSystemID: "clover", ID: "acme", Name: "Acme", Status: posgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}     // webhook-id → requests
	last := map[string]float64{} // user → last n received
	disorder := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			Data struct {
				User string  `json:"user"`
				N    float64 `json:"n"`
			} `json:"data"`
		}
		json.Unmarshal(body, &ev)
		time.Sleep(2 * time.Millisecond) // let the instances' attempts overlap
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		if ev.Data.N <= last[ev.Data.User] {
			disorder++
		}
		last[ev.Data.User] = ev.Data.N
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	ep := &posgate.WebhookEndpoint{ID: "wh_two", POSSystemID: "clover", CompanyID: "acme", URL: srv.URL, Enabled: true,
		EventTypes: []string{posgate.EventTransactionRecorded}, Secret: endpoint.NewSecret()}
	if err := a.CreateWebhookEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	const users, perUser = 20, 15
	for n := 1; n <= perUser; n++ {
		for u := range users {
			user := fmt.Sprintf("u%d", u)
			if _, err := a.EmitTestEvent(ctx, ep, &posgate.Event{Type: posgate.EventTest, POSSystemID: "clover", CompanyID: "acme", UserID: user,
				Time: time.Now(), Data: map[string]any{"user": user, "n": n}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, st := range []*DB{a, b} {
		s := webhook.New(webhook.Config{Store: st, AllowLoopback: true, Poll: 20 * time.Millisecond, Workers: 4})
		wg.Add(1)
		go func() { defer wg.Done(); s.Run(runCtx) }()
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == users*perUser || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != users*perUser {
		t.Fatalf("receiver got %d events, want %d", len(seen), users*perUser)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %s sent %d times", id, n)
		}
	}
	if disorder != 0 {
		t.Errorf("%d events arrived before an earlier one of their user", disorder)
	}
	list, total, err := a.ListWebhookDeliveries(ctx, posgate.WebhookDeliveryQuery{EndpointID: ep.ID, Status: posgate.DeliveryDelivered, Limit: 1})
	if err != nil || total != users*perUser || list[0].Attempts != 1 {
		t.Fatalf("delivered: %d (%v)", total, err)
	}
}

// TestWaitingDeliveryPromotedWhenItsHeadIsRecordedBeforeItsCommit: a
// user's delivery written while the one before is Pending waits, and the
// transaction recording the one before makes it due, even when that record
// runs after the write and before its commit (another instance's sender):
// the write locks the row it waits behind until it commits, so the record
// waits for it and then sees it. Without the lock the waiting row was
// promoted by nobody and waited for the sweep of ReleaseWaiting (seconds).
func TestWaitingDeliveryPromotedWhenItsHeadIsRecordedBeforeItsCommit(t *testing.T) {
	db := openDB(t, pgtest.DSN(t))
	ctx := t.Context()
	if err := db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover", Name: "Clover"}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCompany(ctx, &posgate.Company{POSSystemID: "clover", ID: "acme", Name: "Acme", Status: posgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
	ep := &posgate.WebhookEndpoint{ID: "wh_race", POSSystemID: "clover", CompanyID: "acme", URL: "http://127.0.0.1:1/hook", Enabled: true,
		EventTypes: []string{posgate.EventTransactionRecorded}, Secret: endpoint.NewSecret()}
	if err := db.CreateWebhookEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := db.EmitTestEvent(ctx, ep, &posgate.Event{Type: posgate.EventTest, POSSystemID: "clover", CompanyID: "acme", UserID: "u",
		Time: now, Data: map[string]any{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	head, err := db.ClaimDeliveries(ctx, "sender-a", now, time.Minute, 10)
	if err != nil || len(head) != 1 {
		t.Fatalf("claim the head: %v, %v", head, err)
	}

	// Another instance's sale writes the user's next delivery, behind the
	// head, and has not committed yet.
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, insertOutboxSQL, ep.ID, "msg_next", posgate.EventTest, "u", `{"n":2}`, now); err != nil {
		t.Fatal(err)
	}
	// The head's delivery is recorded meanwhile.
	recorded := make(chan error, 1)
	go func() {
		_, err := db.RecordDeliveries(ctx, "sender-a", []*posgate.DeliveryResult{{ID: head[0].ID, Status: posgate.DeliveryDelivered, At: now, StatusCode: 204}})
		recorded <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-recorded; err != nil {
		t.Fatal(err)
	}
	var due *time.Time
	if err := db.pool.QueryRow(ctx, `SELECT next_attempt_at FROM webhook_deliveries WHERE event_id = 'msg_next'`).Scan(&due); err != nil {
		t.Fatal(err)
	}
	if due == nil {
		t.Fatal("the next delivery still waits behind a head that was delivered")
	}
}
