package sqlite

import (
	"context"
	"fmt"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Active coupon statements (docs/api.md §15.2), on the partial index
// coupons_active: ?1 POS system, ?2 company, ?3 the time (formatTime) before
// which a coupon has expired, ?4 location (the empty string for any), ?5 limit, ?6 offset. The page's
// codes come from the index alone (it covers every column the WHERE tests),
// so that the coupons skipped, by the offset or as expired or limited
// elsewhere, cost no table read; only the page's coupons are then read. The
// count is an uncorrelated subquery, which SQLite runs once per statement,
// over the index alone; it comes with the page, so that both are read from
// one snapshot. INDEXED BY keeps the plan off the primary key, which also
// yields code order but walks every coupon of the company.
const (
	activeCouponsWhere = ` WHERE a.pos_system_id = ?1 AND a.company_id = ?2
		AND a.status = 'Issued' AND a.user_id IS NULL AND a.email IS NULL AND a.phone IS NULL
		AND (a.available_until IS NULL OR a.available_until >= ?3)
		AND (a.location_ids IS NULL OR ?4 = '' OR EXISTS (SELECT 1 FROM json_each(a.location_ids) WHERE value = ?4))`
	activeCountSQL = `SELECT COUNT(*) FROM coupons a INDEXED BY coupons_active` + activeCouponsWhere
	activePageSQL  = `WITH page (code_norm) AS (SELECT a.code_norm FROM coupons a INDEXED BY coupons_active` + activeCouponsWhere + `
			ORDER BY a.code_norm LIMIT ?5 + 0 OFFSET ?6 + 0)
		SELECT ` + couponCols + `, (` + activeCountSQL + `)
		FROM page CROSS JOIN coupons c ON c.pos_system_id = ?1 AND c.company_id = ?2 AND c.code_norm = page.code_norm
		ORDER BY c.code_norm`
)

// ListActiveCoupons reads one page of a location's active coupons and their
// total; a page past the end (or of no coupons) counts them with the count
// statement alone.
func (db *DB) ListActiveCoupons(ctx context.Context, q posgate.ActiveCouponQuery) (*posgate.CouponPage, error) {
	ctx = storekit.PointRead(ctx)
	page := &posgate.CouponPage{}
	args := []any{q.POSSystemID, q.CompanyID, formatTime(q.At), q.LocationID}
	if q.Limit > 0 {
		rows, err := db.coupons.activePage.QueryContext(ctx, append(args, q.Limit, max(q.Offset, 0))...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list active coupons: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			c := &posgate.Coupon{}
			if err := rows.Scan(append(couponDest(c), &page.Total)...); err != nil {
				return nil, fmt.Errorf("sqlite: list active coupons: %w", err)
			}
			page.Coupons = append(page.Coupons, c)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: list active coupons: %w", err)
		}
	}
	if q.Limit <= 0 || (len(page.Coupons) == 0 && q.Offset > 0) {
		if err := db.coupons.activeCount.QueryRowContext(ctx, args...).Scan(&page.Total); err != nil {
			return nil, fmt.Errorf("sqlite: list active coupons: %w", err)
		}
	}
	return page, nil
}
