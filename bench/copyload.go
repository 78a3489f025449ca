package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
)

// The PostgreSQL data set is copied straight into the tables (COPY through
// pgx's CopyFrom) from rows generated as they stream, rather than through
// the store's import: the store's import checks each item and remembers
// every key of the import to name a duplicate's item, which for 10,000,000
// rows is gigabytes, and maintains every index row by row. Here the
// secondary indexes and the coupons' foreign keys are dropped first and
// rebuilt from their own definitions afterwards (a sort per index, and one
// join per foreign key instead of a lookup per coupon), as a bulk load of
// that size is done in practice. Memory stays at one generated row and
// pgx's copy buffer.

// Columns the copy fills, in the order of userCopyRow and couponCopyRow.
var (
	userCopyCols = []string{"pos_system_id", "company_id", "user_id", "first_name", "last_name", "gender", "phone", "email",
		"stamps", "points", "first_norm", "last_norm", "email_norm", "phone_digits", "search_terms", "created_at", "updated_at"}
	couponCopyCols = []string{"pos_system_id", "company_id", "code_norm", "code", "reward_provider", "name", "title", "picture_url",
		"available_until", "status", "info", "user_id", "email", "email_norm", "phone", "phone_digits", "location_ids", "created_at", "updated_at"}
)

// genSource is a pgx.CopyFromSource of n generated rows, one at a time.
type genSource struct {
	n, i int
	row  func(i int) []any
	cur  []any
}

// Next implements pgx.CopyFromSource.
func (s *genSource) Next() bool {
	if s.i >= s.n {
		return false
	}
	s.cur = s.row(s.i)
	s.i++
	return true
}

// Values implements pgx.CopyFromSource.
func (s *genSource) Values() ([]any, error) { return s.cur, nil }

// Err implements pgx.CopyFromSource.
func (s *genSource) Err() error { return nil }

// nullIfEmpty stores "" as NULL, as the stores do for optional fields.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// userCopyRow is user i as the PostgreSQL store writes it.
func userCopyRow(d *dataset, i int, now time.Time) []any {
	u := genUser(d, i)
	k := u.Keys()
	return []any{u.POSSystemID, u.CompanyID, u.ID, u.FirstName, u.LastName, u.Gender, u.Phone, u.Email, u.Stamps, u.Points,
		k.First, k.Last, k.Email, k.Digits, u.SearchTerms(), now, now}
}

// couponCopyRow is coupon i as the PostgreSQL store writes it.
func couponCopyRow(d *dataset, n, i int, now time.Time) []any {
	c := genCoupon(d, n, i)
	k := c.Keys()
	return []any{c.POSSystemID, c.CompanyID, k.Code, c.Code, string(c.RewardProvider), c.Name, c.Title, c.PictureURL,
		c.AvailableUntil, string(c.Status), nil, nullIfEmpty(c.UserID), nullIfEmpty(c.Email), nullIfEmpty(k.Email),
		nullIfEmpty(c.Phone), nullIfEmpty(k.Phone), c.LocationIDs, now, now}
}

// copyCouponData loads e.Rows loyalty users and coupons into PostgreSQL
// with COPY; see the comment at the top of this file.
func copyCouponData(ctx context.Context, e *env) error {
	conn, err := pgx.Connect(ctx, e.DSN)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// The indexes that back no constraint, and the coupons' foreign keys.
	var indexes, fks []string
	rows, err := conn.Query(ctx, `SELECT format('DROP INDEX %I', c.relname), pg_get_indexdef(i.indexrelid)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid IN ('loyalty_users'::regclass, 'coupons'::regclass, 'loyalty_user_terms'::regclass)
		AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid)
		UNION ALL SELECT format('ALTER TABLE coupons DROP CONSTRAINT %I', conname),
			format('ALTER TABLE coupons ADD CONSTRAINT %I %s', conname, pg_get_constraintdef(oid))
		FROM pg_constraint WHERE conrelid = 'coupons'::regclass AND contype = 'f'`)
	if err != nil {
		return fmt.Errorf("list indexes: %w", err)
	}
	var drops []string
	for rows.Next() {
		var drop, create string
		if err := rows.Scan(&drop, &create); err != nil {
			return err
		}
		drops = append(drops, drop)
		if strings.HasPrefix(drop, "ALTER") {
			fks = append(fks, create)
		} else {
			indexes = append(indexes, create)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list indexes: %w", err)
	}
	for _, s := range drops {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	d, n := e.Data, e.Rows
	now := posgate.Timestamp(time.Now())
	t0 := time.Now()
	users, err := conn.CopyFrom(ctx, pgx.Identifier{"loyalty_users"}, userCopyCols,
		&genSource{n: n, row: func(i int) []any { return userCopyRow(d, i, now) }})
	if err != nil {
		return fmt.Errorf("copy loyalty users: %w", err)
	}
	t1 := time.Now()
	coupons, err := conn.CopyFrom(ctx, pgx.Identifier{"coupons"}, couponCopyCols,
		&genSource{n: n, row: func(i int) []any { return couponCopyRow(d, n, i, now) }})
	if err != nil {
		return fmt.Errorf("copy coupons: %w", err)
	}
	t2 := time.Now()
	logf("%s: COPY of %d loyalty users in %s, %d coupons in %s", e.Kind, users, t1.Sub(t0).Round(time.Millisecond),
		coupons, t2.Sub(t1).Round(time.Millisecond))
	// Two index builds at a time: the machine has two cores, and a GIN
	// build uses one. The GIN builds, the longest, go first.
	slices.SortStableFunc(indexes, func(a, b string) int {
		return cmp.Compare(b2i(!strings.Contains(a, "USING gin")), b2i(!strings.Contains(b, "USING gin")))
	})
	if err := parallelExec(ctx, e.DSN, 2, indexes); err != nil {
		return err
	}
	t3 := time.Now()
	logf("%s: %d indexes rebuilt in %s", e.Kind, len(indexes), t3.Sub(t2).Round(time.Millisecond))
	for _, s := range fks {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	logf("%s: %d foreign keys checked in %s", e.Kind, len(fks), time.Since(t3).Round(time.Millisecond))
	return nil
}

// parallelExec runs stmts on up to workers connections of their own.
func parallelExec(ctx context.Context, dsn string, workers int, stmts []string) error {
	ch := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				errs <- err
				for range ch {
				}
				return
			}
			defer conn.Close(ctx)
			var failed error
			for s := range ch {
				if failed != nil {
					continue
				}
				if _, err := conn.Exec(ctx, s); err != nil {
					failed = fmt.Errorf("%s: %w", s, err)
				}
			}
			errs <- failed
		}()
	}
	for _, s := range stmts {
		ch <- s
	}
	close(ch)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
