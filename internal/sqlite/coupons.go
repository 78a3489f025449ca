package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Column lists of coupons and loyalty users, with the *Dest functions that
// scan them in the same order.
const (
	couponCols = `c.pos_system_id, c.company_id, c.code, c.reward_provider, c.name, c.title, c.picture_url,
		c.available_until, c.status, c.info, c.user_id, c.email, c.phone, c.location_ids, c.created_at, c.updated_at, c.promotion_id`
	userCols = `u.pos_system_id, u.company_id, u.user_id, u.first_name, u.last_name, u.gender, u.phone, u.email,
		u.stamps, u.points, u.created_at, u.updated_at`
	// cardCols are a loyalty user's columns of posgate.LoyaltyCard, scanned
	// by cardDest.
	cardCols = `u.user_id, u.first_name, u.last_name, u.gender, u.phone, u.email, u.stamps, u.points`
)

// Coupon search statements, one per criterion that selects the candidate
// coupons through an index (code, else e-mail, else phone); the other
// criteria filter the candidates. The owners' part goes from the user's
// index to the coupons, and the candidates drive the final join (CROSS JOIN
// and INDEXED BY fix that order: without statistics the planner would walk
// the company's coupons). ?1 POS system, ?2 JSON array of company
// ids, ?3 folded code, ?4 folded e-mail, ?5 phone digits (each empty when
// not given), ?6 location (empty for any), ?7 limit, ?8 offset. Each has a
// twin for a search of one company (a search with posLocationId, or a POS
// system of one company), whose ?2 is the company id itself: the JSON
// array's table and the IN over it cost a search by code a fifth of its
// time. The page carries no count: storekit.PageTotal tells the total
// from the page, and only a full page is counted (a window count over the
// rows cost every search its materialisation).
//
// A LIMIT or OFFSET that is a bare parameter makes SQLite's planner look at
// the bound value, and SQLite then re-prepares the statement at every run
// (seven times the cost of the search by code); "?7 + 0" is an expression
// the planner leaves alone. TestNoBareLimitParameters keeps it so.
const (
	couponSearchHead = `WITH companies (company_id) AS (SELECT value FROM json_each(?2)), hits (company_id, code_norm) AS (`
	// couponSearchTail joins the candidates to their coupons and keeps those
	// that meet the other criteria: ?6 and the filters that follow it (the
	// criterion that selected the candidates needs no filter).
	couponSearchTail = `) SELECT ` + couponCols + `
		FROM hits CROSS JOIN coupons c ON c.pos_system_id = ?1 AND c.company_id = hits.company_id AND c.code_norm = hits.code_norm
		WHERE (?6 = '' OR c.location_ids IS NULL OR EXISTS (SELECT 1 FROM json_each(c.location_ids) WHERE value = ?6))`
	couponSearchOrder = ` ORDER BY c.code_norm, c.company_id
		LIMIT ?7 + 0 OFFSET ?8 + 0`
	// The filters of the criteria: the owner is read only when the coupon's
	// own e-mail or phone does not decide (a LEFT JOIN of the owner looked
	// every candidate's owner up, which the search by e-mail or phone did
	// not need at all).
	couponByCodeFilter  = ` AND (?3 = '' OR c.code_norm = ?3)`
	couponByEmailFilter = ` AND (?4 = '' OR c.email_norm = ?4 OR EXISTS (SELECT 1 FROM loyalty_users u
		WHERE u.pos_system_id = c.pos_system_id AND u.company_id = c.company_id AND u.user_id = c.user_id AND u.email_norm = ?4))`
	couponByPhoneFilter = ` AND (?5 = '' OR c.phone_digits = ?5 OR EXISTS (SELECT 1 FROM loyalty_users u
		WHERE u.pos_system_id = c.pos_system_id AND u.company_id = c.company_id AND u.user_id = c.user_id AND u.phone_digits = ?5))`
	// couponSearchOne is the head of a one-company twin.
	couponSearchOne = `WITH hits (company_id, code_norm) AS (`
	couponsByCode   = `SELECT company_id, code_norm FROM coupons
		WHERE pos_system_id = ?1 AND company_id IN (SELECT company_id FROM companies) AND code_norm = ?3`
	couponsByEmail = `SELECT company_id, code_norm FROM coupons
			WHERE pos_system_id = ?1 AND company_id IN (SELECT company_id FROM companies) AND email_norm = ?4
		UNION SELECT c2.company_id, c2.code_norm FROM loyalty_users u2 INDEXED BY loyalty_users_by_email
			CROSS JOIN coupons c2 INDEXED BY coupons_by_user ON c2.pos_system_id = u2.pos_system_id AND c2.company_id = u2.company_id AND c2.user_id = u2.user_id
			WHERE u2.pos_system_id = ?1 AND u2.company_id IN (SELECT company_id FROM companies) AND u2.email_norm = ?4`
	couponsByPhone = `SELECT company_id, code_norm FROM coupons
			WHERE pos_system_id = ?1 AND company_id IN (SELECT company_id FROM companies) AND phone_digits = ?5
		UNION SELECT c2.company_id, c2.code_norm FROM loyalty_users u2 INDEXED BY loyalty_users_by_phone
			CROSS JOIN coupons c2 INDEXED BY coupons_by_user ON c2.pos_system_id = u2.pos_system_id AND c2.company_id = u2.company_id AND c2.user_id = u2.user_id
			WHERE u2.pos_system_id = ?1 AND u2.company_id IN (SELECT company_id FROM companies) AND u2.phone_digits = ?5`

	findCouponSQL = `SELECT ` + couponCols + ` FROM coupons c WHERE c.pos_system_id = ? AND c.company_id = ? AND c.code_norm = ?`

	// The lookups of a keyword search (storekit.SearchUserIDs) in
	// loyalty_user_terms: ?1 POS system, ?2 company. termExact: the users
	// holding term ?3, in rank order, at most ?4. termCount: how many rows
	// the terms in [?3, ?4) have, counting up to ?5; termRange, run when
	// they are few: their distinct users, in rank order, at most ?5.
	// termBucket: the distinct users holding
	// a term in [?4, ?5) of bucket ?3 (the index's expression, spelled
	// alike), in rank order, at most ?6.
	termExactSQL = `SELECT last_norm, first_norm, user_id, user_key FROM loyalty_user_terms
		WHERE pos_system_id = ?1 AND company_id = ?2 AND term = ?3 ORDER BY last_norm, first_norm, user_id LIMIT ?4 + 0`
	termCountSQL = `SELECT count(*) FROM (SELECT 1 FROM loyalty_user_terms
		WHERE pos_system_id = ?1 AND company_id = ?2 AND term >= ?3 AND term < ?4 LIMIT ?5 + 0)`
	termRangeSQL = `SELECT DISTINCT last_norm, first_norm, user_id, user_key FROM loyalty_user_terms
		WHERE pos_system_id = ?1 AND company_id = ?2 AND term >= ?3 AND term < ?4
		ORDER BY last_norm, first_norm, user_id LIMIT ?5 + 0`
	termBucketSQL = `SELECT DISTINCT last_norm, first_norm, user_id, user_key FROM loyalty_user_terms INDEXED BY loyalty_user_terms_bucket
		WHERE pos_system_id = ?1 AND company_id = ?2 AND substr(term, 1, 3 + (term < char(4))) = ?3 AND term >= ?4 AND term < ?5
		ORDER BY last_norm, first_norm, user_id LIMIT ?6 + 0`
	// usersByIDSQL reads the users of a search's answer: ?1 their rowids
	// (user_key) as a JSON array, in its order (CROSS JOIN keeps the array
	// the outer loop). It reads only the columns of the answer
	// (posgate.LoyaltyCard, cardCols): no times to parse, no tenancy that
	// the caller already holds.
	usersByIDSQL = `SELECT ` + cardCols + ` FROM json_each(?1) j CROSS JOIN loyalty_users u ON u.user_key = j.value`
	findUserSQL  = `SELECT ` + userCols + ` FROM loyalty_users u WHERE u.pos_system_id = ? AND u.company_id = ? AND u.user_id = ?`

	insertCouponSQL = `INSERT INTO coupons (pos_system_id, company_id, code_norm, code, reward_provider, name, title, picture_url,
		available_until, status, info, user_id, email, email_norm, phone, phone_digits, location_ids, created_at, updated_at, promotion_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertUserSQL = `INSERT INTO loyalty_users (pos_system_id, company_id, user_id, first_name, last_name, gender, phone, email,
		stamps, points, first_norm, last_norm, email_norm, phone_digits, search_terms, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// couponStmts are the coupon feature's statements on the hot paths
// (docs/api.md §5, §6), prepared once by Open.
type couponStmts struct {
	searchByCode, searchByEmail, searchByPhone  *sql.Stmt
	oneByCode, oneByEmail, oneByPhone           *sql.Stmt // of one company: ?2 its id
	findCoupon                                  *sql.Stmt
	termExact, termCount, termRange, termBucket *sql.Stmt
	usersByID                                   *sql.Stmt
	activePage, activeCount                     *sql.Stmt // active.go
}

// prepareCoupons prepares the coupon feature's statements on the read pool.
func (db *DB) prepareCoupons(ctx context.Context) error {
	s := &couponStmts{}
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.searchByCode, couponSearchHead + couponsByCode + couponSearchTail + couponByEmailFilter + couponByPhoneFilter + couponSearchOrder},
		{&s.searchByEmail, couponSearchHead + couponsByEmail + couponSearchTail + couponByCodeFilter + couponByPhoneFilter + couponSearchOrder},
		{&s.searchByPhone, couponSearchHead + couponsByPhone + couponSearchTail + couponByCodeFilter + couponByEmailFilter + couponSearchOrder},
		{&s.oneByCode, couponSearchOne + oneCompany(couponsByCode) + couponSearchTail + couponByEmailFilter + couponByPhoneFilter + couponSearchOrder},
		{&s.oneByEmail, couponSearchOne + oneCompany(couponsByEmail) + couponSearchTail + couponByCodeFilter + couponByPhoneFilter + couponSearchOrder},
		{&s.oneByPhone, couponSearchOne + oneCompany(couponsByPhone) + couponSearchTail + couponByCodeFilter + couponByEmailFilter + couponSearchOrder},
		{&s.findCoupon, findCouponSQL},
		{&s.termExact, termExactSQL},
		{&s.termCount, termCountSQL},
		{&s.termRange, termRangeSQL},
		{&s.termBucket, termBucketSQL},
		{&s.usersByID, usersByIDSQL},
		{&s.activePage, activePageSQL},
		{&s.activeCount, activeCountSQL},
	} {
		var err error
		if *p.stmt, err = db.read.PrepareContext(ctx, p.query); err != nil {
			s.close()
			return fmt.Errorf("sqlite: prepare %q: %w", p.query, err)
		}
	}
	db.coupons = s
	return nil
}

