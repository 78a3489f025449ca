package storetest

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// couponFixture is a POS system "clover" with companies acme (locations
// A1, A2) and zeta (Z1), and acme's loyalty user u1.
func couponFixture(e *env) *posgate.LoyaltyUser {
	e.t.Helper()
	e.posSystem("clover")
	e.company("clover", "acme", posgate.AllFeaturesOn())
	e.company("clover", "zeta", posgate.AllFeaturesOn())
	e.location("clover", "A1", "acme")
	e.location("clover", "A2", "acme")
	e.location("clover", "Z1", "zeta")
	return e.user(&posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: "u1", FirstName: "John", LastName: "Doe",
		Gender: "Male", Phone: "+1 (555) 555-1234", Email: "John.Doe@Example.com", Stamps: 3, Points: 120}})
}

func (e *env) user(u *posgate.LoyaltyUser) *posgate.LoyaltyUser {
	e.t.Helper()
	if err := e.s.CreateLoyaltyUser(e.t.Context(), u); err != nil {
		e.t.Fatalf("CreateLoyaltyUser(%q): %v", u.ID, err)
	}
	return u
}

func (e *env) coupon(c *posgate.Coupon) *posgate.Coupon {
	e.t.Helper()
	if err := e.s.CreateCoupon(e.t.Context(), c); err != nil {
		e.t.Fatalf("CreateCoupon(%q): %v", c.Code, err)
	}
	return c
}

// issued is a minimal coupon of acme.
func issued(code string) *posgate.Coupon {
	return &posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: code}
}

// items yields xs as an import sequence.
func items[T any](xs ...T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, x := range xs {
			if !yield(x, nil) {
				return
			}
		}
	}
}

func ts(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func testCouponCreateFind(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	full := &posgate.Coupon{
		POSSystemID: "clover", CompanyID: "acme", Code: "10OFFmq8kl8", RewardProvider: posgate.ProviderPJM,
		Name: ptr("10% off"), Title: ptr("Ten percent"), PictureURL: ptr("https://img.example.com/10.png"),
		AvailableUntil: ts("2031-12-31T23:59:59.123456789+02:00"), Status: posgate.CouponIssued,
		Info: []posgate.CouponInfo{
			{Title: ptr("Terms"), Items: map[string]*string{"minimum": ptr("20.00"), "note": nil}},
			{Title: nil, Items: nil},
			{Title: ptr("Empty"), Items: map[string]*string{}},
		},
		UserID: "u1", Email: "Owner@Example.com", Phone: "555 0100",
		LocationIDs: []string{"A2", "A1", "A2"},
	}
	e.coupon(full)
	stamp := e.clk.stamp()
	check(t, "CreateCoupon normalises and stamps", full, &posgate.Coupon{
		POSSystemID: "clover", CompanyID: "acme", Code: "10OFFmq8kl8", RewardProvider: posgate.ProviderPJM,
		Name: ptr("10% off"), Title: ptr("Ten percent"), PictureURL: ptr("https://img.example.com/10.png"),
		AvailableUntil: ts("2031-12-31T21:59:59.123456Z"), Status: posgate.CouponIssued,
		Info: []posgate.CouponInfo{
			{Title: ptr("Terms"), Items: map[string]*string{"minimum": ptr("20.00"), "note": nil}},
			{Title: nil, Items: nil},
			{Title: ptr("Empty"), Items: map[string]*string{}},
		},
		UserID: "u1", Email: "Owner@Example.com", Phone: "555 0100",
		LocationIDs: []string{"A1", "A2"}, CreatedAt: stamp, UpdatedAt: stamp,
	})
	e.clk.advance()
	bare := e.coupon(issued("Sl75Ev"))
	check(t, "CreateCoupon defaults", bare, &posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "Sl75Ev",
		RewardProvider: posgate.ProviderTwoReward, Status: posgate.CouponIssued, CreatedAt: e.clk.stamp(), UpdatedAt: e.clk.stamp()})
	emptyInfo := e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "EMPTY", Info: []posgate.CouponInfo{},
		Status: posgate.CouponRedeemed, LocationIDs: []string{}})

	for _, code := range []string{"10OFFmq8kl8", "10offMQ8KL8", "10OFFMQ8KL8"} {
		check(t, "FindCoupon("+code+")", must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", code)), full)
	}
	check(t, "FindCoupon(sl75ev)", must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", "sl75ev")), bare)
	got := must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", "empty"))
	check(t, "FindCoupon keeps an empty info list", got, emptyInfo)
	if got.Info == nil || got.LocationIDs != nil {
		t.Fatalf("empty info must stay [] and empty locations nil: %+v", got)
	}
	_, err := e.s.FindCoupon(ctx, "clover", "zeta", "Sl75Ev")
	checkErr(t, "FindCoupon in another company", err, posgate.ErrNotFound, `coupon "Sl75Ev" not found`)
}

func testCouponErrors(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	first := e.coupon(issued("ABC-1"))
	err := e.s.CreateCoupon(ctx, issued("abc-1"))
	checkErr(t, "CreateCoupon of a code differing in case", err, posgate.ErrConflict, `coupon "abc-1" already exists`)
	check(t, "the first coupon is unchanged", must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", "abc-1")), first)
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "zeta", Code: "ABC-1"}) // another company may reuse it

	for _, tc := range []struct {
		what string
		c    *posgate.Coupon
		msg  string
	}{
		{"unknown company", &posgate.Coupon{POSSystemID: "clover", CompanyID: "nope", Code: "X1"}, `company "nope" not found`},
		{"unknown POS system", &posgate.Coupon{POSSystemID: "pax", CompanyID: "acme", Code: "X1"}, `company "acme" not found`},
		{"unknown loyalty user", &posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "X1", UserID: "u9"}, `loyalty user "u9" not found`},
		{"another company's user", &posgate.Coupon{POSSystemID: "clover", CompanyID: "zeta", Code: "X1", UserID: "u1"}, `loyalty user "u1" not found`},
		{"unknown location", &posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "X1", LocationIDs: []string{"A1", "A9"}}, `location "A9" of company "acme" not found`},
		{"another company's location", &posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "X1", LocationIDs: []string{"Z1"}}, `location "Z1" of company "acme" not found`},
	} {
		checkErr(t, "CreateCoupon with an "+tc.what, e.s.CreateCoupon(ctx, tc.c), posgate.ErrNotFound, tc.msg)
		_, err := e.s.FindCoupon(ctx, tc.c.POSSystemID, tc.c.CompanyID, "X1")
		checkErr(t, "FindCoupon after the failed create ("+tc.what+")", err, posgate.ErrNotFound, `coupon "X1" not found`)
	}
}

