package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/posgate/posgate"
)

// storeFinder is a store as a posgate.CustomerFinder, as the evaluation's
// preview reads it.
type storeFinder struct{ posgate.Store }

func (s storeFinder) FindUser(ctx context.Context, posSystemID, companyID, userID string) (*posgate.LoyaltyUser, error) {
	return s.FindLoyaltyUser(ctx, posSystemID, companyID, userID)
}

// testCustomerMatch checks the store's reads of a customer match outside a
// ledger transaction (UserIDsByEmail, UserIDsByPhone) and MatchCustomer
// over them: folded e-mails, phone digits, two users sharing an e-mail, and
// another company's users never seen.
func testCustomerMatch(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("pos")
	e.company("pos", "co", posgate.AllFeaturesOn())
	e.company("pos", "other", posgate.AllFeaturesOn())
	for _, u := range []*posgate.LoyaltyUser{
		{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: "ann", Email: "Ann@Example.com", Phone: "+1 (555) 000-0001"}},
		{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: "twin-1", Email: "twins@example.com"}},
		{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: "twin-2", Email: "TWINS@example.com"}},
		{POSSystemID: "pos", CompanyID: "other", LoyaltyCard: posgate.LoyaltyCard{ID: "bob", Email: "bob@example.com", Phone: "15550000002"}},
	} {
		if err := e.s.CreateLoyaltyUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(what string, got []string, err error, want ...string) {
		t.Helper()
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s = %q, %v; want %q", what, got, err, want)
		}
	}
	got, err := e.s.UserIDsByEmail(ctx, "pos", "co", posgate.FoldEmail("ANN@example.COM"))
	ids("UserIDsByEmail(ann)", got, err, "ann")
	got, err = e.s.UserIDsByEmail(ctx, "pos", "co", "twins@example.com")
	ids("UserIDsByEmail(twins)", got, err, "twin-1", "twin-2")
	got, err = e.s.UserIDsByEmail(ctx, "pos", "co", "bob@example.com")
	ids("UserIDsByEmail(another company's)", got, err)
	got, err = e.s.UserIDsByPhone(ctx, "pos", "co", "15550000001")
	ids("UserIDsByPhone(ann)", got, err, "ann")
	got, err = e.s.UserIDsByPhone(ctx, "pos", "co", "15550000002")
	ids("UserIDsByPhone(another company's)", got, err)

	for _, tc := range []struct {
		name               string
		card, email, phone string
		want               posgate.CustomerMatch
		read               bool // the match reads the user
	}{
		{name: "card", card: "ann", email: "twins@example.com", want: posgate.CustomerMatch{ID: "ann"}, read: true},
		{name: "unknown card", card: "nobody", email: "ann@example.com", want: posgate.CustomerMatch{Enrollable: true}},
		{name: "another company's card", card: "bob", want: posgate.CustomerMatch{Enrollable: true}},
		{name: "e-mail", email: " ANN@example.com", phone: "15550000002", want: posgate.CustomerMatch{ID: "ann"}},
		{name: "shared e-mail", email: "twins@example.com", phone: "+1 555 000 0001", want: posgate.CustomerMatch{}},
		{name: "unknown e-mail", email: "new@example.com", want: posgate.CustomerMatch{Enrollable: true}},
		{name: "phone", phone: "+1 555 000 0001", want: posgate.CustomerMatch{ID: "ann"}},
		{name: "nothing", want: posgate.CustomerMatch{}},
	} {
		m, err := posgate.MatchCustomer(ctx, storeFinder{e.s}, "pos", "co", tc.card, tc.email, tc.phone)
		if err != nil || m.ID != tc.want.ID || m.Enrollable != tc.want.Enrollable || (m.User != nil) != tc.read ||
			(m.User != nil && m.User.ID != m.ID) {
			t.Errorf("%s: MatchCustomer = %+v, %v; want %+v (user read: %v)", tc.name, m, err, tc.want, tc.read)
		}
	}
}
