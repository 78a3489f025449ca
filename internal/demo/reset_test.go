package demo_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/service"
)

// TestResetRestoresTheDemoDataSet changes a demo store in many ways (new
// objects in many tables, changed and deleted demo objects), resets it, and
// compares every row of every table with what a fresh load wrote: they are
// equal (the clock is fixed, so are the timestamps), on both stores.
func TestResetRestoresTheDemoDataSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		dsn  func(t *testing.T) string
		dump func(t *testing.T, st posgate.Store, dsn string) map[string][]string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "reset.db") }, dumpSQLite},
		{"postgres", func(t *testing.T) string { return pgtest.DSN(t) }, dumpPostgres},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
			now := func() time.Time { return at }
			dsn := tc.dsn(t)
			st, err := app.OpenStore(ctx, dsn, false, now)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := demo.Load(ctx, st); err != nil {
				t.Fatal(err)
			}
			fresh := tc.dump(t, st, dsn)
			if len(fresh["coupons"]) == 0 || len(fresh["clients"]) != 3 || len(fresh["people"]) != 2 {
				t.Fatalf("the fresh dump misses demo rows: %v", fresh)
			}

			at = at.Add(time.Hour)
			change(t, st)
			if changed := tc.dump(t, st, dsn); reflect.DeepEqual(changed, fresh) {
				t.Fatal("the changes changed nothing")
			}
			at = at.Add(-time.Hour) // so that the reset's timestamps are those of the fresh load
			if err := demo.Reset(ctx, st); err != nil {
				t.Fatal(err)
			}
			after := tc.dump(t, st, dsn)
			for table, rows := range fresh {
				if !slices.Equal(after[table], rows) {
					t.Errorf("%s after the reset:\n%s\nfresh:\n%s", table, strings.Join(after[table], "\n"), strings.Join(rows, "\n"))
				}
			}
			for table := range after {
				if _, ok := fresh[table]; !ok {
					t.Errorf("table %s only after the reset", table)
				}
			}
		})
	}
}

// change makes changes through the operator's use cases: new objects, and
// demo objects changed and deleted.
func change(t *testing.T, st posgate.Store) {
	t.Helper()
	ctx := context.Background()
	svc, op := service.New(st, service.Config{}), posgate.LocalOperator()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(svc.CreatePOSSystem(ctx, op, &service.CreatePOSSystemRequest{ID: "pax"}))
	must(svc.CreateCompany(ctx, op, "clover", &service.CreateCompanyRequest{ID: "acme"}))
	must(svc.CreateLocation(ctx, op, "clover", &service.CreateLocationRequest{ID: "LOC789", CompanyID: "demo-company"}))
	must(svc.SetTerminalStatus(ctx, op, "clover", "LOC123", "TERM-99", posgate.StatusActive))
	must(svc.CreateClient(ctx, op, &service.CreateClientRequest{ID: "till", POSSystemID: "clover", Scopes: []string{posgate.ScopePOSIntegration}}))
	must(svc.SetClientDisabled(ctx, op, demo.POSClientID, true))
	must(svc.SetCouponStatus(ctx, op, "clover", "demo-company", demo.DemoIssuedCode, posgate.CouponRedeemed))
	must(svc.IssueCoupon(ctx, op, "clover", "demo-company", &service.CouponInput{Code: "NEW-1", UserID: demo.DemoUserID}))
	must(svc.CreateLoyaltyUser(ctx, op, "clover", "demo-company", &posgate.LoyaltyCard{ID: "ann", FirstName: "Ann"}))
	must(svc.UpdateLoyaltyUser(ctx, op, "clover", "demo-company", demo.DemoUserID, &service.UpdateLoyaltyUserRequest{PointsDelta: 7, StampsDelta: 1}))
	slides, err := svc.ListSlides(ctx, op, "clover", "demo-company")
	if err != nil || len(slides) == 0 {
		t.Fatalf("slides: %v %v", slides, err)
	}
	must(svc.DeleteSlide(ctx, op, "clover", "demo-company", slides[0].ID))
	must(svc.SetPersonDisabled(ctx, op, demo.ManagerEmail, true))
	must(svc.CreatePerson(ctx, op, &service.CreatePersonRequest{Email: "new@example.com", Name: "New", Password: "a-long-password", Role: posgate.RoleAdmin}))
	must(svc.SetClientRedirectURIs(ctx, op, demo.SwaggerClientID, []string{"https://example.com/cb"}))
}

// dumpSQLite reads every row of every table the reset empties (and the FTS
// index of loyalty users), as text, sorted.
func dumpSQLite(t *testing.T, st posgate.Store, _ string) map[string][]string {
	t.Helper()
	read, _ := st.(interface{ Pools() (read, write *sql.DB) }).Pools()
	names := queryStrings(t, read, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
		AND name NOT LIKE 'loyalty_users_fts_%' ORDER BY name`)
	out := map[string][]string{}
	for _, name := range names {
		if posgate.KeptOnReset(name) {
			continue
		}
		rows, err := read.Query(`SELECT * FROM "` + name + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, row(name, cols, vals))
		}
		rows.Close()
		slices.Sort(lines)
		out[name] = lines
	}
	return out
}

// dumpPostgres is dumpSQLite for PostgreSQL, each row as JSON.
func dumpPostgres(t *testing.T, _ posgate.Store, dsn string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, name := range names {
		if posgate.KeptOnReset(name) {
			continue
		}
		rows, _ := conn.Query(ctx, `SELECT (to_jsonb(t) - 'secret_hash')::text FROM `+pgx.Identifier{name}.Sanitize()+` t`)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(lines)
		out[name] = lines
	}
	return out
}

// row renders a SQLite row; a client's secret hash is salted afresh by
// every load, so it is left out.
func row(table string, cols []string, vals []any) string {
	var b strings.Builder
	for i, c := range cols {
		if c == "secret_hash" {
			continue
		}
		v := vals[i]
		if bs, ok := v.([]byte); ok {
			v = string(bs)
		}
		fmt.Fprintf(&b, "%s=%v ", c, v)
	}
	return b.String()
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
