package sqlite

import (
	"path/filepath"
	"testing"

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
