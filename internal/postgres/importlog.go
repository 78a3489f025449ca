package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// logImport writes the log row of an import in q, the import's own
// transaction, just before it commits.
func (db *DB) logImport(ctx context.Context, q pgQuerier, posSystemID, companyID, kind string, created, updated int, started time.Time) error {
	r := posgate.NewImportRecord(ctx, posSystemID, companyID, kind, created, updated, started, db.now())
	if _, err := q.Exec(ctx, `INSERT INTO import_log (`+storekit.ImportLogColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		storekit.ImportLogArgs(r, func(t any) any { return t })...); err != nil {
		return wrap(err, "log import")
	}
	return nil
}

// ListImports implements posgate.ImportLogStore.
func (db *DB) ListImports(ctx context.Context, posSystemID string, companyIDs []string, limit int) ([]*posgate.ImportRecord, error) {
	q, args := storekit.ImportLogList(posSystemID, companyIDs, limit, func(n int) string { return "$" + strconv.Itoa(n) })
	return collect(ctx, db, "list imports", func(row pgx.Row) (*posgate.ImportRecord, error) {
		r := &posgate.ImportRecord{}
		var channel string
		if err := row.Scan(&r.Seq, &r.POSSystemID, &r.CompanyID, &r.Kind, &r.Created, &r.Updated, &r.Failed,
			&r.StartedAt, &r.FinishedAt, &r.ClientID, &r.PersonID, &channel); err != nil {
			return nil, err
		}
		r.Channel = posgate.AuditChannel(channel)
		r.StartedAt, r.FinishedAt = r.StartedAt.UTC(), r.FinishedAt.UTC()
		return r, nil
	}, q, args...)
}
