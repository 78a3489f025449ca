package postgres

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/storetest"
)

// activeBenchRows names the number of owned coupons BenchmarkActiveCoupons
// loads (1,000,000 by default, the benchmarks' large data set), into a
// schema of its own in POSGATE_TEST_POSTGRES_DSN:
//
//	go test ./internal/postgres -run '^$' -bench ActiveCoupons -benchtime 2000x
const activeBenchRows = "POSGATE_ACTIVE_BENCH_ROWS"

// BenchmarkActiveCoupons measures a page of active coupons in a company
// that also holds a million owned coupons, and checks that the generic plans
// of both statements read the partial index coupons_active, never the
// company's coupons (a sequential scan, or the primary key beyond the
// page's own coupons).
func BenchmarkActiveCoupons(b *testing.B) {
	owned := 1_000_000
	if v := os.Getenv(activeBenchRows); v != "" {
		var err error
		if owned, err = strconv.Atoi(v); err != nil {
			b.Fatalf("%s: %v", activeBenchRows, err)
		}
	}
	dsn := pgtest.DSN(b)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := Open(b.Context(), dsn, Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	storetest.LoadActiveCouponBench(b, db, owned, now)
	ctx := b.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	// The state autovacuum reaches soon after a bulk load (see bench).
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) coupons`); err != nil {
		b.Fatal(err)
	}
	for name, query := range map[string]string{"page": activePageSQL, "count": activeCountSQL} {
		args := []any{storetest.ActiveBenchPOS, storetest.ActiveBenchCompany, now, storetest.ActiveBenchLocation}
		if name == "page" {
			args = append(args, 20, 0)
		}
		plan := genericPlan(b, conn, "active_"+name, query, args)
		b.Logf("%s plan:\n%s", name, plan)
		if !keepsToActiveIndex(plan) {
			b.Fatalf("%s statement does not keep to coupons_active:\n%s", name, plan)
		}
	}
	storetest.BenchActiveCoupons(b, db, now)
}

// genericPlan explains the generic plan of query (the one queryGeneric
// runs) with args, as the prepared statement name.
func genericPlan(b *testing.B, conn *pgx.Conn, name, query string, args []any) string {
	b.Helper()
	ctx := b.Context()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Prepare(ctx, name, query); err != nil {
		b.Fatal(err)
	}
	placeholders := make([]string, len(args))
	for i := range args {
		placeholders[i] = "$" + strconv.Itoa(i+1)
	}
	// The simple protocol writes the arguments into EXECUTE's text.
	rows, err := conn.Query(ctx, `EXPLAIN EXECUTE `+name+`(`+strings.Join(placeholders, ", ")+`)`, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		b.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// keepsToActiveIndex reports whether plan finds the coupons by an index-only
// scan of coupons_active and touches the primary key only to read the
// page's coupons, one code each.
func keepsToActiveIndex(plan string) bool {
	if !strings.Contains(plan, "Index Only Scan using coupons_active") || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Bitmap") {
		return false
	}
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		if strings.Contains(l, "coupons_pkey") && (i+1 == len(lines) || !strings.Contains(lines[i+1], "code_norm = a.code_norm")) {
			return false
		}
	}
	return true
}
