package sqlite

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/posgate/posgate"
)

// TestLargeImportRebuildsBucketIndex: an import of bulkTermsAfter users or
// more inserts their terms at the end and builds the bucket index again;
// the trigger and the index are back, and a search finds the users through
// both ways of a lookup. A user created afterwards is indexed by the trigger.
func TestLargeImportRebuildsBucketIndex(t *testing.T) {
	defer func(n int) { bulkTermsAfter = n }(bulkTermsAfter)
	bulkTermsAfter = 100
	ctx := t.Context()
	db := open(t, filepath.Join(t.TempDir(), "t.db"), Options{})
	if err := db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "pos"}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCompany(ctx, &posgate.Company{POSSystemID: "pos", ID: "co", Status: posgate.StatusActive}); err != nil {
		t.Fatal(err)
	}
	users := func(yield func(*posgate.LoyaltyUser, error) bool) {
		for i := range 300 {
			if !yield(&posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("u%03d", i),
				FirstName: "Pat", LastName: fmt.Sprintf("Lee%03d", 299-i), Email: fmt.Sprintf("pat%03d@example.com", i)}}, nil) {
				return
			}
		}
	}
	if n, err := db.ImportLoyaltyUsers(ctx, users); err != nil || n != 300 {
		t.Fatalf("ImportLoyaltyUsers = %d, %v", n, err)
	}
	if err := db.CreateLoyaltyUser(ctx, &posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: "late", FirstName: "Patrice", LastName: "Aa"}}); err != nil {
		t.Fatal(err)
	}
	var schema []string
	rows, err := db.read.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE name IN ('loyalty_user_terms_insert', 'loyalty_user_terms_bucket') ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		schema = append(schema, s)
	}
	rows.Close()
	if want := []string{"loyalty_user_terms_bucket", "loyalty_user_terms_insert"}; !slices.Equal(schema, want) {
		t.Errorf("schema after the import: %v, want %v", schema, want)
	}
	for kw, want := range map[string][]string{
		"pat":       {"u299", "u298", "u297"}, // 300 exact: the first 50 by last name (Lee000 is u299)
		"pa t":      nil,
		"lee":       {"u299", "u298", "u297"}, // the bucket, in rank order
		"patr":      {"late"},                 // a range of one
		"pat123@":   {"u123"},
		"lee2":      {"u099", "u098", "u097"}, // a range of 100: Lee200 is u099
		"example.c": {"u299", "u298", "u297"}, // a range of 300: then the bucket
	} {
		k, _ := posgate.ParseUserKeyword(kw)
		got, err := db.SearchLoyaltyUsers(ctx, "pos", "co", k)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, u := range got {
			ids = append(ids, u.ID)
		}
		if len(want) > 0 && slices.Contains([]string{"pat", "lee", "example.c"}, kw) && len(ids) != posgate.MaxUserMatches {
			t.Errorf("%q: %d users, want %d", kw, len(ids), posgate.MaxUserMatches)
		}
		if len(ids) < len(want) || !slices.Equal(ids[:len(want)], want) {
			t.Errorf("%q: %v, want it to start with %v", kw, ids, want)
		}
	}
}
