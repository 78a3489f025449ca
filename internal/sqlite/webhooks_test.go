package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storetest"
)

// TestWebhookRollback: a sale whose last event cannot be written leaves
// nothing behind, its earlier events included.
func TestWebhookRollback(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "posgate.db"), Options{})
	storetest.WebhookRollback(t, db, func(t *testing.T, eventType string) {
		if _, err := db.write.ExecContext(t.Context(), `CREATE TRIGGER abort_event BEFORE INSERT ON webhook_deliveries
			WHEN NEW.event_type = '`+eventType+`' BEGIN SELECT RAISE(ABORT, 'aborted by the test'); END`); err != nil {
			t.Fatal(err)
		}
	})
}

// TestClaimsLeaveTheWriterFree: a claim is a read and a lease in memory
// (docs/decisions.md, "SQLite's leases in memory"), so it is answered while
// another transaction holds the single writer; the outcome, a write, waits
// for it, and only the lease's holder can record it.
func TestClaimsLeaveTheWriterFree(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	db := open(t, filepath.Join(t.TempDir(), "posgate.db"), Options{Now: fixedClock(now)})
	if err := db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover", Name: "Clover"}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCompany(ctx, &posgate.Company{POSSystemID: "clover", ID: "acme", Name: "Acme", Status: posgate.StatusActive,
		Features: posgate.AllFeaturesOn()}); err != nil {
		t.Fatal(err)
	}
	ep := &posgate.WebhookEndpoint{ID: "wh_1", POSSystemID: "clover", CompanyID: "acme", URL: "https://hooks.example.com/",
		EventTypes: []string{posgate.EventTest}, Enabled: true, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
	if err := db.CreateWebhookEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EmitTestEvent(ctx, ep, &posgate.Event{Type: posgate.EventTest, POSSystemID: "clover", CompanyID: "acme",
		Time: now, Data: map[string]string{}}); err != nil {
		t.Fatal(err)
	}

	// Hold the writer.
	conn, err := db.write.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	claimed := make(chan []*posgate.DeliveryTask, 1)
	go func() {
		tasks, err := db.ClaimDeliveries(ctx, "A", now, time.Minute, 10)
		if err != nil {
			t.Error(err)
		}
		claimed <- tasks
	}()
	var tasks []*posgate.DeliveryTask
	select {
	case tasks = <-claimed:
	case <-time.After(10 * time.Second):
		t.Fatal("the claim waited for the writer")
	}
	if len(tasks) != 1 {
		t.Fatalf("claimed %d deliveries, want 1", len(tasks))
	}
	if again, err := db.ClaimDeliveries(ctx, "B", now.Add(59*time.Second), time.Minute, 10); err != nil || len(again) != 0 {
		t.Fatalf("a second claim within the lease: %d deliveries, %v", len(again), err)
	}
	recorded := make(chan bool, 1)
	go func() {
		ok, err := db.RecordDelivery(ctx, "A", &posgate.DeliveryResult{ID: tasks[0].ID, Status: posgate.DeliveryDelivered, At: now, StatusCode: 204})
		if err != nil {
			t.Error(err)
		}
		recorded <- ok
	}()
	select {
	case <-recorded:
		t.Fatal("the outcome was recorded while another transaction held the writer")
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if ok := <-recorded; !ok {
		t.Fatal("the lease's holder could not record")
	}
	if ok, err := db.RecordDelivery(ctx, "A", &posgate.DeliveryResult{ID: tasks[0].ID, Status: posgate.DeliveryDelivered, At: now}); err != nil || ok {
		t.Fatalf("recorded twice: %v, %v", ok, err)
	}
	if again, err := db.ClaimDeliveries(ctx, "B", now.Add(time.Hour), time.Minute, 10); err != nil || len(again) != 0 {
		t.Fatalf("a delivered event claimed again: %d deliveries, %v", len(again), err)
	}
}
