package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/postgres"
	"github.com/posgate/posgate/internal/sqlite"
	"github.com/posgate/posgate/internal/storekit"
)

// The floors of the read rows: for each row, the statement(s) its request
// needs, which the floor server (floorserver.go) runs bare behind a bare
// net/http handler, on the same driver and pool settings as posgate, with
// the same key tuples wrk draws for the row, in the same run. A row's
// ratio to its floor is posgate's rate over the floor server's, and its
// CPU per request is compared with the floor server's plus, on
// PostgreSQL, the database's.
//
// To change a row's floor, edit its entry: sql holds the statements by
// name ($1, $2… on both stores; SQLite gets them as ?1, ?2…), with a
// sqlite or postgres variant where the dialects differ, and calls turns a
// key tuple of the row into the statements to run and their arguments;
// or, where a statement's arguments come from another's answer (the
// keyword search), run runs them.
// Rows without an entry (the writes, the imports, the overload) have
// floors of their own or none.

// tenant is the data set's tenancy that every statement is scoped to.
type tenant struct{ pos, company string }

// floorSQL is one statement; sqlite and postgres, when set, replace sql on
// that store.
type floorSQL struct{ sql, sqlite, postgres string }

// text is the statement on a store ("sqlite" or "postgres").
func (s floorSQL) text(kind string) string {
	switch {
	case kind == "sqlite" && s.sqlite != "":
		return s.sqlite
	case kind == "postgres" && s.postgres != "":
		return s.postgres
	}
	return s.sql
}

// floorCall is one statement to run for a request, by its name in the
// row's sql, with its arguments.
type floorCall struct {
	name string
	args []any
}

// readFloor is the floor of one read row: calls, or run when the row's
// statements depend on one another's answers.
type readFloor struct {
	sql   map[string]floorSQL
	calls func(t tenant, kind string, key []string) []floorCall
	// run, when set, replaces calls: it runs the row's statements (of sql,
	// which the floor server prepares) for a key tuple on db and returns
	// the rows of the answer.
	run func(ctx context.Context, db floorDB, t tenant, key []string) ([][]any, error)
}

// readFloors holds each read row's floor, by the row's name (as in -only).
var readFloors = map[string]readFloor{
	"couponLookupV2": {
		sql: map[string]floorSQL{
			"coupon": {sql: `SELECT * FROM coupons WHERE pos_system_id = $1 AND company_id = $2 AND code_norm = $3`},
		},
		calls: func(t tenant, _ string, k []string) []floorCall {
			return []floorCall{{"coupon", []any{t.pos, t.company, posgate.Fold(k[1])}}}
		},
	},
	"couponSearch":          couponSearchFloor,
	"couponSearch+location": couponSearchFloor,
	"loyaltyUsersLookup":    userSearchFloor,
	"carousel": {
		sql: map[string]floorSQL{
			"settings": {sql: `SELECT * FROM carousel_settings WHERE pos_system_id = $1 AND company_id = $2`},
		},
		calls: func(t tenant, _ string, _ []string) []floorCall {
			return []floorCall{{"settings", []any{t.pos, t.company}}}
		},
	},
	"receiptPromotion": {
		sql: map[string]floorSQL{
			"promotion": {sql: `SELECT * FROM receipt_promotions WHERE pos_system_id = $1 AND company_id = $2 AND location_id IN ($3, '')
				ORDER BY location_id DESC LIMIT 1`},
		},
		calls: func(t tenant, _ string, k []string) []floorCall {
			return []floorCall{{"promotion", []any{t.pos, t.company, k[0]}}}
		},
	},
	"settingsLookup": {
		sql: map[string]floorSQL{
			"company": {sql: `SELECT * FROM companies WHERE pos_system_id = $1 AND company_id = $2`},
		},
		calls: func(t tenant, _ string, k []string) []floorCall {
			return []floorCall{{"company", []any{t.pos, k[0]}}}
		},
	},
	"activeCoupons": {
		// The first page (50) of a location's anonymous active coupons and
		// their count.
		sql: map[string]floorSQL{
			"page": {
				sqlite: `SELECT c.*, (SELECT count(*) FROM coupons a INDEXED BY coupons_active WHERE ` + activeFloorSQLite + `) FROM coupons c
					WHERE c.pos_system_id = $1 AND c.company_id = $2 AND c.code_norm IN
					(SELECT a.code_norm FROM coupons a INDEXED BY coupons_active WHERE ` + activeFloorSQLite + ` ORDER BY a.code_norm LIMIT 50)
					ORDER BY c.code_norm`,
				postgres: `SELECT c.*, (SELECT count(*) FROM coupons a WHERE ` + activeFloorPostgres + `) FROM coupons c
					WHERE c.pos_system_id = $1 AND c.company_id = $2 AND c.code_norm IN
					(SELECT a.code_norm FROM coupons a WHERE ` + activeFloorPostgres + ` ORDER BY a.code_norm LIMIT 50) ORDER BY c.code_norm`,
			},
		},
		calls: func(t tenant, kind string, k []string) []floorCall {
			return []floorCall{{"page", []any{t.pos, t.company, floorNow(kind), k[0]}}}
		},
	},
}

