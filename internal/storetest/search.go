package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/posgate/posgate"
)

// testLoyaltyUserSearchAgainstScan compares keyword searches over users
// with colliding names (many exact and many substring matches, names inside
// other names, digits in e-mails) with a scan of every user through the
// domain's rules: when at most MaxUserMatches users match, the answer is
// all of them ranked; when more do, it holds MaxUserMatches distinct
// matches, the exact ones first and complete up to the limit, in rank order.
func testLoyaltyUserSearchAgainstScan(t *testing.T, e *env) {
	ctx := t.Context()
	db := e.s
	if err := db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "pos"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"co", "other"} {
		if err := db.CreateCompany(ctx, &posgate.Company{POSSystemID: "pos", ID: c, Status: posgate.StatusActive}); err != nil {
			t.Fatal(err)
		}
	}
	firsts := []string{"Ann", "Anna", "Hanna", "Joanna", "Annabel", "Ben", "Bennet", "Ruben", "Kim", "Kimberly", "Akim", "Mary", "Marya"}
	lasts := []string{"Ann", "Annson", "Benson", "Kim", "Kimball", "Smith", "Smithers", "Goldsmith", "Mary", "Ben"}
	r := rand.New(rand.NewPCG(3, 4))
	var users []*posgate.LoyaltyUser
	for i := range 600 {
		first, last := firsts[r.IntN(len(firsts))], lasts[r.IntN(len(lasts))]
		email := fmt.Sprintf("%s.%s%d@example.com", strings.ToLower(first), strings.ToLower(last), i%97)
		if i%50 == 0 {
			email = strings.ToLower(first) + "@example.com"
		}
		users = append(users, &posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("u%03d", 600-i),
			FirstName: first, LastName: last, Email: email, Phone: fmt.Sprintf("+1 555 %04d", r.IntN(300))}})
	}
	// The other company's users match everything and must never show.
	others := []*posgate.LoyaltyUser{{POSSystemID: "pos", CompanyID: "other", LoyaltyCard: posgate.LoyaltyCard{ID: "x1", FirstName: "Ann", LastName: "Kim", Email: "ann@example.com", Phone: "5550001"}}}
	for _, list := range [][]*posgate.LoyaltyUser{users, others} {
		if _, err := db.ImportLoyaltyUsers(ctx, items(list...)); err != nil {
			t.Fatal(err)
		}
	}
	for _, kw := range []string{"ann", "anna", "Ann", "nna", "ben", "BEN", "bennet", "kim", "akim", "imb", "mary", "smith", "mith",
		"ann@example.com", "anna.smith", "n.sm", "@example", "555", "5550", "555 01", "0123", "12", "ruben", "xyz", "mary.kim1",
		"5550042", "15550007", "ers4", "kimball9", "a.kimb", "ith1", "mith9", "0299", "1 555 0", "@EXAMPLE.COM", "nna.smithers12@example.com"} {
		k, err := posgate.ParseUserKeyword(kw)
		if err != nil {
			continue
		}
		got, err := db.SearchLoyaltyUsers(ctx, "pos", "co", k)
		if err != nil {
			t.Fatalf("%q: %v", kw, err)
		}
		var all, exact []*posgate.LoyaltyUser
		for _, u := range users {
			if k.Matches(u) {
				all = append(all, u)
				if k.Exact(u) {
					exact = append(exact, u)
				}
			}
		}
		if len(all) <= posgate.MaxUserMatches {
			if g, w := ids(got), ids(posgate.RankUsers(k, all)); !slices.Equal(g, w) {
				t.Errorf("%q (%d matches): got %v, want %v", kw, len(all), g, w)
			}
			continue
		}
		if len(got) != posgate.MaxUserMatches {
			t.Errorf("%q (%d matches): got %d users", kw, len(all), len(got))
		}
		if g, w := ids(posgate.RankUsers(k, got)), ids(got); !slices.Equal(g, w) || len(slices.Compact(slices.Sorted(slices.Values(g)))) != len(g) {
			t.Errorf("%q: not ranked or not distinct: %v", kw, w)
		}
		wantExact := ids(posgate.RankUsers(k, exact))
		if n := min(len(wantExact), posgate.MaxUserMatches); !slices.Equal(ids(got)[:n], wantExact[:n]) {
			t.Errorf("%q: exact matches %v, want %v first", kw, ids(got)[:n], wantExact[:n])
		}
		for _, u := range got {
			if u.CompanyID != "co" || !k.Matches(u) {
				t.Errorf("%q: %+v does not match", kw, u)
			}
		}
	}
}