func testCouponImport(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.coupon(issued("TAKEN"))
	batch := []*posgate.Coupon{issued("I1"), {POSSystemID: "clover", CompanyID: "acme", Code: "I2", UserID: "u1", LocationIDs: []string{"A2"}},
		{POSSystemID: "clover", CompanyID: "zeta", Code: "I1"}}
	n, err := e.s.ImportCoupons(ctx, items(batch...))
	if err != nil || n != 3 {
		t.Fatalf("ImportCoupons = %d, %v; want 3", n, err)
	}
	for _, c := range batch {
		check(t, "FindCoupon after import", must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, c.POSSystemID, c.CompanyID, c.Code)), c)
		if !c.CreatedAt.Equal(e.clk.stamp()) {
			t.Fatalf("imported coupon CreatedAt %v, want %v", c.CreatedAt, e.clk.stamp())
		}
	}
	n, err = e.s.ImportCoupons(ctx, items[*posgate.Coupon]())
	if err != nil || n != 0 {
		t.Fatalf("empty ImportCoupons = %d, %v", n, err)
	}

	// A bad item stores nothing, and the error names it.
	seqErr := errors.New("line 3: broken")
	for _, tc := range []struct {
		what     string
		seq      iter.Seq2[*posgate.Coupon, error]
		sentinel error
		msg      string
	}{
		{"an existing code", items(issued("N1"), issued("taken")), posgate.ErrConflict, `Item 2: coupon "taken" already exists`},
		{"a code repeated in the import", items(issued("N1"), issued("N2"), issued("n1")), posgate.ErrConflict, `Item 3: coupon "n1" already exists`},
		{"an unknown user", items(issued("N1"), &posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "N2", UserID: "ghost"}),
			posgate.ErrNotFound, `Item 2: loyalty user "ghost" not found`},
		{"an unknown company", items(issued("N1"), &posgate.Coupon{POSSystemID: "clover", CompanyID: "nope", Code: "N2"}),
			posgate.ErrNotFound, `Item 2: company "nope" not found`},
		{"a foreign location", items(issued("N1"), &posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "N2", LocationIDs: []string{"Z1"}}),
			posgate.ErrNotFound, `Item 2: location "Z1" of company "acme" not found`},
	} {
		n, err := e.s.ImportCoupons(ctx, tc.seq)
		if n != 0 {
			t.Fatalf("ImportCoupons with %s stored %d", tc.what, n)
		}
		checkErr(t, "ImportCoupons with "+tc.what, err, tc.sentinel, tc.msg)
		_, err = e.s.FindCoupon(ctx, "clover", "acme", "N1")
		checkErr(t, "FindCoupon after the failed import ("+tc.what+")", err, posgate.ErrNotFound, `coupon "N1" not found`)
	}
	n, err = e.s.ImportCoupons(ctx, func(yield func(*posgate.Coupon, error) bool) {
		if yield(issued("N1"), nil) && yield(issued("N2"), nil) {
			yield(nil, seqErr)
		}
	})
	if n != 0 || !errors.Is(err, seqErr) {
		t.Fatalf("ImportCoupons of a failing sequence = %d, %v; want 0 and the sequence's error", n, err)
	}
	_, err = e.s.FindCoupon(ctx, "clover", "acme", "N1")
	checkErr(t, "FindCoupon after the failing sequence", err, posgate.ErrNotFound, `coupon "N1" not found`)
}

