// Package datetime reads the date-times of posgate's inputs, one way for
// every input: request bodies (internal/codec), query parameters and the
// rows of imported files. It accepts RFC 3339 ("2024-05-01T10:00:00+02:00",
// fractional seconds allowed), the same without a zone offset (read as UTC,
// as .NET-based POS systems often send it) and a bare date ("2024-05-01",
// midnight UTC), in the years 1 to 9999; every result is in UTC.
package datetime

import (
	"errors"
	"strings"
	"time"
)

// Parse parses an ISO 8601 date-time: RFC 3339, the same without a zone
// offset (UTC), or a bare date (midnight UTC). The result is in UTC.
func Parse(s string) (time.Time, error) {
	t, _, err := ParseZoned(s)
	return t, err
}

// ParseZoned parses what Parse does and also reports whether s gave a zone
// offset (or Z): without one, t holds the date and clock as written, in UTC
// fields, for a caller that reads them as a wall-clock time of a place
// (a promotion's validity, docs/api.md §9.1).
func ParseZoned(s string) (t time.Time, offset bool, err error) {
	if t, ok := parseUTCSeconds(s); ok {
		return t, true, nil
	}
	const zoneless = "2006-01-02T15:04:05"
	layout, offset := time.RFC3339, true // also reads fractional seconds
	switch {
	case len(s) == len(time.DateOnly):
		layout, offset = time.DateOnly, false
	case len(s) >= len(zoneless) && !strings.ContainsAny(s[len(zoneless):], "Z+-"):
		layout, offset = zoneless, false // fractional seconds, if any, but no offset
	}
	t, err = time.Parse(layout, s)
	if err == nil && !InYearRange(t) {
		return time.Time{}, false, errYearRange
	}
	return t.UTC(), offset, err
}

// errYearRange is Parse's error for a date-time outside years 1–9999.
var errYearRange = errors.New("year outside 1-9999")

// InYearRange reports whether t, in UTC, lies in the years 1 to 9999: what
// RFC 3339 writes and both stores keep. "0000-01-01T00:00:00+01:00" is a
// valid RFC 3339 text of a time in year -1, which no answer could encode
// again, so such times are refused where they come in.
func InYearRange(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// parseUTCSeconds reads the most common form, 2006-01-02T15:04:05Z, without
// time.Parse's general machinery (a promotion import parses hundreds of
// thousands). It accepts exactly what time.Parse(time.RFC3339) accepts in
// that form and reports false for anything else, which then goes the
// general way.
func parseUTCSeconds(s string) (time.Time, bool) {
	if len(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, second := num(11, 2), num(14, 2), num(17, 2)
	if year < 1 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC)
	if t.Day() != day { // the 31st of a 30-day month, February 29th of a common year
		return time.Time{}, false
	}
	return t, true
}
