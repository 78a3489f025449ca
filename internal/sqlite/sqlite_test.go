package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) posgate.Store {
		return open(t, filepath.Join(t.TempDir(), "posgate.db"), Options{Now: now})
	})
}

// TestSessionWriter runs the session writer's tests of the conformance
// suite, with the hooks they need into this store.
func TestSessionWriter(t *testing.T) {
	storetest.RunSessionWriter(t, func(t *testing.T) storetest.SessionWriterStore {
		path := filepath.Join(t.TempDir(), "posgate.db")
		db := open(t, path, Options{})
		return storetest.SessionWriterStore{
			Store:     db,
			Writer:    db.sessions,
			OpenAgain: func(t *testing.T) posgate.Store { return open(t, path, Options{}) },
			AbortSession: func(t *testing.T, id string) {
				// RAISE(ROLLBACK) ends the transaction, not just the statement.
				if _, err := db.write.ExecContext(t.Context(), `CREATE TRIGGER abort_session BEFORE INSERT ON sessions
					WHEN NEW.session_id = '`+strings.ReplaceAll(id, "'", "''")+`' BEGIN SELECT RAISE(ROLLBACK, 'aborted by the test'); END`); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

// TestLedgerWriter runs the ledger writer's tests of the conformance
// suite, with the hooks they need into this store.
func TestLedgerWriter(t *testing.T) {
	storetest.RunLedgerWriter(t, func(t *testing.T) storetest.LedgerWriterStore {
		db := open(t, filepath.Join(t.TempDir(), "posgate.db"), Options{})
		return storetest.LedgerWriterStore{
			Store:  db,
			Writer: db.ledger,
			AbortSale: func(t *testing.T, id string) {
				if _, err := db.write.ExecContext(t.Context(), `CREATE TRIGGER abort_sale BEFORE INSERT ON transactions
					WHEN NEW.transaction_id = '`+strings.ReplaceAll(id, "'", "''")+`' BEGIN SELECT RAISE(ABORT, 'aborted by the test'); END`); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

// open opens dsn and closes it when the test ends.
func open(t *testing.T, dsn string, opts Options) *DB {
	t.Helper()
	db, err := Open(t.Context(), dsn, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", dsn, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// fixedClock returns a clock stopped at t.
func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// appliedMigrations lists schema_migrations as "version applied_at" lines.
func appliedMigrations(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.read.QueryContext(t.Context(), `SELECT version, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v, at string
		if err := rows.Scan(&v, &at); err != nil {
			t.Fatalf("scan schema_migrations: %v", err)
		}
		out = append(out, v+" "+at)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	return out
}

// wantApplied is what schema_migrations holds after one migration run at
// appliedAt.
func wantApplied(t *testing.T, appliedAt string) []string {
	t.Helper()
	migrations, err := loadMigrations()
	if err != nil {
		t.Fatalf("loadMigrations: %v", err)
	}
	if len(migrations) == 0 {
		t.Fatal("no migrations embedded")
	}
	var out []string
	for _, m := range migrations {
		out = append(out, strings.TrimLeft(m.name[:3], "0")+" "+appliedAt)
	}
	return out
}

func TestReopenKeepsDataAndDoesNotReapplyMigrations(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "posgate.db")
	first := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	db := open(t, path, Options{Now: fixedClock(first)})
	want := wantApplied(t, "2030-01-02T03:04:05.000006Z")
	if got := appliedMigrations(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("schema_migrations after the first Open = %q, want %q", got, want)
	}
	if err := db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover", Name: "Clover"}); err != nil {
		t.Fatalf("CreatePOSSystem: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	db = open(t, path, Options{Now: fixedClock(first.Add(time.Hour))})
	if got := appliedMigrations(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("schema_migrations after reopening = %q, want %q unchanged", got, want)
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil || v != len(want) {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, len(want))
	}
	p, err := db.FindPOSSystem(ctx, "clover")
	if err != nil {
		t.Fatalf("FindPOSSystem after reopening: %v", err)
	}
	if wantP := (&posgate.POSSystem{ID: "clover", Name: "Clover", CreatedAt: first}); !reflect.DeepEqual(p, wantP) {
		t.Fatalf("FindPOSSystem after reopening = %+v, want %+v", p, wantP)
	}
}

func TestNoMigrateRefusesFreshFile(t *testing.T) {
	_, err := Open(t.Context(), filepath.Join(t.TempDir(), "posgate.db"), Options{NoMigrate: true})
	if err == nil {
		t.Fatal("Open with NoMigrate of a fresh file succeeded")
	}
	for _, want := range []string{"schema is at version 0", "posgate migrate", "no-migrate"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestNoMigrateRefusesOlderSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "posgate.db")
	db := open(t, path, Options{})
	latest := len(wantApplied(t, ""))
	if _, err := db.write.ExecContext(t.Context(), `DELETE FROM schema_migrations WHERE version = ?`, latest); err != nil {
		t.Fatalf("forget the last migration: %v", err)
	}
	_, err := Open(t.Context(), path, Options{NoMigrate: true})
	if err == nil || !strings.Contains(err.Error(), "posgate migrate") {
		t.Fatalf("Open with NoMigrate of a schema one version behind: got %v, want an error asking for `posgate migrate`", err)
	}
}

func TestNoMigrateOpensMigratedFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "posgate.db")
	db := open(t, path, Options{})
	if err := db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "pax", Name: "PAX"}); err != nil {
		t.Fatalf("CreatePOSSystem: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db = open(t, path, Options{NoMigrate: true})
	if p, err := db.FindPOSSystem(ctx, "pax"); err != nil || p.Name != "PAX" {
		t.Fatalf("FindPOSSystem = %+v, %v; want PAX", p, err)
	}
	if err := db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover", Name: "Clover"}); err != nil {
		t.Fatalf("CreatePOSSystem with NoMigrate: %v", err)
	}
}

// TestConcurrentOpensOfFreshFile stands for several posgate processes
// starting on one new file. The race it looks for (two connections
// switching the file to WAL together) is narrow, hence the rounds.
func TestConcurrentOpensOfFreshFile(t *testing.T) {
	for round := range 20 {
		path := filepath.Join(t.TempDir(), "posgate.db")
		// Plain paths and URIs naming the same file.
		dsns := []string{path, "file:" + path + "?cache=private", path, "file:" + path}
		dbs := make([]*DB, len(dsns))
		errs := make([]error, len(dsns))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, dsn := range dsns {
			wg.Go(func() {
				<-start
				dbs[i], errs[i] = Open(t.Context(), dsn, Options{Now: fixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))})
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: Open(%q): %v", round, dsns[i], err)
			}
			t.Cleanup(func() { dbs[i].Close() })
		}
		if got, want := appliedMigrations(t, dbs[0]), wantApplied(t, "2030-01-01T00:00:00.000000Z"); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: schema_migrations = %q, want %q", round, got, want)
		}
		if err := dbs[0].CreatePOSSystem(t.Context(), &posgate.POSSystem{ID: "clover"}); err != nil {
			t.Fatalf("round %d: CreatePOSSystem: %v", round, err)
		}
		if _, err := dbs[1].FindPOSSystem(t.Context(), "clover"); err != nil {
			t.Fatalf("round %d: FindPOSSystem through the other DB: %v", round, err)
		}
	}
}

func TestRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	db := open(t, "posgate.db", Options{})
	if err := db.CreatePOSSystem(t.Context(), &posgate.POSSystem{ID: "clover"}); err != nil {
		t.Fatalf("CreatePOSSystem: %v", err)
	}
	db2 := open(t, "file:posgate.db", Options{})
	if _, err := db2.FindPOSSystem(t.Context(), "clover"); err != nil {
		t.Fatalf("FindPOSSystem through file:posgate.db: %v", err)
	}
}

func TestRejectsInMemory(t *testing.T) {
	for _, dsn := range []string{"", ":memory:", "file:x?mode=memory"} {
		if db, err := Open(t.Context(), dsn, Options{}); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded, want an error", dsn)
		}
	}
}

func TestPragmas(t *testing.T) {
	db := open(t, "file:"+filepath.Join(t.TempDir(), "posgate.db")+"?cache=private", Options{})
	for name, pool := range map[string]struct {
		db        *sql.DB
		queryOnly string
		conns     int
	}{"writer": {db.write, "0", 1}, "reader": {db.read, "1", readConns}} {
		want := map[string]string{"journal_mode": "wal", "foreign_keys": "1", "busy_timeout": "5000", "synchronous": "1", "query_only": pool.queryOnly,
			"mmap_size": "0"}
		if pool.db == db.read {
			want["cache_size"] = "-" + readCacheKiB
		}
		for pragma, v := range want {
			var got string
			if err := pool.db.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil || got != v {
				t.Errorf("%s: PRAGMA %s = %q, %v; want %q", name, pragma, got, err, v)
			}
		}
		if got := pool.db.Stats().MaxOpenConnections; got != pool.conns {
			t.Errorf("%s: MaxOpenConnections = %d, want %d", name, got, pool.conns)
		}
	}
}

func TestReadsDoNotWaitForWriter(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "posgate.db"), Options{})
	if err := db.CreatePOSSystem(t.Context(), &posgate.POSSystem{ID: "clover"}); err != nil {
		t.Fatalf("CreatePOSSystem: %v", err)
	}
	// Hold the only write connection in an open transaction.
	tx, err := db.write.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatalf("BeginTx: %v", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(t.Context(), `INSERT INTO pos_systems (pos_system_id, name, created_at) VALUES ('pending', '', '2030-01-01T00:00:00.000000Z')`); err != nil {
		t.Fatalf("insert: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := db.FindPOSSystem(ctx, "clover"); err != nil {
		t.Fatalf("FindPOSSystem during a write transaction: %v", err)
	}
	if _, err := db.FindPOSSystem(ctx, "pending"); !errors.Is(err, posgate.ErrNotFound) {
		t.Fatalf("FindPOSSystem of an uncommitted row: got %v, want ErrNotFound", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if _, err := db.FindPOSSystem(ctx, "pending"); err != nil {
		t.Fatalf("FindPOSSystem after the commit: %v", err)
	}
}

// till creates the POS system, company, location and terminal
// clover/acme/L1/T1 that sessions belong to.
func till(tb testing.TB, db *DB) {
	tb.Helper()
	ctx := tb.Context()
	for _, err := range []error{
		db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover"}),
		db.CreateCompany(ctx, &posgate.Company{POSSystemID: "clover", ID: "acme", Status: posgate.StatusActive}),
		db.CreateLocation(ctx, &posgate.Location{POSSystemID: "clover", ID: "L1", CompanyID: "acme", Status: posgate.StatusActive}),
		db.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: "clover", LocationID: "L1", ID: "T1", Status: posgate.StatusActive}),
	} {
		if err != nil {
			tb.Fatal(err)
		}
	}
}

func BenchmarkCreateSession(b *testing.B) {
	ctx := b.Context()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "posgate.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	till(b, db)
	var n atomic.Int64
	now := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.FindLocation(ctx, "clover", "L1"); err != nil {
				b.Error(err)
				return
			}
			s := &posgate.Session{ID: strconv.FormatInt(n.Add(1), 10), POSSystemID: "clover", CompanyID: "acme", LocationID: "L1", TerminalID: "T1",
				CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}
			if err := db.CreateSession(ctx, s); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
