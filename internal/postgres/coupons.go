package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Column lists of coupons and loyalty users, in the order scanCoupon and
// scanUser read them; queries name the tables c and u.
const (
	couponCols = `c.pos_system_id, c.company_id, c.code, c.reward_provider, c.name, c.title, c.picture_url, c.available_until,
		c.status, c.info, coalesce(c.user_id, ''), coalesce(c.email, ''), coalesce(c.phone, ''), c.location_ids, c.created_at, c.updated_at,
		coalesce(c.promotion_id, '')`
	userCols = `u.pos_system_id, u.company_id, u.user_id, u.first_name, u.last_name, u.gender, u.phone, u.email,
		u.stamps, u.points, u.created_at, u.updated_at`
	// cardCols are a loyalty user's columns of posgate.LoyaltyCard (the
	// keyword search's answer reads only these).
	cardCols = `u.user_id, u.first_name, u.last_name, u.gender, u.phone, u.email, u.stamps, u.points`
)

// couponSearchFilters are the criteria a driver does not apply itself; the
// driver's own is skipped (a true condition that still names the parameter,
// which PostgreSQL must see to type it).
func couponSearchFilters(driver int) string {
	f := []string{`($3::text = '' OR c.code_norm = $3)`,
		`($4::text = '' OR c.email_norm = $4 OR EXISTS (SELECT FROM loyalty_users o
			WHERE o.pos_system_id = c.pos_system_id AND o.company_id = c.company_id AND o.user_id = c.user_id AND o.email_norm = $4))`,
		`($5::text = '' OR c.phone_digits = $5 OR EXISTS (SELECT FROM loyalty_users o
			WHERE o.pos_system_id = c.pos_system_id AND o.company_id = c.company_id AND o.user_id = c.user_id AND o.phone_digits = $5))`,
		`($6::text = '' OR c.location_ids IS NULL OR $6 = ANY (c.location_ids))`}
	f[driver] = fmt.Sprintf("$%d::text IS NOT NULL", driver+3)
	return strings.Join(f, "\n\t\tAND ")
}

// Coupon search, one statement per criterion that selects the coupons
// through an index (code, else e-mail, else phone); the other criteria
// filter them. $1 POS system, $2 company ids, $3 folded code, $4 folded
// e-mail, $5 phone digits (each empty when not given), $6 location (empty for
// any), $7 limit, $8 offset. The drivers read each coupon row once (an
// owner's e-mail or phone through the user's index, then the user's
// coupons); the filters test the coupon's own fields first and look the
// owner up only when a criterion is given and the coupon's own field does
// not match (OR stops at the first true operand), so that a search by one
// criterion reads no loyalty user per coupon. The page carries no count:
// storekit.PageTotal tells the total from the page, and only a full page
// is counted (a window count made every search materialise its rows).
var (
	couponSearchTail = ` ORDER BY c.code_norm, c.company_id LIMIT $7 OFFSET $8`
	couponsByCode    = `SELECT ` + couponCols + ` FROM coupons c
		WHERE c.pos_system_id = $1 AND c.company_id = ANY ($2::text[]) AND c.code_norm = $3 AND ` + couponSearchFilters(0) + couponSearchTail
	// The two parts of the e-mail and phone drivers are disjoint: coupons
	// that carry the e-mail (phone) themselves, and the other coupons of the
	// users who have it.
	couponsByEmail = `SELECT ` + couponCols + ` FROM (
			SELECT * FROM coupons WHERE pos_system_id = $1 AND company_id = ANY ($2::text[]) AND email_norm = $4
			UNION ALL SELECT c2.* FROM loyalty_users u2
				JOIN coupons c2 ON c2.pos_system_id = u2.pos_system_id AND c2.company_id = u2.company_id AND c2.user_id = u2.user_id
				WHERE u2.pos_system_id = $1 AND u2.company_id = ANY ($2::text[]) AND u2.email_norm = $4
				AND c2.email_norm IS DISTINCT FROM $4) c
		WHERE ` + couponSearchFilters(1) + couponSearchTail
	couponsByPhone = `SELECT ` + couponCols + ` FROM (
			SELECT * FROM coupons WHERE pos_system_id = $1 AND company_id = ANY ($2::text[]) AND phone_digits = $5
			UNION ALL SELECT c2.* FROM loyalty_users u2
				JOIN coupons c2 ON c2.pos_system_id = u2.pos_system_id AND c2.company_id = u2.company_id AND c2.user_id = u2.user_id
				WHERE u2.pos_system_id = $1 AND u2.company_id = ANY ($2::text[]) AND u2.phone_digits = $5
				AND c2.phone_digits IS DISTINCT FROM $5) c
		WHERE ` + couponSearchFilters(2) + couponSearchTail

	findCouponSQL = `SELECT ` + couponCols + ` FROM coupons c WHERE c.pos_system_id = $1 AND c.company_id = $2 AND c.code_norm = $3`
	findUserSQL   = `SELECT ` + userCols + ` FROM loyalty_users u WHERE u.pos_system_id = $1 AND u.company_id = $2 AND u.user_id = $3`
)

