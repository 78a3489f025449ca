package storetest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/posgate/posgate"
)

// testLoyaltyUserSearchAgainstScan compares the store's keyword searches
// with a scan of every user that spells the rule of docs/api.md §6.1 out
// literally (scanMatch): users with accented and multi-word names, e-mails
// on a few shared domains, phones written with and without a country code;
// keywords cut from them as a cashier types them (the start of a word, of
// an e-mail or a domain, the end or start of a phone, in any case and with
// or without accents) and as a cashier should not (the inside of a word).
// Many keywords match more than MaxUserMatches users, and many match more
// than storekit.RangeScanLimit rows, so that both ways of a store's lookup
// answer. The answers must be equal, ids in order. Then a tenth of the
// users change names, e-mails and phones, and the searches are compared
// again.
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
	r := rand.New(rand.NewPCG(3, 4))
	users := make([]*posgate.LoyaltyUser, 1500)
	for i := range users {
		users[i] = &posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: randomCard(r, fmt.Sprintf("u%04d", len(users)-i))}
	}
	// The other company's users match everything and must never show.
	others := []*posgate.LoyaltyUser{{POSSystemID: "pos", CompanyID: "other", LoyaltyCard: posgate.LoyaltyCard{ID: "x1", FirstName: "Ann", LastName: "Kim",
		Email: "ann@example.com", Phone: "+1 555 0001"}}}
	for _, list := range [][]*posgate.LoyaltyUser{users[:1000], others} {
		if _, err := db.ImportLoyaltyUsers(ctx, items(list...)); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range users[1000:] {
		if err := db.CreateLoyaltyUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	keywords := []string{"ann", "ANNA", "Ánn", "anna maria", "mar", "maria", "smi", "smith", "mith", "gold", "kim", "zoe", "ZOË",
		"muller", "müller", "mue", "garcia", "lopez", "lóp", "dupre", "jean", "luc", "jean-luc", "oster", "østergaard", "o'n",
		"exa", "example", "example.com", "exämple.org", "mail.t", "gmail.com", "@example.com", "ann.example", "ann@", "gma",
		"555", "5550", "0001", "1555", "+1 555", "+1 (555) 01", "4420", "+44 20 7946", "2079", "0049 30", "4930", "301",
		"0100", "(555) 010-", "555.010", "xyz", "a b", "nna", "mple.com"}
	for range 300 {
		keywords = append(keywords, randomKeyword(r, users[r.IntN(len(users))]))
	}
	compare := func(when string) (crowded int) {
		for _, kw := range keywords {
			k, err := posgate.ParseUserKeyword(kw)
			if err != nil {
				continue
			}
			got, err := db.SearchLoyaltyUsers(ctx, "pos", "co", k)
			if err != nil {
				t.Fatalf("%s: %q: %v", when, kw, err)
			}
			want, n := scanSearch(kw, users)
			if n > posgate.MaxUserMatches {
				crowded++
			}
			if g := ids(got); !slices.Equal(g, want) {
				t.Errorf("%s: %q (%d matches): got %v, want %v", when, kw, n, g, want)
			}
		}
		return crowded
	}
	if n := compare("after the imports"); n < 20 {
		t.Errorf("only %d keywords match more than %d users: the ranking at the limit is hardly compared", n, posgate.MaxUserMatches)
	}
	for i := 0; i < len(users); i += 10 {
		c := randomCard(r, users[i].ID)
		upd := posgate.LoyaltyUserUpdate{FirstName: &c.FirstName, LastName: &c.LastName, Email: &c.Email, Phone: &c.Phone}
		if i%20 == 0 {
			upd = posgate.LoyaltyUserUpdate{LastName: &c.LastName}
		}
		u, err := db.UpdateLoyaltyUser(ctx, "pos", "co", users[i].ID, upd)
		if err != nil {
			t.Fatal(err)
		}
		users[i] = u
	}
	compare("after the updates")
}

var (
	scanFirsts = []string{"Ann", "Anna", "Ánna", "Anna Maria", "Mary Ann", "Maria", "Marianne", "Jean-Luc", "Zoë", "Zoe", "Łukasz",
		"Renée", "Björn", "Kim", "Kimberly", "Hanna", "Joanna", "Luc"}
	scanLasts = []string{"Smith", "Smithers", "Goldsmith", "Müller", "Mueller", "García López", "Lopez", "Dupré", "Dupree",
		"Østergaard", "O'Neil", "Annson", "Kim", "Kimball", "Ann"}
	scanDomains = []string{"example.com", "Example.com", "exämple.org", "mail.test", "gmail.com", "ann.example.net"}
	scanPhones  = []string{"+1 555 %04d", "+1 (555) 010-%04d", "+44 20 7946 %04d", "0049 30 %06d", "(555) 010-%04d", "555%04d", "", "301 %04d"}
)

func randomCard(r *rand.Rand, id string) posgate.LoyaltyCard {
	first, last := scanFirsts[r.IntN(len(scanFirsts))], scanLasts[r.IntN(len(scanLasts))]
	local := strings.ToLower(strings.Fields(first)[0])
	switch r.IntN(4) {
	case 0:
		local += "." + strings.ToLower(strings.Fields(last)[0])
	case 1:
		local = fmt.Sprintf("%s%d", local, r.IntN(100))
	case 2:
		local = fmt.Sprintf("u%d", r.IntN(1000))
	}
	c := posgate.LoyaltyCard{ID: id, FirstName: first, LastName: last, Email: local + "@" + scanDomains[r.IntN(len(scanDomains))]}
	if r.IntN(10) == 0 {
		c.Email = ""
	}
	if f := scanPhones[r.IntN(len(scanPhones))]; f != "" {
		c.Phone = fmt.Sprintf(f, r.IntN(3000))
	}
	return c
}

// randomKeyword cuts a keyword from u: the start of a name word, of the
// e-mail or of its domain; the start or the end of the phone's digits,
// written as digits or with punctuation; or the inside of a word.
func randomKeyword(r *rand.Rand, u *posgate.LoyaltyUser) string {
	cut := func(s string, from, lo, hi int) string {
		rs := []rune(s)
		if from+lo > len(rs) {
			return string(rs)
		}
		return string(rs[from:min(len(rs), from+lo+r.IntN(hi-lo+1))])
	}
	words := strings.Fields(strings.NewReplacer("-", " ", "'", " ").Replace(u.FirstName + " " + u.LastName))
	digits := posgate.PhoneDigits(u.Phone)
	switch r.IntN(7) {
	case 0, 1:
		w := words[r.IntN(len(words))]
		if r.IntN(2) == 0 {
			w = strings.ToUpper(w)
		}
		return cut(w, 0, 3, 6)
	case 2:
		return cut(u.Email, 0, 3, 12)
	case 3:
		_, domain, _ := strings.Cut(u.Email, "@")
		return cut(domain, 0, 3, 8)
	case 4:
		if len(digits) < 4 {
			return cut(words[0], 1, 3, 4) // the inside of a word
		}
		n := 4 + r.IntN(len(digits)-3)
		return digits[len(digits)-n:]
	case 5:
		if r.IntN(2) == 0 {
			return cut(u.Phone, 0, 4, 12) // as written, punctuation and all
		}
		return cut(digits, r.IntN(3), 4, 8)
	default:
		return cut(words[r.IntN(len(words))], 1, 3, 5)
	}
}

// scanSearch answers a keyword search over users by scanning them all:
// the ids in the order of docs/api.md §6.1 (exact matches first, then by
// folded last name, first name and id), at most MaxUserMatches, and how
// many users matched.
func scanSearch(keyword string, users []*posgate.LoyaltyUser) ([]string, int) {
	type hit struct {
		u     *posgate.LoyaltyUser
		exact bool
	}
	var hits []hit
	for _, u := range users {
		if match, exact := scanMatch(keyword, u); match {
			hits = append(hits, hit{u, exact})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.exact != b.exact {
			if a.exact {
				return -1
			}
			return 1
		}
		return cmp.Or(strings.Compare(posgate.Fold(a.u.LastName), posgate.Fold(b.u.LastName)),
			strings.Compare(posgate.Fold(a.u.FirstName), posgate.Fold(b.u.FirstName)), strings.Compare(a.u.ID, b.u.ID))
	})
	var out []string
	for _, h := range hits[:min(len(hits), posgate.MaxUserMatches)] {
		out = append(out, h.u.ID)
	}
	return out, len(hits)
}

// scanMatch is the rule, written out: ignoring case and accents, the
// keyword starts a word of the first or last name, the e-mail, or the
// e-mail's domain; a keyword of at least four digits (spaces, dashes, dots,
// parentheses and a leading "+" aside) ends the phone's digits or starts
// them, with or without the country code. Exact: a whole name word, the
// whole e-mail, the whole phone.
func scanMatch(keyword string, u *posgate.LoyaltyUser) (match, exact bool) {
	keyword = strings.TrimSpace(keyword)
	text := posgate.SearchFold(keyword)
	see := func(field string, whole bool) {
		if strings.HasPrefix(field, text) {
			match = true
			exact = exact || (whole && field == text)
		}
	}
	for _, w := range strings.FieldsFunc(posgate.SearchFold(u.FirstName+" "+u.LastName), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	}) {
		see(w, true)
	}
	if email := posgate.SearchFold(strings.TrimSpace(u.Email)); email != "" {
		see(email, true)
		if at := strings.LastIndex(email, "@"); at >= 0 {
			see(email[at+1:], false)
		}
	}
	kd := strings.Map(func(r rune) rune {
		if strings.ContainsRune(" -.()", r) {
			return -1
		}
		return r
	}, strings.TrimPrefix(keyword, "+"))
	phone := posgate.PhoneDigits(u.Phone)
	if len(kd) < 4 || strings.Trim(kd, "0123456789") != "" || phone == "" {
		return match, exact
	}
	if strings.HasSuffix(phone, kd) {
		match = true
		exact = exact || phone == kd
	}
	forms := []string{phone}
	intl := ""
	if strings.HasPrefix(strings.TrimSpace(u.Phone), "+") {
		intl = phone
	} else if rest, ok := strings.CutPrefix(phone, "00"); ok {
		intl = rest
	}
	if intl != "" {
		forms = append(forms, intl, intl[posgate.CountryCodeLen(intl):])
	}
	for _, f := range forms {
		if strings.HasPrefix(f, kd) {
			match = true
			exact = exact || f == kd
		}
	}
	return match, exact
}
