// Package postgres is posgate's production store: posgate.Store on
// PostgreSQL through pgx's native pool, for deployments where several posgate
// instances share one database.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrateLockKey is the first half of the advisory lock key that serialises
// migrations; the second half is the hash of the current schema, so that
// instances sharing a schema wait for each other and others do not.
const migrateLockKey = 0x706f7367 // "posg"

// Options tunes Open. The zero value is the production setting.
type Options struct {
	// Now is the clock for CreatedAt/UpdatedAt; nil means time.Now. Tests
	// inject a fixed clock to assert exact times.
	Now func() time.Time
	// NoMigrate makes Open refuse a schema older than this binary instead
	// of migrating it, for deployments that migrate in a separate step
	// (`posgate migrate`).
	NoMigrate bool
}

// DB is the PostgreSQL posgate.Store. It is safe for concurrent use.
type DB struct {
	pool       *pgxpool.Pool
	now        func() time.Time
	migrations []migration
	sessions   *storekit.SessionWriter // groups CreateSession's inserts
	outbox     *storekit.Outbox        // webhook subscriptions and wake-up (webhooks.go)
}

var _ posgate.Store = (*DB)(nil)

// PoolStat returns the connection pool's statistics (the metrics).
func (db *DB) PoolStat() *pgxpool.Stat { return db.pool.Stat() }

// SessionBatchSizes is the distribution of CreateSession's group commits
// (the metrics).
func (db *DB) SessionBatchSizes() storekit.BatchSizes { return db.sessions.BatchSizes() }

// GroupWritersBusy is the time the group-commit writer of sessions has
// spent in its transactions, as "sessions" (sales are not grouped here).
func (db *DB) GroupWritersBusy() map[string]time.Duration {
	return map[string]time.Duration{"sessions": db.sessions.Busy()}
}

// Open connects to the database at dsn (a postgres:// or postgresql:// URL)
// and brings its current schema up to date, or with opts.NoMigrate checks
// that it is. Tables live in the connection's current schema (the first of
// its search_path), so one database can hold several isolated posgates.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	migrations, err := loadMigrations(migrationFS)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse DSN: %w", err)
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		// Scan timestamptz in UTC, as every store returns times.
		conn.TypeMap().RegisterType(&pgtype.Type{
			Name:  "timestamptz",
			OID:   pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
		})
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	db := &DB{pool: pool, now: opts.Now, migrations: migrations}
	if db.now == nil {
		db.now = time.Now
	}
	db.outbox = storekit.NewOutbox(db.loadEndpoints, db.now)
	if opts.NoMigrate {
		err = db.checkVersion(ctx)
	} else {
		err = db.migrate(ctx)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	db.sessions = newSessionWriter(db)
	return db, nil
}

// Close releases every connection.
func (db *DB) Close() error {
	if db.sessions != nil {
		db.sessions.Close()
	}
	db.pool.Close()
	return nil
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return wrap(db.pool.Ping(ctx), "ping")
}

// SchemaVersion returns the highest migration applied to the current schema,
// 0 for an empty schema, so that `posgate migrate` and health checks can
// report it.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	// Look only in the current schema: an unqualified name would fall
	// through to a later schema of the search_path (e.g. public) holding
	// another posgate's tables.
	var exists bool
	err := db.pool.QueryRow(ctx, `SELECT to_regclass(format('%I.schema_migrations', current_schema())) IS NOT NULL`).Scan(&exists)
	if err != nil {
		return 0, wrap(err, "schema version")
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, wrap(err, "schema version")
	}
	return v, nil
}

func (db *DB) checkVersion(ctx context.Context) error {
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if want := len(db.migrations); v < want {
		return fmt.Errorf("postgres: database schema is at version %d, this posgate needs version %d: run `posgate migrate`", v, want)
	}
	return nil
}

// migration is one embedded migrations/NNNN_name.sql file.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads fsys's migrations/*.sql, which must be numbered 1, 2, 3…
// without gaps, so that a schema's version is the number of migrations
// applied to it.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("postgres: list migrations: %w", err)
	}
	ms := make([]migration, 0, len(names))
	for i, name := range names { // fs.Glob sorts
		base := path.Base(name)
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v != i+1 {
			return nil, fmt.Errorf("postgres: migration %s: want number %04d", base, i+1)
		}
		sql, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("postgres: read migration: %w", err)
		}
		ms = append(ms, migration{version: v, name: base, sql: string(sql)})
	}
	return ms, nil
}