func testCouponStatus(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	created := e.clk.stamp()
	e.coupon(issued("R1"))
	e.coupon(issued("C1"))
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "OLD", AvailableUntil: ptr(created.Add(30 * time.Minute))})
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "EDGE", AvailableUntil: ptr(created.Add(time.Hour + time.Microsecond))})
	now := e.clk.advance() // an hour later: OLD has expired, EDGE not yet

	r := must[*posgate.Coupon](t, "ChangeCouponStatus")(e.s.ChangeCouponStatus(ctx, "clover", "acme", "r1", posgate.CouponRedeemed))
	check(t, "redeemed coupon", [3]any{r.Code, r.Status, r.UpdatedAt}, [3]any{"R1", posgate.CouponRedeemed, now})
	if !r.CreatedAt.Equal(created) {
		t.Fatalf("redeeming changed CreatedAt: %v", r.CreatedAt)
	}
	check(t, "FindCoupon after redeeming", must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", "R1")), r)
	c := must[*posgate.Coupon](t, "ChangeCouponStatus")(e.s.ChangeCouponStatus(ctx, "clover", "acme", "C1", posgate.CouponCancelled))
	check(t, "cancelled coupon", c.Status, posgate.CouponCancelled)
	edge := must[*posgate.Coupon](t, "ChangeCouponStatus")(e.s.ChangeCouponStatus(ctx, "clover", "acme", "EDGE", posgate.CouponRedeemed))
	check(t, "a coupon redeemed before its end", edge.Status, posgate.CouponRedeemed)

	for _, tc := range []struct {
		code string
		to   posgate.CouponStatus
		msg  string
	}{
		{"R1", posgate.CouponRedeemed, `coupon "R1" is Redeemed; only an Issued coupon can be redeemed`},
		{"R1", posgate.CouponCancelled, `coupon "R1" is Redeemed; only an Issued coupon can be cancelled`},
		{"C1", posgate.CouponRedeemed, `coupon "C1" is Cancelled; only an Issued coupon can be redeemed`},
		{"old", posgate.CouponRedeemed, `coupon "OLD" is Expired; only an Issued coupon can be redeemed`},
		{"OLD", posgate.CouponCancelled, `coupon "OLD" is Expired; only an Issued coupon can be cancelled`},
	} {
		before := must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", tc.code))
		_, err := e.s.ChangeCouponStatus(ctx, "clover", "acme", tc.code, tc.to)
		checkErr(t, fmt.Sprintf("ChangeCouponStatus(%s, %s)", tc.code, tc.to), err, posgate.ErrConflict, tc.msg)
		check(t, "the coupon after the refused change", must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", tc.code)), before)
	}
	_, err := e.s.ChangeCouponStatus(ctx, "clover", "acme", "NOPE", posgate.CouponRedeemed)
	checkErr(t, "ChangeCouponStatus of an unknown code", err, posgate.ErrNotFound, `coupon "NOPE" not found`)
	_, err = e.s.ChangeCouponStatus(ctx, "clover", "zeta", "R1", posgate.CouponRedeemed)
	checkErr(t, "ChangeCouponStatus in another company", err, posgate.ErrNotFound, `coupon "R1" not found`)
	for _, to := range []posgate.CouponStatus{posgate.CouponIssued, posgate.CouponExpired, "Bogus"} {
		_, err = e.s.ChangeCouponStatus(ctx, "clover", "acme", "OLD", to)
		if !errors.Is(err, posgate.ErrInvalid) {
			t.Fatalf("ChangeCouponStatus to %s: %v, want EINVALID", to, err)
		}
	}
}

// codes lists the codes of a search page.
func codes(p *posgate.CouponPage) []string {
	var out []string
	for _, c := range p.Coupons {
		out = append(out, c.CompanyID+"/"+c.Code)
	}
	return out
}

func testCouponSearch(t *testing.T, e *env) {
	ctx := t.Context()
	john := couponFixture(e)
	e.user(&posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "zeta", LoyaltyCard: posgate.LoyaltyCard{ID: "z1", Email: "john.doe@example.com", Phone: "15555551234"}})
	e.user(&posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: "u2", Email: "jane@example.com", Phone: "1-555-555-9999"}})
	mine := func(code string, mod func(c *posgate.Coupon)) {
		c := &posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: code, UserID: john.ID}
		if mod != nil {
			mod(c)
		}
		e.coupon(c)
	}
	mine("b-2", nil)
	mine("A-1", func(c *posgate.Coupon) { c.LocationIDs = []string{"A1"} })
	mine("c-3", func(c *posgate.Coupon) { c.Status = posgate.CouponRedeemed; c.LocationIDs = []string{"A2"} })
	mine("D-4", func(c *posgate.Coupon) { c.AvailableUntil = ts("2020-01-01T00:00:00Z") })
	// Owned by e-mail and phone of its own, not through a user.
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "E-5", Email: "JOHN.DOE@example.COM"})
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "F-6", Phone: "+1 555 555 1234", UserID: "u2"})
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "JANE", UserID: "u2"})
	// zeta: the same code and the same owner details, another company.
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "zeta", Code: "a-1", UserID: "z1"})
	e.posSystem("pax")
	e.company("pax", "acme", posgate.AllFeaturesOn())
	e.coupon(&posgate.Coupon{POSSystemID: "pax", CompanyID: "acme", Code: "A-1", Email: "john.doe@example.com"})

	acme, both := []string{"acme"}, []string{"acme", "zeta"}
	for _, tc := range []struct {
		what string
		q    posgate.CouponQuery
		want []string
	}{
		{"code, any case", posgate.CouponQuery{Code: "a-1"}, []string{"acme/A-1"}},
		{"code with spaces around", posgate.CouponQuery{Code: "  A-1 "}, []string{"acme/A-1"}},
		{"code in two companies", posgate.CouponQuery{Code: "A-1", CompanyIDs: both}, []string{"acme/A-1", "zeta/a-1"}},
		{"unknown code", posgate.CouponQuery{Code: "A-2"}, nil},
		{"e-mail through the user and the coupon's own", posgate.CouponQuery{Email: "John.Doe@Example.com"}, []string{"acme/A-1", "acme/b-2", "acme/c-3", "acme/D-4", "acme/E-5"}},
		{"e-mail in two companies", posgate.CouponQuery{Email: "JOHN.DOE@EXAMPLE.COM", CompanyIDs: both}, []string{"acme/A-1", "zeta/a-1", "acme/b-2", "acme/c-3", "acme/D-4", "acme/E-5"}},
		{"phone digits", posgate.CouponQuery{Phone: "15555551234"}, []string{"acme/A-1", "acme/b-2", "acme/c-3", "acme/D-4", "acme/F-6"}},
		{"phone written otherwise", posgate.CouponQuery{Phone: "+1 (555) 555-1234"}, []string{"acme/A-1", "acme/b-2", "acme/c-3", "acme/D-4", "acme/F-6"}},
		{"phone of the other user", posgate.CouponQuery{Phone: "1.555.555.9999"}, []string{"acme/F-6", "acme/JANE"}},
		{"code and e-mail", posgate.CouponQuery{Code: "b-2", Email: "john.doe@example.com"}, []string{"acme/b-2"}},
		{"code and another's e-mail", posgate.CouponQuery{Code: "b-2", Email: "jane@example.com"}, nil},
		{"e-mail and phone", posgate.CouponQuery{Email: "john.doe@example.com", Phone: "15555551234"}, []string{"acme/A-1", "acme/b-2", "acme/c-3", "acme/D-4"}},
		{"all three", posgate.CouponQuery{Code: "F-6", Email: "jane@example.com", Phone: "15555551234"}, []string{"acme/F-6"}},
		{"e-mail at A1", posgate.CouponQuery{Email: "john.doe@example.com", LocationID: "A1"}, []string{"acme/A-1", "acme/b-2", "acme/D-4", "acme/E-5"}},
		{"e-mail at A2", posgate.CouponQuery{Email: "john.doe@example.com", LocationID: "A2"}, []string{"acme/b-2", "acme/c-3", "acme/D-4", "acme/E-5"}},
		{"code at another location", posgate.CouponQuery{Code: "A-1", LocationID: "A2"}, nil},
		{"no company", posgate.CouponQuery{Code: "A-1", CompanyIDs: []string{}}, nil},
		{"another company only", posgate.CouponQuery{Email: "jane@example.com", CompanyIDs: []string{"zeta"}}, nil},
	} {
		q := tc.q
		q.POSSystemID = "clover"
		if q.CompanyIDs == nil {
			q.CompanyIDs = acme
		}
		q.Limit = 100
		p := must[*posgate.CouponPage](t, "SearchCoupons")(e.s.SearchCoupons(ctx, q))
		check(t, "SearchCoupons: "+tc.what, codes(p), tc.want)
		check(t, "SearchCoupons total: "+tc.what, p.Total, len(tc.want))
	}

	// Whole coupons come back, as FindCoupon returns them.
	p := must[*posgate.CouponPage](t, "SearchCoupons")(e.s.SearchCoupons(ctx, posgate.CouponQuery{POSSystemID: "clover", CompanyIDs: acme, Code: "c-3", Limit: 1}))
	check(t, "a found coupon", p.Coupons, []*posgate.Coupon{must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", "c-3"))})
	if p.Coupons[0].StatusAt(e.clk.Now()) != posgate.CouponRedeemed {
		t.Fatalf("status of c-3: %s", p.Coupons[0].Status)
	}

	// Paging: order by folded code, then company; the total counts every
	// page (told by a page that is not full, counted for one that is or is
	// past the end), of several companies and of one (whose statement
	// differs on SQLite).
	for _, pc := range []struct {
		companies, all []string
	}{
		{both, []string{"acme/A-1", "zeta/a-1", "acme/b-2", "acme/c-3", "acme/D-4", "acme/E-5"}},
		{acme, []string{"acme/A-1", "acme/b-2", "acme/c-3", "acme/D-4", "acme/E-5"}},
	} {
		all := pc.all
		for _, tc := range []struct{ offset, limit int }{{0, 2}, {2, 2}, {4, 2}, {5, 3}, {6, 2}, {600, 2}, {0, 5}, {0, 6}, {0, 100}} {
			p := must[*posgate.CouponPage](t, "SearchCoupons")(e.s.SearchCoupons(ctx, posgate.CouponQuery{POSSystemID: "clover", CompanyIDs: pc.companies,
				Email: "john.doe@example.com", Offset: tc.offset, Limit: tc.limit}))
			want := all[min(tc.offset, len(all)):min(tc.offset+tc.limit, len(all))]
			if len(want) == 0 {
				want = nil
			}
			check(t, fmt.Sprintf("%v: page at %d of %d", pc.companies, tc.offset, tc.limit), codes(p), want)
			check(t, fmt.Sprintf("%v: total at %d of %d", pc.companies, tc.offset, tc.limit), p.Total, len(all))
		}
	}

	_, err := e.s.SearchCoupons(ctx, posgate.CouponQuery{POSSystemID: "clover", CompanyIDs: acme, LocationID: "A1", Limit: 10})
	if !errors.Is(err, posgate.ErrInvalid) {
		t.Fatalf("SearchCoupons without criteria: %v, want EINVALID", err)
	}
	_, err = e.s.SearchCoupons(ctx, posgate.CouponQuery{POSSystemID: "clover", CompanyIDs: acme, Code: " ", Email: "", Phone: "()", Limit: 10})
	if !errors.Is(err, posgate.ErrInvalid) {
		t.Fatalf("SearchCoupons with blank criteria: %v, want EINVALID", err)
	}
}

func testLoyaltyUserCreateFindUpdate(t *testing.T, e *env) {
	ctx := t.Context()
	john := couponFixture(e)
	check(t, "CreateLoyaltyUser stamps", [2]time.Time{john.CreatedAt, john.UpdatedAt}, [2]time.Time{e.clk.stamp(), e.clk.stamp()})
	check(t, "FindLoyaltyUser", must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, "clover", "acme", "u1")), john)
	bare := e.user(&posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "zeta", LoyaltyCard: posgate.LoyaltyCard{ID: "u1"}})
	check(t, "FindLoyaltyUser of a bare user", must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, "clover", "zeta", "u1")), bare)
	_, err := e.s.FindLoyaltyUser(ctx, "clover", "acme", "U1")
	checkErr(t, "FindLoyaltyUser ids are case-sensitive", err, posgate.ErrNotFound, `loyalty user "U1" not found`)
	checkErr(t, "CreateLoyaltyUser of an existing id", e.s.CreateLoyaltyUser(ctx, &posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: "u1"}}),
		posgate.ErrConflict, `loyalty user "u1" already exists`)
	checkErr(t, "CreateLoyaltyUser of an unknown company", e.s.CreateLoyaltyUser(ctx, &posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "nope", LoyaltyCard: posgate.LoyaltyCard{ID: "u1"}}),
		posgate.ErrNotFound, `company "nope" not found`)

	now := e.clk.advance()
	got := must[*posgate.LoyaltyUser](t, "UpdateLoyaltyUser")(e.s.UpdateLoyaltyUser(ctx, "clover", "acme", "u1", posgate.LoyaltyUserUpdate{
		FirstName: ptr("Johnny"), Email: ptr("johnny@example.org"), AddStamps: 2, AddPoints: -20}))
	want := *john
	want.FirstName, want.Email, want.Stamps, want.Points, want.UpdatedAt = "Johnny", "johnny@example.org", 5, 100, now
	check(t, "UpdateLoyaltyUser", got, &want)
	check(t, "FindLoyaltyUser after the update", must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, "clover", "acme", "u1")), &want)
	// The folded copies follow the update.
	kw := func(s string) posgate.UserKeyword {
		k, err := posgate.ParseUserKeyword(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	check(t, "search by the new name", len(must[[]*posgate.LoyaltyUser](t, "SearchLoyaltyUsers")(e.s.SearchLoyaltyUsers(ctx, "clover", "acme", kw("JOHNNY")))), 1)
	check(t, "search by the old e-mail", len(must[[]*posgate.LoyaltyUser](t, "SearchLoyaltyUsers")(e.s.SearchLoyaltyUsers(ctx, "clover", "acme", kw("example.com")))), 0)

	e.clk.advance()
	for _, tc := range []struct {
		upd posgate.LoyaltyUserUpdate
		msg string
	}{
		{posgate.LoyaltyUserUpdate{FirstName: ptr("X"), AddStamps: -6}, "Loyalty user u1 has 5 stamps: taking 6 would leave -1, below 0. Nothing was changed."},
		{posgate.LoyaltyUserUpdate{AddPoints: -101}, "Loyalty user u1 has 100 points: taking 101 would leave -1, below 0. Nothing was changed."},
		{posgate.LoyaltyUserUpdate{AddPoints: 2147483647}, "Loyalty user u1 has 100 points: adding 2147483647 would leave 2147483747, above 2147483647. Nothing was changed."},
	} {
		_, err := e.s.UpdateLoyaltyUser(ctx, "clover", "acme", "u1", tc.upd)
		checkErr(t, "UpdateLoyaltyUser out of range", err, posgate.ErrConflict, tc.msg)
		check(t, "the user after the refused update", must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, "clover", "acme", "u1")), &want)
	}
	got = must[*posgate.LoyaltyUser](t, "UpdateLoyaltyUser")(e.s.UpdateLoyaltyUser(ctx, "clover", "acme", "u1", posgate.LoyaltyUserUpdate{AddStamps: -5, AddPoints: -100}))
	check(t, "balances down to zero", [2]int32{got.Stamps, got.Points}, [2]int32{0, 0})
	_, err = e.s.UpdateLoyaltyUser(ctx, "clover", "acme", "u9", posgate.LoyaltyUserUpdate{AddPoints: 1})
	checkErr(t, "UpdateLoyaltyUser of an unknown user", err, posgate.ErrNotFound, `loyalty user "u9" not found`)
}

