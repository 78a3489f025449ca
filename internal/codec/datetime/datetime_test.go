package datetime

import (
	"fmt"
	"testing"
	"time"
)

// TestParseUTCSecondsAgreesWithTimeParse checks that the fast path accepts
// what time.Parse accepts in its form, with the same result, and leaves
// everything else to it.
func TestParseUTCSecondsAgreesWithTimeParse(t *testing.T) {
	inputs := []string{
		"2030-05-01T08:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2024-02-29T12:00:00Z",
		"2023-02-29T12:00:00Z", "2030-04-31T00:00:00Z", "2030-13-01T00:00:00Z", "2030-00-01T00:00:00Z",
		"2030-01-00T00:00:00Z", "2030-01-01T24:00:00Z", "2030-01-01T23:60:00Z", "2030-01-01T23:59:60Z",
		"2030-01-01t00:00:00Z", "2030-01-01T00:00:00z", "2030-01-01 00:00:00Z", "2030-1-01T00:00:00Z",
		"+030-01-01T00:00:00Z", "2030-01-01T00:00:0aZ", "2030-01-01T00:00:00+00:00", "2030-01-01T00:00:00.5Z",
	}
	for y := 1999; y <= 2001; y++ {
		for m := 1; m <= 12; m++ {
			for d := 27; d <= 32; d++ {
				inputs = append(inputs, fmt.Sprintf("%04d-%02d-%02dT01:02:03Z", y, m, d))
			}
		}
	}
	for _, s := range inputs {
		want, wantErr := time.Parse(time.RFC3339, s)
		if wantErr == nil && !InYearRange(want) {
			wantErr = errYearRange // refused by posgate (TestDateTimeYearRange)
		}
		got, ok := parseUTCSeconds(s)
		if ok && (wantErr != nil || !got.Equal(want) || got.Location() != time.UTC) {
			t.Errorf("%s: fast path %v, time.Parse %v %v", s, got, want, wantErr)
		}
		if len(s) == 20 && s[10] == 'T' && s[19] == 'Z' && wantErr == nil && !ok {
			t.Errorf("%s: the fast path left a valid date-time of its form to time.Parse", s)
		}
		full, err := Parse(s)
		if (err == nil) != (wantErr == nil && len(s) != 10) && s[len(s)-1] == 'Z' {
			t.Errorf("%s: Parse %v %v, time.Parse %v %v", s, full, err, want, wantErr)
		}
	}
}

func BenchmarkParseTime(b *testing.B) {
	for b.Loop() {
		if _, err := Parse("2030-05-01T08:00:00Z"); err != nil {
			b.Fatal(err)
		}
	}
}

// A date-time whose UTC year leaves 1–9999 is refused where it comes in:
// no answer could write it back (found by FuzzDecode).
func TestDateTimeYearRange(t *testing.T) {
	for _, s := range []string{"0000-01-01T00:00:00+01:00", "0000-06-01T00:00:00Z", "0000-01-01", "9999-12-31T23:00:00-02:00"} {
		if got, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, got)
		}
	}
	for _, s := range []string{"0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:30:00+00:30"} {
		if _, err := Parse(s); err != nil {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
}
