package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/posgate/posgate"
)

// DeleteAllData implements posgate.DataResetter: one write transaction
// empties every table of the schema except the migration record, the
// signing keys and the server secrets. FTS tables follow their content
// tables through their triggers. Tables are found in the schema, so a
// table a later migration adds is emptied too.
func (db *DB) DeleteAllData(ctx context.Context) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: reset: %w", err)
	}
	defer tx.Rollback()
	// Foreign keys are checked at the commit, when every table is empty.
	if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
		return fmt.Errorf("sqlite: reset: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return fmt.Errorf("sqlite: reset: %w", err)
	}
	var tables, virtual []string
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: reset: %w", err)
		}
		if strings.HasPrefix(strings.ToUpper(sql), "CREATE VIRTUAL TABLE") {
			virtual = append(virtual, name)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: reset: %w", err)
	}
	for _, t := range tables {
		if posgate.KeptOnReset(t) || isVirtualOrShadow(t, virtual) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM "`+t+`"`); err != nil {
			return fmt.Errorf("sqlite: reset %s: %w", t, err)
		}
	}
	// AUTOINCREMENT counters start again, as in a new file.
	var seq bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence')`).Scan(&seq); err != nil {
		return fmt.Errorf("sqlite: reset: %w", err)
	}
	if seq {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sqlite_sequence`); err != nil {
			return fmt.Errorf("sqlite: reset: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: reset: %w", err)
	}
	return nil
}

// isVirtualOrShadow reports whether t is a virtual table or one of its
// shadow tables (loyalty_users_fts_data …), which its triggers maintain.
func isVirtualOrShadow(t string, virtual []string) bool {
	for _, v := range virtual {
		if t == v || strings.HasPrefix(t, v+"_") {
			return true
		}
	}
	return false
}

// PutSandboxMark implements posgate.SandboxMarks.
func (db *DB) PutSandboxMark(ctx context.Context, id string) error {
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO sandbox_marks (id) VALUES (?) ON CONFLICT (id) DO NOTHING`, id); err != nil {
		return fmt.Errorf("sqlite: put sandbox mark: %w", err)
	}
	return nil
}

// HasSandboxMark implements posgate.SandboxMarks, through the read pool: a
// demo server asks every second, and must not queue behind the writer.
func (db *DB) HasSandboxMark(ctx context.Context, id string) (bool, error) {
	var ok bool
	if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sandbox_marks WHERE id = ?)`, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("sqlite: read sandbox mark: %w", err)
	}
	return ok, nil
}