func testLoyaltyUserImport(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	batch := []*posgate.LoyaltyUser{
		{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: "i1", FirstName: "Ann", Points: 5}},
		{POSSystemID: "clover", CompanyID: "zeta", LoyaltyCard: posgate.LoyaltyCard{ID: "i1", LastName: "Bee"}},
	}
	n, err := e.s.ImportLoyaltyUsers(ctx, items(batch...))
	if err != nil || n != 2 {
		t.Fatalf("ImportLoyaltyUsers = %d, %v; want 2", n, err)
	}
	for _, u := range batch {
		check(t, "FindLoyaltyUser after import", must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, u.POSSystemID, u.CompanyID, u.ID)), u)
	}
	user := func(id string) *posgate.LoyaltyUser {
		return &posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: id}}
	}
	for _, tc := range []struct {
		what     string
		seq      iter.Seq2[*posgate.LoyaltyUser, error]
		sentinel error
		msg      string
	}{
		{"an existing id", items(user("n1"), user("u1")), posgate.ErrConflict, `Item 2: loyalty user "u1" already exists`},
		{"an id repeated in the import", items(user("n1"), user("n2"), user("n1")), posgate.ErrConflict, `Item 3: loyalty user "n1" already exists`},
		{"an unknown company", items(user("n1"), &posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "nope", LoyaltyCard: posgate.LoyaltyCard{ID: "n2"}}), posgate.ErrNotFound, `Item 2: company "nope" not found`},
	} {
		n, err := e.s.ImportLoyaltyUsers(ctx, tc.seq)
		if n != 0 {
			t.Fatalf("ImportLoyaltyUsers with %s stored %d", tc.what, n)
		}
		checkErr(t, "ImportLoyaltyUsers with "+tc.what, err, tc.sentinel, tc.msg)
		_, err = e.s.FindLoyaltyUser(ctx, "clover", "acme", "n1")
		checkErr(t, "FindLoyaltyUser after the failed import", err, posgate.ErrNotFound, `loyalty user "n1" not found`)
	}
	// Imported users are searchable, and so is a user created one by one
	// after imports, failed or not.
	e.user(&posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: "later", FirstName: "Latecomer"}})
	for keyword, want := range map[string][]string{"ann": {"i1"}, "late": {"later"}} {
		k, _ := posgate.ParseUserKeyword(keyword)
		check(t, "SearchLoyaltyUsers("+keyword+") after imports", ids(must[[]*posgate.LoyaltyUser](t, "SearchLoyaltyUsers")(e.s.SearchLoyaltyUsers(ctx, "clover", "acme", k))), want)
	}
}

