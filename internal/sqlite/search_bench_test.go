package sqlite

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/benchkeys"
	"github.com/posgate/posgate/internal/storekit"
)

// The search benchmarks run on a database that already holds a large data
// set, such as the bench.db that `go run ./bench -large -keep` leaves in its
// work directory (1,000,000 loyalty users and coupons):
//
//	POSGATE_SQLITE_SEARCH_DB=/tmp/posgate-bench-…/bench.db \
//	  go test ./internal/sqlite -run '^$' -bench Search -benchtime 2000x -cpu 1
//
// The keys are drawn from the database's own rows, like the benchmark's:
// the keyword kinds of benchkeys.Kinds for the keyword search; a
// coupon's code, or its owner's e-mail or phone digits for the coupon
// search.
const searchDBEnv = "POSGATE_SQLITE_SEARCH_DB"

// searchBenchKeys is how many keys of each kind a benchmark cycles through.
const searchBenchKeys = 2000

// openSearchDB opens the database named by searchDBEnv, or skips.
func openSearchDB(b *testing.B) *DB {
	b.Helper()
	path := os.Getenv(searchDBEnv)
	if path == "" {
		b.Skip(searchDBEnv + " not set")
	}
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// benchUser is what a keyword is cut from.
type benchUser struct{ pos, company, first, last, email, phone string }

// sampleUsers reads n random loyalty users (fixed seed: the same users on
// every run).
func sampleUsers(b *testing.B, db *DB, n int) []benchUser {
	b.Helper()
	ctx := context.Background()
	var maxKey int64
	if err := db.read.QueryRowContext(ctx, `SELECT MAX(user_key) FROM loyalty_users`).Scan(&maxKey); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var out []benchUser
	for len(out) < n {
		var u benchUser
		err := db.read.QueryRowContext(ctx, `SELECT pos_system_id, company_id, first_name, last_name, email, phone
			FROM loyalty_users WHERE user_key >= ? ORDER BY user_key LIMIT 1`, 1+r.Int64N(maxKey)).
			Scan(&u.pos, &u.company, &u.first, &u.last, &u.email, &u.phone)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func BenchmarkSearchLoyaltyUsers(b *testing.B) {
	db := openSearchDB(b)
	users := sampleUsers(b, db, searchBenchKeys)
	ctx := context.Background()
	for _, kind := range benchkeys.Kinds {
		r := rand.New(rand.NewPCG(3, 4))
		keys := make([]posgate.UserKeyword, len(users))
		for i, u := range users {
			k, err := posgate.ParseUserKeyword(kind.Cut(r.IntN, benchkeys.User{First: u.first, Last: u.last, Email: u.email, Phone: u.phone}))
			if err != nil {
				b.Fatal(err)
			}
			keys[i] = k
		}
		b.Run(kind.Name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			found := 0
			for i := 0; b.Loop(); i++ {
				u := users[i%len(users)]
				got, err := db.SearchLoyaltyUsers(ctx, u.pos, u.company, keys[i%len(keys)])
				if err != nil {
					b.Fatal(err)
				}
				if len(got) == 0 {
					b.Fatalf("keyword %q found nobody, not even the user it was cut from", keys[i%len(keys)].Text)
				}
				found += len(got)
			}
			b.ReportMetric(float64(found)/float64(b.N), "users/op")
			reportCPU(b, cpu0)
		})
	}
}

// BenchmarkUserSearchParts splits the keyword search's cost for the keys
// of BenchmarkSearchLoyaltyUsers: "ranks" looks the answer's users up in
// the terms (userRanks), "cards" reads their cards by rowid alone
// (userCards, the answers precomputed), and "onecard" reads one user's
// card by rowid, against which a card of a full answer compares: what a
// keyword lookup costs per user answered beside a lookup of one row.
func BenchmarkUserSearchParts(b *testing.B) {
	db := openSearchDB(b)
	users := sampleUsers(b, db, searchBenchKeys)
	ctx := storekit.PointRead(context.Background())
	var firsts [][]posgate.UserRank // each answer's first user alone
	for _, kind := range benchkeys.Kinds {
		r := rand.New(rand.NewPCG(3, 4))
		keys := make([]posgate.UserKeyword, len(users))
		answers := make([][]posgate.UserRank, len(users))
		for i, u := range users {
			k, err := posgate.ParseUserKeyword(kind.Cut(r.IntN, benchkeys.User{First: u.first, Last: u.last, Email: u.email, Phone: u.phone}))
			if err != nil {
				b.Fatal(err)
			}
			keys[i] = k
			if answers[i], err = db.userRanks(ctx, u.pos, u.company, k); err != nil || len(answers[i]) == 0 {
				b.Fatalf("%q: %v (%d users)", k.Text, err, len(answers[i]))
			}
			firsts = append(firsts, answers[i][:1])
		}
		b.Run("ranks/"+kind.Name, func(b *testing.B) {
			cpu0 := cpuTime(b)
			found := 0
			for i := 0; b.Loop(); i++ {
				u := users[i%len(users)]
				got, err := db.userRanks(ctx, u.pos, u.company, keys[i%len(keys)])
				if err != nil {
					b.Fatal(err)
				}
				found += len(got)
			}
			b.ReportMetric(float64(found)/float64(b.N), "users/op")
			reportCPU(b, cpu0)
		})
		b.Run("cards/"+kind.Name, func(b *testing.B) {
			cpu0 := cpuTime(b)
			found := 0
			for i := 0; b.Loop(); i++ {
				u := users[i%len(users)]
				got, err := db.userCards(ctx, u.pos, u.company, answers[i%len(answers)])
				if err != nil {
					b.Fatal(err)
				}
				found += len(got)
			}
			b.ReportMetric(float64(found)/float64(b.N), "users/op")
			reportCPU(b, cpu0)
		})
	}
	b.Run("onecard", func(b *testing.B) {
		cpu0 := cpuTime(b)
		for i := 0; b.Loop(); i++ {
			u := users[i%len(users)]
			if _, err := db.userCards(ctx, u.pos, u.company, firsts[i%len(firsts)]); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu0)
	})
}

func BenchmarkSearchCoupons(b *testing.B) {
	db := openSearchDB(b)
	ctx := context.Background()
	var n int64
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM coupons`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	// Every (n/searchBenchKeys)-th coupon in key order, with its owner's
	// e-mail and phone and a location where it is valid (its first, or the
	// company's first).
	rows, err := db.read.QueryContext(ctx, `SELECT c.pos_system_id, c.company_id, c.code, COALESCE(u.email, c.email), COALESCE(u.phone, c.phone),
			COALESCE(c.location_ids ->> '$[0]', (SELECT location_id FROM locations l
				WHERE l.pos_system_id = c.pos_system_id AND l.company_id = c.company_id ORDER BY location_id LIMIT 1))
		FROM (SELECT pos_system_id, company_id, code_norm FROM (
				SELECT pos_system_id, company_id, code_norm, row_number() OVER (ORDER BY pos_system_id, company_id, code_norm) AS rn FROM coupons)
			WHERE rn % ? = 0) s
		CROSS JOIN coupons c ON c.pos_system_id = s.pos_system_id AND c.company_id = s.company_id AND c.code_norm = s.code_norm
		LEFT JOIN loyalty_users u ON u.pos_system_id = c.pos_system_id AND u.company_id = c.company_id AND u.user_id = c.user_id`,
		max(n/searchBenchKeys, 1))
	if err != nil {
		b.Fatal(err)
	}
	type key struct{ pos, company, code, email, phone, location string }
	var keys []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.pos, &k.company, &k.code, &k.email, &k.phone, &k.location); err != nil {
			b.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil || len(keys) == 0 {
		b.Fatalf("sample coupons: %v (%d)", err, len(keys))
	}
	for _, by := range []string{"code", "email", "phone"} {
		for _, withLocation := range []bool{false, true} {
			name := by
			if withLocation {
				name += "+location"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime(b)
				found := 0
				for i := 0; b.Loop(); i++ {
					k := keys[i%len(keys)]
					q := posgate.CouponQuery{POSSystemID: k.pos, CompanyIDs: []string{k.company}, Limit: 10}
					switch by {
					case "code":
						q.Code = strings.ToLower(k.code)
					case "email":
						q.Email = strings.ToUpper(k.email)
					default:
						q.Phone = posgate.PhoneDigits(k.phone)
					}
					if withLocation {
						q.LocationID = k.location
					}
					p, err := db.SearchCoupons(ctx, q)
					if err != nil {
						b.Fatal(err)
					}
					if p.Total == 0 {
						b.Fatalf("%+v found nothing", q)
					}
					found += p.Total
				}
				b.ReportMetric(float64(found)/float64(b.N), "coupons/op")
				reportCPU(b, cpu0)
			})
		}
	}
}

// cpuTime is the CPU time (user and system) the process has used: on a
// shared machine, the CPU a search costs varies far less than its wall
// time.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since cpu0.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
