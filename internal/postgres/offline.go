package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
)

// The offline kits' allowances and offline redemptions (docs/api.md §24).

// PutOfflineAllowance implements posgate.OfflineStore.
func (db *DB) PutOfflineAllowance(ctx context.Context, a *posgate.OfflineAllowance) error {
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO offline_allowances (id, pos_system_id, company_id, location_id, terminal_id,
		salt, issued_at, expires_at, max_redemptions, code_hashes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		a.ID, a.POSSystemID, a.CompanyID, a.LocationID, a.TerminalID, a.Salt, a.IssuedAt, a.ExpiresAt,
		a.MaxRedemptions, a.HashList())
	if err == nil {
		return nil
	}
	return writeErr(err, "put offline allowance", posgate.Errorf(posgate.ECONFLICT, "offline allowance %q exists", a.ID), nil)
}

// FindOfflineAllowance implements posgate.OfflineStore.
func (db *DB) FindOfflineAllowance(ctx context.Context, posSystemID, id string) (*posgate.OfflineAllowance, error) {
	a := &posgate.OfflineAllowance{ID: id, POSSystemID: posSystemID}
	var hashes string
	err := db.q(ctx).QueryRow(ctx, `SELECT company_id, location_id, terminal_id, salt, issued_at, expires_at, max_redemptions, code_hashes
		FROM offline_allowances WHERE id = $1 AND pos_system_id = $2`, id, posSystemID).Scan(&a.CompanyID, &a.LocationID, &a.TerminalID,
		&a.Salt, &a.IssuedAt, &a.ExpiresAt, &a.MaxRedemptions, &hashes)
	if err != nil {
		return nil, readErr(err, "find offline allowance", posgate.NotFound("offline kit", id))
	}
	a.IssuedAt, a.ExpiresAt = a.IssuedAt.UTC(), a.ExpiresAt.UTC()
	a.SetHashList(hashes)
	return a, nil
}

// ListOfflineConflicts implements posgate.OfflineStore.
func (db *DB) ListOfflineConflicts(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*posgate.OfflineRedemption, int, error) {
	var total int
	if err := db.q(ctx).QueryRow(ctx, `SELECT COUNT(*) FROM offline_redemptions WHERE pos_system_id = $1 AND company_id = $2 AND conflict <> ''`,
		posSystemID, companyID).Scan(&total); err != nil {
		return nil, 0, wrap(err, "count offline conflicts")
	}
	out, err := collect(ctx, db, "list offline conflicts", func(row pgx.Row) (*posgate.OfflineRedemption, error) {
		r := &posgate.OfflineRedemption{}
		err := row.Scan(&r.AllowanceID, &r.POSSystemID, &r.CompanyID, &r.LocationID, &r.TerminalID, &r.TransactionID, &r.Code,
			&r.Conflict, &r.SaleDate, &r.RecordedAt)
		r.SaleDate, r.RecordedAt = r.SaleDate.UTC(), r.RecordedAt.UTC()
		return r, err
	}, `SELECT allowance_id, pos_system_id, company_id, location_id, terminal_id, transaction_id, code,
		conflict, transaction_date, recorded_at FROM offline_redemptions WHERE pos_system_id = $1 AND company_id = $2 AND conflict <> ''
		ORDER BY recorded_at DESC, allowance_id, slot LIMIT $3 OFFSET $4`, posSystemID, companyID, limit, offset)
	return out, total, err
}

// DeleteExpiredOfflineAllowances implements posgate.OfflineStore.
func (db *DB) DeleteExpiredOfflineAllowances(ctx context.Context, t time.Time) (int64, error) {
	tag, err := db.q(ctx).Exec(ctx, `DELETE FROM offline_allowances a WHERE a.expires_at < $1
		AND NOT EXISTS (SELECT 1 FROM offline_redemptions r WHERE r.allowance_id = a.id)`, t)
	if err != nil {
		return 0, wrap(err, "sweep offline allowances")
	}
	return tag.RowsAffected(), nil
}

// RecordOfflineRedemption implements posgate.LedgerTx: the next slot of
// the allowance, while there is one, and the code's first. Two
// transactions taking one slot at once: the later waits for the earlier,
// writes nothing, and tries the next slot, unless the earlier filled the
// allowance or took the code.
func (l *ledger) RecordOfflineRedemption(ctx context.Context, r *posgate.OfflineRedemption) (bool, error) {
	code := posgate.Fold(r.Code)
	for range r.Limit + 1 {
		n, err := l.exec(ctx, "record offline redemption", `INSERT INTO offline_redemptions (allowance_id, slot, code_key, pos_system_id,
			company_id, location_id, terminal_id, transaction_id, code, conflict, transaction_date, recorded_at)
			SELECT $1::text, c.n + 1, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::timestamptz, $11::timestamptz
			FROM (SELECT COUNT(*)::integer AS n FROM offline_redemptions WHERE allowance_id = $1::text) c WHERE c.n < $12::integer
			ON CONFLICT DO NOTHING`,
			r.AllowanceID, code, r.POSSystemID, r.CompanyID, r.LocationID, r.TerminalID, r.TransactionID, r.Code,
			r.Conflict, r.SaleDate, r.RecordedAt, r.Limit)
		if err != nil || n == 1 {
			return n == 1, err
		}
		var full, taken bool
		err = l.q().QueryRow(ctx, `SELECT COUNT(*) >= $2, COALESCE(bool_or(code_key = $3), false) FROM offline_redemptions WHERE allowance_id = $1`,
			r.AllowanceID, r.Limit, code).Scan(&full, &taken)
		if err != nil || full || taken {
			return false, wrap(err, "record offline redemption")
		}
	}
	return false, nil
}
