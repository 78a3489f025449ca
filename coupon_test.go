package posgate

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestFoldAndPhoneDigits(t *testing.T) {
	for in, want := range map[string]string{
		"John.Doe@Example.COM": "john.doe@example.com",
		"ÖZTÜRK":               "öztürk",
		"ΣΊΣΥΦΟΣ":              "σίσυφοσ", // final sigma folds like sigma
		"ς":                    "σ",
		"\u212Aelvin":          "kelvin", // Kelvin sign
		"ſ":                    "s",      // long s
		"10OFFmq8kl8":          "10offmq8kl8",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
	// The ASCII path folds every byte as the rune-by-rune path does.
	for c := 0; c < utf8.RuneSelf; c++ {
		in := "x" + string(rune(c)) + "Y"
		if got, want := Fold(in), foldRunes(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
	for _, pair := range [][2]string{{"Straße", "STRASSE"}} {
		if Fold(pair[0]) == Fold(pair[1]) {
			t.Errorf("%q and %q fold alike, but simple folding keeps ß", pair[0], pair[1])
		}
	}
	if got := FoldEmail("  Ann@Example.com "); got != "ann@example.com" {
		t.Errorf("FoldEmail = %q", got)
	}
	for _, p := range []string{"+1 (555) 555-1234", "15555551234", "1.555.555.1234", "1/555/555 1234"} {
		if got := PhoneDigits(p); got != "15555551234" {
			t.Errorf("PhoneDigits(%q) = %q", p, got)
		}
	}
}

func TestParseUserKeyword(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want UserKeyword
	}{
		{"Doe", UserKeyword{Text: "doe"}},
		{"  Doe  ", UserKeyword{Text: "doe"}},
		{"555", UserKeyword{Text: "555"}}, // too few digits for phones
		{"5551", UserKeyword{Text: "5551", Digits: "5551"}},
		{"+1 (555) 555-1234", UserKeyword{Text: "+1 (555) 555-1234", Digits: "15555551234"}},
		{"doe123", UserKeyword{Text: "doe123"}}, // not written like a phone
		{"(55)", UserKeyword{Text: "(55)"}},     // too few digits for the phone index
		{"ÉVA", UserKeyword{Text: "eva"}},       // accents dropped
		{"Øster", UserKeyword{Text: "oster"}},
		{"+44 (20) 7946.0000", UserKeyword{Text: "+44 (20) 7946.0000", Digits: "442079460000"}},
		{"44+20", UserKeyword{Text: "44+20"}}, // a "+" only leads
		{"a%_", UserKeyword{Text: "a%_"}},     // kept as written: stores escape
		{`"x"`, UserKeyword{Text: `"x"`}},     // kept as written
		{"日本語", UserKeyword{Text: "日本語"}},     // three characters
		{strings.Repeat("a", 200), UserKeyword{Text: strings.Repeat("a", 200)}},
	} {
		got, err := ParseUserKeyword(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseUserKeyword(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for in, msg := range map[string]string{
		"":                       "The keyword field must be at least 3 characters long.",
		"jo":                     "The keyword field must be at least 3 characters long.",
		"  j  ":                  "The keyword field must be at least 3 characters long.",
		"é1":                     "The keyword field must be at least 3 characters long.",
		"do\x1fe":                "The keyword field must be text without control characters.",
		"do\x00e":                "The keyword field must be text without control characters.",
		"ab\xff":                 "The keyword field must be text without control characters.",
		strings.Repeat("a", 201): "The keyword field must be at most 200 bytes long.",
	} {
		_, err := ParseUserKeyword(in)
		var e *Error
		if !errors.As(err, &e) || e.Code != EINVALID || !slices.Equal(e.Fields["keyword"], []string{msg}) {
			t.Errorf("ParseUserKeyword(%q) error %v, want %q", in, err, msg)
		}
	}
}

func TestSearchFold(t *testing.T) {
	for in, want := range map[string]string{
		"Çağrı Øster":   "cagri oster",
		"ÁLVARO":        "alvaro",
		"Straße":        "strasse",
		"Łukasz Dvořák": "lukasz dvorak",
		"ﬁnn":           "finn",
		"Ａｎｎ":           "ann",
		"smith":         "smith",
		"日本語":           "日本語",
	} {
		if got := SearchFold(in); got != want {
			t.Errorf("SearchFold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSearchTerms(t *testing.T) {
	for _, tc := range []struct {
		u    LoyaltyCard
		want []string
	}{
		{LoyaltyCard{FirstName: "Jean-Luc", LastName: "O'Neil  Dupré", Email: " Jean@Exämple.com", Phone: "+44 20 7946 0000"},
			[]string{TermDomain + "example.com", TermPhoneEnd + "000064970244", TermPhone + "2079460000", TermPhone + "442079460000",
				"dupre", "jean", "jean@example.com", "luc", "neil", "o"}},
		{LoyaltyCard{FirstName: "Anna", LastName: "Anna", Phone: "0049 30 1234"},
			[]string{TermPhoneEnd + "4321039400", TermPhone + "0049301234", TermPhone + "301234", TermPhone + "49301234", "anna"}},
		{LoyaltyCard{Phone: "555-0134", Email: "no-domain@"}, []string{TermPhoneEnd + "4310555", TermPhone + "5550134", "no-domain@"}},
		{LoyaltyCard{}, nil},
	} {
		u := &LoyaltyUser{LoyaltyCard: tc.u}
		if got := u.SearchTerms(); !slices.Equal(got, tc.want) {
			t.Errorf("SearchTerms(%+v) = %q, want %q", tc.u, got, tc.want)
		}
	}
}

func TestCountryCodeLen(t *testing.T) {
	for in, want := range map[string]int{"15555551234": 1, "74951234567": 1, "442079460000": 2, "4930": 2, "35312345": 3, "97150": 3, "2": 1, "": 0} {
		if got := CountryCodeLen(in); got != want {
			t.Errorf("CountryCodeLen(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestTermBucket(t *testing.T) {
	for in, want := range map[string]string{
		"james": "jam", "jam": "jam", "日本語です": "日本語", TermPhone + "5551234": TermPhone + "555",
		TermDomain + "exa": TermDomain + "exa", "ab": "ab",
	} {
		if got := TermBucket(in); got != want {
			t.Errorf("TermBucket(%q) = %q, want %q", in, got, want)
		}
	}
}

// The keys of a coupon and of a search for it are derived alike, so that a
// search written any way finds the coupon.
func TestCouponKeys(t *testing.T) {
	c := &Coupon{Code: "10OFFmq8kl8", Email: " John.Doe@Example.COM", Phone: "+1 (555) 555-1234"}
	want := CouponKeys{Code: "10offmq8kl8", Email: "john.doe@example.com", Phone: "15555551234"}
	if got := c.Keys(); got != want {
		t.Errorf("Coupon.Keys() = %+v, want %+v", got, want)
	}
	q := &CouponQuery{Code: " 10offMQ8KL8 ", Email: "JOHN.DOE@example.com ", Phone: "1.555.555.1234"}
	if got, err := q.Keys(); err != nil || got != want {
		t.Errorf("CouponQuery.Keys() = %+v, %v; want %+v", got, err, want)
	}
	if got, err := (&CouponQuery{Phone: "555 1234"}).Keys(); err != nil || got != (CouponKeys{Phone: "5551234"}) {
		t.Errorf("CouponQuery.Keys() by phone alone = %+v, %v", got, err)
	}
	for _, q := range []*CouponQuery{{}, {Code: "  ", Phone: "()", LocationID: "L1"}} {
		_, err := q.Keys()
		var e *Error
		if !errors.As(err, &e) || e.Code != EINVALID || e.Message != "A coupon search needs a code, an e-mail or a phone." {
			t.Errorf("CouponQuery%+v.Keys() error %v, want EINVALID", *q, err)
		}
	}
}

func TestLoyaltyUserKeys(t *testing.T) {
	u := &LoyaltyUser{LoyaltyCard: LoyaltyCard{FirstName: "ÉVA", LastName: "O'Brien", Email: " Eva@Example.com", Phone: "+44 20 7946 0000"}}
	want := LoyaltyUserKeys{First: "éva", Last: "o'brien", Email: "eva@example.com", Digits: "442079460000"}
	if got := u.Keys(); got != want {
		t.Errorf("Keys() = %+v, want %+v", got, want)
	}
}

func TestCouponCheckLocations(t *testing.T) {
	company := map[string]bool{"L1": true, "L2": true}
	for _, ids := range [][]string{nil, {"L1"}, {"L1", "L2"}} {
		if err := (&Coupon{CompanyID: "acme", LocationIDs: ids}).CheckLocations(company); err != nil {
			t.Errorf("CheckLocations(%q): %v", ids, err)
		}
	}
	err := (&Coupon{CompanyID: "acme", LocationIDs: []string{"L1", "l2", "L9"}}).CheckLocations(company)
	var e *Error
	if !errors.As(err, &e) || e.Code != ENOTFOUND || e.Message != `location "l2" of company "acme" not found` {
		t.Errorf("CheckLocations of unknown locations: %v; want ENOTFOUND naming the first", err)
	}
}

func TestCheckStatusChange(t *testing.T) {
	for _, to := range CouponStatuses {
		err := CheckStatusChange(to)
		if ok := to == CouponRedeemed || to == CouponCancelled; ok != (err == nil) {
			t.Errorf("CheckStatusChange(%s) = %v", to, err)
		} else if !ok && (ErrorCode(err) != EINVALID || ErrorMessage(err) != "A coupon can only be changed to Redeemed or Cancelled.") {
			t.Errorf("CheckStatusChange(%s) = %v, want EINVALID", to, err)
		}
	}
}

func TestRankUsers(t *testing.T) {
	users := []*LoyaltyUser{
		{LoyaltyCard: LoyaltyCard{ID: "c", FirstName: "Johnny", LastName: "Zed"}},
		{LoyaltyCard: LoyaltyCard{ID: "b", FirstName: "John", LastName: "Zed"}},
		{LoyaltyCard: LoyaltyCard{ID: "a", FirstName: "JOHN", LastName: "Zed"}},
		{LoyaltyCard: LoyaltyCard{ID: "d", FirstName: "Ann", LastName: "Johnson"}},
		{LoyaltyCard: LoyaltyCard{ID: "e", FirstName: "Eve", Email: "john@x.test"}},
		{LoyaltyCard: LoyaltyCard{ID: "f", FirstName: "Nobody"}},                // not a match: dropped
		{LoyaltyCard: LoyaltyCard{ID: "b", FirstName: "John", LastName: "Zed"}}, // twice: kept once
	}
	k, _ := ParseUserKeyword("john")
	var got []string
	for _, u := range RankUsers(k, users) {
		got = append(got, u.ID)
	}
	// Exact first names (a, b: same names, by id), then substrings by last
	// name ("" < johnson < zed).
	if want := []string{"a", "b", "e", "d", "c"}; !slices.Equal(got, want) {
		t.Errorf("RankUsers = %v, want %v", got, want)
	}
	var many []*LoyaltyUser
	for i := range 120 {
		many = append(many, &LoyaltyUser{LoyaltyCard: LoyaltyCard{ID: fmt.Sprintf("u%03d", i), LastName: "Johnson"}})
	}
	if n := len(RankUsers(k, many)); n != MaxUserMatches {
		t.Errorf("RankUsers of 120 matches kept %d", n)
	}
}

func TestCouponNormalizeValidate(t *testing.T) {
	until := time.Date(2030, 1, 2, 3, 4, 5, 6789, time.FixedZone("x", 3600))
	c := &Coupon{POSSystemID: "p", CompanyID: "c", Code: "A", AvailableUntil: &until, LocationIDs: []string{"b", "a", "b"}}
	c.Normalize()
	if c.Status != CouponIssued || c.RewardProvider != ProviderTwoReward || !slices.Equal(c.LocationIDs, []string{"a", "b"}) ||
		c.AvailableUntil.Location() != time.UTC || c.AvailableUntil.Nanosecond() != 6000 || c.AvailableUntil.Hour() != 2 {
		t.Errorf("Normalize: %+v until %v", c, c.AvailableUntil)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	long := strings.Repeat("x", 201)
	bad := &Coupon{POSSystemID: "p", CompanyID: "c", Code: " A", RewardProvider: "X", Status: CouponExpired, Name: &long,
		PictureURL: ptrTo("/relative.png"), UserID: "a/b", Email: "a@", Phone: "+1 (5)", LocationIDs: []string{""},
		Info: []CouponInfo{{Title: &long, Items: map[string]*string{"k": ptrTo("v\x00")}}}}
	var e *Error
	if err := bad.Validate(); !errors.As(err, &e) {
		t.Fatalf("Validate of a bad coupon: %v", err)
	}
	var fields []string
	for f := range e.Fields {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	if want := []string{"code", "email", "info[0].items", "locationIds", "name", "phone", "pictureUrl", "rewardProvider", "status", "userId"}; !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
	cut := &Coupon{POSSystemID: "p", CompanyID: "c", Code: "A", Status: CouponIssued, RewardProvider: ProviderDummy,
		Info: []CouponInfo{{Title: ptrTo("ok"), Items: map[string]*string{"k": ptrTo("v\x00")}}}}
	if err := cut.Validate(); !errors.As(err, &e) || !reflect.DeepEqual(e.Fields, map[string][]string{
		"info[0].items": {"The info[0].items field must be text of at most 1000 bytes without control characters."}}) {
		t.Errorf("Validate of a bad info item: %v", err)
	}
}

func TestCouponStatusAt(t *testing.T) {
	end := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		status CouponStatus
		until  *time.Time
		at     time.Time
		want   CouponStatus
	}{
		{CouponIssued, &end, end, CouponIssued},
		{CouponIssued, &end, end.Add(time.Microsecond), CouponExpired},
		{CouponIssued, nil, end.AddDate(100, 0, 0), CouponIssued},
		{CouponRedeemed, &end, end.AddDate(1, 0, 0), CouponRedeemed},
		{CouponCancelled, &end, end.AddDate(1, 0, 0), CouponCancelled},
	} {
		c := &Coupon{Status: tc.status, AvailableUntil: tc.until}
		if got := c.StatusAt(tc.at); got != tc.want {
			t.Errorf("%s until %v at %v: %s, want %s", tc.status, tc.until, tc.at, got, tc.want)
		}
	}
}

func TestApplyUserUpdate(t *testing.T) {
	u := &LoyaltyUser{LoyaltyCard: LoyaltyCard{ID: "u1", FirstName: "A", Stamps: 1, Points: math.MaxInt32 - 1}}
	if err := ApplyUserUpdate(u, LoyaltyUserUpdate{FirstName: ptrTo("B"), AddStamps: -1, AddPoints: 1}); err != nil ||
		u.FirstName != "B" || u.Stamps != 0 || u.Points != math.MaxInt32 {
		t.Fatalf("ApplyUserUpdate: %+v, %v", u, err)
	}
	before := *u
	err := ApplyUserUpdate(u, LoyaltyUserUpdate{LastName: ptrTo("C"), AddPoints: 1})
	if !errors.Is(err, ErrConflict) || ErrorMessage(err) != "Loyalty user u1 has 2147483647 points: adding 1 would leave 2147483648, above 2147483647. Nothing was changed." || *u != before {
		t.Fatalf("overflow: %v, %+v", err, u)
	}
}

func TestItemError(t *testing.T) {
	err := ItemError(3, &Error{Code: ECONFLICT, Message: "x exists", Fields: map[string][]string{"code": {"m"}}})
	var e *Error
	if !errors.As(err, &e) || e.Code != ECONFLICT || e.Message != "Item 3: x exists" || e.Fields["code"][0] != "m" {
		t.Errorf("ItemError: %#v", err)
	}
	plain := errors.New("disk full")
	if err := ItemError(2, plain); !errors.Is(err, plain) || err.Error() != "item 2: disk full" {
		t.Errorf("ItemError of a plain error: %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }
