// Package sqlite is posgate's embedded store: one SQLite file, no set-up. It
// uses modernc.org/sqlite (pure Go, no cgo) through database/sql.
//
// SQLite allows one writer at a time, so writes go through a pool of exactly
// one connection (queueing in Go instead of spinning on SQLITE_BUSY), while
// reads use a separate query-only pool on the same file: in WAL mode readers
// see the last commit and never wait for the writer.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

var _ posgate.Store = (*DB)(nil)

// Pools returns the store's two database/sql pools, for their statistics
// (the metrics); callers must not use them otherwise.
func (db *DB) Pools() (read, write *sql.DB) { return db.read, db.write }

// SessionBatchSizes is the distribution of CreateSession's group commits
// (the metrics).
func (db *DB) SessionBatchSizes() storekit.BatchSizes { return db.sessions.BatchSizes() }

// GroupWritersBusy is the time each group-commit writer has spent in its
// transactions, by writer: "sessions" (startInteraction) and "sales" (single
// sales). Both hold SQLite's one write connection while they do.
func (db *DB) GroupWritersBusy() map[string]time.Duration {
	return map[string]time.Duration{"sessions": db.sessions.Busy(), "sales": db.ledger.Busy()}
}

// Connection settings, applied by the driver to every new connection:
// busy_timeout lets another process's writer finish instead of failing at
// once; WAL lets readers run beside the writer; synchronous=NORMAL is durable
// across application crashes in WAL mode and avoids an fsync per commit.
//
// mmap_size(0): connections read pages into their own page cache rather
// than mapping the file. A mapping makes every page a search touches count
// in posgate's resident memory, once per connection that touched it: with
// mmap_size 1 GiB, searches over a million users and coupons took the peak
// RSS (VmHWM) to 2.2–3.2 GB, against a budget of 64 MB. Reading through the
// cache costs a pread per page missed, measured at a million rows: 58–72
// per keyword search, and a coupon search took about a quarter longer.
const (
	connParams = "_busy_timeout=5000&_journal_mode=WAL&_foreign_keys=on&_synchronous=NORMAL&_pragma=mmap_size(0)"
	// writeParams makes every transaction take the write lock when it
	// begins, so that two processes never deadlock upgrading read locks and
	// two processes migrating one file apply each migration once.
	//
	// The writer does not checkpoint the WAL itself (wal_autocheckpoint 0):
	// a checkpoint copies the WAL into the database file and syncs it, which
	// would stall every startInteraction waiting on that commit. The
	// checkpointer does it beside the writer instead (see checkpoint.go).
	//
	// temp_store(memory) keeps the writer's statement journals in memory:
	// the ledger applies each sale in a savepoint (posgate.ApplyLedger),
	// and SQLite journals the pages a savepoint changes; in a temporary
	// file, those were a pwrite per page, about a third of the CPU of a
	// sale (BenchmarkSales: 132 → 88 µs per sale). The journal holds only
	// the pages of one savepoint, a few for a sale.
	writeParams = connParams + "&_txlock=immediate&_pragma=wal_autocheckpoint(0)&_pragma=temp_store(memory)"
	readParams  = connParams + "&_query_only=on&_pragma=cache_size(-" + readCacheKiB + ")"
	ckptParams  = connParams
)

// readCacheKiB is the page cache of each read connection, in KiB (about
// SQLite's default of 2,000 KiB, stated because the memory budget rests on
// it). Under search load over a million rows, posgate's peak RSS was
// 46–49 MB with 1 MiB per read connection, 52–60 MB with 2 MiB and 99–107 MB
// with 8 MiB (the cache takes about twice its nominal size in the process);
// a larger cache saves few reads (a keyword search: 58–72 preads with
// 2 MiB, 32–61 with 8 MiB), because the searches' leaf pages are spread
// over the whole file.
const readCacheKiB = "2048"

// busyTimeout is _busy_timeout as a duration, for the one wait SQLite does
// not do itself (see connectWriter).
const busyTimeout = 5 * time.Second

// readConns bounds the read pool: enough for the 2-core target without
// holding many idle connections and their page caches. Each read connection
// costs 5–6 MB of resident memory (its 2 MiB page cache, its schema, its
// statements); 3 instead of 4 took the peak RSS of the coupon lookup and
// search rows from 63–69 MB to 57–64 MB at the same rate within the
// runs' noise.
const readConns = 3

// Options configures Open.
type Options struct {
	// Now is the clock for CreatedAt/UpdatedAt; it defaults to time.Now so
	// tests can inject a fake one.
	Now func() time.Time
	// NoMigrate makes Open refuse a database whose schema is older than this
	// binary instead of migrating it, for deployments where schema changes
	// are an explicit step (`posgate migrate`).
	NoMigrate bool
}

// DB is the SQLite implementation of posgate.Store.
type DB struct {
	write *sql.DB // one connection: SQLite has one writer at a time
	read  *sql.DB // query-only pool, so reads never queue behind writes
	now   func() time.Time

	// Statements on the hot paths (startInteraction, token issuing), prepared
	// once so that each call skips SQL parsing.
	findCompany     *sql.Stmt // the settings lookup's
	findLocation    *sql.Stmt
	findTerminal    *sql.Stmt
	findClient      *sql.Stmt
	listSigningKeys *sql.Stmt
	createSession   *sql.Stmt
	// A transaction's reads besides the ledger (docs/api.md §13.1): its
	// session, and the carousel and receipt its answer carries.
	findSession          *sql.Stmt
	findCarouselSettings *sql.Stmt
	effectiveReceipt     *sql.Stmt
	// insertOutbox writes an event's row for one endpoint (webhooks.go),
	// on the write connection, bound to the transaction of the change.
	insertOutbox *sql.Stmt
	// insertOutboxRows writes a ledger's events, all of them (webhooks.go).
	insertOutboxRows *sql.Stmt
	outbox           *storekit.Outbox
	leases           leases // the webhook sender's claims (webhooks.go)

	sessions *storekit.SessionWriter // group commit of CreateSession
	ledger   *storekit.LedgerWriter  // group commit of single sales (transactions.go)
	ckpt     *checkpointer           // checkpoints the WAL beside the writer
	coupons  *couponStmts            // the coupon feature's (coupons.go)
	promo    promotionStmts
	// ledgerStmts are the ledger's, on the write connection (transactions.go).
	ledgerStmts [ledgerStmtCount]*sql.Stmt
	// importStall overrides the constant of that name (tests).
	importStall time.Duration
}

// Open opens (creating it if needed) the SQLite database at dsn, a plain
// path such as "posgate.db" or a "file:" URI, and migrates it to this
// binary's schema unless opts.NoMigrate is set.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	if dsn == "" || dsn == ":memory:" || strings.Contains(dsn, "mode=memory") {
		return nil, fmt.Errorf("sqlite: DSN %q: posgate needs a database file (its read and write pools must share it)", dsn)
	}
	db := &DB{now: opts.Now}
	if db.now == nil {
		db.now = time.Now
	}
	db.outbox = storekit.NewOutbox(db.loadEndpoints, db.now)
	var err error
	if db.write, err = sql.Open("sqlite", withParams(dsn, writeParams)); err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", dsn, err)
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	if db.read, err = sql.Open("sqlite", withParams(dsn, readParams)); err != nil {
		db.write.Close()
		return nil, fmt.Errorf("sqlite: open %q: %w", dsn, err)
	}
	db.read.SetMaxOpenConns(readConns)
	db.read.SetMaxIdleConns(readConns)
	if err := db.init(ctx, opts.NoMigrate); err != nil {
		db.Close()
		return nil, err
	}
	if db.ckpt, err = newCheckpointer(dsn, checkpointInterval); err != nil {
		db.Close()
		return nil, err
	}
	db.sessions = newSessionWriter(db)
	db.ledger = newLedgerWriter(db)
	return db, nil
}

// withParams appends the driver parameters to dsn, which may carry its own.
func withParams(dsn, params string) string {
	if strings.Contains(dsn, "?") {
		return dsn + "&" + params
	}
	return dsn + "?" + params
}

// init brings the schema up to date (or checks it) and prepares the hot
// statements, which need the tables to exist.
func (db *DB) init(ctx context.Context, noMigrate bool) error {
	migrations, err := loadMigrations()
	if err != nil {
		return err
	}
	if err := db.connectWriter(ctx); err != nil {
		return err
	}
	if noMigrate {
		err = db.checkSchema(ctx, migrations)
	} else {
		err = db.migrate(ctx, migrations)
	}
	if err != nil {
		return err
	}
	for _, p := range []struct {
		stmt  **sql.Stmt
		pool  *sql.DB
		query string
	}{
		{&db.findCompany, db.read, findCompanySQL},
		{&db.findLocation, db.read, findLocationSQL},
		{&db.findTerminal, db.read, findTerminalSQL},
		{&db.findClient, db.read, findClientSQL},
		{&db.listSigningKeys, db.read, listSigningKeysSQL},
		{&db.createSession, db.write, createSessionSQL},
		{&db.insertOutbox, db.write, insertOutboxSQL},
		{&db.insertOutboxRows, db.write, insertOutboxRowsSQL},
		{&db.findSession, db.read, findSessionSQL},
		{&db.findCarouselSettings, db.read, findCarouselSettingsSQL},
		{&db.effectiveReceipt, db.read, effectiveReceiptSQL},
	} {
		if *p.stmt, err = p.pool.PrepareContext(ctx, p.query); err != nil {
			return fmt.Errorf("sqlite: prepare %q: %w", p.query, err)
		}
	}
	if err := db.prepareCoupons(ctx); err != nil {
		return err
	}
	if err := db.prepareLedger(ctx); err != nil {
		return err
	}
	return db.preparePromotions(ctx)
}

// connectWriter opens the write connection, whose pragmas switch a new file
// to WAL. When two connections do that to one file at the same moment,
// SQLite answers SQLITE_BUSY at once instead of waiting out busy_timeout,
// so this retries for as long as busy_timeout would have waited.
func (db *DB) connectWriter(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeout)
	for {
		err := db.write.PingContext(ctx)
		var se *sqlite.Error
		if err == nil {
			return nil
		} else if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return fmt.Errorf("sqlite: connect: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sqlite: connect: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Ping reports whether both pools can reach the database file.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping writer: %w", err)
	}
	if err := db.read.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping readers: %w", err)
	}
	return nil
}

// Close releases the prepared statements and both pools.
func (db *DB) Close() error {
	if db.sessions != nil {
		db.sessions.Close()
	}
	if db.ledger != nil {
		db.ledger.Close()
	}
	var errs []error
	if db.ckpt != nil {
		errs = append(errs, db.ckpt.close())
	}
	for _, s := range []*sql.Stmt{db.findCompany, db.findLocation, db.findTerminal, db.findClient, db.listSigningKeys, db.createSession,
		db.findSession, db.findCarouselSettings, db.effectiveReceipt} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	errs = append(errs, db.coupons.close(), db.closeLedger())
	errs = append(errs, db.closePromotions(), db.read.Close(), db.write.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// timestamp is the store clock's current time as the store keeps it.
func (db *DB) timestamp() time.Time { return posgate.Timestamp(db.now()) }

// timeLayout is how times are stored: fixed-width UTC text, so that text
// order is time order.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// formatTime renders t for storage.
func formatTime(t time.Time) string { return posgate.Timestamp(t).Format(timeLayout) }

// timeColumn scans a stored time into t.
type timeColumn struct{ t *time.Time }

// Scan implements sql.Scanner.
func (c timeColumn) Scan(src any) error {
	s, ok := src.(string)
	if !ok {
		return fmt.Errorf("time column holds %T, want text", src)
	}
	t, err := parseTime(s)
	if err != nil {
		return fmt.Errorf("time column: %w", err)
	}
	*c.t = t
	return nil
}

// parseTime parses a time stored in timeLayout. The layout is fixed, so it
// reads the digits itself: time.Parse cost 6 % of a keyword search's
// instructions (two times on each of up to 357 candidate rows). Anything
// that is not a valid time in that layout goes to time.Parse, for its
// error.
func parseTime(s string) (time.Time, error) {
	if len(s) == len(timeLayout) && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == '.' && s[26] == 'Z' {
		ok := true
		num := func(from, to int) int {
			n := 0
			for _, c := range []byte(s[from:to]) {
				if c < '0' || c > '9' {
					ok = false
				}
				n = n*10 + int(c-'0')
			}
			return n
		}
		year, month, day := num(0, 4), num(5, 7), num(8, 10)
		hour, minute, sec, micro := num(11, 13), num(14, 16), num(17, 19), num(20, 26)
		t := time.Date(year, time.Month(month), day, hour, minute, sec, micro*1000, time.UTC)
		// time.Date normalises what time.Parse refuses (February 30, 24:00).
		if ok && t.Year() == year && int(t.Month()) == month && t.Day() == day && t.Hour() == hour && t.Minute() == minute && t.Second() == sec {
			return t, nil
		}
	}
	return time.Parse(timeLayout, s)
}

// scanner is what *sql.Row and *sql.Rows have in common.
type scanner interface{ Scan(dest ...any) error }

// scanRow scans one row into a new T, through the destinations that dest
// returns for it (one per selected column, in order).
func scanRow[T any](s scanner, dest func(*T) []any) (*T, error) {
	v := new(T)
	if err := s.Scan(dest(v)...); err != nil {
		return nil, err
	}
	return v, nil
}

// scanAll scans every row of a query's result; it takes the query's error
// too so that callers stay short.
func scanAll[T any](rows *sql.Rows, err error, op string, dest func(*T) []any) ([]*T, error) {
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	defer rows.Close()
	var out []*T
	for rows.Next() {
		v, err := scanRow(rows, dest)
		if err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return out, nil
}

// readErr turns sql.ErrNoRows into missing and wraps anything else.
func readErr(err error, op string, missing *posgate.Error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return missing
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// writeErr turns a failed write into the error callers match on: a
// duplicate key becomes conflict and an absent parent (a foreign key
// violation) becomes missing; either may be nil when the write cannot
// violate it. Anything else is wrapped.
func writeErr(err error, op string, conflict, missing *posgate.Error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			if conflict != nil {
				return conflict
			}
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			if missing != nil {
				return missing
			}
		}
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// WriteDSN and ReadDSN are dsn with the driver parameters of posgate's
// write and read pools, and ReadConns the read pool's size: the
// benchmark's floors (bench/floors.go) open the file as posgate does.
func WriteDSN(dsn string) string { return withParams(dsn, writeParams) }

// ReadDSN: see WriteDSN.
func ReadDSN(dsn string) string { return withParams(dsn, readParams) }

// ReadConns: see WriteDSN.
const ReadConns = readConns