// ids lists the ids of users.
func ids(us []*posgate.LoyaltyUser) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.ID)
	}
	return out
}

func testLoyaltyUserSearch(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e) // u1: John Doe, john.doe@example.com, 15555551234
	for _, u := range []*posgate.LoyaltyUser{
		{LoyaltyCard: posgate.LoyaltyCard{ID: "u2", FirstName: "Johanna", LastName: "Smith", Email: "jo@mail.test", Phone: "+44 20 7946 0000"}},
		{LoyaltyCard: posgate.LoyaltyCard{ID: "u3", FirstName: "Mary", LastName: "Johnson", Email: "mary@example.com", Phone: "555-0134"}},
		{LoyaltyCard: posgate.LoyaltyCard{ID: "u4", FirstName: "Álvaro", LastName: "ÖZTÜRK", Email: "ALVARO@Example.com"}},
		{LoyaltyCard: posgate.LoyaltyCard{ID: "u5", FirstName: "john", LastName: "Adams", Email: "ja@x.test", Phone: "1 555 555 1234"}},
		{LoyaltyCard: posgate.LoyaltyCard{ID: "u6", FirstName: "50%", LastName: "Off_Guy", Email: "pct@x.test"}},
		{LoyaltyCard: posgate.LoyaltyCard{ID: "u7", FirstName: "Maryanne", LastName: "Major", Email: "mary@example.org"}},
		{LoyaltyCard: posgate.LoyaltyCard{ID: "u8", FirstName: "Kim", LastName: "Zorro", Email: "kim1234@x.test"}},
	} {
		u.POSSystemID, u.CompanyID = "clover", "acme"
		e.user(u)
	}
	// Another company's user matches nothing of acme's.
	e.user(&posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "zeta", LoyaltyCard: posgate.LoyaltyCard{ID: "z1", FirstName: "John", LastName: "Zed", Phone: "15555551234"}})

	for _, tc := range []struct{ keyword, want string }{
		{"john", "u5 u1 u3"}, // exact first names (Adams, Doe), then Johnson
		{"JOHN", "u5 u1 u3"},
		{"joh", "u5 u1 u3 u2"}, // the start of a name or an e-mail
		{"ohn", ""},            // not the inside of a word
		{"doe", "u1"},
		{"Doe ", "u1"},
		{"John.Doe@Example.COM", "u1"},
		{"mary@example.com", "u3"}, // not mary@example.org: the whole keyword must match
		{"MARY@", "u3 u7"},
		{"mary", "u3 u7"}, // Mary exactly, then Maryanne
		{"example.com", "u1 u3 u4"},
		{"exam", "u1 u3 u7 u4"}, // the start of the domain
		{"x.test", "u5 u6 u8"},
		{"ample", ""},
		{"öztürk", "u4"},
		{"ozturk", "u4"}, // accents ignored
		{"ÁLVARO", "u4"},
		{"alv", "u4"},
		{"off", "u6"}, // words of "Off_Guy"
		{"guy", "u6"},
		{"50%", ""}, // the name word is "50"
		{"15555551234", "u5 u1"},
		{"+1 (555) 555-1234", "u5 u1"},
		{"5555551234", "u1 u5"}, // u1's whole phone without its country code, u5's end
		{"555-1234", "u5 u1"},   // the end of the digits
		{"1234", "u5 u1"},       // not kim1234@x.test: an e-mail matches by its start
		{"555", ""},             // three digits are no phone keyword, and start no name
		{"5550", "u3"},
		{"0134", "u3"},
		{"2079", "u2"}, // the start without the country code
		{"+44 20 79", "u2"},
		{"0000", "u2"},
		{"7946", ""}, // inside the digits
		{"n D", ""},
		{"zed", ""}, // another company's user
		{"xyz", ""},
		{`"jo`, ""},
	} {
		k, err := posgate.ParseUserKeyword(tc.keyword)
		if err != nil {
			t.Fatalf("ParseUserKeyword(%q): %v", tc.keyword, err)
		}
		got := must[[]*posgate.LoyaltyUser](t, "SearchLoyaltyUsers")(e.s.SearchLoyaltyUsers(ctx, "clover", "acme", k))
		check(t, fmt.Sprintf("SearchLoyaltyUsers(%q)", tc.keyword), ids(got), rankOf(t, e, k, strings.Fields(tc.want)))
	}
}

