package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/sqlite"
)

func TestSQLiteParams(t *testing.T) {
	for in, want := range map[string]string{
		`a = $1 AND b IN ($2, '')`: `a = ?1 AND b IN (?2, '')`,
		`$4::text = ANY (x) $x $`:  `?4::text = ANY (x) $x $`,
	} {
		if got := sqliteParams(in); got != want {
			t.Errorf("sqliteParams(%q) = %q, want %q", in, got, want)
		}
	}
}

// floorEnv loads the data set of a small run into a new SQLite file with
// every read row's setup, as the benchmark does before posgate starts.
func floorEnv(t *testing.T, rows int) *env {
	t.Helper()
	return floorEnvOn(t, "sqlite", rows)
}

// floorEnvOn is floorEnv on a store: "sqlite", or "postgres" in a schema
// of its own of the database at POSGATE_TEST_POSTGRES_DSN (the test is
// skipped without it), dropped when the test ends.
func floorEnvOn(t *testing.T, kind string, rows int) *env {
	t.Helper()
	ctx := context.Background()
	d, err := newDataset()
	if err != nil {
		t.Fatal(err)
	}
	dsn := filepath.Join(t.TempDir(), "bench.db")
	if kind == "postgres" {
		pg := os.Getenv("POSGATE_TEST_POSTGRES_DSN")
		if pg == "" {
			t.Skip("POSGATE_TEST_POSTGRES_DSN is not set")
		}
		var cleanup func()
		if dsn, cleanup, err = prepareStore(ctx, &options{postgres: pg}, kind, &report{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cleanup)
	}
	e := &env{Kind: kind, DSN: dsn, Rows: rows, Data: d, Keys: map[string][][]string{}, loaded: map[string]bool{},
		RowTime: 2 * time.Second, HTTP: http.DefaultClient}
	if e.Store, err = openStore(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	defer func() { e.Store.Close(); e.Store = nil }()
	if err := d.load(ctx, e.Store); err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios {
		if _, ok := readFloors[sc.name]; ok && sc.setup != nil {
			if err := sc.setup(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e
}

// TestReadFloorsFindTheRowsData runs every read floor's statements on
// SQLite for keys of its row: each names a scenario, prepares, and finds
// rows for a good part of the keys (the keys are the data set's, as posgate's answers
// are checked to be found).
func TestReadFloorsFindTheRowsData(t *testing.T) {
	e := floorEnv(t, 2000)
	ctx := context.Background()
	conn, err := sql.Open("sqlite", sqlite.ReadDSN(e.DSN))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	db := &sqliteFloorDB{db: conn, stmts: map[string]*sql.Stmt{}}
	tn := tenant{pos: e.Data.POSSystem, company: e.Data.Company}
	for name, rf := range readFloors {
		var sc *scenario
		for i := range scenarios {
			if scenarios[i].name == name {
				sc = &scenarios[i]
			}
		}
		if sc == nil || sc.keys == nil {
			t.Errorf("floor %s: no read row of that name", name)
			continue
		}
		prepareFloor(t, db, name, rf)
		keys, found := sc.keys(e), 0
		keys = keys[:min(20, len(keys))]
		for _, k := range keys {
			if rf.run != nil {
				rows, err := rf.run(ctx, db, tn, k)
				if err != nil {
					t.Fatalf("floor %s, key %v: %v", name, k, err)
				}
				if len(rows) > 0 {
					found++
				}
				continue
			}
			calls := rf.calls(tn, "sqlite", k)
			if len(calls) == 0 {
				t.Fatalf("floor %s: no statement for key %v", name, k)
			}
			all := 0
			for _, c := range calls {
				if _, ok := rf.sql[c.name]; !ok {
					t.Fatalf("floor %s: call of statement %q, which it does not have", name, c.name)
				}
				rows, err := db.run(ctx, sqliteParams(rf.sql[c.name].text("sqlite")), c.args)
				if err != nil {
					t.Fatalf("floor %s, key %v: %v", name, k, err)
				}
				all += len(rows)
			}
			if all > 0 {
				found++
			}
		}
		// The data set's company has no carousel settings: posgate reads
		// them and signs its own link, and so finds nothing either.
		if name != "carousel" && found < len(keys)/3 {
			t.Errorf("floor %s: rows for %d of %d keys", name, found, len(keys))
		}
	}
}

// prepareFloor prepares rf's SQLite statements on db.
func prepareFloor(t *testing.T, db *sqliteFloorDB, name string, rf readFloor) {
	t.Helper()
	for _, s := range rf.sql {
		q := sqliteParams(s.text("sqlite"))
		if q == "" {
			continue
		}
		var err error
		if db.stmts[q], err = db.db.PrepareContext(context.Background(), q); err != nil {
			t.Fatalf("floor %s: %v", name, err)
		}
	}
}

// TestUserSearchFloorAnswersAsTheStore runs the keyword search's floor on
// each store for the keys wrk draws for loyaltyUsersLookup (internal/benchkeys:
// first and last names, e-mails, phone ends): every key finds users, and
// the same users as the store's own search (which then puts them in rank
// order), so that the floor does the store's lookups and measures no "not
// found".
func TestUserSearchFloorAnswersAsTheStore(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			e := floorEnvOn(t, kind, 2000)
			ctx := context.Background()
			rf := readFloors["loyaltyUsersLookup"]
			if rf.run == nil {
				t.Fatal("loyaltyUsersLookup: the floor does not run the store's search")
			}
			var db floorDB
			if kind == "sqlite" {
				conn, err := sql.Open("sqlite", sqlite.ReadDSN(e.DSN))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				f := &sqliteFloorDB{db: conn, stmts: map[string]*sql.Stmt{}}
				prepareFloor(t, f, "loyaltyUsersLookup", rf)
				db = f
			} else {
				pool, err := pgxpool.New(ctx, e.DSN)
				if err != nil {
					t.Fatal(err)
				}
				defer pool.Close()
				db = &pgFloorDB{pool: pool}
			}
			st, err := openStore(ctx, e.DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			userSearchFloorAsStore(t, e, db, st, rf)
		})
	}
}

// userSearchFloorAsStore runs rf on db and the store's search for the keys
// wrk draws, and compares their answers.
func userSearchFloorAsStore(t *testing.T, e *env, db floorDB, st posgate.Store, rf readFloor) {
	ctx := context.Background()
	tn := tenant{pos: e.Data.POSSystem, company: e.Data.Company}
	keys := userKeywordKeys(e)
	keys = keys[:min(200, len(keys))]
	kinds := map[string]int{}
	for _, k := range keys {
		kw, err := posgate.ParseUserKeyword(k[1])
		if err != nil {
			t.Fatalf("key %v: %v", k, err)
		}
		rows, err := rf.run(ctx, db, tn, k)
		if err != nil {
			t.Fatalf("key %v: %v", k, err)
		}
		users, err := st.SearchLoyaltyUsers(ctx, tn.pos, tn.company, kw)
		if err != nil {
			t.Fatalf("key %v: %v", k, err)
		}
		kinds[keywordKind(kw, users)]++
		if len(rows) == 0 || len(rows) > posgate.MaxUserMatches {
			t.Fatalf("key %v: the floor found %d users", k, len(rows))
		}
		var got, want []string
		for _, r := range rows {
			got = append(got, fmt.Sprint(r[0])) // user_id, the card's first column
		}
		for _, u := range users {
			want = append(want, u.ID)
		}
		slices.Sort(got) // the floor leaves the store's ordering of the answer out
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("key %v: the floor found %v, the store %v", k, got, want)
		}
	}
	if kinds["phone"] == 0 || kinds["email"] == 0 || kinds["name"] == 0 {
		t.Errorf("keys of each kind: %v", kinds)
	}
}

// keywordKind says what a keyword found in users: a phone, a name word or
// an e-mail.
func keywordKind(kw posgate.UserKeyword, users []*posgate.LoyaltyUser) string {
	if kw.Digits != "" {
		return "phone"
	}
	for _, u := range users {
		for _, w := range append(posgate.NameWords(u.FirstName), posgate.NameWords(u.LastName)...) {
			if strings.HasPrefix(w, kw.Text) {
				return "name"
			}
		}
	}
	return "email"
}

// TestSaleFloorRecordsEverySale runs the SQLite sale floor over the sales
// the plan reserves for it, grouped as the sale row's floor and as the
// replay's: every sale is recorded, its coupon redeemed once, its
// customer credited.
func TestSaleFloorRecordsEverySale(t *testing.T) {
	e := floorEnv(t, 10000)
	ctx := context.Background()
	if _, _, err := txPlan(e); err != nil {
		t.Fatal(err)
	}
	keys := e.Keys["floor"]
	if len(keys) < batchItems+200 {
		t.Fatalf("%d sales reserved for the floors", len(keys))
	}
	var sales []*floorSale
	for j, k := range keys[:batchItems+200] {
		sales = append(sales, &floorSale{i: j, loc: k[0], term: k[1], user: k[2], code: k[3]})
	}
	redeemedBefore := countRedeemed(t, e.DSN)
	// In the benchmark's order: the sale's floor, then the replay's.
	for _, run := range []struct {
		sales          []*floorSale
		clients, group int
	}{{sales[batchItems:], 16, maxSaleGroup}, {sales[:batchItems], batchItems, batchItems}} {
		out, err := saleFloor(ctx, "sqlite", e.DSN, e.Data.POSSystem, e.Data.Company, run.sales, run.clients, run.group)
		if err != nil {
			t.Fatal(err)
		}
		if out.Failed != 0 || out.Sales != int64(len(run.sales)) {
			t.Fatalf("%d of %d sales failed", out.Failed, out.Sales)
		}
	}
	db, err := sql.Open("sqlite", sqlite.ReadDSN(e.DSN))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var recorded, linked, redeemed int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM transactions WHERE transaction_id LIKE 'FL%'),
		(SELECT count(*) FROM transaction_coupons tc JOIN transactions t ON t.id = tc.txn_id WHERE t.transaction_id LIKE 'FL%'),
		(SELECT count(*) FROM coupons WHERE status = 'Redeemed')`).Scan(&recorded, &linked, &redeemed); err != nil {
		t.Fatal(err)
	}
	redeemed -= redeemedBefore
	if n := len(sales); recorded != n || linked != n || redeemed != n {
		t.Errorf("%d sales: %d recorded, %d linked, %d coupons redeemed", n, recorded, linked, redeemed)
	}
}

// countRedeemed counts the Redeemed coupons of the SQLite file at dsn.
func countRedeemed(t *testing.T, dsn string) int {
	t.Helper()
	db, err := sql.Open("sqlite", sqlite.ReadDSN(dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM coupons WHERE status = 'Redeemed'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
