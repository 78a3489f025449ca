package main

import (
	"strings"
	"time"

	"github.com/posgate/posgate"
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
// key tuple of the row into the statements to run and their arguments.
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

// readFloor is the floor of one read row.
type readFloor struct {
	sql   map[string]floorSQL
	calls func(t tenant, kind string, key []string) []floorCall
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
	"loyaltyUsersLookup": {
		// The users whose first name, last name or e-mail start with the
		// folded keyword, or whose phone digits start with its digits, up to
		// 51 of each (a page and one).
		sql: map[string]floorSQL{
			"users": {sql: `SELECT * FROM (SELECT * FROM loyalty_users WHERE pos_system_id = $1 AND company_id = $2
					AND first_norm >= $3 AND first_norm < $4 ORDER BY first_norm LIMIT 51) a
				UNION SELECT * FROM (SELECT * FROM loyalty_users WHERE pos_system_id = $1 AND company_id = $2
					AND last_norm >= $3 AND last_norm < $4 ORDER BY last_norm LIMIT 51) b
				UNION SELECT * FROM (SELECT * FROM loyalty_users WHERE pos_system_id = $1 AND company_id = $2
					AND email_norm >= $3 AND email_norm < $4 ORDER BY email_norm LIMIT 51) c
				UNION SELECT * FROM (SELECT * FROM loyalty_users WHERE pos_system_id = $1 AND company_id = $2
					AND phone_digits >= $5 AND phone_digits < $6 ORDER BY phone_digits LIMIT 51) d`},
		},
		calls: func(t tenant, _ string, k []string) []floorCall {
			text, digits := posgate.Fold(k[1]), posgate.PhoneDigits(k[1])
			digitsEnd := storekit.PrefixEnd(digits)
			if digits == "" {
				digitsEnd = ""
			}
			return []floorCall{{"users", []any{t.pos, t.company, text, storekit.PrefixEnd(text), digits, digitsEnd}}}
		},
	},
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