// rankOf checks that want is what posgate.RankUsers makes of those users
// and returns it (nil when empty), so that the table above states the
// matches and the domain states the order.
func rankOf(t *testing.T, e *env, k posgate.UserKeyword, want []string) []string {
	t.Helper()
	var us []*posgate.LoyaltyUser
	for _, id := range want {
		us = append(us, must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(t.Context(), "clover", "acme", id)))
	}
	ranked := ids(posgate.RankUsers(k, us))
	if !slices.Equal(ranked, want) && len(want) > 0 {
		t.Fatalf("keyword %+v: the table's order %v is not the ranking %v", k, want, ranked)
	}
	if len(want) == 0 {
		return nil
	}
	return want
}

func testLoyaltyUserSearchLimit(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	// 150 substring matches first, then 3 exact matches created last (so
	// that an index in insertion order meets them last), then noise.
	var batch []*posgate.LoyaltyUser
	for i := range 150 {
		batch = append(batch, &posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("s%03d", i),
			FirstName: "Kimberly", LastName: fmt.Sprintf("Kimball-%03d", 149-i)}})
	}
	for i, last := range []string{"Zulu", "Alpha", "Mike"} {
		batch = append(batch, &posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("x%d", i), FirstName: "Kim", LastName: last}})
	}
	for i := range 30 {
		batch = append(batch, &posgate.LoyaltyUser{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("n%02d", i), FirstName: "Noise"}})
	}
	if _, err := e.s.ImportLoyaltyUsers(ctx, items(batch...)); err != nil {
		t.Fatal(err)
	}
	k, _ := posgate.ParseUserKeyword("kim")
	got := must[[]*posgate.LoyaltyUser](t, "SearchLoyaltyUsers")(e.s.SearchLoyaltyUsers(ctx, "clover", "acme", k))
	if len(got) != posgate.MaxUserMatches {
		t.Fatalf("SearchLoyaltyUsers returned %d users, want %d", len(got), posgate.MaxUserMatches)
	}
	check(t, "exact matches first", ids(got[:3]), []string{"x1", "x2", "x0"})
	for i, u := range got[3:] {
		if !strings.HasPrefix(u.ID, "s") || (i > 0 && strings.Compare(got[3+i-1].LastName, u.LastName) > 0) {
			t.Fatalf("match %d: %+v is not a substring match in last-name order: %v", i+3, u, ids(got))
		}
	}
	k, _ = posgate.ParseUserKeyword("kimberly")
	got = must[[]*posgate.LoyaltyUser](t, "SearchLoyaltyUsers")(e.s.SearchLoyaltyUsers(ctx, "clover", "acme", k))
	if len(got) != posgate.MaxUserMatches || got[0].ID != "s149" || got[49].ID != "s100" {
		t.Fatalf("150 exact matches: want the first 50 by last name (s149…s100), got %v", ids(got))
	}
}

