package posgate

import (
	"errors"
	"strconv"
	"time"

	"github.com/posgate/posgate/internal/codec/datetime"
)

// PromotionTime is a date-time of a promotion's validity or recurrence
// (docs/api.md §9.1, docs/decisions.md): an instant, when the import gave
// a zone offset or Z ("2026-03-08T07:00:00Z"), or a wall-clock time of the
// location a promotion is evaluated for, when it gave none
// ("2026-03-08T07:00:00", or a bare date: its midnight). Stores keep which
// of the two it is, and answers write it back the same way: an instant in
// UTC with Z, a wall-clock time without an offset.
type PromotionTime struct {
	t    time.Time // UTC; for a wall-clock time, its date and clock as UTC fields
	wall bool
}

// InstantTime is the instant t, whatever its location.
func InstantTime(t time.Time) PromotionTime { return PromotionTime{t: t.UTC()} }

// WallTime is the wall-clock time that t's date and clock show in t's
// location, at no place in particular.
func WallTime(t time.Time) PromotionTime {
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return PromotionTime{t: time.Date(y, m, d, h, mi, s, t.Nanosecond(), time.UTC), wall: true}
}

// ParsePromotionTime reads an ISO 8601 date-time the way every input is
// read (internal/codec/datetime); without an offset it is a wall-clock
// time.
func ParsePromotionTime(s string) (PromotionTime, error) {
	t, offset, err := datetime.ParseZoned(s)
	if err != nil {
		return PromotionTime{}, err
	}
	return PromotionTime{t: t, wall: !offset}, nil
}

// IsWall reports whether p is a wall-clock time (given without an offset).
func (p PromotionTime) IsWall() bool { return p.wall }

// Time is the instant, or for a wall-clock time its date and clock as a
// UTC time: what stores keep beside IsWall.
func (p PromotionTime) Time() time.Time { return p.t }

// DateTime marks the type for the request decoder (internal/codec): it is
// read from an ISO 8601 string, and a wrong value is reported as one.
func (PromotionTime) DateTime() {}

// In is the instant p means at a place whose time zone is z: an instant
// is itself; a wall-clock time is the first instant at which the clock of
// z shows it or a later time. So a time that the clock shows twice (the
// hour repeated when daylight-saving time ends) is its first occurrence,
// and a time the clock skips (the hour lost when it begins) is the instant
// the clock jumps over it.
func (p PromotionTime) In(z *time.Location) time.Time {
	if !p.wall {
		return p.t
	}
	return firstInstant(p.t, z)
}

// firstInstant is the first instant at which the clock of zone z shows
// wall (a UTC time's date and clock) or a later time.
func firstInstant(wall time.Time, z *time.Location) time.Time {
	if z == time.UTC || z == nil {
		return wall
	}
	y, m, d := wall.Date()
	h, mi, s := wall.Clock()
	t := time.Date(y, m, d, h, mi, s, wall.Nanosecond(), z)
	switch shown := WallTime(t.In(z)).t; {
	case shown.After(wall):
		// wall is skipped, and t lies after the gap: the gap ends where
		// t's period of the zone begins.
		if start, _ := t.ZoneBounds(); !start.IsZero() {
			return start
		}
		return t
	case shown.Before(wall):
		// wall is skipped, and t lies before the gap.
		if _, end := t.ZoneBounds(); !end.IsZero() {
			return end
		}
		return t
	}
	// The clock shows wall at t; it shows it earlier too when wall lies
	// in an hour repeated at the start of t's period.
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		return t
	}
	_, before := start.Add(-time.Nanosecond).In(z).Zone()
	if e := wall.Add(-time.Duration(before) * time.Second); e.Before(start) {
		return e
	}
	return t
}

// String is p as answers write it: an instant in UTC with Z, a wall-clock
// time without an offset (RFC 3339 with fractional seconds when it has
// any).
func (p PromotionTime) String() string {
	if p.wall {
		return p.t.Format("2006-01-02T15:04:05.999999999")
	}
	return p.t.Format(time.RFC3339Nano)
}

// MarshalJSON writes String.
func (p PromotionTime) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(make([]byte, 0, 32), p.String()), nil
}

// errNotDateTime is UnmarshalJSON's error; the request decoder turns it
// into the field's "must be a date-time" message.
var errNotDateTime = errors.New("not an ISO 8601 date-time")

// UnmarshalJSON reads a JSON string by ParsePromotionTime.
func (p *PromotionTime) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil || len(b) == 0 || b[0] != '"' {
		return errNotDateTime
	}
	v, err := ParsePromotionTime(s)
	if err != nil {
		return errNotDateTime
	}
	*p = v
	return nil
}

// stamp truncates p to what stores keep: microseconds.
func (p PromotionTime) stamp() PromotionTime {
	p.t = p.t.Truncate(time.Microsecond)
	return p
}

// timeOfDay is p's offset from the midnight of its date (the UTC date of an
// instant, the date of a wall-clock time).
func (p PromotionTime) timeOfDay() time.Duration { return promoTimeOfDay(p.t) }

// maxZoneOffset bounds how far a wall-clock time can be from the instant
// it means anywhere: UTC offsets lie within −12 h and +14 h (and the local
// mean times of the zone database before 1900 within ±16 h).
const maxZoneOffset = 16 * time.Hour

// earliest and latest bound the instants p can mean at any place.
func (p PromotionTime) earliest() time.Time {
	if p.wall {
		return p.t.Add(-maxZoneOffset)
	}
	return p.t
}

func (p PromotionTime) latest() time.Time {
	if p.wall {
		return p.t.Add(maxZoneOffset)
	}
	return p.t
}

// zoneOf is the zone a time given to ValidAt carries: its location, but
// UTC for time.Local, because posgate never reads the zone of the machine
// it runs on.
func zoneOf(at time.Time) *time.Location {
	if z := at.Location(); z != time.Local {
		return z
	}
	return time.UTC
}
