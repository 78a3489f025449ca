package postgres

import (
	"slices"
	"strings"
	"testing"
)

// TestCoverGrams checks that the covering 4-grams of a keyword are its
// substrings, start with its first character and end with its last, and
// leave no character uncovered.
func TestCoverGrams(t *testing.T) {
	for s, want := range map[string][]string{
		"abc":        nil,
		"abcd":       {"abcd"},
		"abcde":      {"abcd", "bcde"},
		"abcdefgh":   {"abcd", "efgh"},
		"abcdefghij": {"abcd", "efgh", "ghij"},
		"aaaaaaaa":   {"aaaa"},
		"öztürk":     {"öztü", "türk"},
	} {
		got := coverGrams(s)
		if !slices.Equal(got, want) {
			t.Errorf("coverGrams(%q) = %q, want %q", s, got, want)
		}
		for _, g := range got {
			if !strings.Contains(s, g) {
				t.Errorf("coverGrams(%q): %q is not a substring", s, g)
			}
		}
	}
}