// The lookups of a keyword search (storekit.SearchUserIDs) in
// loyalty_user_terms: $1 POS system, $2 company. termExactSQL: the users
// holding term $3, in rank order, at most $4. termBucketSQL: the distinct
// users holding a term in [$4, $5) of bucket $3 (the index's expression,
// spelled alike), in rank order, at most $6 (its range spelled so that no
// index takes it:
// the primary key's range would read every match to sort them, which the
// bucket's order is there to avoid; a bucket is read only when its prefix
// has more than rangeScanLimit rows). usersByIDSQL reads the cards
// (posgate.LoyaltyCard) of the answer's users, $3 their ids. All run on their generic plans (see
// queryGeneric): planning them anew cost more than running them.
const (
	termExactSQL = `SELECT last_norm, first_norm, user_id FROM loyalty_user_terms
		WHERE pos_system_id = $1 AND company_id = $2 AND term = $3 ORDER BY last_norm, first_norm, user_id LIMIT $4`
	termBucketSQL = `SELECT DISTINCT last_norm, first_norm, user_id FROM loyalty_user_terms
		WHERE pos_system_id = $1 AND company_id = $2 AND left(term, 3 + (term < E'\x04')::integer) = $3
		AND (term >= $4 AND term < $5) IS TRUE
		ORDER BY last_norm, first_norm, user_id LIMIT $6`
	// termPrefixSQL is a prefix's lookup (storekit.TermPrefix): $3 bucket,
	// [$4, $5) the range, $6 the limit, $7 the rows of the range to read at
	// most; fewer, and the range's users are ranked here, else the bucket is
	// read. The count is an InitPlan: the branch it rules out does not run.
	termPrefixSQL = `WITH r AS MATERIALIZED (SELECT last_norm, first_norm, user_id FROM loyalty_user_terms
			WHERE pos_system_id = $1 AND company_id = $2 AND term >= $4 AND term < $5 LIMIT $7)
		(SELECT DISTINCT last_norm, first_norm, user_id FROM r WHERE (SELECT count(*) FROM r) < $7
			ORDER BY last_norm, first_norm, user_id LIMIT $6)
		UNION ALL (SELECT DISTINCT last_norm, first_norm, user_id FROM loyalty_user_terms
			WHERE (SELECT count(*) FROM r) >= $7 AND pos_system_id = $1 AND company_id = $2
			AND left(term, 3 + (term < E'\x04')::integer) = $3 AND (term >= $4 AND term < $5) IS TRUE
			ORDER BY last_norm, first_norm, user_id LIMIT $6)`
	usersByIDSQL = `SELECT ` + cardCols + ` FROM loyalty_users u WHERE u.pos_system_id = $1 AND u.company_id = $2 AND u.user_id = ANY ($3)`
)

// rangeScanLimit is the keyword search's storekit.RangeScanLimit here:
// reading a range through the primary key costs a fraction of a
// microsecond per row, and a bucket's rows (filtered in the index) about
// two, so that a bucket pays off only for ranges of many hundred rows.
var rangeScanLimit = 500

// couponCopyCols and userCopyCols are the columns CopyFrom fills, in the
// order of couponRow and userRow.
var (
	couponCopyCols = []string{"pos_system_id", "company_id", "code_norm", "code", "reward_provider", "name", "title", "picture_url",
		"available_until", "status", "info", "user_id", "email", "email_norm", "phone", "phone_digits", "location_ids", "created_at", "updated_at", "promotion_id"}
	userCopyCols = []string{"pos_system_id", "company_id", "user_id", "first_name", "last_name", "gender", "phone", "email",
		"stamps", "points", "first_norm", "last_norm", "email_norm", "phone_digits", "search_terms", "created_at", "updated_at"}
)

