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