// The active coupons' condition on coupons a: $1 POS system, $2 company,
// $3 now, $4 location.
const (
	activeFloorSQLite = `a.pos_system_id = $1 AND a.company_id = $2 AND a.status = 'Issued' AND a.user_id IS NULL
		AND a.email IS NULL AND a.phone IS NULL AND (a.available_until IS NULL OR a.available_until >= $3)
		AND (a.location_ids IS NULL OR EXISTS (SELECT 1 FROM json_each(a.location_ids) WHERE value = $4))`
	activeFloorPostgres = `a.pos_system_id = $1 AND a.company_id = $2 AND a.status = 'Issued' AND a.user_id IS NULL
		AND a.email IS NULL AND a.phone IS NULL AND (a.available_until IS NULL OR a.available_until >= $3)
		AND (a.location_ids IS NULL OR $4::text = ANY (a.location_ids))`
)

// couponSearchFloor is the coupon search's: by code, or the coupons of an
// e-mail or phone and of the users who have it (the key's first field
// says which), up to a page and one.
var couponSearchFloor = readFloor{
	sql: map[string]floorSQL{
		"code":  {sql: `SELECT * FROM coupons WHERE pos_system_id = $1 AND company_id = $2 AND code_norm = $3`},
		"email": {sql: couponsOfSQL("email_norm", ""), sqlite: couponsOfSQL("email_norm", "sqlite")},
		"phone": {sql: couponsOfSQL("phone_digits", ""), sqlite: couponsOfSQL("phone_digits", "sqlite")},
	},
	calls: func(t tenant, _ string, k []string) []floorCall {
		v := k[1]
		switch k[0] {
		case "email":
			v = posgate.FoldEmail(v)
		case "phone":
			v = posgate.PhoneDigits(v)
		default:
			v = posgate.Fold(v)
		}
		return []floorCall{{k[0], []any{t.pos, t.company, v}}}
	},
}

