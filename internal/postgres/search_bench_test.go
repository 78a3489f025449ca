package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/benchkeys"
	"github.com/posgate/posgate/internal/postgres"
)

// envSearchDSN names a DSN whose search_path starts with a schema holding a
// loaded data set (e.g. one kept by `go run ./bench -large -keep`), for the
// search benchmarks below; without it they are skipped. Such a data set is
// too big to build per run, and the figures only mean something at its size.
const envSearchDSN = "POSGATE_SEARCH_BENCH_DSN"

// searchBench opens the store of envSearchDSN and returns it with the first
// company that has loyalty users.
func searchBench(b *testing.B) (*postgres.DB, string, string) {
	b.Helper()
	dsn := os.Getenv(envSearchDSN)
	if dsn == "" {
		b.Skip(envSearchDSN + " not set: search benchmarks skipped")
	}
	ctx := context.Background()
	db, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var pos, company string
	if err := conn.QueryRow(ctx, `SELECT pos_system_id, company_id FROM loyalty_users LIMIT 1`).Scan(&pos, &company); err != nil {
		b.Fatal(err)
	}
	return db, pos, company
}

// sampleRows returns the rows of sql (a query of text columns over a
// repeatable sample) as string slices.
func sampleRows(b *testing.B, sql string) [][]string {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv(envSearchDSN))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		b.Fatal(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]string, error) {
		vals, err := r.Values()
		out := make([]string, len(vals))
		for i, v := range vals {
			if s, ok := v.(string); ok {
				out[i] = s
			}
		}
		return out, err
	})
	if err != nil || len(list) == 0 {
		b.Fatalf("sample: %d rows, %v", len(list), err)
	}
	return list
}

// BenchmarkSearchLoyaltyUsers runs keyword searches of each kind the HTTP
// benchmark draws (3–6 letters of a first or last name, 5–8 characters of
// an e-mail's local part, 4–7 phone digits), cut from sampled users.
func BenchmarkSearchLoyaltyUsers(b *testing.B) {
	db, pos, company := searchBench(b)
	users := sampleRows(b, `SELECT first_name, last_name, email, phone FROM loyalty_users TABLESAMPLE SYSTEM (1) REPEATABLE (7) LIMIT 2000`)
	ctx := context.Background()
	for _, kind := range benchkeys.Kinds {
		r := rand.New(rand.NewPCG(1, 2))
		keys := make([]posgate.UserKeyword, len(users))
		for i, u := range users {
			k, err := posgate.ParseUserKeyword(kind.Cut(r.IntN, benchkeys.User{First: u[0], Last: u[1], Email: u[2], Phone: u[3]}))
			if err != nil {
				b.Fatal(err)
			}
			keys[i] = k
		}
		b.Run(kind.Name, func(b *testing.B) {
			found := 0
			cpu := cpuNow(b)
			for i := 0; b.Loop(); i++ {
				us, err := db.SearchLoyaltyUsers(ctx, pos, company, keys[i%len(keys)])
				if err != nil {
					b.Fatal(err)
				}
				found += len(us)
			}
			cpu.report(b)
			b.ReportMetric(float64(found)/float64(b.N), "users/op")
		})
	}
}

// BenchmarkSearchCoupons runs coupon searches by code, owner e-mail and
// owner phone of sampled coupons, without and with a location where the
// coupon is valid.
func BenchmarkSearchCoupons(b *testing.B) {
	db, pos, company := searchBench(b)
	coupons := sampleRows(b, `SELECT c.code, coalesce(c.email, u.email), coalesce(c.phone, u.phone),
			coalesce(c.location_ids[1], (SELECT min(location_id) FROM locations l WHERE l.pos_system_id = c.pos_system_id AND l.company_id = c.company_id))
		FROM coupons c TABLESAMPLE SYSTEM (1) REPEATABLE (7)
		LEFT JOIN loyalty_users u ON u.pos_system_id = c.pos_system_id AND u.company_id = c.company_id AND u.user_id = c.user_id
		LIMIT 2000`)
	ctx := context.Background()
	for _, kind := range []string{"code", "email", "phone"} {
		for _, loc := range []bool{false, true} {
			name := kind
			if loc {
				name += "+location"
			}
			b.Run(name, func(b *testing.B) {
				found := 0
				cpu := cpuNow(b)
				for i := 0; b.Loop(); i++ {
					c := coupons[i%len(coupons)]
					q := posgate.CouponQuery{POSSystemID: pos, CompanyIDs: []string{company}, Limit: 20}
					switch kind {
					case "code":
						q.Code = strings.ToLower(c[0])
					case "email":
						q.Email = strings.ToUpper(c[1])
					default:
						q.Phone = posgate.PhoneDigits(c[2])
					}
					if loc {
						q.LocationID = c[3]
					}
					page, err := db.SearchCoupons(ctx, q)
					if err != nil {
						b.Fatal(err)
					}
					found += page.Total
				}
				cpu.report(b)
				b.ReportMetric(float64(found)/float64(b.N), "total/op")
			})
		}
	}
}

// cpuMeter reports, per benchmark op, the CPU time of this process and of
// the database backends serving the benchmark (read from /proc, so only for
// a local server readable by this user): the budget of a request is CPU, and
// wall time on a shared machine says little.
type cpuMeter struct {
	self, db time.Duration
}

func cpuNow(b *testing.B) cpuMeter {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	m := cpuMeter{self: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv(envSearchDSN))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = 'pgsearch_bench' AND pid <> pg_backend_pid()`)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command name, which ends with ")": utime and
		// stime are the 12th and 13th, in clock ticks (100 Hz).
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		ut, _ := strconv.ParseInt(fields[11], 10, 64)
		st, _ := strconv.ParseInt(fields[12], 10, 64)
		m.db += time.Duration(ut+st) * 10 * time.Millisecond
	}
	return m
}

// report adds the CPU per op since start.
func (start cpuMeter) report(b *testing.B) {
	end := cpuNow(b)
	b.ReportMetric(float64((end.self-start.self).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64((end.db-start.db).Microseconds())/float64(b.N), "db-µs/op")
}
