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
