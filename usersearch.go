package posgate

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The loyalty-user keyword search (docs/api.md §6.1) matches the start of
// words, of the e-mail and its domain, and the start or the end of the
// phone's digits, never the inside of a word: each user is indexed under a
// handful of search terms (SearchTerms), and a keyword is a prefix of terms
// (UserKeyword.Prefixes), which a B-tree finds by a range scan. Stores keep
// the terms that SearchTerms returns and look up the prefixes that
// UserKeyword returns; this file is the one place that says what matches.

// MinKeywordLen is the shortest keyword of a loyalty-user search, in
// characters, before and after SearchFold (docs/api.md §6.1).
const MinKeywordLen = 3

// MinKeywordDigits is how many digits a keyword written like a phone number
// must hold to be looked for in phones.
const MinKeywordDigits = 4

// Search terms other than name words and the e-mail start with a marker, a
// control character that no keyword holds, so that a keyword's text never
// reaches them by accident and each kind of term is looked up on purpose.
const (
	// TermDomain marks the e-mail's domain (after the last "@").
	TermDomain = "\x01"
	// TermPhoneEnd marks the phone's digits reversed: a keyword of digits
	// reversed is a prefix of them when it ends the phone.
	TermPhoneEnd = "\x02"
	// TermPhone marks the phone's digits as written, without a leading
	// "00", and without the country code.
	TermPhone = "\x03"
)

// TermBucketRunes is how many characters of a term after its marker make
// its bucket (TermBucket): every keyword prefix is at least that long.
const TermBucketRunes = 3

// SearchFold is the form in which a keyword and the names and e-mails it is
// matched against are compared: compatibility-decomposed (NFKD), without
// combining marks, a few letters that do not decompose spelled in ASCII
// (ß, æ, œ, ø, ł, đ, ð, þ, ı), then case-folded (Fold). "Çağrı Øster"
// folds to "cagri oster".
func SearchFold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return Fold(foldAccents(s))
		}
	}
	return Fold(s)
}

var accentFreeSpelling = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o",
	'ł': "l", 'Ł': "l", 'đ': "d", 'Đ': "d", 'ð': "d", 'Ð': "d", 'þ': "th", 'Þ': "th", 'ı': "i",
}

