package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/posgate/posgate"
)

// migrationFiles holds the schema as numbered steps, NNN_what.sql, numbered
// from 001 without gaps; a later feature adds the next file rather than
// editing an applied one.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema step.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the embedded steps in order and rejects a misnamed
// or missing one, so that a gap fails every Open rather than some databases.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("sqlite: read migrations: %w", err)
	}
	out := make([]migration, 0, len(entries))
	for i, e := range entries {
		prefix, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.Atoi(prefix); err != nil || v != i+1 || len(prefix) != 3 {
			return nil, fmt.Errorf("sqlite: migration %q: want the name %03d_<what>.sql", e.Name(), i+1)
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("sqlite: read migration %q: %w", e.Name(), err)
		}
		out = append(out, migration{version: i + 1, name: e.Name(), sql: string(b)})
	}
	return out, nil
}

// migrate applies every step not yet recorded, each in its own transaction.
func (db *DB) migrate(ctx context.Context, migrations []migration) error {
	for _, m := range migrations {
		if err := db.apply(ctx, m); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
	}
	return db.backfillSearchTerms(ctx)
}

// backfillSearchTerms computes the search terms of the loyalty users stored
// before the schema kept them (search_terms NULL, found through a partial
// index that is empty otherwise), a batch per transaction; the update
// trigger indexes them.
func (db *DB) backfillSearchTerms(ctx context.Context) error {
	for {
		n := 0
		err := db.bulk(ctx, "index loyalty users for search", func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT user_key, first_name, last_name, email, phone FROM loyalty_users
				INDEXED BY loyalty_users_terms_pending WHERE search_terms IS NULL LIMIT 5000`)
			if err != nil {
				return err
			}
			type pending struct {
				key int64
				u   posgate.LoyaltyUser
			}
			var batch []pending
			for rows.Next() {
				var p pending
				if err := rows.Scan(&p.key, &p.u.FirstName, &p.u.LastName, &p.u.Email, &p.u.Phone); err != nil {
					rows.Close()
					return err
				}
				batch = append(batch, p)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, p := range batch {
				if _, err := tx.ExecContext(ctx, `UPDATE loyalty_users SET search_terms = ? WHERE user_key = ?`, searchTerms(&p.u), p.key); err != nil {
					return err
				}
			}
			n = len(batch)
			return nil
		})
		if err != nil {
			return fmt.Errorf("sqlite: index loyalty users for search: %w", err)
		}
		if n == 0 {
			return nil
		}
	}
}

// apply runs one step unless it is recorded already. The transaction takes
// the write lock as it begins (writeParams), so a second process migrating
// the same file waits here and then finds the step recorded.
func (db *DB) apply(ctx context.Context, m migration) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		applied_at TEXT NOT NULL
	) STRICT`); err != nil {
		return err
	}
	var applied bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?)`, m.version).Scan(&applied); err != nil {
		return err
	}
	if applied {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, m.version, formatTime(db.now())); err != nil {
		return err
	}
	return tx.Commit()
}

// checkSchema refuses a database that this binary would have to migrate.
func (db *DB) checkSchema(ctx context.Context, migrations []migration) error {
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if want := len(migrations); v < want {
		return fmt.Errorf("sqlite: the database schema is at version %d but this posgate needs version %d: run `posgate migrate` first, or start without --no-migrate to migrate automatically", v, want)
	}
	return nil
}

// SchemaVersion returns the newest migration applied to the database, 0 for
// a database posgate never migrated; `posgate migrate` and health checks
// report it.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var exists bool
	if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations')`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("sqlite: schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := db.read.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: schema version: %w", err)
	}
	return v, nil
}
