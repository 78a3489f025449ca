package postgres

import (
	"testing"
	"time"
)

// TestAppendTime checks the hand-written formatter against time's.
func TestAppendTime(t *testing.T) {
	for _, s := range []string{"2030-05-01T08:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z",
		"2030-05-01T08:00:00.5Z", "2030-05-01T08:00:00.000001Z", "2030-05-01T08:00:00.12Z", "2030-05-01T10:00:00+02:00"} {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		want := `"` + tm.UTC().Format("2006-01-02T15:04:05.999999Z07:00") + `"`
		if got := string(appendTime(nil, &tm)); got != want {
			t.Errorf("%s: %s, want %s", s, got, want)
		}
	}
	if got := string(appendTime(nil, nil)); got != "null" {
		t.Errorf("nil: %s", got)
	}
}
