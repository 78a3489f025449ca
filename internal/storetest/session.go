package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// SessionWriterStore is a store under RunSessionWriter, with the hooks into
// it that the session writer's tests need beyond posgate.Store. A store's
// own tests build it, as they can reach the store's insides.
type SessionWriterStore struct {
	// Store is a fresh, empty store that is closed when the test ends
	// (closing a closed store must do no harm).
	Store posgate.Store
	// Writer is the storekit.SessionWriter behind Store's CreateSession.
	Writer *storekit.SessionWriter
	// OpenAgain opens another store on Store's database, with connections
	// of its own, and closes it when the test ends: what it sees has been
	// committed.
	OpenAgain func(t *testing.T) posgate.Store
	// AbortSession makes the database fail, from now on, any transaction
	// that inserts the session id as a whole, rather than only the row's
	// statement: a failure that stores none of the group.
	AbortSession func(t *testing.T, id string)
}

// RunSessionWriter runs the tests of the batched session writer
// (storekit.SessionWriter) on a store that uses it: grouped calls each get
// their own answer, and no answered session is lost. open must return a
// fresh store and its hooks; it is called once per subtest.
func RunSessionWriter(t *testing.T, open func(t *testing.T) SessionWriterStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, w *writerEnv)
	}{
		{"GroupIsOneTransaction", testSessionGroupIsOneTransaction},
		{"GroupRowErrorsStayTheirOwn", testSessionGroupRowErrorsStayTheirOwn},
		{"GroupTransactionFailureRetriesEachRow", testSessionGroupTransactionFailureRetriesEachRow},
		{"GroupSkipsCallersThatLeft", testSessionGroupSkipsCallersThatLeft},
		{"ConcurrentSessionsAreGroupedAndAllStored", testConcurrentSessionsAreGroupedAndAllStored},
		{"CreateSessionAfterClose", testCreateSessionAfterClose},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := open(t)
			(&env{t: t, s: h.Store}).till("pos", "co", "L1", "T1")
			tc.fn(t, &writerEnv{SessionWriterStore: h, t: t})
		})
	}
}

// writerEnv is one subtest's store, with a terminal pos/co/L1/T1.
type writerEnv struct {
	SessionWriterStore
	t *testing.T
}

var sessionTime = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func session(id, terminal string) *posgate.Session {
	return &posgate.Session{ID: id, POSSystemID: "pos", CompanyID: "co", LocationID: "L1", TerminalID: terminal,
		CreatedAt: sessionTime, ExpiresAt: sessionTime.Add(time.Hour)}
}

// group runs sessions through the writer as one group, as if the calls had
// arrived together with the contexts ctxs, and returns each caller's answer.
func (w *writerEnv) group(ctxs []context.Context, ss ...*posgate.Session) []error {
	w.t.Helper()
	errs, err := w.Writer.CommitGroup(ctxs, ss)
	if err != nil {
		w.t.Fatal(err)
	}
	return errs
}

// sessionStored reports whether s holds session id.
func sessionStored(t *testing.T, s posgate.Store, id string) bool {
	t.Helper()
	_, err := s.FindSession(t.Context(), id)
	if err != nil && !errors.Is(err, posgate.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// same returns n copies of ctx.
func same(n int, ctx context.Context) []context.Context {
	out := make([]context.Context, n)
	for i := range out {
		out[i] = ctx
	}
	return out
}

// A group of good sessions is stored in one transaction.
func testSessionGroupIsOneTransaction(t *testing.T, w *writerEnv) {
	errs := w.group(same(3, t.Context()), session("a", "T1"), session("b", "T1"), session("c", "T1"))
	for i, err := range errs {
		if err != nil {
			t.Errorf("row %d: %v", i, err)
		}
	}
	if g := w.Writer.Groups(); g != 1 {
		t.Errorf("%d groups stored, want 1", g)
	}
	for _, id := range []string{"a", "b", "c"} {
		if s, err := w.Store.FindSession(t.Context(), id); err != nil || !s.CreatedAt.Equal(sessionTime) || !s.ExpiresAt.Equal(sessionTime.Add(time.Hour)) {
			t.Errorf("session %s: %+v, %v", id, s, err)
		}
	}
}

// In a group, a row that violates a constraint fails alone: whether the
// database confines the violation to its row (SQLite) or fails the group's
// statement (PostgreSQL, whose rows are then stored one by one), the other
// rows are stored and each caller gets its own answer.
func testSessionGroupRowErrorsStayTheirOwn(t *testing.T, w *writerEnv) {
	if err := w.Store.CreateSession(t.Context(), session("dup", "T1")); err != nil {
		t.Fatal(err)
	}
	errs := w.group(same(4, t.Context()), session("a", "T1"), session("dup", "T1"), session("b", "NOPE"), session("c", "T1"))
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
		if got := sessionStored(t, w.Store, id); got != want {
			t.Errorf("session %s stored: %v, want %v", id, got, want)
		}
	}
}

// A failure that aborts the whole transaction loses no row: every row is
// retried on its own and each caller gets its own answer.
func testSessionGroupTransactionFailureRetriesEachRow(t *testing.T, w *writerEnv) {
	w.AbortSession(t, "boom")
	errs := w.group(same(3, t.Context()), session("a", "T1"), session("boom", "T1"), session("b", "T1"))
	if errs[0] != nil || errs[2] != nil || errs[1] == nil {
		t.Fatalf("answers %v; want nil, an error, nil", errs)
	}
	for id, want := range map[string]bool{"a": true, "boom": false, "b": true} {
		if got := sessionStored(t, w.Store, id); got != want {
			t.Errorf("session %s stored: %v, want %v", id, got, want)
		}
	}
}

// A caller that gave up before its group was written is told so and its
// row is not stored; the others of the group are.
func testSessionGroupSkipsCallersThatLeft(t *testing.T, w *writerEnv) {
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	errs := w.group([]context.Context{t.Context(), gone, t.Context()}, session("a", "T1"), session("gone", "T1"), session("b", "T1"))
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], context.Canceled) {
		t.Fatalf("answers %v; want nil, canceled, nil", errs)
	}
	if sessionStored(t, w.Store, "gone") || !sessionStored(t, w.Store, "a") || !sessionStored(t, w.Store, "b") {
		t.Error("wrong rows stored")
	}
}

// Concurrent calls are grouped (at least one group, so fewer transactions
// than sessions) and every answered session is in the database, as another
// store on it sees.
func testConcurrentSessionsAreGroupedAndAllStored(t *testing.T, w *writerEnv) {
	const n = 400
	errs := make(chan error, n)
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("s%03d", i)
		go func() { errs <- w.Store.CreateSession(t.Context(), session(ids[i], "T1")) }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if w.Writer.Groups() == 0 {
		t.Errorf("%d concurrent sessions, not one group: not grouped", n)
	}
	other := w.OpenAgain(t)
	for _, id := range ids {
		if !sessionStored(t, other, id) {
			t.Fatalf("session %s answered but not stored", id)
		}
	}
	// Every session has expired an hour later: the other store counts them
	// as it removes them.
	count, err := other.DeleteExpiredSessions(t.Context(), sessionTime.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Errorf("another store sees %d sessions, want %d", count, n)
	}
}

func testCreateSessionAfterClose(t *testing.T, w *writerEnv) {
	if err := w.Store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Store.CreateSession(context.Background(), session("late", "T1")); !errors.Is(err, storekit.ErrClosed) {
		t.Errorf("err = %v, want storekit.ErrClosed", err)
	}
}
