package sqlite

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestParseTimeAgreesWithTimeParse: the hand-written parser of stored times
// returns what time.Parse returns, times and errors alike.
func TestParseTimeAgreesWithTimeParse(t *testing.T) {
	inputs := []string{
		"2026-11-22T05:43:25.123456Z", "0000-01-01T00:00:00.000000Z", "9999-12-31T23:59:59.999999Z",
		"2024-02-29T12:00:00.000000Z", "2023-02-29T12:00:00.000000Z", "2026-04-31T00:00:00.000000Z",
		"2026-13-01T00:00:00.000000Z", "2026-00-10T00:00:00.000000Z", "2026-01-00T00:00:00.000000Z",
		"2026-01-01T24:00:00.000000Z", "2026-01-01T23:60:00.000000Z", "2026-01-01T23:59:60.000000Z",
		"2026-01-01T23:59:59.00000aZ", "2026-01-01 23:59:59.000000Z", "2026-01-01T23:59:59.000000+",
		"2026-01-01T23:59:59.000000", "", "-026-01-01T23:59:59.000000Z", "2026-1-01T23:59:59.0000000Z",
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		inputs = append(inputs, formatTime(time.Unix(r.Int64N(400*365*86400)-100*365*86400, r.Int64N(1e9))))
	}
	for _, in := range inputs {
		got, gotErr := parseTime(in)
		want, wantErr := time.Parse(timeLayout, in)
		if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Errorf("parseTime(%q) = %v, %v; time.Parse: %v, %v", in, got, gotErr, want, wantErr)
		}
	}
}