// testActiveCoupons: ListActiveCoupons lists a location's Issued, unexpired
// coupons held by nobody, by folded code, a page at a time, with the total
// of all pages; owned, expired, redeemed, cancelled, other locations' and
// other companies' coupons stay out.
func testActiveCoupons(t *testing.T, e *env) {
	ctx := t.Context()
	john := couponFixture(e)
	now := e.clk.stamp()
	open := func(code string, mod func(c *posgate.Coupon)) {
		c := issued(code)
		if mod != nil {
			mod(c)
		}
		e.coupon(c)
	}
	open("b-open", nil)
	open("A-at-a1", func(c *posgate.Coupon) { c.LocationIDs = []string{"A1"} })
	open("C-future", func(c *posgate.Coupon) {
		c.AvailableUntil = ptr(now.Add(24 * time.Hour))
		c.LocationIDs = []string{"A2", "A1"}
	})
	open("e-edge", func(c *posgate.Coupon) { c.AvailableUntil = ptr(now) })
	open("d-expired", func(c *posgate.Coupon) { c.AvailableUntil = ptr(now.Add(-time.Microsecond)) })
	open("F-redeemed", func(c *posgate.Coupon) { c.Status = posgate.CouponRedeemed })
	open("g-cancelled", func(c *posgate.Coupon) { c.Status = posgate.CouponCancelled })
	open("h-user", func(c *posgate.Coupon) { c.UserID = john.ID })
	open("i-email", func(c *posgate.Coupon) { c.Email = "guest@example.com" })
	open("j-phone", func(c *posgate.Coupon) { c.Phone = "+1 555 0100" })
	open("k-at-a2", func(c *posgate.Coupon) { c.LocationIDs = []string{"A2"} })
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "zeta", Code: "a-zeta"})
	e.posSystem("pax")
	e.company("pax", "acme", posgate.AllFeaturesOn())
	e.location("pax", "A1", "acme")
	e.coupon(&posgate.Coupon{POSSystemID: "pax", CompanyID: "acme", Code: "A-pax"})

	list := func(company, location string, at time.Time, offset, limit int) *posgate.CouponPage {
		t.Helper()
		return must[*posgate.CouponPage](t, "ListActiveCoupons")(e.s.ListActiveCoupons(ctx, posgate.ActiveCouponQuery{
			POSSystemID: "clover", CompanyID: company, LocationID: location, At: at, Offset: offset, Limit: limit}))
	}
	for _, tc := range []struct {
		what, company, location string
		at                      time.Time
		want                    []string
	}{
		{"at A1", "acme", "A1", now, []string{"acme/A-at-a1", "acme/b-open", "acme/C-future", "acme/e-edge"}},
		{"at A2", "acme", "A2", now, []string{"acme/b-open", "acme/C-future", "acme/e-edge", "acme/k-at-a2"}},
		{"a microsecond later", "acme", "A1", now.Add(time.Microsecond), []string{"acme/A-at-a1", "acme/b-open", "acme/C-future"}},
		{"a day and a microsecond later", "acme", "A1", now.Add(24*time.Hour + time.Microsecond), []string{"acme/A-at-a1", "acme/b-open"}},
		{"at any location", "acme", "", now, []string{"acme/A-at-a1", "acme/b-open", "acme/C-future", "acme/e-edge", "acme/k-at-a2"}},
		{"another company", "zeta", "Z1", now, []string{"zeta/a-zeta"}},
		{"an unknown company", "nope", "A1", now, nil},
	} {
		p := list(tc.company, tc.location, tc.at, 0, 100)
		check(t, "ListActiveCoupons: "+tc.what, codes(p), tc.want)
		check(t, "ListActiveCoupons total: "+tc.what, p.Total, len(tc.want))
	}

	// Whole coupons come back, as FindCoupon returns them.
	p := list("acme", "A1", now, 2, 1)
	check(t, "an active coupon", p.Coupons, []*posgate.Coupon{must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", "C-future"))})

	// Paging: the total counts every page, also past the end.
	all := []string{"acme/A-at-a1", "acme/b-open", "acme/C-future", "acme/e-edge"}
	for _, tc := range []struct{ offset, limit int }{{0, 1}, {0, 2}, {2, 2}, {3, 2}, {4, 2}, {400, 20}, {0, 4}} {
		p := list("acme", "A1", now, tc.offset, tc.limit)
		want := all[min(tc.offset, len(all)):min(tc.offset+tc.limit, len(all))]
		if len(want) == 0 {
			want = nil
		}
		check(t, fmt.Sprintf("page at %d of %d", tc.offset, tc.limit), codes(p), want)
		check(t, fmt.Sprintf("total at %d of %d", tc.offset, tc.limit), p.Total, len(all))
	}

	// A coupon leaves the list when it is redeemed or cancelled.
	must[*posgate.Coupon](t, "ChangeCouponStatus")(e.s.ChangeCouponStatus(ctx, "clover", "acme", "B-OPEN", posgate.CouponRedeemed))
	must[*posgate.Coupon](t, "ChangeCouponStatus")(e.s.ChangeCouponStatus(ctx, "clover", "acme", "a-at-a1", posgate.CouponCancelled))
	p = list("acme", "A1", now, 0, 100)
	check(t, "after a redemption and a cancellation", codes(p), []string{"acme/C-future", "acme/e-edge"})
	check(t, "total after a redemption and a cancellation", p.Total, 2)
}