// migrate applies the migrations the current schema lacks, each in its own
// transaction. Every transaction first takes the schema's advisory lock, so
// that instances starting together apply each migration exactly once.
func (db *DB) migrate(ctx context.Context) error {
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	for _, m := range db.migrations[min(v, len(db.migrations)):] {
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`, migrateLockKey); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
				version    integer PRIMARY KEY,
				name       text NOT NULL,
				applied_at timestamptz NOT NULL)`); err != nil {
				return err
			}
			var done bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, m.version).Scan(&done); err != nil || done {
				return err // another instance applied it while we waited
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.version, m.name, posgate.Timestamp(db.now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("postgres: migration %s: %w", m.name, err)
		}
	}
	return db.backfillSearchTerms(ctx)
}

// backfillSearchTerms computes the search terms of the loyalty users stored
// before the schema kept them (search_terms NULL, found through a partial
// index that is empty otherwise), a batch per transaction; the update
// trigger indexes them. Instances starting together may compute the same
// users' terms twice, alike.
func (db *DB) backfillSearchTerms(ctx context.Context) error {
	for {
		n := 0
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT pos_system_id, company_id, user_id, first_name, last_name, email, phone FROM loyalty_users
				WHERE search_terms IS NULL LIMIT 5000`)
			if err != nil {
				return err
			}
			users, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*posgate.LoyaltyUser, error) {
				u := &posgate.LoyaltyUser{}
				return u, r.Scan(&u.POSSystemID, &u.CompanyID, &u.ID, &u.FirstName, &u.LastName, &u.Email, &u.Phone)
			})
			if err != nil {
				return err
			}
			b := &pgx.Batch{}
			for _, u := range users {
				b.Queue(`UPDATE loyalty_users SET search_terms = $4 WHERE pos_system_id = $1 AND company_id = $2 AND user_id = $3
					AND search_terms IS NULL`, u.POSSystemID, u.CompanyID, u.ID, searchTerms(u))
			}
			n = len(users)
			return tx.SendBatch(ctx, b).Close()
		})
		if err != nil {
			return fmt.Errorf("postgres: index loyalty users for search: %w", err)
		}
		if n == 0 {
			return nil
		}
	}
}

// writeErr turns a failed write into the error callers match on: a
// duplicate key becomes conflict and an absent parent (a foreign key
// violation) becomes missing; missing is nil where there is no parent.
// Anything else is wrapped.
func writeErr(err error, op string, conflict, missing *posgate.Error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505": // unique_violation
			return conflict
		case pgErr.Code == "23503" && missing != nil: // foreign_key_violation
			return missing
		}
	}
	return wrap(err, op)
}

// readErr turns pgx.ErrNoRows into missing and wraps anything else.
func readErr(err error, op string, missing *posgate.Error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return missing
	}
	return wrap(err, op)
}

// wrap labels a driver error with the operation that failed; nil stays nil.
// An error of an unreachable database also carries errUnavailable, so that
// the request is answered 503 and retried rather than 500.
func wrap(err error, op string) error {
	if err == nil {
		return nil
	}
	if unavailable(err) {
		return fmt.Errorf("postgres: %s: %w", op, errors.Join(errUnavailable, err))
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

var errUnavailable = &posgate.Error{Code: posgate.EUNAVAILABLE, Message: "The database is unavailable; try again."}

// unavailable reports whether err says the database could not be reached
// or dropped the connection: a failed connect, a connection closed
// mid-statement (a primary that stopped), the server shutting down or
// starting, pgbouncer's own connection errors (SQLSTATE class 08), and a
// write sent to a standby not yet promoted. A context's own end is not.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection_exception
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
			pgErr.Code == "25006": // read_only_sql_transaction
			return true
		}
		return false
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connErr) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || pgconn.SafeToRetry(err)
}

// collect runs a list query and scans every row with scan; no rows is a nil
// slice.
func collect[T any](ctx context.Context, db *DB, op string, scan func(pgx.Row) (*T, error), sql string, args ...any) ([]*T, error) {
	rows, err := db.q(ctx).Query(ctx, sql, args...)
	if err != nil {
		return nil, wrap(err, op)
	}
	list, err := pgx.AppendRows([]*T(nil), rows, func(r pgx.CollectableRow) (*T, error) { return scan(r) })
	return list, wrap(err, op)
}
