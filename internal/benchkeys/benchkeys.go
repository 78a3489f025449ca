// Package benchkeys cuts the loyalty-user keywords that posgate's
// benchmarks search for, in one place, so that the HTTP benchmark (bench)
// and the stores' per-call search benchmarks draw the same kinds of keyword
// and their figures can be compared.
package benchkeys

import (
	"github.com/posgate/posgate"
)

// User holds the fields of a loyalty user that keywords are cut from.
type User struct{ First, Last, Email, Phone string }

// Kind is one kind of keyword: a name and how to cut it from a user, with
// intN(n) drawing a random int in [0, n).
type Kind struct {
	Name string
	Cut  func(intN func(int) int, u User) string
}

// Kinds are the keyword kinds in the order the HTTP benchmark takes them
// (row i uses Kinds[i%4]), as a cashier types them (docs/api.md §6.1):
// the first 3–6 letters of the first or the last name, the first 5–8
// characters of the e-mail, the last 4–7 phone digits.
var Kinds = []Kind{
	{"first", func(intN func(int) int, u User) string { return Prefix(intN, u.First, 3, 6) }},
	{"last", func(intN func(int) int, u User) string { return Prefix(intN, u.Last, 3, 6) }},
	{"email", func(intN func(int) int, u User) string { return Prefix(intN, u.Email, 5, 8) }},
	{"phone", func(intN func(int) int, u User) string { return Suffix(intN, posgate.PhoneDigits(u.Phone), 4, 7) }},
}

// Prefix returns the first lo–hi bytes of s (s itself when shorter than lo).
func Prefix(intN func(int) int, s string, lo, hi int) string {
	if len(s) <= lo {
		return s
	}
	return s[:lo+intN(min(hi, len(s))-lo+1)]
}

// Suffix returns the last lo–hi bytes of s (s itself when shorter than lo).
func Suffix(intN func(int) int, s string, lo, hi int) string {
	if len(s) <= lo {
		return s
	}
	return s[len(s)-lo-intN(min(hi, len(s))-lo+1):]
}
