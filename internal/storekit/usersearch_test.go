package storekit

import (
	"slices"
	"testing"

	"github.com/posgate/posgate"
)

func TestCardUsers(t *testing.T) {
	card := func(id string) *posgate.LoyaltyCard { return &posgate.LoyaltyCard{ID: id, FirstName: "F" + id} }
	for _, tc := range []struct {
		name  string
		ids   []string
		cards []string
		want  []string
	}{
		{"in order", []string{"a", "b", "c"}, []string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"one deleted", []string{"a", "b", "c"}, []string{"a", "c"}, []string{"a", "c"}},
		{"out of order", []string{"a", "b", "c"}, []string{"c", "a", "b"}, []string{"a", "b", "c"}},
		{"out of order, one deleted", []string{"a", "b", "c"}, []string{"b", "a"}, []string{"a", "b"}},
		{"none", []string{"a"}, nil, []string{}},
	} {
		var cards []*posgate.LoyaltyCard
		for _, id := range tc.cards {
			cards = append(cards, card(id))
		}
		got := CardUsers("pos", "co", tc.ids, cards)
		ids := []string{}
		for _, u := range got {
			if u.POSSystemID != "pos" || u.CompanyID != "co" || u.FirstName != "F"+u.ID {
				t.Errorf("%s: user %+v", tc.name, *u)
			}
			ids = append(ids, u.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, ids, tc.want)
		}
	}
}