func foldAccents(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFKD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if t, ok := accentFreeSpelling[r]; ok {
			b.WriteString(t)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// NameWords returns the words of a name folded for search: the runs of
// letters, digits and marks of SearchFold(name) ("Jean-Luc O'Neil": jean,
// luc, o, neil).
func NameWords(name string) []string {
	return strings.FieldsFunc(SearchFold(name), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
}

// countryCodes2 are the two-digit country calling codes (ITU-T E.164);
// the one-digit ones are 1 and 7, every other one has three digits.
var countryCodes2 = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58
		60 61 62 63 64 65 66 81 82 84 86 90 91 92 93 94 95 98`) {
		countryCodes2[c] = true
	}
}

// CountryCodeLen returns the length of the country calling code that
// international digits (those after "+" or "00") start with: calling codes
// are a prefix code, so the first digits tell it.
func CountryCodeLen(intl string) int {
	switch {
	case intl == "":
		return 0
	case intl[0] == '1' || intl[0] == '7':
		return 1
	case len(intl) >= 2 && countryCodes2[intl[:2]]:
		return 2
	default:
		return min(3, len(intl))
	}
}

// PhoneStarts returns the digit strings whose start a keyword of digits
// may match in phone: its digits as written; and when it is written
// internationally (a leading "+", or digits starting with "00"), those
// digits after the "00" and after the country code.
func PhoneStarts(phone string) []string {
	digits := PhoneDigits(phone)
	if digits == "" {
		return nil
	}
	starts := []string{digits}
	intl := ""
	switch {
	case strings.HasPrefix(strings.TrimSpace(phone), "+"):
		intl = digits
	case strings.HasPrefix(digits, "00"):
		intl = digits[2:]
		starts = append(starts, intl)
	}
	if n := CountryCodeLen(intl); n > 0 && n < len(intl) {
		starts = append(starts, intl[n:])
	}
	return starts
}

// SearchTerms returns the terms under which a store indexes u for keyword
// search, sorted and distinct: the words of its first and last names, its
// e-mail and the e-mail's domain (SearchFold), and its phone's starts
// (PhoneStarts) and reversed digits, each kind with its marker.
func (u *LoyaltyUser) SearchTerms() []string {
	var terms []string
	terms = append(terms, NameWords(u.FirstName)...)
	terms = append(terms, NameWords(u.LastName)...)
	if email := SearchFold(strings.TrimSpace(u.Email)); email != "" {
		terms = append(terms, email)
		if i := strings.LastIndexByte(email, '@'); i >= 0 && i < len(email)-1 {
			terms = append(terms, TermDomain+email[i+1:])
		}
	}
	for _, s := range PhoneStarts(u.Phone) {
		terms = append(terms, TermPhone+s)
	}
	if d := PhoneDigits(u.Phone); d != "" {
		terms = append(terms, TermPhoneEnd+reverse(d))
	}
	slices.Sort(terms)
	return slices.Compact(terms)
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// UserKeyword is a parsed loyalty-user search keyword: Text, SearchFold'ed,
// is looked for at the start of name words, of e-mails and of their
// domains; Digits, when the keyword is written like a phone number with at
// least MinKeywordDigits digits, at the start and the end of phones.
type UserKeyword struct {
	Text   string
	Digits string
}

// ParseUserKeyword validates and parses a keyword: at least MinKeywordLen
// characters after trimming spaces and after folding, and no control
// characters (which could never match).
func ParseUserKeyword(s string) (UserKeyword, error) {
	s = strings.TrimSpace(s)
	v := ValidationError{}
	short := fmt.Sprintf("The keyword field must be at least %d characters long.", MinKeywordLen)
	switch {
	case utf8.RuneCountInString(s) < MinKeywordLen:
		v.Add("keyword", short)
	case !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl):
		v.Add("keyword", "The keyword field must be text without control characters.")
	case len(s) > MaxTextLen:
		v.Add("keyword", fmt.Sprintf("The keyword field must be at most %d bytes long.", MaxTextLen))
	case utf8.RuneCountInString(SearchFold(s)) < MinKeywordLen:
		v.Add("keyword", short)
	}
	if err := v.Err(); err != nil {
		return UserKeyword{}, err
	}
	return UserKeyword{Text: SearchFold(s), Digits: keywordDigits(s)}, nil
}

// keywordDigits returns the digits of a keyword written like a phone
// number (digits, spaces, dashes, dots, parentheses and a leading "+")
// holding at least MinKeywordDigits digits, else "".
func keywordDigits(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimPrefix(s, "+") {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune(" -.()", r):
		default:
			return ""
		}
	}
	if b.Len() < MinKeywordDigits {
		return ""
	}
	return b.String()
}

// ExactTerms are the terms that k equals when it is a whole name word, the
// whole e-mail or the whole phone (with or without its country code).
func (k UserKeyword) ExactTerms() []string {
	terms := []string{k.Text}
	if k.Digits != "" {
		terms = append(terms, TermPhone+k.Digits)
	}
	return terms
}

// Prefixes are the term prefixes that a user matching k holds a term
// starting with: its text (name words, the e-mail), its text as a domain,
// and its digits at the start and, reversed, at the end of phones.
func (k UserKeyword) Prefixes() []string {
	p := []string{k.Text, TermDomain + k.Text}
	if k.Digits != "" {
		p = append(p, TermPhone+k.Digits, TermPhoneEnd+reverse(k.Digits))
	}
	return p
}

// TermBucket returns the bucket of a term or of a prefix of Prefixes: its
// marker, if any, and TermBucketRunes characters after it. Every term
// starting with a prefix is in the prefix's bucket, and stores keep the
// terms of a bucket in rank order, so that the first matches of a prefix
// that many users hold are found without reading them all.
func TermBucket(term string) string {
	skip := 0
	if term != "" && term[0] < 0x04 {
		skip = 1
	}
	n := 0
	for i := range term[skip:] {
		if n == TermBucketRunes {
			return term[:skip+i]
		}
		n++
	}
	return term
}

// LoyaltyUserKeys are a loyalty user's folded fields as stores keep them
// beside the user's own: names folded (the order of a search's answer), the
// e-mail trimmed and folded, the phone reduced to its digits (the matching
// of coupon owners and sales' customers).
type LoyaltyUserKeys struct {
	First, Last, Email, Digits string
}

// Keys returns the folded fields of u.
func (u *LoyaltyUser) Keys() LoyaltyUserKeys {
	return LoyaltyUserKeys{Fold(u.FirstName), Fold(u.LastName), FoldEmail(u.Email), PhoneDigits(u.Phone)}
}

// Exact reports whether u matches k exactly: k is a whole word of its
// names, its whole e-mail or its whole phone.
func (k UserKeyword) Exact(u *LoyaltyUser) bool {
	exact := k.ExactTerms()
	for _, t := range u.SearchTerms() {
		if slices.Contains(exact, t) {
			return true
		}
	}
	return false
}

// Matches reports whether u matches k at all.
func (k UserKeyword) Matches(u *LoyaltyUser) bool {
	prefixes := k.Prefixes()
	for _, t := range u.SearchTerms() {
		for _, p := range prefixes {
			if strings.HasPrefix(t, p) {
				return true
			}
		}
	}
	return false
}

// RankUsers orders keyword matches as SearchLoyaltyUsers returns them (exact
// matches first, then by folded last name, folded first name and id), drops
// duplicates and users that do not match, and keeps at most
// MaxUserMatches.
func RankUsers(k UserKeyword, users []*LoyaltyUser) []*LoyaltyUser {
	type ranked struct {
		u     *LoyaltyUser
		f     LoyaltyUserKeys
		exact bool
	}
	rs := make([]ranked, 0, len(users))
	seen := make(map[string]bool, len(users))
	for _, u := range users {
		if seen[u.ID] || !k.Matches(u) {
			continue
		}
		seen[u.ID] = true
		rs = append(rs, ranked{u, u.Keys(), k.Exact(u)})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if a.exact != b.exact {
			if a.exact {
				return -1
			}
			return 1
		}
		return CompareUserRank(UserRank{Last: a.f.Last, First: a.f.First, ID: a.u.ID}, UserRank{Last: b.f.Last, First: b.f.First, ID: b.u.ID})
	})
	out := make([]*LoyaltyUser, 0, min(len(rs), MaxUserMatches))
	for _, r := range rs[:min(len(rs), MaxUserMatches)] {
		out = append(out, r.u)
	}
	return out
}

// UserRank is where a user stands in a search's answer among the matches
// of the same kind (exact or not): by folded last name, folded first name
// and id, compared byte by byte as the stores' indexes do. Key is the
// store's own handle of the user's row, if it has one (SQLite's rowid),
// for reading the answer's users; it takes no part in the order.
type UserRank struct {
	Last, First, ID string
	Key             int64
}

// CompareUserRank orders user ranks.
func CompareUserRank(a, b UserRank) int {
	if c := strings.Compare(a.Last, b.Last); c != 0 {
		return c
	}
	if c := strings.Compare(a.First, b.First); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}
