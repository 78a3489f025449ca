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

// TestLoyaltyUserTerms checks that every way of writing a user keeps its
// rows of loyalty_user_terms in step (the triggers of migration 0022), and
// that opening a database whose users lack their terms (stored before the
// terms were kept) computes them.
func TestLoyaltyUserTerms(t *testing.T) {
	ctx := context.Background()
	db, dsn := companyDB(t)
	if err := db.CreateLoyaltyUser(ctx, &posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: "a",
		FirstName: "Ärne", LastName: "Brook", Phone: "+1 555 0100"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ImportLoyaltyUsers(ctx, seq([]*posgate.LoyaltyUser{{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: "b",
		FirstName: "Cleo", LastName: "Dunn", Email: "Cleo@Mail.test"}}})); err != nil {
		t.Fatal(err)
	}
	terms := `SELECT user_id || ' ' || last_norm || ' ' || first_norm || ' ' || replace(replace(replace(term, E'\x01', '@'), E'\x02', '<'), E'\x03', '>')
		FROM loyalty_user_terms ORDER BY 1`
	want := []string{"a brook ärne <00105551", "a brook ärne >15550100", "a brook ärne >5550100", "a brook ärne arne", "a brook ärne brook",
		"b dunn cleo @mail.test", "b dunn cleo cleo", "b dunn cleo cleo@mail.test", "b dunn cleo dunn"}
	if got := query[string](t, dsn, terms); !slices.Equal(got, want) {
		t.Errorf("terms after create and import:\n%q\nwant\n%q", got, want)
	}
	name := "Eve"
	if _, err := db.UpdateLoyaltyUser(ctx, "pos", "co", "a", posgate.LoyaltyUserUpdate{FirstName: &name}); err != nil {
		t.Fatal(err)
	}
	want = []string{"a brook eve <00105551", "a brook eve >15550100", "a brook eve >5550100", "a brook eve brook", "a brook eve eve",
		"b dunn cleo @mail.test", "b dunn cleo cleo", "b dunn cleo cleo@mail.test", "b dunn cleo dunn"}
	if got := query[string](t, dsn, terms); !slices.Equal(got, want) {
		t.Errorf("terms after a rename:\n%q\nwant\n%q", got, want)
	}
	// A balance change writes none of them.
	if _, err := db.UpdateLoyaltyUser(ctx, "pos", "co", "a", posgate.LoyaltyUserUpdate{AddPoints: 5}); err != nil {
		t.Fatal(err)
	}
	if got := query[string](t, dsn, terms); !slices.Equal(got, want) {
		t.Errorf("terms after a balance change:\n%q\nwant\n%q", got, want)
	}
	// As a database migrated from before the terms: none kept.
	query[string](t, dsn, `WITH x AS (UPDATE loyalty_users SET search_terms = NULL RETURNING '') SELECT '' FROM x`)
	query[string](t, dsn, `WITH x AS (DELETE FROM loyalty_user_terms RETURNING '') SELECT '' FROM x`)
	open(t, dsn, postgres.Options{})
	if got := query[string](t, dsn, terms); !slices.Equal(got, want) {
		t.Errorf("terms computed at open:\n%q\nwant\n%q", got, want)
	}
}

// TestLargeImport runs an import large enough for the statistics refresh
// that follows it, and searches the users it stored.
func TestLargeImport(t *testing.T) {
	ctx := context.Background()
	db, dsn := companyDB(t)
	const n = 10_000
	users := make([]*posgate.LoyaltyUser, n)
	for i := range users {
		users[i] = &posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("u%05d", i),
			FirstName: "Pat", LastName: "Lee", Email: fmt.Sprintf("pat%05d@example.com", i)}}
	}
	if got, err := db.ImportLoyaltyUsers(ctx, seq(users)); err != nil || got != n {
		t.Fatalf("ImportLoyaltyUsers = %d, %v", got, err)
	}
	if got := query[float32](t, dsn, `SELECT reltuples FROM pg_class WHERE oid = 'loyalty_user_terms'::regclass`); got[0] != 4*n {
		t.Errorf("loyalty_user_terms' reltuples after the import: %v, want %d", got[0], 4*n)
	}
	k, _ := posgate.ParseUserKeyword("pat01234@")
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