func scanCoupon(r pgx.Row) (*posgate.Coupon, error) {
	c := &posgate.Coupon{}
	var info []byte
	if err := r.Scan(&c.POSSystemID, &c.CompanyID, &c.Code, &c.RewardProvider, &c.Name, &c.Title, &c.PictureURL, &c.AvailableUntil,
		&c.Status, &info, &c.UserID, &c.Email, &c.Phone, &c.LocationIDs, &c.CreatedAt, &c.UpdatedAt, &c.PromotionID); err != nil {
		return nil, err
	}
	return c, decodeInfo(c, info)
}

// decodeInfo reads the info column; NULL stays a nil slice.
func decodeInfo(c *posgate.Coupon, info []byte) error {
	if info == nil {
		return nil
	}
	if err := json.Unmarshal(info, &c.Info); err != nil {
		return fmt.Errorf("info column: %w", err)
	}
	return nil
}

func userDest(u *posgate.LoyaltyUser) []any {
	return []any{&u.POSSystemID, &u.CompanyID, &u.ID, &u.FirstName, &u.LastName, &u.Gender, &u.Phone, &u.Email,
		&u.Stamps, &u.Points, &u.CreatedAt, &u.UpdatedAt}
}

func scanUser(r pgx.Row) (*posgate.LoyaltyUser, error) {
	u := &posgate.LoyaltyUser{}
	return u, r.Scan(userDest(u)...)
}

// couponRow is the row CopyFrom and CreateCoupon write for c (normalised).
func couponRow(c *posgate.Coupon, now time.Time) ([]any, error) {
	var info []byte
	if c.Info != nil {
		var err error
		if info, err = json.Marshal(c.Info); err != nil {
			return nil, fmt.Errorf("postgres: encode coupon info: %w", err)
		}
	}
	keys := c.Keys()
	return []any{c.POSSystemID, c.CompanyID, keys.Code, c.Code, string(c.RewardProvider), c.Name, c.Title, c.PictureURL,
		c.AvailableUntil, string(c.Status), info, storekit.NullIfEmpty(c.UserID), storekit.NullIfEmpty(c.Email), storekit.NullIfEmpty(keys.Email),
		storekit.NullIfEmpty(c.Phone), storekit.NullIfEmpty(keys.Phone), c.LocationIDs, now, now, storekit.NullIfEmpty(c.PromotionID)}, nil
}

// userRow is the row CopyFrom and CreateLoyaltyUser write for u.
func userRow(u *posgate.LoyaltyUser, now time.Time) []any {
	keys := u.Keys()
	return []any{u.POSSystemID, u.CompanyID, u.ID, u.FirstName, u.LastName, u.Gender, u.Phone, u.Email, u.Stamps, u.Points,
		keys.First, keys.Last, keys.Email, keys.Digits, searchTerms(u), now, now}
}

// searchTerms is u's search terms as the search_terms column holds them
// (an empty array, not NULL, which marks a user whose terms are still to be
// computed).
func searchTerms(u *posgate.LoyaltyUser) []string {
	if t := u.SearchTerms(); t != nil {
		return t
	}
	return []string{}
}

// placeholders returns "$1, $2, …, $n".
func placeholders(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	return strings.Join(ps, ", ")
}

// companyLocations reads the locations of a company for a
// storekit.CompanyChecker. It reads through the pool, outside any import's
// transaction (whose connection is busy copying), and outside Atomic's
// too, which the import joins: companies and locations are committed before
// their coupons.
func (db *DB) companyLocations(ctx context.Context, posSystemID, companyID string) (map[string]bool, bool, error) {
	return companyLocationsOn(ctx, db.pool, posSystemID, companyID)
}