// oneCompany turns a candidates' statement of the companies in ?2's JSON
// array into its twin of the one company ?2.
func oneCompany(candidates string) string {
	return strings.ReplaceAll(candidates, "company_id IN (SELECT company_id FROM companies)", "company_id = ?2")
}

// close releases the statements that were prepared.
func (s *couponStmts) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, st := range []*sql.Stmt{s.searchByCode, s.searchByEmail, s.searchByPhone, s.oneByCode, s.oneByEmail, s.oneByPhone, s.findCoupon, s.termExact, s.termCount, s.termRange, s.termBucket, s.usersByID, s.activePage, s.activeCount} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// optString scans a nullable text column into a *string.
type optString struct{ p **string }

// Scan implements sql.Scanner.
func (c optString) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.p = nil
	case string:
		*c.p = &v
	default:
		return fmt.Errorf("text column holds %T", src)
	}
	return nil
}

// emptyString scans a nullable text column into a string, NULL as "".
type emptyString struct{ p *string }

// Scan implements sql.Scanner.
func (c emptyString) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.p = ""
	case string:
		*c.p = v
	default:
		return fmt.Errorf("text column holds %T", src)
	}
	return nil
}

// optTime scans a nullable time column into a *time.Time.
type optTime struct{ p **time.Time }

// Scan implements sql.Scanner.
func (c optTime) Scan(src any) error {
	if src == nil {
		*c.p = nil
		return nil
	}
	var t time.Time
	if err := (timeColumn{&t}).Scan(src); err != nil {
		return err
	}
	*c.p = &t
	return nil
}

// jsonColumn scans a nullable JSON text column into *p; NULL leaves the
// zero value (a nil slice).
type jsonColumn[T any] struct{ p *T }

// Scan implements sql.Scanner.
func (c jsonColumn[T]) Scan(src any) error {
	var zero T
	*c.p = zero
	switch v := src.(type) {
	case nil:
		return nil
	case string:
		return json.Unmarshal([]byte(v), c.p)
	default:
		return fmt.Errorf("JSON column holds %T", src)
	}
}

func couponDest(c *posgate.Coupon) []any {
	return []any{&c.POSSystemID, &c.CompanyID, &c.Code, &c.RewardProvider, optString{&c.Name}, optString{&c.Title}, optString{&c.PictureURL},
		optTime{&c.AvailableUntil}, &c.Status, jsonColumn[[]posgate.CouponInfo]{&c.Info},
		emptyString{&c.UserID}, emptyString{&c.Email}, emptyString{&c.Phone}, jsonColumn[[]string]{&c.LocationIDs},
		timeColumn{&c.CreatedAt}, timeColumn{&c.UpdatedAt}, emptyString{&c.PromotionID}}
}

