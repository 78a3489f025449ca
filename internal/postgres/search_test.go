package postgres_test

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/postgres"
)

func ids(us []*posgate.LoyaltyUser) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.ID
	}
	return out
}

func seq[T any](items []T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, it := range items {
			if !yield(it, nil) {
				return
			}
		}
	}
}

// companyDB opens a store in a schema of its own holding POS system "pos"
// and its company "co"; dsn reaches that schema.
func companyDB(t *testing.T) (db *postgres.DB, dsn string) {
	t.Helper()
	ctx := context.Background()
	dsn = pgtest.DSN(t)
	db = open(t, dsn, postgres.Options{})
	if err := db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "pos"}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCompany(ctx, &posgate.Company{POSSystemID: "pos", ID: "co", Status: posgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
	return db, dsn
}

// TestLoyaltyUserNames checks that every way of writing a user records its
// folded names for the keyword search's name lookup (migration 0005).
func TestLoyaltyUserNames(t *testing.T) {
	ctx := context.Background()
	db, dsn := companyDB(t)
	if err := db.CreateLoyaltyUser(ctx, &posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: "a", FirstName: "Ärne", LastName: "Brook"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ImportLoyaltyUsers(ctx, seq([]*posgate.LoyaltyUser{{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: "b", FirstName: "Cleo", LastName: "Dunn"}}})); err != nil {
		t.Fatal(err)
	}
	name := "Eve"
	if _, err := db.UpdateLoyaltyUser(ctx, "pos", "co", "a", posgate.LoyaltyUserUpdate{FirstName: &name}); err != nil {
		t.Fatal(err)
	}
	got := query[string](t, dsn, `SELECT pos_system_id || '/' || company_id || '/' || name_norm FROM loyalty_user_names ORDER BY name_norm`)
	// A renamed user's old name stays: it finds no one and costs nothing.
	if want := []string{"pos/co/brook", "pos/co/cleo", "pos/co/dunn", "pos/co/eve", "pos/co/ärne"}; !slices.Equal(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
}

// TestLargeImport runs an import large enough for the statistics refresh
// and the merge of the GIN pending lists that follow it, and searches the
// users it stored through the trigram index.
func TestLargeImport(t *testing.T) {
	ctx := context.Background()
	db, _ := companyDB(t)
	const n = 10_000
	users := make([]*posgate.LoyaltyUser, n)
	for i := range users {
		users[i] = &posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("u%05d", i),
			FirstName: "Pat", LastName: "Lee", Email: fmt.Sprintf("pat%05d@example.com", i)}}
	}
	if got, err := db.ImportLoyaltyUsers(ctx, seq(users)); err != nil || got != n {
		t.Fatalf("ImportLoyaltyUsers = %d, %v", got, err)
	}
	k, _ := posgate.ParseUserKeyword("t01234@")
	got, err := db.SearchLoyaltyUsers(ctx, "pos", "co", k)
	if err != nil || len(got) != 1 || got[0].ID != "u01234" {
		t.Fatalf("search after import: %v, %v", ids(got), err)
	}
}

// TestSmallImportIsAnalyzed: an import into a table that has no planner
// statistics yet refreshes them, however small, so that a user is looked up
// by its primary key rather than by a scan of the company's users through
// another index of (POS system, company, …), which PostgreSQL may choose
// when it knows nothing of the table.
func TestSmallImportIsAnalyzed(t *testing.T) {
	ctx := context.Background()
	db, dsn := companyDB(t)
	users := make([]*posgate.LoyaltyUser, 1000)
	for i := range users {
		users[i] = &posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("u%04d", i)}}
	}
	if _, err := db.ImportLoyaltyUsers(ctx, seq(users)); err != nil {
		t.Fatal(err)
	}
	if got := query[float32](t, dsn, `SELECT reltuples FROM pg_class WHERE oid = 'loyalty_users'::regclass`); got[0] != 1000 {
		t.Errorf("reltuples after the import: %v, want 1000", got[0])
	}
	plan := query[string](t, dsn, `EXPLAIN SELECT * FROM loyalty_users WHERE pos_system_id = 'pos' AND company_id = 'co' AND user_id = 'u0007'`)
	if !strings.Contains(strings.Join(plan, "\n"), "loyalty_users_pkey") {
		t.Errorf("a user by its id is not looked up through the primary key:\n%s", strings.Join(plan, "\n"))
	}
}