// companyLocationsOn is companyLocations through q.
func companyLocationsOn(ctx context.Context, q querier, posSystemID, companyID string) (map[string]bool, bool, error) {
	var exists bool
	var ids []string
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM companies WHERE pos_system_id = $1 AND company_id = $2),
		ARRAY(SELECT location_id FROM locations WHERE pos_system_id = $1 AND company_id = $2)`, posSystemID, companyID).Scan(&exists, &ids)
	if err != nil {
		return nil, false, wrap(err, "check company")
	}
	if !exists {
		return nil, false, nil
	}
	locs := make(map[string]bool, len(ids))
	for _, id := range ids {
		locs[id] = true
	}
	return locs, true, nil
}

// CreateCoupon normalises c, checks its company and locations and stores it.
func (db *DB) CreateCoupon(ctx context.Context, c *posgate.Coupon) error {
	// Not an import: the connection is free, so the check joins Atomic's
	// transaction, if any, and needs no second connection.
	check := storekit.NewCompanyChecker(func(ctx context.Context, posSystemID, companyID string) (map[string]bool, bool, error) {
		return companyLocationsOn(ctx, db.q(ctx), posSystemID, companyID)
	})
	if err := check.Coupon(ctx, c); err != nil {
		return err
	}
	now := posgate.Timestamp(db.now())
	row, err := couponRow(c, now)
	if err != nil {
		return err
	}
	insert := `INSERT INTO coupons (` + strings.Join(couponCopyCols, ", ") + `) VALUES (` + placeholders(len(row)) + `)`
	var events []storekit.OutboxRow
	if c.Status == posgate.CouponIssued {
		if events, err = db.outbox.Rows(ctx, posgate.CouponIssuedEvent(c, now), nil); err != nil {
			return err
		}
	}
	if len(events) == 0 {
		_, err = db.q(ctx).Exec(ctx, insert, row...)
	} else {
		err = pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, insert, row...); err != nil {
				return err
			}
			return emitRows(ctx, tx, events)
		})
	}
	if err != nil {
		return couponWriteErr(err, posgate.AlreadyExists("coupon", c.Code), posgate.NotFound("loyalty user", c.UserID))
	}
	if len(events) > 0 {
		db.outbox.Notify()
	}
	c.CreatedAt, c.UpdatedAt = now, now
	return nil
}

// issuedCoupon is what a coupon.issued event of an import needs.
type issuedCoupon struct{ posSystemID, companyID, code, userID string }

// couponWriteErr maps a failed coupon write: a duplicate code, or a missing
// loyalty user (the company was checked before).
func couponWriteErr(err error, conflict, missingUser *posgate.Error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" && pgErr.ConstraintName != "coupons_user_fk" {
		return wrap(err, "create coupon")
	}
	return writeErr(err, "create coupon", conflict, missingUser)
}

// importKey identifies an item of an import: company and folded code or
// user id.
type importKey struct{ posSystemID, companyID, id string }

// importRef is where an import first named a key, for error messages.
type importRef struct {
	n  int    // 1-based item number
	id string // as the item wrote it
}

// importIndex remembers the items of an import by key, so that an error that
// PostgreSQL reports for a key (COPY does not say which row) names the item.
type importIndex map[importKey]importRef

// find returns the item whose key PostgreSQL's error detail names, e.g.
// `Key (pos_system_id, company_id, code_norm)=(clover, acme, abc) already
// exists.`: the values are joined by ", " and the known companies tell
// where the last one starts.
func (ix importIndex) find(detail string) (importRef, bool) {
	_, tuple, ok := strings.Cut(detail, ")=(")
	if !ok {
		return importRef{}, false
	}
	if i := strings.LastIndex(tuple, ")"); i >= 0 {
		tuple = tuple[:i]
	}
	seen := map[[2]string]bool{}
	for k := range ix {
		c := [2]string{k.posSystemID, k.companyID}
		if seen[c] {
			continue
		}
		seen[c] = true
		if id, ok := strings.CutPrefix(tuple, k.posSystemID+", "+k.companyID+", "); ok {
			if ref, ok := ix[importKey{k.posSystemID, k.companyID, id}]; ok {
				return ref, true
			}
		}
	}
	return importRef{}, false
}

// copySource feeds CopyFrom from an import's sequence: next turns each item
// into a row (checking it first) or fails.
type copySource[T any] struct {
	next   func() (T, error, bool)
	toRow  func(n int, item T) ([]any, error)
	n      int
	row    []any
	err    error
	failed bool
}

// Next implements pgx.CopyFromSource.
func (s *copySource[T]) Next() bool {
	item, err, ok := s.next()
	if !ok {
		return false
	}
	if err != nil {
		s.err, s.failed = err, true
		return false
	}
	s.n++
	if s.row, err = s.toRow(s.n, item); err != nil {
		s.err, s.failed = posgate.ItemError(s.n, err), true
		return false
	}
	return true
}

// Values implements pgx.CopyFromSource.
func (s *copySource[T]) Values() ([]any, error) { return s.row, nil }

// Err implements pgx.CopyFromSource.
func (s *copySource[T]) Err() error { return s.err }

// analyzeAfter is the size of an import after which the table's planner
// statistics are refreshed in the same transaction (and its GIN indexes'
// pending lists merged), whatever the table's size.
const analyzeAfter = 10_000

// analyzedWith names the tables that triggers fill from a table's rows:
// an import's ANALYZE covers them too.
var analyzedWith = map[string][]string{"loyalty_users": {"loyalty_user_terms"}}