func userDest(u *posgate.LoyaltyUser) []any {
	return []any{&u.POSSystemID, &u.CompanyID, &u.ID, &u.FirstName, &u.LastName, &u.Gender, &u.Phone, &u.Email,
		&u.Stamps, &u.Points, timeColumn{&u.CreatedAt}, timeColumn{&u.UpdatedAt}}
}

func cardDest(c *posgate.LoyaltyCard) []any {
	return []any{&c.ID, &c.FirstName, &c.LastName, &c.Gender, &c.Phone, &c.Email, &c.Stamps, &c.Points}
}

// jsonArg stores a nil slice as NULL and any other as JSON text.
func jsonArg[T any](v []T) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sqlite: encode JSON column: %w", err)
	}
	return string(b), nil
}

// optTimeArg stores a nil time as NULL.
func optTimeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return formatTime(*t)
}

// CreateCoupon normalises c, stores it with its location limits and sets
// its CreatedAt and UpdatedAt.
func (db *DB) CreateCoupon(ctx context.Context, c *posgate.Coupon) error {
	return db.inTx(ctx, "create coupon", func(tx *sql.Tx) error {
		ins, err := db.newCouponInserter(ctx, tx)
		if err != nil {
			return err
		}
		defer ins.close()
		return ins.insert(ctx, c)
	})
}

// ImportCoupons stores the coupons of seq in one transaction with one set
// of prepared statements.
func (db *DB) ImportCoupons(ctx context.Context, seq iter.Seq2[*posgate.Coupon, error]) (int, error) {
	n := 0
	err := db.bulk(ctx, "import coupons", func(tx *sql.Tx) error {
		ins, err := db.newCouponInserter(ctx, tx)
		if err != nil {
			return err
		}
		defer ins.close()
		for c, err := range seq {
			if err != nil {
				return err
			}
			if err := ins.insert(ctx, c); err != nil {
				return posgate.ItemError(n+1, err)
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// bulkCacheKiB is the page cache of the write connection during an import:
// a million rows touch far more index pages than the default 2 MiB holds,
// and re-reading them dominated the time.
const bulkCacheKiB = 256 << 10

// bulk runs fn in a write transaction with a large page cache, restoring the
// cache size afterwards. (The write pool has one connection, so the pragmas
// reach the transaction's connection.)
func (db *DB) bulk(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	var kib int64
	if err := db.w(ctx).QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&kib); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if _, err := db.w(ctx).ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, -bulkCacheKiB)); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	defer db.w(ctx).ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA cache_size = %d`, kib))
	return db.inTx(ctx, op, fn)
}

// inTx runs fn in a write transaction and commits when it returns nil.
// Inside Atomic, fn runs in Atomic's transaction, which commits or rolls
// back as a whole.
func (db *DB) inTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	if tx := db.ambientTx(ctx); tx != nil {
		return fn(tx)
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	db.outbox.Committed()
	return nil
}

// couponInserter inserts coupons within one transaction. Its company
// checker remembers each company's locations, so that a bulk import checks
// location limits without a query per coupon.
type couponInserter struct {
	db     *DB
	outbox *sql.Stmt // the outbox insert, bound once an event needs it
	tx     *sql.Tx
	coupon *sql.Stmt
	now    time.Time
	check  *storekit.CompanyChecker
}

func (db *DB) newCouponInserter(ctx context.Context, tx *sql.Tx) (*couponInserter, error) {
	ins := &couponInserter{db: db, tx: tx, now: db.timestamp()}
	ins.check = storekit.NewCompanyChecker(ins.companyLocations)
	var err error
	if ins.coupon, err = tx.PrepareContext(ctx, insertCouponSQL); err != nil {
		return nil, fmt.Errorf("sqlite: prepare coupon insert: %w", err)
	}
	return ins, nil
}

func (ins *couponInserter) close() { ins.coupon.Close() }

// companyLocations reads the locations of a company in the inserter's
// transaction, for its company checker.
func (ins *couponInserter) companyLocations(ctx context.Context, posSystemID, companyID string) (map[string]bool, bool, error) {
	var exists bool
	if err := ins.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM companies WHERE pos_system_id = ? AND company_id = ?)`,
		posSystemID, companyID).Scan(&exists); err != nil {
		return nil, false, fmt.Errorf("sqlite: create coupon: %w", err)
	}
	if !exists {
		return nil, false, nil
	}
	rows, err := ins.tx.QueryContext(ctx, `SELECT location_id FROM locations WHERE pos_system_id = ? AND company_id = ?`, posSystemID, companyID)
	if err != nil {
		return nil, false, fmt.Errorf("sqlite: create coupon: %w", err)
	}
	defer rows.Close()
	locs := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, false, fmt.Errorf("sqlite: create coupon: %w", err)
		}
		locs[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("sqlite: create coupon: %w", err)
	}
	return locs, true, nil
}

