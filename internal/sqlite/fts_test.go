package sqlite

import "testing"

// TestFTSTrigramsCoverTheKeyword: every character of the keyword lies in
// one of the trigrams the trigram index is asked for, each asked once.
func TestFTSTrigramsCoverTheKeyword(t *testing.T) {
	for in, want := range map[string]string{
		"abc":       `("abc")`,
		"abcd":      `("abc" AND "bcd")`,
		"abcdef":    `("abc" AND "def")`,
		"abcdefg":   `("abc" AND "def" AND "efg")`,
		"abcdefgh":  `("abc" AND "def" AND "fgh")`,
		"abcdefghi": `("abc" AND "def" AND "ghi")`,
		"aaaaaaa":   `("aaa")`,
		"ä\"bc":     `("ä""b" AND """bc")`,
		"1234567":   `("123" AND "456" AND "567")`,
	} {
		if got := ftsTrigrams(in); got != want {
			t.Errorf("ftsTrigrams(%q) = %s, want %s", in, got, want)
		}
	}
}
