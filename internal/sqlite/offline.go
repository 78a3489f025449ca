package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/posgate/posgate"
)

// The offline kits' allowances and offline redemptions (docs/api.md §24).

// PutOfflineAllowance implements posgate.OfflineStore.
func (db *DB) PutOfflineAllowance(ctx context.Context, a *posgate.OfflineAllowance) error {
	_, err := db.w(ctx).ExecContext(ctx, `INSERT INTO offline_allowances (id, pos_system_id, company_id, location_id, terminal_id,
		salt, issued_at, expires_at, max_redemptions, code_hashes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.POSSystemID, a.CompanyID, a.LocationID, a.TerminalID, a.Salt, formatTime(a.IssuedAt), formatTime(a.ExpiresAt),
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
	err := db.read.QueryRowContext(ctx, `SELECT company_id, location_id, terminal_id, salt, issued_at, expires_at, max_redemptions, code_hashes
		FROM offline_allowances WHERE id = ? AND pos_system_id = ?`, id, posSystemID).Scan(&a.CompanyID, &a.LocationID, &a.TerminalID,
		&a.Salt, timeColumn{&a.IssuedAt}, timeColumn{&a.ExpiresAt}, &a.MaxRedemptions, &hashes)
	if err != nil {
		return nil, readErr(err, "find offline allowance", posgate.NotFound("offline kit", id))
	}
	a.SetHashList(hashes)
	return a, nil
}

// ListOfflineConflicts implements posgate.OfflineStore.
func (db *DB) ListOfflineConflicts(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*posgate.OfflineRedemption, int, error) {
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM offline_redemptions WHERE pos_system_id = ? AND company_id = ? AND conflict <> ''`,
		posSystemID, companyID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlite: count offline conflicts: %w", err)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT allowance_id, pos_system_id, company_id, location_id, terminal_id, transaction_id, code,
		conflict, transaction_date, recorded_at FROM offline_redemptions WHERE pos_system_id = ? AND company_id = ? AND conflict <> ''
		ORDER BY recorded_at DESC, allowance_id, slot LIMIT ? + 0 OFFSET ? + 0`, posSystemID, companyID, limit, offset)
	out, err := scanAll(rows, err, "list offline conflicts", func(r *posgate.OfflineRedemption) []any {
		return []any{&r.AllowanceID, &r.POSSystemID, &r.CompanyID, &r.LocationID, &r.TerminalID, &r.TransactionID, &r.Code,
			&r.Conflict, timeColumn{&r.SaleDate}, timeColumn{&r.RecordedAt}}
	})
	return out, total, err
}

// DeleteExpiredOfflineAllowances implements posgate.OfflineStore.
func (db *DB) DeleteExpiredOfflineAllowances(ctx context.Context, t time.Time) (int64, error) {
	res, err := db.w(ctx).ExecContext(ctx, `DELETE FROM offline_allowances WHERE expires_at < ?
		AND NOT EXISTS (SELECT 1 FROM offline_redemptions r WHERE r.allowance_id = offline_allowances.id)`, formatTime(t))
	if err != nil {
		return 0, fmt.Errorf("sqlite: sweep offline allowances: %w", err)
	}
	return res.RowsAffected()
}

// RecordOfflineRedemption implements posgate.LedgerTx: the next slot of
// the allowance, while there is one, and the code's first.
func (l *ledger) RecordOfflineRedemption(ctx context.Context, r *posgate.OfflineRedemption) (bool, error) {
	res, err := l.tx.ExecContext(ctx, `INSERT INTO offline_redemptions (allowance_id, slot, code_key, pos_system_id, company_id,
		location_id, terminal_id, transaction_id, code, conflict, transaction_date, recorded_at)
		SELECT ?1, n + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11
		FROM (SELECT COUNT(*) AS n FROM offline_redemptions WHERE allowance_id = ?1) WHERE n < ?12
		ON CONFLICT DO NOTHING`,
		r.AllowanceID, posgate.Fold(r.Code), r.POSSystemID, r.CompanyID, r.LocationID, r.TerminalID, r.TransactionID, r.Code,
		r.Conflict, formatTime(r.SaleDate), formatTime(r.RecordedAt), r.Limit)
	if err != nil {
		return false, fmt.Errorf("sqlite: record offline redemption: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: record offline redemption: %w", err)
	}
	return n == 1, nil
}