// couponsOfSQL is the coupon search's statement by e-mail or phone
// (column): the coupons that hold it and the coupons of the users who
// have it. On SQLite, the indexes and the join's order are named, as
// posgate's statement names them: left to itself, the planner walks the
// company's coupons for the join.
func couponsOfSQL(column, kind string) string {
	index := map[string]string{"email_norm": "email", "phone_digits": "phone"}[column]
	if kind == "sqlite" {
		return `SELECT * FROM coupons INDEXED BY coupons_by_` + index + ` WHERE pos_system_id = $1 AND company_id = $2 AND ` + column + ` = $3
			UNION SELECT c.* FROM loyalty_users u INDEXED BY loyalty_users_by_` + index + `
				CROSS JOIN coupons c INDEXED BY coupons_by_user ON c.pos_system_id = u.pos_system_id AND c.company_id = u.company_id AND c.user_id = u.user_id
				WHERE u.pos_system_id = $1 AND u.company_id = $2 AND u.` + column + ` = $3 LIMIT 51`
	}
	return `SELECT * FROM coupons WHERE pos_system_id = $1 AND company_id = $2 AND ` + column + ` = $3
		UNION SELECT c.* FROM loyalty_users u JOIN coupons c ON c.pos_system_id = u.pos_system_id AND c.company_id = u.company_id
			AND c.user_id = u.user_id WHERE u.pos_system_id = $1 AND u.company_id = $2 AND u.` + column + ` = $3 LIMIT 51`
}

// floorNow is the current time as a store compares it: SQLite's stored
// text, PostgreSQL's timestamptz.
func floorNow(kind string) any {
	now := time.Now().UTC()
	if kind == "sqlite" {
		return now.Format("2006-01-02T15:04:05.000000Z")
	}
	return now
}

