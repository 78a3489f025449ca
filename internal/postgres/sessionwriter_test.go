package postgres

import (
	"strings"
	"testing"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/storetest"
)

// TestSessionWriter runs the session writer's tests of the conformance
// suite, with the hooks they need into this store. (It is in package
// postgres, unlike the store's other tests, to reach those.)
func TestSessionWriter(t *testing.T) {
	storetest.RunSessionWriter(t, func(t *testing.T) storetest.SessionWriterStore {
		dsn := pgtest.DSN(t)
		db := openDB(t, dsn)
		return storetest.SessionWriterStore{
			Store:     db,
			Writer:    db.sessions,
			OpenAgain: func(t *testing.T) posgate.Store { return openDB(t, dsn) },
			AbortSession: func(t *testing.T, id string) {
				// A trigger's exception fails the statement and with it the
				// transaction, as PostgreSQL aborts a transaction at any
				// error.
				if _, err := db.pool.Exec(t.Context(), `CREATE FUNCTION abort_session() RETURNS trigger LANGUAGE plpgsql
					AS $$ BEGIN RAISE EXCEPTION 'aborted by the test'; END $$`); err != nil {
					t.Fatal(err)
				}
				if _, err := db.pool.Exec(t.Context(), `CREATE TRIGGER abort_session BEFORE INSERT ON sessions FOR EACH ROW
					WHEN (NEW.id = '`+strings.ReplaceAll(id, "'", "''")+`') EXECUTE FUNCTION abort_session()`); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

// openDB opens the store at dsn and closes it when the test ends.
func openDB(t *testing.T, dsn string) *DB {
	t.Helper()
	db, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