// insert normalises, checks and stores one coupon.
func (ins *couponInserter) insert(ctx context.Context, c *posgate.Coupon) error {
	if err := ins.check.Coupon(ctx, c); err != nil {
		return err
	}
	info, err := jsonArg(c.Info)
	if err != nil {
		return err
	}
	locations, err := jsonArg(c.LocationIDs)
	if err != nil {
		return err
	}
	keys := c.Keys()
	now := formatTime(ins.now)
	if _, err := ins.coupon.ExecContext(ctx, c.POSSystemID, c.CompanyID, keys.Code, c.Code, c.RewardProvider,
		c.Name, c.Title, c.PictureURL, optTimeArg(c.AvailableUntil), c.Status, info,
		storekit.NullIfEmpty(c.UserID), storekit.NullIfEmpty(c.Email), storekit.NullIfEmpty(keys.Email),
		storekit.NullIfEmpty(c.Phone), storekit.NullIfEmpty(keys.Phone), locations, now, now, storekit.NullIfEmpty(c.PromotionID)); err != nil {
		// The company exists (checked above), so a missing parent is the
		// loyalty user.
		return writeErr(err, "create coupon", posgate.AlreadyExists("coupon", c.Code), posgate.NotFound("loyalty user", c.UserID))
	}
	c.CreatedAt, c.UpdatedAt = ins.now, ins.now
	if c.Status == posgate.CouponIssued {
		if ins.outbox == nil {
			ins.outbox = ins.tx.StmtContext(ctx, ins.db.insertOutbox)
		}
		if _, err := ins.db.emit(ctx, ins.outbox, posgate.CouponIssuedEvent(c, ins.now)); err != nil {
			return err
		}
	}
	return nil
}

// FindCoupon returns the coupon whose code folds like code.
func (db *DB) FindCoupon(ctx context.Context, posSystemID, companyID, code string) (*posgate.Coupon, error) {
	ctx = storekit.PointRead(ctx)
	c, err := scanRow(db.coupons.findCoupon.QueryRowContext(ctx, posSystemID, companyID, posgate.Fold(code)), couponDest)
	if err != nil {
		return nil, readErr(err, "find coupon", posgate.NotFound("coupon", code))
	}
	return c, nil
}

