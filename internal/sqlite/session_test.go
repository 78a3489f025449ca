package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// sessionFixture is a store with one terminal, pos/co/L1/T1.
func sessionFixture(t *testing.T) *DB {
	db, _ := sessionFixtureAt(t)
	return db
}

// sessionFixtureAt is sessionFixture that also returns the file's path.
func sessionFixtureAt(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "posgate.db")
	db := open(t, path, Options{})
	ctx := t.Context()
	for _, err := range []error{
		db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "pos"}),
		db.CreateCompany(ctx, &posgate.Company{POSSystemID: "pos", ID: "co", Status: posgate.StatusActive}),
		db.CreateLocation(ctx, &posgate.Location{POSSystemID: "pos", ID: "L1", CompanyID: "co", Status: posgate.StatusActive}),
		db.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: "pos", LocationID: "L1", ID: "T1", Status: posgate.StatusActive}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return db, path
}

var sessionTime = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func session(id, terminal string) *posgate.Session {
	return &posgate.Session{ID: id, POSSystemID: "pos", CompanyID: "co", LocationID: "L1", TerminalID: terminal,
		CreatedAt: sessionTime, ExpiresAt: sessionTime.Add(time.Hour)}
}

// commitGroup runs one group through the writer's commit, as if the calls
// had arrived together, and returns each caller's answer.
func commitGroup(t *testing.T, db *DB, ctxs []context.Context, ss []*posgate.Session) []error {
	t.Helper()
	batch := make([]*sessionRequest, len(ss))
	for i, s := range ss {
		batch[i] = &sessionRequest{ctx: ctxs[i], s: s, done: make(chan error, 1)}
	}
	db.sessions.commit(batch)
	errs := make([]error, len(ss))
	for i, r := range batch {
		select {
		case errs[i] = <-r.done:
		default:
			t.Fatalf("caller %d got no answer", i)
		}
	}
	return errs
}

func stored(t *testing.T, db *DB, id string) bool {
	t.Helper()
	_, err := db.FindSession(t.Context(), id)
	if err != nil && !errors.Is(err, posgate.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func ctxs(n int, ctx context.Context) []context.Context {
	out := make([]context.Context, n)
	for i := range out {
		out[i] = ctx
	}
	return out
}

// In a group, a row that violates a constraint fails alone: the others
// are committed and their callers told so.
func TestSessionGroupRowErrorsStayTheirOwn(t *testing.T) {
	db := sessionFixture(t)
	if err := db.CreateSession(t.Context(), session("dup", "T1")); err != nil {
		t.Fatal(err)
	}
	errs := commitGroup(t, db, ctxs(4, t.Context()), []*posgate.Session{
		session("a", "T1"), session("dup", "T1"), session("b", "NOPE"), session("c", "T1"),
	})
	if errs[0] != nil || errs[3] != nil {
		t.Errorf("good rows: %v, %v", errs[0], errs[3])
	}
	if !errors.Is(errs[1], posgate.ErrConflict) {
		t.Errorf("duplicate row: %v, want conflict", errs[1])
	}
	if !errors.Is(errs[2], posgate.ErrNotFound) {
		t.Errorf("row of an unknown terminal: %v, want not found", errs[2])
	}
	for id, want := range map[string]bool{"a": true, "b": false, "c": true} {
		if got := stored(t, db, id); got != want {
			t.Errorf("session %s stored: %v, want %v", id, got, want)
		}
	}
}

// A failure that aborts the whole transaction loses no row: every row is
// retried on its own and each caller gets its own answer.
func TestSessionGroupTransactionFailureRetriesEachRow(t *testing.T) {
	db := sessionFixture(t)
	if _, err := db.write.Exec(`CREATE TRIGGER boom BEFORE INSERT ON sessions WHEN NEW.session_id = 'boom'
		BEGIN SELECT RAISE(ROLLBACK, 'boom'); END`); err != nil {
		t.Fatal(err)
	}
	errs := commitGroup(t, db, ctxs(3, t.Context()), []*posgate.Session{session("a", "T1"), session("boom", "T1"), session("b", "T1")})
	if errs[0] != nil || errs[2] != nil || errs[1] == nil {
		t.Fatalf("answers %v; want nil, an error, nil", errs)
	}
	for id, want := range map[string]bool{"a": true, "boom": false, "b": true} {
		if got := stored(t, db, id); got != want {
			t.Errorf("session %s stored: %v, want %v", id, got, want)
		}
	}
}

// A caller that gave up before its group was written is told so and its
// row is not stored; the others of the group are.
func TestSessionGroupSkipsCallersThatLeft(t *testing.T) {
	db := sessionFixture(t)
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	errs := commitGroup(t, db, []context.Context{t.Context(), gone, t.Context()},
		[]*posgate.Session{session("a", "T1"), session("gone", "T1"), session("b", "T1")})
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], context.Canceled) {
		t.Fatalf("answers %v; want nil, canceled, nil", errs)
	}
	if stored(t, db, "gone") || !stored(t, db, "a") || !stored(t, db, "b") {
		t.Error("wrong rows stored")
	}
}

// Concurrent calls are grouped (fewer commits than sessions) and every
// answered session is in the database, as seen by another connection.
func TestConcurrentSessionsAreGroupedAndAllStored(t *testing.T) {
	db, path := sessionFixtureAt(t)
	const n = 400
	errs := make(chan error, n)
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("s%03d", i)
		go func() { errs <- db.CreateSession(t.Context(), session(ids[i], "T1")) }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if c := db.sessions.commits.Load(); c >= n {
		t.Errorf("%d commits for %d concurrent sessions: not grouped", c, n)
	}
	other := open(t, path, Options{})
	var count int
	if err := other.read.QueryRow(`SELECT count(*) FROM sessions`).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Errorf("another connection sees %d sessions, want %d", count, n)
	}
	for _, id := range ids {
		if !stored(t, other, id) {
			t.Fatalf("session %s answered but not stored", id)
		}
	}
}

func TestCreateSessionAfterClose(t *testing.T) {
	db := sessionFixture(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(context.Background(), session("late", "T1")); !errors.Is(err, errClosed) {
		t.Errorf("err = %v, want errClosed", err)
	}
}

// The writer leaves checkpoints to the checkpointer, which copies the WAL
// into the database file beside it.
func TestWALIsCheckpointedBesideTheWriter(t *testing.T) {
	db := sessionFixture(t)
	var auto int
	if err := db.write.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 0 {
		t.Errorf("the writer checkpoints every %d pages itself", auto)
	}
	for i := range 50 {
		if err := db.CreateSession(t.Context(), session(fmt.Sprintf("c%02d", i), "T1")); err != nil {
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
