package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
)

// DeleteAllData implements posgate.DataResetter: one TRUNCATE of every
// table of the schema except the migration record, the signing keys and the
// server secrets. Tables are found in the schema, so a table a later
// migration adds is emptied too.
func (db *DB) DeleteAllData(ctx context.Context) error {
	rows, err := db.pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	if err != nil {
		return fmt.Errorf("postgres: reset: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("postgres: reset: %w", err)
	}
	var tables []string
	for _, t := range names {
		if !posgate.KeptOnReset(t) {
			tables = append(tables, pgx.Identifier{t}.Sanitize())
		}
	}
	if len(tables) == 0 {
		return nil
	}
	if _, err := db.pool.Exec(ctx, `TRUNCATE `+strings.Join(tables, ", ")+` RESTART IDENTITY`); err != nil {
		return fmt.Errorf("postgres: reset: %w", err)
	}
	return nil
}

// PutSandboxMark implements posgate.SandboxMarks.
func (db *DB) PutSandboxMark(ctx context.Context, id string) error {
	if _, err := db.q(ctx).Exec(ctx, `INSERT INTO sandbox_marks (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, id); err != nil {
		return wrap(err, "put sandbox mark")
	}
	return nil
}

// HasSandboxMark implements posgate.SandboxMarks.
func (db *DB) HasSandboxMark(ctx context.Context, id string) (bool, error) {
	var ok bool
	if err := db.q(ctx).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sandbox_marks WHERE id = $1)`, id).Scan(&ok); err != nil {
		return false, wrap(err, "read sandbox mark")
	}
	return ok, nil
}
