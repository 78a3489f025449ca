package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// The writer leaves checkpoints to the checkpointer, which copies the WAL
// into the database file beside it.
func TestWALIsCheckpointedBesideTheWriter(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "posgate.db"), Options{})
	till(t, db)
	var auto int
	if err := db.write.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 0 {
		t.Errorf("the writer checkpoints every %d pages itself", auto)
	}
	created := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 50 {
		s := &posgate.Session{ID: fmt.Sprintf("c%02d", i), POSSystemID: "clover", CompanyID: "acme", LocationID: "L1", TerminalID: "T1",
			CreatedAt: created, ExpiresAt: created.Add(time.Hour)}
		if err := db.CreateSession(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.ckpt.copied.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nothing checkpointed after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