// copyImport copies seq into table in one transaction.
//
// after, when not nil, runs in the transaction once the rows are copied
// (the outbox rows of their events).
func copyImport[T any](ctx context.Context, db *DB, table string, cols []string, seq iter.Seq2[T, error],
	toRow func(n int, item T) ([]any, error), copyErr func(err error) error, after func(tx pgx.Tx) error) (int, error) {
	next, stop := iter.Pull2(seq)
	defer stop()
	src := &copySource[T]{next: next, toRow: toRow}
	var n int64
	err := pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		var err error
		if n, err = tx.CopyFrom(ctx, pgx.Identifier{table}, cols, src); err != nil {
			return err
		}
		if after != nil {
			if err := after(tx); err != nil {
				return err
			}
		}
		// Plans over a table that just grew a lot would otherwise rest on
		// stale statistics until autovacuum comes by (a minute or more).
		// Without any (a table never analyzed, reltuples -1), PostgreSQL
		// costs every index alike and may look a loyalty user up by its
		// card through an index of (POS system, company, phone) instead of
		// the primary key, reading every user of the company: 1,000 users
		// made that 90 µs instead of a few. So a table that had none, or
		// that more than doubled, is analyzed too, whatever the import's
		// size (a small table's ANALYZE costs a few milliseconds). The
		// tables that triggers fill from it (analyzedWith) grew alike.
		for _, t := range append([]string{table}, analyzedWith[table]...) {
			if n < analyzeAfter {
				var before float64
				if err := tx.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = $1::regclass`, pgx.Identifier{t}.Sanitize()).Scan(&before); err != nil {
					return err
				}
				if before >= 0 && float64(n) <= before {
					continue
				}
			}
			if _, err = tx.Exec(ctx, `ANALYZE `+pgx.Identifier{t}.Sanitize()); err != nil {
				return err
			}
		}
		if n < analyzeAfter {
			return nil
		}
		// A GIN index takes a COPY's entries into its pending list (up to
		// gin_pending_list_limit, 4 MB by default), which every search
		// through the index reads in full until vacuum merges it: 3 MB of
		// it made a trigram lookup over 1,000,000 users take 2.5 ms instead
		// of 0.1 ms. Merge it now.
		_, err = tx.Exec(ctx, `SELECT gin_clean_pending_list(i.indexrelid) FROM pg_index i
			JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
			WHERE i.indrelid = $1::regclass AND a.amname = 'gin'`, pgx.Identifier{table}.Sanitize())
		return err
	})
	switch {
	case src.failed:
		return 0, src.err
	case err != nil:
		return 0, copyErr(err)
	}
	return int(n), nil
}

// ImportCoupons copies the coupons of seq into the table in one transaction
// (COPY). Items are checked as they stream: company, locations, and codes
// repeated within the import; PostgreSQL's own errors (a code that exists
// already, an unknown loyalty user) are traced back to their items.
func (db *DB) ImportCoupons(ctx context.Context, seq iter.Seq2[*posgate.Coupon, error]) (int, error) {
	var issued []issuedCoupon // for their coupon.issued events
	check := storekit.NewCompanyChecker(db.companyLocations)
	now := posgate.Timestamp(db.now())
	codes, users := importIndex{}, importIndex{}
	toRow := func(n int, c *posgate.Coupon) ([]any, error) {
		if err := check.Coupon(ctx, c); err != nil {
			return nil, err
		}
		key := importKey{c.POSSystemID, c.CompanyID, posgate.Fold(c.Code)}
		if _, dup := codes[key]; dup {
			return nil, posgate.AlreadyExists("coupon", c.Code)
		}
		codes[key] = importRef{n, c.Code}
		if c.UserID != "" {
			if key := (importKey{c.POSSystemID, c.CompanyID, c.UserID}); users[key].n == 0 {
				users[key] = importRef{n, c.UserID}
			}
		}
		c.CreatedAt, c.UpdatedAt = now, now
		if c.Status == posgate.CouponIssued {
			issued = append(issued, issuedCoupon{c.POSSystemID, c.CompanyID, c.Code, c.UserID})
		}
		return couponRow(c, now)
	}
	emitted := false
	defer func() {
		if emitted {
			db.outbox.Notify()
		}
	}()
	after := func(tx pgx.Tx) error {
		for _, ic := range issued {
			c := &posgate.Coupon{POSSystemID: ic.posSystemID, CompanyID: ic.companyID, Code: ic.code, UserID: ic.userID}
			e, err := db.emitIn(ctx, tx, posgate.CouponIssuedEvent(c, now))
			if err != nil {
				return err
			}
			emitted = emitted || e
		}
		return nil
	}
	return copyImport(ctx, db, "coupons", couponCopyCols, seq, toRow, func(err error) error {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			switch {
			case pgErr.Code == "23505":
				if ref, ok := codes.find(pgErr.Detail); ok {
					return posgate.ItemError(ref.n, posgate.AlreadyExists("coupon", ref.id))
				}
			case pgErr.Code == "23503" && pgErr.ConstraintName == "coupons_user_fk":
				if ref, ok := users.find(pgErr.Detail); ok {
					return posgate.ItemError(ref.n, posgate.NotFound("loyalty user", ref.id))
				}
			}
		}
		return wrap(err, "import coupons")
	}, after)
}

// FindCoupon returns the coupon whose code folds like code.
func (db *DB) FindCoupon(ctx context.Context, posSystemID, companyID, code string) (*posgate.Coupon, error) {
	ctx = storekit.PointRead(ctx)
	c, err := scanCoupon(db.q(ctx).QueryRow(ctx, findCouponSQL, posSystemID, companyID, posgate.Fold(code)))
	if err != nil {
		return nil, readErr(err, "find coupon", posgate.NotFound("coupon", code))
	}
	return c, nil
}

// ChangeCouponStatus redeems or cancels an Issued coupon that has not
// expired by the store's clock; the UPDATE's condition makes it atomic.
func (db *DB) ChangeCouponStatus(ctx context.Context, posSystemID, companyID, code string, to posgate.CouponStatus) (*posgate.Coupon, error) {
	if err := posgate.CheckStatusChange(to); err != nil {
		return nil, err
	}
	now := posgate.Timestamp(db.now())
	c, err := scanCoupon(db.q(ctx).QueryRow(ctx, `UPDATE coupons c SET status = $4, updated_at = $5
		WHERE c.pos_system_id = $1 AND c.company_id = $2 AND c.code_norm = $3 AND c.status = 'Issued'
		AND (c.available_until IS NULL OR c.available_until >= $5)
		RETURNING `+couponCols, posSystemID, companyID, posgate.Fold(code), string(to), now))
	if err == nil {
		return c, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return nil, wrap(err, "change coupon status")
	}
	c, err = db.FindCoupon(ctx, posSystemID, companyID, code)
	if err != nil {
		return nil, err
	}
	return nil, c.StatusConflict(to, now)
}

// SearchCoupons runs the search statement of the most selective criterion
// given; the total comes from the same query unless the page is past the
// end.
func (db *DB) SearchCoupons(ctx context.Context, q posgate.CouponQuery) (*posgate.CouponPage, error) {
	keys, err := q.Keys()
	if err != nil {
		return nil, err
	}
	var driver string
	switch {
	case keys.Code != "":
		driver = couponsByCode
	case keys.Email != "":
		driver = couponsByEmail
	default: // Keys refuses a query without code, e-mail and phone
		driver = couponsByPhone
	}
	page := &posgate.CouponPage{}
	if len(q.CompanyIDs) == 0 || q.Limit <= 0 {
		return page, nil
	}
	sql := driver
	args := []any{q.POSSystemID, q.CompanyIDs, keys.Code, keys.Email, keys.Phone, q.LocationID, q.Limit, max(q.Offset, 0)}
	// A page is index reads of a few rows, as a point read is (a full
	// page's count below stays cancellable).
	if err := queryGeneric(storekit.PointRead(ctx), db, sql, args, appendCouponRows(page, false)); err != nil {
		return nil, wrap(err, "search coupons")
	}
	var ok bool
	if page.Total, ok = storekit.PageTotal(q.Offset, q.Limit, len(page.Coupons)); !ok {
		// A full page, or past the end: count the rows (no limit, none skipped).
		args[6], args[7] = nil, 0
		if err := db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM (`+sql+`) page`, args...).Scan(&page.Total); err != nil {
			return nil, wrap(err, "search coupons")
		}
	}
	return page, nil
}

