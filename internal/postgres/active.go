package postgres

import (
	"context"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Active coupon statements (docs/api.md §15.2), on the partial index
// coupons_active: $1 POS system, $2 company, $3 the time before which a
// coupon has expired, $4 location (the empty string for any), $5 limit, $6 offset. The page's codes
// come from an index-only scan (the index includes every column the WHERE
// tests beyond its own predicate), so that the coupons skipped, by the
// offset or as expired or limited elsewhere, cost no heap read; only the
// page's coupons are then read. The count is an uncorrelated subquery (an
// InitPlan, run once) over the index alone; it comes with the page, so that
// both are read from one snapshot.
const (
	activeCouponsWhere = ` WHERE a.pos_system_id = $1 AND a.company_id = $2
		AND a.status = 'Issued' AND a.user_id IS NULL AND a.email IS NULL AND a.phone IS NULL
		AND (a.available_until IS NULL OR a.available_until >= $3)
		AND (a.location_ids IS NULL OR $4::text = '' OR $4::text = ANY (a.location_ids))`
	activeCountSQL = `SELECT count(*) FROM coupons a` + activeCouponsWhere
	activePageSQL  = `SELECT ` + couponCols + `, (` + activeCountSQL + `)
		FROM (SELECT a.code_norm FROM coupons a` + activeCouponsWhere + ` ORDER BY a.code_norm LIMIT $5 OFFSET $6) page
		JOIN coupons c ON c.pos_system_id = $1 AND c.company_id = $2 AND c.code_norm = page.code_norm
		ORDER BY c.code_norm`
)

// ListActiveCoupons reads one page of a location's active coupons and their
// total on the statement's generic plan (see queryGeneric); a page past the
// end (or of no coupons) counts them with the count statement alone.
func (db *DB) ListActiveCoupons(ctx context.Context, q posgate.ActiveCouponQuery) (*posgate.CouponPage, error) {
	ctx = storekit.PointRead(ctx)
	page := &posgate.CouponPage{}
	args := []any{q.POSSystemID, q.CompanyID, q.At, q.LocationID}
	if q.Limit > 0 {
		err := queryGeneric(ctx, db, activePageSQL, append(args, q.Limit, max(q.Offset, 0)), appendCouponRows(page, true))
		if err != nil {
			return nil, wrap(err, "list active coupons")
		}
	}
	if q.Limit <= 0 || (len(page.Coupons) == 0 && q.Offset > 0) {
		if err := db.q(ctx).QueryRow(ctx, activeCountSQL, args...).Scan(&page.Total); err != nil {
			return nil, wrap(err, "list active coupons")
		}
	}
	return page, nil
}