// sqliteParams turns a statement's $1, $2… into SQLite's ?1, ?2….
func sqliteParams(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
			b.WriteByte('?')
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// userSearchFloor is the keyword search's: the store's own statements
// (sqlite.UserSearchStatements, postgres.UserSearchStatements) driven by
// storekit.SearchUserIDs as the store drives them (the exact terms, then
// the prefixes' ranges or buckets; the store's ExactFirst and ScanLimit),
// with the keyword parsed as posgate parses it (posgate.ParseUserKeyword),
// then the statement that reads the answer's users (at most 50). On
// PostgreSQL each step is one batch on the generic plans, as the store
// sends it.
var userSearchFloor = readFloor{
	sql: map[string]floorSQL{
		"exact":     {sqlite: sqlite.UserSearchStatements.Exact, postgres: postgres.UserSearchStatements.Exact},
		"count":     {sqlite: sqlite.UserSearchStatements.Count, postgres: postgres.UserSearchStatements.Count},
		"range":     {sqlite: sqlite.UserSearchStatements.Range, postgres: postgres.UserSearchStatements.Range},
		"bucket":    {sqlite: sqlite.UserSearchStatements.Bucket, postgres: postgres.UserSearchStatements.Bucket},
		"prefix":    {sqlite: sqlite.UserSearchStatements.Prefix, postgres: postgres.UserSearchStatements.Prefix},
		"usersByID": {sqlite: sqlite.UserSearchStatements.UsersByID, postgres: postgres.UserSearchStatements.UsersByID},
	},
	run: func(ctx context.Context, db floorDB, t tenant, key []string) ([][]any, error) {
		k, err := posgate.ParseUserKeyword(key[1])
		if err != nil {
			return nil, err
		}
		// As the store's SearchLoyaltyUsers: its reads take microseconds.
		ctx = storekit.PointRead(ctx)
		switch db := db.(type) {
		case *sqliteFloorDB:
			return sqliteUserSearch(ctx, db, t, k)
		case *pgFloorDB:
			return pgUserSearch(ctx, db, t, k)
		}
		return nil, fmt.Errorf("no keyword search floor on %T", db)
	},
}

// sqliteUserSearch runs sqlite.UserSearchStatements, prepared, one
// statement at a time, as the SQLite store does.
func sqliteUserSearch(ctx context.Context, db *sqliteFloorDB, t tenant, k posgate.UserKeyword) ([][]any, error) {
	st := sqlite.UserSearchStatements
	ranks, err := storekit.SearchUserIDs(ctx, k, func(ctx context.Context, qs []storekit.TermQuery) ([][]posgate.UserRank, error) {
		out := make([][]posgate.UserRank, len(qs))
		for i, q := range qs {
			var query string
			var args []any
			switch q.Kind {
			case storekit.TermExact:
				query, args = st.Exact, []any{t.pos, t.company, q.Lo, q.Limit}
			case storekit.TermRange:
				count, err := db.stmt(st.Count)
				if err != nil {
					return nil, err
				}
				if err := count.QueryRowContext(ctx, t.pos, t.company, q.Lo, q.Hi, q.Scan).Scan(&qs[i].Scanned); err != nil {
					return nil, err
				}
				if qs[i].Scanned == 0 || qs[i].Scanned >= q.Scan {
					continue // no match, or SearchUserIDs reads the bucket
				}
				query, args = st.Range, []any{t.pos, t.company, q.Lo, q.Hi, q.Limit}
			case storekit.TermBucket:
				query, args = st.Bucket, []any{t.pos, t.company, q.Bucket, q.Lo, q.Hi, q.Limit}
			default:
				return nil, fmt.Errorf("term query of kind %d on SQLite", q.Kind)
			}
			stmt, err := db.stmt(query)
			if err != nil {
				return nil, err
			}
			rows, err := stmt.QueryContext(ctx, args...)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var r posgate.UserRank
				if err := rows.Scan(&r.Last, &r.First, &r.ID, &r.Key); err != nil {
					rows.Close()
					return nil, err
				}
				out[i] = append(out[i], r)
			}
			if err := rows.Close(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}, st.ExactFirst, st.ScanLimit)
	if err != nil || len(ranks) == 0 {
		return nil, err
	}
	keys := make([]int64, len(ranks))
	for i, r := range ranks {
		keys[i] = r.Key
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	return db.run(ctx, st.UsersByID, []any{string(list)})
}

// pgGenericPlan is the statement that the PostgreSQL store sends first in
// each batch of the search so that its statements run on their generic
// plans (internal/postgres, queryGeneric).
const pgGenericPlan = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`

// pgUserSearch runs postgres.UserSearchStatements as the PostgreSQL store
// does: each step of SearchUserIDs in one batch, then the users in one.
func pgUserSearch(ctx context.Context, db *pgFloorDB, t tenant, k posgate.UserKeyword) ([][]any, error) {
	st := postgres.UserSearchStatements
	ranks, err := storekit.SearchUserIDs(ctx, k, func(ctx context.Context, qs []storekit.TermQuery) ([][]posgate.UserRank, error) {
		out := make([][]posgate.UserRank, len(qs))
		b := &pgx.Batch{}
		b.Queue(pgGenericPlan)
		for i, q := range qs {
			var qq *pgx.QueuedQuery
			switch q.Kind {
			case storekit.TermExact:
				qq = b.Queue(st.Exact, t.pos, t.company, q.Lo, q.Limit)
			case storekit.TermPrefix:
				qq = b.Queue(st.Prefix, t.pos, t.company, q.Bucket, q.Lo, q.Hi, q.Limit, q.Scan)
			case storekit.TermBucket:
				qq = b.Queue(st.Bucket, t.pos, t.company, q.Bucket, q.Lo, q.Hi, q.Limit)
			default:
				return nil, fmt.Errorf("term query of kind %d on PostgreSQL", q.Kind)
			}
			qq.Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var r posgate.UserRank
					if err := rows.Scan(&r.Last, &r.First, &r.ID); err != nil {
						return err
					}
					out[i] = append(out[i], r)
				}
				return rows.Err()
			})
		}
		return out, db.pool.SendBatch(ctx, b).Close()
	}, st.ExactFirst, st.ScanLimit)
	if err != nil || len(ranks) == 0 {
		return nil, err
	}
	var users [][]any
	b := &pgx.Batch{}
	b.Queue(pgGenericPlan)
	b.Queue(st.UsersByID, t.pos, t.company, storekit.RankIDs(ranks)).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				return err
			}
			users = append(users, v)
		}
		return rows.Err()
	})
	return users, db.pool.SendBatch(ctx, b).Close()
}