// ChangeCouponStatus redeems or cancels an Issued coupon that has not
// expired by the store's clock.
func (db *DB) ChangeCouponStatus(ctx context.Context, posSystemID, companyID, code string, to posgate.CouponStatus) (*posgate.Coupon, error) {
	if err := posgate.CheckStatusChange(to); err != nil {
		return nil, err
	}
	now := db.timestamp()
	var c *posgate.Coupon
	err := db.inTx(ctx, "change coupon status", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE coupons SET status = ?, updated_at = ?
			WHERE pos_system_id = ? AND company_id = ? AND code_norm = ? AND status = 'Issued'
			AND (available_until IS NULL OR available_until >= ?)`,
			to, formatTime(now), posSystemID, companyID, posgate.Fold(code), formatTime(now))
		if err != nil {
			return fmt.Errorf("sqlite: change coupon status: %w", err)
		}
		changed, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: change coupon status: %w", err)
		}
		c, err = scanRow(tx.QueryRowContext(ctx, findCouponSQL, posSystemID, companyID, posgate.Fold(code)), couponDest)
		if err != nil {
			return readErr(err, "change coupon status", posgate.NotFound("coupon", code))
		}
		if changed == 0 {
			return c.StatusConflict(to, now)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// SearchCoupons runs the search statement of the most selective criterion
// given (its one-company twin for one company); the total comes from the
// page unless the page is full or past the end (storekit.PageTotal).
func (db *DB) SearchCoupons(ctx context.Context, q posgate.CouponQuery) (*posgate.CouponPage, error) {
	keys, err := q.Keys()
	if err != nil {
		return nil, err
	}
	page := &posgate.CouponPage{}
	if len(q.CompanyIDs) == 0 || q.Limit <= 0 {
		return page, nil
	}
	one := len(q.CompanyIDs) == 1
	var stmt *sql.Stmt
	switch {
	case keys.Code != "":
		stmt = pick(one, db.coupons.oneByCode, db.coupons.searchByCode)
	case keys.Email != "":
		stmt = pick(one, db.coupons.oneByEmail, db.coupons.searchByEmail)
	default: // Keys refuses a query without code, e-mail and phone
		stmt = pick(one, db.coupons.oneByPhone, db.coupons.searchByPhone)
	}
	companies := q.CompanyIDs[0]
	if !one {
		b, err := json.Marshal(q.CompanyIDs)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search coupons: %w", err)
		}
		companies = string(b)
	}
	args := [8]any{q.POSSystemID, companies, keys.Code, keys.Email, keys.Phone, q.LocationID, q.Limit, max(q.Offset, 0)}
	// A page is index reads of a few rows, as a point read is (a full
	// page's count below stays cancellable).
	rows, err := stmt.QueryContext(storekit.PointRead(ctx), args[:]...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search coupons: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c := &posgate.Coupon{}
		if err := rows.Scan(couponDest(c)...); err != nil {
			return nil, fmt.Errorf("sqlite: search coupons: %w", err)
		}
		page.Coupons = append(page.Coupons, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search coupons: %w", err)
	}
	var ok bool
	if page.Total, ok = storekit.PageTotal(q.Offset, q.Limit, len(page.Coupons)); !ok {
		// A full page, or past the end: count the rows (no limit, none skipped).
		args[6], args[7] = -1, 0
		if page.Total, err = countRows(ctx, stmt, args[:]); err != nil {
			return nil, fmt.Errorf("sqlite: search coupons: %w", err)
		}
	}
	return page, nil
}

// pick is a when cond, else b.
func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// countRows counts the rows stmt answers, reading none of their columns.
func countRows(ctx context.Context, stmt *sql.Stmt, args []any) (int, error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

// CreateLoyaltyUser stores u and sets its CreatedAt and UpdatedAt.
func (db *DB) CreateLoyaltyUser(ctx context.Context, u *posgate.LoyaltyUser) error {
	return db.inTx(ctx, "create loyalty user", func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, insertUserSQL)
		if err != nil {
			return fmt.Errorf("sqlite: create loyalty user: %w", err)
		}
		defer stmt.Close()
		return db.insertUser(ctx, stmt, u, db.timestamp())
	})
}

// ImportLoyaltyUsers stores the users of seq in one transaction with one
// prepared statement. Their search terms are inserted once at the end, in
// the order of the terms' primary key, instead of by the insert trigger
// row by row in random places: the trigger is dropped for the transaction
// and recreated from its stored definition before the commit, so that
// readers never see it missing. An import of bulkTermsAfter users or more
// also drops the terms' bucket index and builds it again after (a sort),
// rather than insert millions of entries at random.
func (db *DB) ImportLoyaltyUsers(ctx context.Context, seq iter.Seq2[*posgate.LoyaltyUser, error]) (int, error) {
	n := 0
	now := db.timestamp()
	err := db.bulk(ctx, "import loyalty users", func(tx *sql.Tx) error {
		var last int64
		var trigger, index string
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(user_key), 0),
			(SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = 'loyalty_user_terms_insert'),
			(SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'loyalty_user_terms_bucket') FROM loyalty_users`).Scan(&last, &trigger, &index); err != nil {
			return fmt.Errorf("sqlite: import loyalty users: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER loyalty_user_terms_insert`); err != nil {
			return fmt.Errorf("sqlite: import loyalty users: %w", err)
		}
		stmt, err := tx.PrepareContext(ctx, insertUserSQL)
		if err != nil {
			return fmt.Errorf("sqlite: import loyalty users: %w", err)
		}
		defer stmt.Close()
		for u, err := range seq {
			if err != nil {
				return err
			}
			if err := db.insertUser(ctx, stmt, u, now); err != nil {
				return posgate.ItemError(n+1, err)
			}
			n++
		}
		steps := []string{
			// New rows have keys above the old maximum: there is one writer.
			`INSERT INTO loyalty_user_terms (pos_system_id, company_id, term, last_norm, first_norm, user_id, user_key)
				SELECT u.pos_system_id, u.company_id, j.value, u.last_norm, u.first_norm, u.user_id, u.user_key
				FROM loyalty_users u, json_each(u.search_terms) j WHERE u.user_key > ` + strconv.FormatInt(last, 10) + `
				ORDER BY 1, 2, 3, 4, 5, 6`,
			trigger,
		}
		if n >= bulkTermsAfter {
			steps = append([]string{`DROP INDEX loyalty_user_terms_bucket`}, append(steps, index)...)
		}
		for _, q := range steps {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("sqlite: import loyalty users: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// bulkTermsAfter is the size of a loyalty-user import from which the
// terms' bucket index is built again rather than kept up to date.
var bulkTermsAfter = 100_000

// searchTerms is u's search terms as the search_terms column holds them.
func searchTerms(u *posgate.LoyaltyUser) string {
	terms := u.SearchTerms()
	if terms == nil {
		return "[]" // not null, which json_each would read as one NULL term
	}
	b, err := json.Marshal(terms)
	if err != nil { // a []string always marshals
		panic(err)
	}
	return string(b)
}

func (db *DB) insertUser(ctx context.Context, stmt *sql.Stmt, u *posgate.LoyaltyUser, now time.Time) error {
	at := formatTime(now)
	keys := u.Keys()
	if _, err := stmt.ExecContext(ctx, u.POSSystemID, u.CompanyID, u.ID, u.FirstName, u.LastName, u.Gender, u.Phone, u.Email,
		u.Stamps, u.Points, keys.First, keys.Last, keys.Email, keys.Digits, searchTerms(u), at, at); err != nil {
		return writeErr(err, "create loyalty user", posgate.AlreadyExists("loyalty user", u.ID), posgate.NotFound("company", u.CompanyID))
	}
	u.CreatedAt, u.UpdatedAt = now, now
	return nil
}

// FindLoyaltyUser returns one loyalty user of a company.
func (db *DB) FindLoyaltyUser(ctx context.Context, posSystemID, companyID, id string) (*posgate.LoyaltyUser, error) {
	u, err := scanRow(db.read.QueryRowContext(ctx, findUserSQL, posSystemID, companyID, id), userDest)
	if err != nil {
		return nil, readErr(err, "find loyalty user", posgate.NotFound("loyalty user", id))
	}
	return u, nil
}

// UpdateLoyaltyUser reads the user, applies upd in Go (the folded copies
// are computed there) and writes the result, all in one write transaction.
func (db *DB) UpdateLoyaltyUser(ctx context.Context, posSystemID, companyID, id string, upd posgate.LoyaltyUserUpdate) (*posgate.LoyaltyUser, error) {
	var u *posgate.LoyaltyUser
	err := db.inTx(ctx, "update loyalty user", func(tx *sql.Tx) error {
		var err error
		u, err = scanRow(tx.QueryRowContext(ctx, findUserSQL, posSystemID, companyID, id), userDest)
		if err != nil {
			return readErr(err, "update loyalty user", posgate.NotFound("loyalty user", id))
		}
		points, stamps := u.Points, u.Stamps
		if err := posgate.ApplyUserUpdate(u, upd); err != nil {
			return err
		}
		u.UpdatedAt = db.timestamp()
		keys := u.Keys()
		changed := u.Points != points || u.Stamps != stamps
		var seq int64
		err = tx.QueryRowContext(ctx, `UPDATE loyalty_users SET first_name = ?, last_name = ?, gender = ?, phone = ?, email = ?,
			stamps = ?, points = ?, first_norm = ?, last_norm = ?, email_norm = ?, phone_digits = ?, search_terms = ?, updated_at = ?,
			balance_seq = balance_seq + ? WHERE pos_system_id = ? AND company_id = ? AND user_id = ? RETURNING balance_seq`,
			u.FirstName, u.LastName, u.Gender, u.Phone, u.Email, u.Stamps, u.Points, keys.First, keys.Last, keys.Email, keys.Digits, searchTerms(u),
			formatTime(u.UpdatedAt), changed, posSystemID, companyID, id).Scan(&seq)
		if err != nil {
			return fmt.Errorf("sqlite: update loyalty user: %w", err)
		}
		if !changed {
			return nil
		}
		// An operator's adjustment is a balance change like a sale's.
		return db.emitTx(ctx, tx, posgate.BalanceAdjustedEvent(u, u.Points-points, u.Stamps-stamps, seq, u.UpdatedAt))
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// SearchLoyaltyUsers finds the ids of the matches in loyalty_user_terms
// (storekit.SearchUserIDs) and reads those users.
func (db *DB) SearchLoyaltyUsers(ctx context.Context, posSystemID, companyID string, k posgate.UserKeyword) ([]*posgate.LoyaltyUser, error) {
	ctx = storekit.PointRead(ctx)
	ranks, err := db.userRanks(ctx, posSystemID, companyID, k)
	if err != nil || len(ranks) == 0 {
		return nil, err
	}
	return db.userCards(ctx, posSystemID, companyID, ranks)
}

// userRanks is the first part of a keyword search: the ranks of the
// answer's users, from loyalty_user_terms.
func (db *DB) userRanks(ctx context.Context, posSystemID, companyID string, k posgate.UserKeyword) ([]posgate.UserRank, error) {
	return storekit.SearchUserIDs(ctx, k, func(ctx context.Context, qs []storekit.TermQuery) ([][]posgate.UserRank, error) {
		out := make([][]posgate.UserRank, len(qs))
		for i, q := range qs {
			var rows *sql.Rows
			var err error
			switch q.Kind {
			case storekit.TermExact:
				rows, err = db.coupons.termExact.QueryContext(ctx, posSystemID, companyID, q.Lo, q.Limit)
			case storekit.TermRange:
				if err := db.coupons.termCount.QueryRowContext(ctx, posSystemID, companyID, q.Lo, q.Hi, q.Scan).Scan(&qs[i].Scanned); err != nil {
					return nil, fmt.Errorf("sqlite: search loyalty users: %w", err)
				}
				if qs[i].Scanned == 0 || qs[i].Scanned >= q.Scan {
					continue // no match, or the caller reads the bucket
				}
				rows, err = db.coupons.termRange.QueryContext(ctx, posSystemID, companyID, q.Lo, q.Hi, q.Limit)
			default:
				rows, err = db.coupons.termBucket.QueryContext(ctx, posSystemID, companyID, q.Bucket, q.Lo, q.Hi, q.Limit)
			}
			ranks, err := scanAll(rows, err, "search loyalty users", rankDest)
			if err != nil {
				return nil, err
			}
			out[i] = make([]posgate.UserRank, len(ranks))
			for j, r := range ranks {
				out[i][j] = *r
			}
		}
		return out, nil
	}, true, storekit.RangeScanLimit)
}

// userCards is the second part of a keyword search: the users of ranks,
// their cards read by rowid.
func (db *DB) userCards(ctx context.Context, posSystemID, companyID string, ranks []posgate.UserRank) ([]*posgate.LoyaltyUser, error) {
	keys := make([]int64, len(ranks))
	for i, r := range ranks {
		keys[i] = r.Key
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search loyalty users: %w", err)
	}
	rows, err := db.coupons.usersByID.QueryContext(ctx, string(list))
	cards, err := scanAll(rows, err, "search loyalty users", cardDest)
	if err != nil {
		return nil, err
	}
	return storekit.CardUsers(posSystemID, companyID, storekit.RankIDs(ranks), cards), nil
}

// UserSearchStatements are the keyword search's statements, for the
// benchmark's floor (storekit.UserSearchStatements).
var UserSearchStatements = storekit.UserSearchStatements{Exact: termExactSQL, Count: termCountSQL, Range: termRangeSQL, Bucket: termBucketSQL, UsersByID: usersByIDSQL, ExactFirst: true, ScanLimit: storekit.RangeScanLimit}

func rankDest(r *posgate.UserRank) []any { return []any{&r.Last, &r.First, &r.ID, &r.Key} }
