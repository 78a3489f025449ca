package sqlite

import (
	"context"
	"database/sql"
	"testing"

	"github.com/posgate/posgate"
)

// BenchmarkSearchCouponsAgainstFloor runs the coupon search by code,
// e-mail and phone of one company through the store and, beside it, the
// benchmark's floor statements for the same keys (bench/floors.go,
// couponSearchFloor: the coupons of the key, read bare), on the database of
// searchDBEnv:
//
//	POSGATE_SQLITE_SEARCH_DB=…/bench.db go test ./internal/sqlite -run '^$' \
//	  -bench SearchCouponsAgainstFloor -benchtime 4000x -cpu 1
func BenchmarkSearchCouponsAgainstFloor(b *testing.B) {
	db := openSearchDB(b)
	ctx := context.Background()
	rows, err := db.read.QueryContext(ctx, `SELECT c.pos_system_id, c.company_id, c.code, COALESCE(u.email, c.email, ''), COALESCE(u.phone, c.phone, '')
		FROM coupons c LEFT JOIN loyalty_users u ON u.pos_system_id = c.pos_system_id AND u.company_id = c.company_id AND u.user_id = c.user_id
		WHERE abs(random()) % 50 = 0 LIMIT ?`, searchBenchKeys)
	if err != nil {
		b.Fatal(err)
	}
	type key struct{ pos, company, code, email, phone string }
	var keys []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.pos, &k.company, &k.code, &k.email, &k.phone); err != nil {
			b.Fatal(err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if len(keys) == 0 {
		b.Fatal("no coupons")
	}
	of := func(index, column string) string {
		return `SELECT * FROM coupons INDEXED BY coupons_by_` + index + ` WHERE pos_system_id = ?1 AND company_id = ?2 AND ` + column + ` = ?3
			UNION SELECT c.* FROM loyalty_users u INDEXED BY loyalty_users_by_` + index + `
				CROSS JOIN coupons c INDEXED BY coupons_by_user ON c.pos_system_id = u.pos_system_id AND c.company_id = u.company_id AND c.user_id = u.user_id
				WHERE u.pos_system_id = ?1 AND u.company_id = ?2 AND u.` + column + ` = ?3 LIMIT 51`
	}
	floors := map[string]string{
		"code":  `SELECT * FROM coupons WHERE pos_system_id = ?1 AND company_id = ?2 AND code_norm = ?3`,
		"email": of("email", "email_norm"),
		"phone": of("phone", "phone_digits"),
	}
	for _, by := range []string{"code", "email", "phone"} {
		b.Run("floor/"+by, func(b *testing.B) {
			st, err := db.read.PrepareContext(ctx, floors[by])
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			cpu0 := cpuTime(b)
			for i := 0; b.Loop(); i++ {
				k := keys[i%len(keys)]
				v := map[string]string{"code": posgate.Fold(k.code), "email": posgate.FoldEmail(k.email), "phone": posgate.PhoneDigits(k.phone)}[by]
				rows, err := st.QueryContext(ctx, k.pos, k.company, v)
				if err != nil {
					b.Fatal(err)
				}
				cols, _ := rows.Columns()
				vals := make([]sql.RawBytes, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				for rows.Next() {
					if err := rows.Scan(ptrs...); err != nil {
						b.Fatal(err)
					}
				}
				rows.Close()
			}
			reportCPU(b, cpu0)
		})
		b.Run("store/"+by, func(b *testing.B) {
			cpu0 := cpuTime(b)
			for i := 0; b.Loop(); i++ {
				k := keys[i%len(keys)]
				q := posgate.CouponQuery{POSSystemID: k.pos, CompanyIDs: []string{k.company}, Limit: 20}
				switch by {
				case "code":
					q.Code = k.code
				case "email":
					q.Email = k.email
				default:
					q.Phone = k.phone
				}
				if _, err := db.SearchCoupons(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0)
		})
	}
}
