package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/pgtest"
)

// sessionFixture is a store with one terminal, pos/co/L1/T1.
func sessionFixture(t *testing.T) (*DB, string) {
	t.Helper()
	dsn := pgtest.DSN(t)
	db, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
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
	return db, dsn
}

var sessionTime = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func session(id, terminal string) *posgate.Session {
	return &posgate.Session{ID: id, POSSystemID: "pos", CompanyID: "co", LocationID: "L1", TerminalID: terminal,
		CreatedAt: sessionTime, ExpiresAt: sessionTime.Add(time.Hour)}
}

// storeGroup runs one group through the writer, as if the calls had arrived
// together, and returns each caller's answer.
func storeGroup(t *testing.T, db *DB, ctxs []context.Context, ss []*posgate.Session) []error {
	t.Helper()
	batch := make([]*sessionRequest, len(ss))
	for i, s := range ss {
		batch[i] = &sessionRequest{ctx: ctxs[i], s: s, done: make(chan error, 1)}
	}
	db.sessions.store(batch)
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

func same(n int, ctx context.Context) []context.Context {
	out := make([]context.Context, n)
	for i := range out {
		out[i] = ctx
	}
	return out
}

func TestSessionGroupIsOneInsert(t *testing.T) {
	db, _ := sessionFixture(t)
	errs := storeGroup(t, db, same(3, t.Context()), []*posgate.Session{session("a", "T1"), session("b", "T1"), session("c", "T1")})
	for i, err := range errs {
		if err != nil {
			t.Errorf("row %d: %v", i, err)
		}
	}
	if g := db.sessions.groups.Load(); g != 1 {
		t.Errorf("%d group inserts, want 1", g)
	}
	for _, id := range []string{"a", "b", "c"} {
		if s, err := db.FindSession(t.Context(), id); err != nil || !s.CreatedAt.Equal(sessionTime) || !s.ExpiresAt.Equal(sessionTime.Add(time.Hour)) {
			t.Errorf("session %s: %+v, %v", id, s, err)
		}
	}
}

// A row that violates a constraint fails the group's statement: every row
// is then stored on its own, and each caller gets its own answer.
func TestSessionGroupRowErrorsStayTheirOwn(t *testing.T) {
	db, _ := sessionFixture(t)
	if err := db.CreateSession(t.Context(), session("dup", "T1")); err != nil {
		t.Fatal(err)
	}
	errs := storeGroup(t, db, same(4, t.Context()), []*posgate.Session{
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

func TestSessionGroupSkipsCallersThatLeft(t *testing.T) {
	db, _ := sessionFixture(t)
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	errs := storeGroup(t, db, []context.Context{t.Context(), gone, t.Context()},
		[]*posgate.Session{session("a", "T1"), session("gone", "T1"), session("b", "T1")})
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], context.Canceled) {
		t.Fatalf("answers %v; want nil, canceled, nil", errs)
	}
	if stored(t, db, "gone") || !stored(t, db, "a") || !stored(t, db, "b") {
		t.Error("wrong rows stored")
	}
}

// Concurrent calls are grouped and every answered session is stored, as
// another connection sees.
func TestConcurrentSessionsAreGroupedAndAllStored(t *testing.T) {
	db, dsn := sessionFixture(t)
	const n = 400
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- db.CreateSession(t.Context(), session(fmt.Sprintf("s%03d", i), "T1")) }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if db.sessions.groups.Load() == 0 {
		t.Error("400 concurrent sessions, not one group insert")
	}
	other, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var count int
	if err := other.pool.QueryRow(t.Context(), `SELECT count(*) FROM sessions`).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Errorf("another connection sees %d sessions, want %d", count, n)
	}
}

func TestCreateSessionAfterClose(t *testing.T) {
	db, _ := sessionFixture(t)
	db.Close()
	if err := db.CreateSession(context.Background(), session("late", "T1")); !errors.Is(err, errClosed) {
		t.Errorf("err = %v, want errClosed", err)
	}
}