// CreateLoyaltyUser stores u and sets its CreatedAt and UpdatedAt.
func (db *DB) CreateLoyaltyUser(ctx context.Context, u *posgate.LoyaltyUser) error {
	now := posgate.Timestamp(db.now())
	row := userRow(u, now)
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO loyalty_users (`+strings.Join(userCopyCols, ", ")+`) VALUES (`+placeholders(len(row))+`)`, row...)
	if err != nil {
		return writeErr(err, "create loyalty user", posgate.AlreadyExists("loyalty user", u.ID), posgate.NotFound("company", u.CompanyID))
	}
	u.CreatedAt, u.UpdatedAt = now, now
	return nil
}

// ImportLoyaltyUsers copies the users of seq into the table in one
// transaction (COPY), checking companies and ids repeated within the import
// as they stream.
func (db *DB) ImportLoyaltyUsers(ctx context.Context, seq iter.Seq2[*posgate.LoyaltyUser, error]) (int, error) {
	check := storekit.NewCompanyChecker(db.companyLocations)
	now := posgate.Timestamp(db.now())
	ids := importIndex{}
	toRow := func(n int, u *posgate.LoyaltyUser) ([]any, error) {
		if _, err := check.Locations(ctx, u.POSSystemID, u.CompanyID); err != nil {
			return nil, err
		}
		key := importKey{u.POSSystemID, u.CompanyID, u.ID}
		if _, dup := ids[key]; dup {
			return nil, posgate.AlreadyExists("loyalty user", u.ID)
		}
		ids[key] = importRef{n, u.ID}
		u.CreatedAt, u.UpdatedAt = now, now
		return userRow(u, now), nil
	}
	return copyImport(ctx, db, "loyalty_users", userCopyCols, seq, toRow, func(err error) error {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			if ref, ok := ids.find(pgErr.Detail); ok {
				return posgate.ItemError(ref.n, posgate.AlreadyExists("loyalty user", ref.id))
			}
		}
		return wrap(err, "import loyalty users")
	}, nil)
}

// FindLoyaltyUser returns one loyalty user of a company.
func (db *DB) FindLoyaltyUser(ctx context.Context, posSystemID, companyID, id string) (*posgate.LoyaltyUser, error) {
	u, err := scanUser(db.q(ctx).QueryRow(ctx, findUserSQL, posSystemID, companyID, id))
	if err != nil {
		return nil, readErr(err, "find loyalty user", posgate.NotFound("loyalty user", id))
	}
	return u, nil
}

// UpdateLoyaltyUser locks the user's row, applies upd in Go (the folded
// copies are computed there) and writes the result.
func (db *DB) UpdateLoyaltyUser(ctx context.Context, posSystemID, companyID, id string, upd posgate.LoyaltyUserUpdate) (*posgate.LoyaltyUser, error) {
	var u *posgate.LoyaltyUser
	emitted := false
	err := pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		var err error
		u, err = scanUser(tx.QueryRow(ctx, findUserSQL+` FOR UPDATE`, posSystemID, companyID, id))
		if err != nil {
			return readErr(err, "update loyalty user", posgate.NotFound("loyalty user", id))
		}
		points, stamps := u.Points, u.Stamps
		if err := posgate.ApplyUserUpdate(u, upd); err != nil {
			return err
		}
		u.UpdatedAt = posgate.Timestamp(db.now())
		keys := u.Keys()
		changed := u.Points != points || u.Stamps != stamps
		bump := 0
		if changed {
			bump = 1
		}
		var seq int64
		err = tx.QueryRow(ctx, `UPDATE loyalty_users SET first_name = $4, last_name = $5, gender = $6, phone = $7, email = $8,
			stamps = $9, points = $10, first_norm = $11, last_norm = $12, email_norm = $13, phone_digits = $14, updated_at = $15,
			balance_seq = balance_seq + $16, search_terms = $17 WHERE pos_system_id = $1 AND company_id = $2 AND user_id = $3 RETURNING balance_seq`,
			posSystemID, companyID, id, u.FirstName, u.LastName, u.Gender, u.Phone, u.Email, u.Stamps, u.Points,
			keys.First, keys.Last, keys.Email, keys.Digits, u.UpdatedAt, bump, searchTerms(u)).Scan(&seq)
		if err != nil || !changed {
			return wrap(err, "update loyalty user")
		}
		// An operator's adjustment is a balance change like a sale's.
		emitted, err = db.emitIn(ctx, tx, posgate.BalanceAdjustedEvent(u, u.Points-points, u.Stamps-stamps, seq, u.UpdatedAt))
		return err
	})
	if err != nil {
		return nil, err
	}
	if emitted {
		db.outbox.Notify()
	}
	return u, nil
}

// UserSearchStatements are the keyword search's statements, for the
// benchmark's floor (storekit.UserSearchStatements).
var UserSearchStatements = storekit.UserSearchStatements{Exact: termExactSQL, Bucket: termBucketSQL, Prefix: termPrefixSQL, UsersByID: usersByIDSQL, ScanLimit: rangeScanLimit}

// SearchLoyaltyUsers finds the ids of the matches in loyalty_user_terms
// (storekit.SearchUserIDs, each step's lookups in one batch: one round
// trip) and reads those users.
func (db *DB) SearchLoyaltyUsers(ctx context.Context, posSystemID, companyID string, k posgate.UserKeyword) ([]*posgate.LoyaltyUser, error) {
	ctx = storekit.PointRead(ctx)
	ranks, err := storekit.SearchUserIDs(ctx, k, func(ctx context.Context, qs []storekit.TermQuery) ([][]posgate.UserRank, error) {
		out := make([][]posgate.UserRank, len(qs))
		b := &pgx.Batch{}
		b.Queue(`SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`)
		for i, q := range qs {
			var qq *pgx.QueuedQuery
			switch q.Kind {
			case storekit.TermExact:
				qq = b.Queue(termExactSQL, posSystemID, companyID, q.Lo, q.Limit)
			case storekit.TermPrefix:
				qq = b.Queue(termPrefixSQL, posSystemID, companyID, q.Bucket, q.Lo, q.Hi, q.Limit, q.Scan)
			default: // TermBucket (SearchUserIDs sends no TermRange without exactFirst)
				qq = b.Queue(termBucketSQL, posSystemID, companyID, q.Bucket, q.Lo, q.Hi, q.Limit)
			}
			qq.Query(func(rows pgx.Rows) error {
				var err error
				out[i], err = pgx.AppendRows(out[i], rows, func(r pgx.CollectableRow) (posgate.UserRank, error) {
					var u posgate.UserRank
					return u, r.Scan(&u.Last, &u.First, &u.ID)
				})
				return err
			})
		}
		return out, db.q(ctx).SendBatch(ctx, b).Close()
	}, false, rangeScanLimit)
	if err != nil || len(ranks) == 0 {
		return nil, wrap(err, "search loyalty users")
	}
	ids := storekit.RankIDs(ranks)
	cards := make([]*posgate.LoyaltyCard, 0, len(ids))
	err = queryGeneric(ctx, db, usersByIDSQL, []any{posSystemID, companyID, ids}, func(rows pgx.Rows) error {
		var err error
		cards, err = pgx.AppendRows(cards, rows, func(r pgx.CollectableRow) (*posgate.LoyaltyCard, error) {
			c := &posgate.LoyaltyCard{}
			return c, r.Scan(&c.ID, &c.FirstName, &c.LastName, &c.Gender, &c.Phone, &c.Email, &c.Stamps, &c.Points)
		})
		return err
	})
	if err != nil {
		return nil, wrap(err, "search loyalty users")
	}
	return storekit.CardUsers(posSystemID, companyID, ids, cards), nil
}

// queryGeneric runs sql (a prepared statement, as pgx caches them) on its
// generic plan and hands the rows to read. PostgreSQL keeps planning the
// search statements afresh at each run (its estimate of their generic plan,
// which cannot see the parameters, is the higher one), and planning them
// costs more than running them. The setting is local to the batch's
// implicit transaction, so the connection keeps its own.
func queryGeneric(ctx context.Context, db *DB, sql string, args []any, read func(pgx.Rows) error) error {
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`)
	b.Queue(sql, args...).Query(read)
	return db.q(ctx).SendBatch(ctx, b).Close()
}

// appendCouponRows reads a page of coupons (the coupon search's and the
// active coupons' pages); with counted, each row holds the page's total
// as its last column.
func appendCouponRows(page *posgate.CouponPage, counted bool) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		var err error
		page.Coupons, err = pgx.AppendRows(page.Coupons, rows, func(r pgx.CollectableRow) (*posgate.Coupon, error) {
			c := &posgate.Coupon{}
			var info []byte
			dest := []any{&c.POSSystemID, &c.CompanyID, &c.Code, &c.RewardProvider, &c.Name, &c.Title, &c.PictureURL, &c.AvailableUntil,
				&c.Status, &info, &c.UserID, &c.Email, &c.Phone, &c.LocationIDs, &c.CreatedAt, &c.UpdatedAt, &c.PromotionID, &page.Total}
			if !counted {
				dest = dest[:len(dest)-1]
			}
			if err := r.Scan(dest...); err != nil {
				return nil, err
			}
			return c, decodeInfo(c, info)
		})
		return err
	}
}
