// Package benchkeys cuts the loyalty-user keywords that posgate's
// benchmarks search for, in one place, so that the HTTP benchmark (bench)
// and the stores' per-call search benchmarks draw the same kinds of keyword
// and their figures can be compared.
package benchkeys

import (
	"strings"

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
// (row i uses Kinds[i%4]): 3–6 letters of the first or the last name, 5–8
// characters of the e-mail's local part, 4–7 phone digits.
var Kinds = []Kind{
	{"first", func(intN func(int) int, u User) string { return Cut(intN, u.First, 3, 6) }},
	{"last", func(intN func(int) int, u User) string { return Cut(intN, u.Last, 3, 6) }},
	{"email", func(intN func(int) int, u User) string {
		local, _, _ := strings.Cut(u.Email, "@")
		return Cut(intN, local, 5, 8)
	}},
	{"phone", func(intN func(int) int, u User) string { return Cut(intN, posgate.PhoneDigits(u.Phone), 4, 7) }},
}

// Cut returns a random substring of s of lo–hi bytes (s itself when shorter
// than lo).
func Cut(intN func(int) int, s string, lo, hi int) string {
	if len(s) <= lo {
		return s
	}
	n := lo + intN(min(hi, len(s))-lo+1)
	start := intN(len(s) - n + 1)
	return s[start : start+n]
}
