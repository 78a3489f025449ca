package sqlite

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/storetest"
)

// activeBenchRows names the number of owned coupons BenchmarkActiveCoupons
// loads (1,000,000 by default, the benchmarks' large data set):
//
//	go test ./internal/sqlite -run '^$' -bench ActiveCoupons -benchtime 2000x
const activeBenchRows = "POSGATE_ACTIVE_BENCH_ROWS"

// BenchmarkActiveCoupons measures a page of active coupons in a company
// that also holds a million owned coupons, and checks that both statements
// read the partial index coupons_active rather than the company's coupons.
func BenchmarkActiveCoupons(b *testing.B) {
	owned := 1_000_000
	if v := os.Getenv(activeBenchRows); v != "" {
		var err error
		if owned, err = strconv.Atoi(v); err != nil {
			b.Fatalf("%s: %v", activeBenchRows, err)
		}
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "active.db"), Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	storetest.LoadActiveCouponBench(b, db, owned, now)
	if _, err := db.write.ExecContext(b.Context(), `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	for name, query := range map[string]string{"page": activePageSQL, "count": activeCountSQL} {
		rows, err := db.read.QueryContext(b.Context(), `EXPLAIN QUERY PLAN `+query, storetest.ActiveBenchPOS, storetest.ActiveBenchCompany,
			formatTime(now), storetest.ActiveBenchLocation, 20, 0)
		if err != nil {
			b.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				b.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		b.Logf("%s plan: %s", name, strings.Join(plan, "; "))
		for _, step := range plan {
			if step == "SCAN a" || step == "SCAN c" || strings.HasPrefix(step, "SCAN a ") || strings.HasPrefix(step, "SCAN c ") {
				b.Fatalf("%s statement walks the table: %s", name, step)
			}
		}
		if !strings.Contains(strings.Join(plan, ";"), "coupons_active") {
			b.Fatalf("%s statement does not use coupons_active: %v", name, plan)
		}
	}
	storetest.BenchActiveCoupons(b, db, now)
}
