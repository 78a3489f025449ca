package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
)

// Active coupon statements (docs/api.md §15.2), on the partial index
// coupons_active: $1 POS system, $2 company, $3 the time before which a
// coupon has expired, $4 location, $5 limit, $6 offset. The count is an
// uncorrelated subquery (an InitPlan, run once) that reads the index alone;
// it comes with the page, so that both are read from one snapshot.
const (
	activeCouponsWhere = ` WHERE c.pos_system_id = $1 AND c.company_id = $2
		AND c.status = 'Issued' AND c.user_id IS NULL AND c.email IS NULL AND c.phone IS NULL
		AND (c.available_until IS NULL OR c.available_until >= $3)
		AND (c.location_ids IS NULL OR $4::text = ANY (c.location_ids))`
	activeCountSQL = `SELECT count(*) FROM coupons c` + activeCouponsWhere
	activePageSQL  = `SELECT ` + couponCols + `, (` + activeCountSQL + `) FROM coupons c` + activeCouponsWhere + `
		ORDER BY c.code_norm LIMIT $5 OFFSET $6`
)

// ListActiveCoupons reads one page of a location's active coupons and their
// total on the statement's generic plan (see queryGeneric); a page past the
// end (or of no coupons) counts them with the count statement alone.
func (db *DB) ListActiveCoupons(ctx context.Context, q posgate.ActiveCouponQuery) (*posgate.CouponPage, error) {
	page := &posgate.CouponPage{}
	args := []any{q.POSSystemID, q.CompanyID, q.At, q.LocationID}
	if q.Limit > 0 {
		err := queryGeneric(ctx, db, activePageSQL, append(args, q.Limit, max(q.Offset, 0)), func(rows pgx.Rows) error {
			var err error
			page.Coupons, err = pgx.AppendRows(page.Coupons, rows, func(r pgx.CollectableRow) (*posgate.Coupon, error) {
				c := &posgate.Coupon{}
				var info []byte
				if err := r.Scan(&c.POSSystemID, &c.CompanyID, &c.Code, &c.RewardProvider, &c.Name, &c.Title, &c.PictureURL, &c.AvailableUntil,
					&c.Status, &info, &c.UserID, &c.Email, &c.Phone, &c.LocationIDs, &c.CreatedAt, &c.UpdatedAt, &page.Total); err != nil {
					return nil, err
				}
				return c, decodeInfo(c, info)
			})
			return err
		})
		if err != nil {
			return nil, wrap(err, "list active coupons")
		}
	}
	if q.Limit <= 0 || (len(page.Coupons) == 0 && q.Offset > 0) {
		if err := db.pool.QueryRow(ctx, activeCountSQL, args...).Scan(&page.Total); err != nil {
			return nil, wrap(err, "list active coupons")
		}
	}
	return page, nil
}
