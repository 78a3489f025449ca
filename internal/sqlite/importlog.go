package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// logImport writes the log row of an import in tx, the import's own
// transaction, just before it commits.
func (db *DB) logImport(ctx context.Context, tx *sql.Tx, posSystemID, companyID, kind string, created, updated int, started time.Time) error {
	r := posgate.NewImportRecord(ctx, posSystemID, companyID, kind, created, updated, started, db.now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO import_log (`+storekit.ImportLogColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		storekit.ImportLogArgs(r, func(t any) any { return formatTime(t.(time.Time)) })...); err != nil {
		return fmt.Errorf("sqlite: log import: %w", err)
	}
	return nil
}

// ListImports implements posgate.ImportLogStore.
func (db *DB) ListImports(ctx context.Context, posSystemID string, companyIDs []string, limit int) ([]*posgate.ImportRecord, error) {
	q, args := storekit.ImportLogList(posSystemID, companyIDs, limit, func(n int) string { return "?" + strconv.Itoa(n) })
	rows, err := db.read.QueryContext(ctx, q, args...)
	return scanAll(rows, err, "list imports", func(r *posgate.ImportRecord) []any {
		return []any{&r.Seq, &r.POSSystemID, &r.CompanyID, &r.Kind, &r.Created, &r.Updated, &r.Failed,
			timeColumn{&r.StartedAt}, timeColumn{&r.FinishedAt}, &r.ClientID, &r.PersonID, &r.Channel}
	})
}
