package posgate

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// The daylight-saving changes of 2026 used below:
//
//	America/New_York  2026-03-08 02:00 EST → 03:00 EDT (07:00Z); 2026-11-01 02:00 EDT → 01:00 EST (06:00Z)
//	Europe/Berlin     2026-03-29 02:00 CET → 03:00 CEST (01:00Z); 2026-10-25 03:00 CEST → 02:00 CET (01:00Z)
//
// so New York skips 02:00–02:59 on March 8 and shows 01:00–01:59 twice on
// November 1; Berlin skips 02:00–02:59 on March 29 and shows it twice on
// October 25.

func TestPromotionTimeIn(t *testing.T) {
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	for _, tc := range []struct {
		wall string
		z    *time.Location
		want string
	}{
		{"2026-01-15T09:00:00", ny, "2026-01-15T14:00:00Z"},
		{"2026-07-15T09:00:00", ny, "2026-07-15T13:00:00Z"},
		{"2026-03-08T01:59:59", ny, "2026-03-08T06:59:59Z"},
		{"2026-03-08T02:00:00", ny, "2026-03-08T07:00:00Z"}, // skipped: the jump
		{"2026-03-08T02:30:00", ny, "2026-03-08T07:00:00Z"}, // skipped: the jump
		{"2026-03-08T03:00:00", ny, "2026-03-08T07:00:00Z"},
		{"2026-11-01T00:59:59", ny, "2026-11-01T04:59:59Z"},
		{"2026-11-01T01:00:00", ny, "2026-11-01T05:00:00Z"}, // repeated: the first
		{"2026-11-01T01:30:00", ny, "2026-11-01T05:30:00Z"}, // repeated: the first
		{"2026-11-01T02:00:00", ny, "2026-11-01T07:00:00Z"},
		{"2026-03-29T02:30:00", berlin, "2026-03-29T01:00:00Z"}, // skipped
		{"2026-03-29T03:00:00", berlin, "2026-03-29T01:00:00Z"},
		{"2026-10-25T01:59:59", berlin, "2026-10-24T23:59:59Z"},
		{"2026-10-25T02:30:00", berlin, "2026-10-25T00:30:00Z"}, // repeated: the first
		{"2026-10-25T03:00:00", berlin, "2026-10-25T02:00:00Z"},
		{"2026-03-08T02:30:00", time.UTC, "2026-03-08T02:30:00Z"},
		{"2026-03-08T02:30:00.5", time.UTC, "2026-03-08T02:30:00.5Z"},
		// An instant is itself wherever it is read.
		{"2026-03-08T02:30:00-05:00", ny, "2026-03-08T07:30:00Z"},
		{"2026-10-25T02:30:00Z", berlin, "2026-10-25T02:30:00Z"},
	} {
		p := atp(tc.wall)
		if got := p.In(tc.z).UTC().Format(time.RFC3339Nano); got != tc.want {
			t.Errorf("%s in %s = %s, want %s", tc.wall, tc.z, got, tc.want)
		}
	}
}

// TestValidityBoundsAcrossDST: a wall-clock period starts at the first
// instant the location's clock shows its start and ends after the first
// instant it shows its end, through both changes; an instant is an instant.
func TestValidityBoundsAcrossDST(t *testing.T) {
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	type probe struct {
		at   string
		want bool
	}
	for _, tc := range []struct {
		name   string
		v      PromotionValidity
		z      *time.Location
		probes []probe
	}{
		{"New York, start in the skipped hour", PromotionValidity{StartDate: atp("2026-03-08T02:30:00")}, ny,
			[]probe{{"2026-03-08T06:59:59Z", false}, {"2026-03-08T07:00:00Z", true}}},
		{"New York, end in the skipped hour", PromotionValidity{EndDate: atp("2026-03-08T02:30:00")}, ny,
			[]probe{{"2026-03-08T06:59:59.999999Z", true}, {"2026-03-08T07:00:00Z", false}}},
		{"New York, start in the repeated hour", PromotionValidity{StartDate: atp("2026-11-01T01:30:00")}, ny,
			[]probe{{"2026-11-01T05:29:59Z", false}, {"2026-11-01T05:30:00Z", true}, {"2026-11-01T06:10:00Z", true}, {"2026-11-01T06:30:00Z", true}}},
		{"New York, end in the repeated hour", PromotionValidity{EndDate: atp("2026-11-01T01:30:00")}, ny,
			[]probe{{"2026-11-01T05:30:00Z", true}, {"2026-11-01T05:30:00.000001Z", false}, {"2026-11-01T06:10:00Z", false}}},
		{"New York, a summer day", PromotionValidity{StartDate: atp("2026-06-01T09:00:00"), EndDate: atp("2026-06-01T17:00:00")}, ny,
			[]probe{{"2026-06-01T12:59:59Z", false}, {"2026-06-01T13:00:00Z", true}, {"2026-06-01T21:00:00Z", true}, {"2026-06-01T21:00:01Z", false}}},
		{"the same day at a place in UTC", PromotionValidity{StartDate: atp("2026-06-01T09:00:00"), EndDate: atp("2026-06-01T17:00:00")}, time.UTC,
			[]probe{{"2026-06-01T08:59:59Z", false}, {"2026-06-01T09:00:00Z", true}, {"2026-06-01T17:00:00Z", true}, {"2026-06-01T17:00:01Z", false}}},
		{"Berlin, start in the skipped hour", PromotionValidity{StartDate: atp("2026-03-29T02:30:00")}, berlin,
			[]probe{{"2026-03-29T00:59:59Z", false}, {"2026-03-29T01:00:00Z", true}}},
		{"Berlin, end in the repeated hour", PromotionValidity{EndDate: atp("2026-10-25T02:30:00")}, berlin,
			[]probe{{"2026-10-25T00:30:00Z", true}, {"2026-10-25T00:30:01Z", false}, {"2026-10-25T01:15:00Z", false}}},
		{"Berlin, a bare date is local midnight", PromotionValidity{StartDate: atp("2026-10-25"), EndDate: atp("2026-10-26")}, berlin,
			[]probe{{"2026-10-24T21:59:59Z", false}, {"2026-10-24T22:00:00Z", true}, {"2026-10-25T23:00:00Z", true}, {"2026-10-25T23:00:01Z", false}}},
		{"an offset is still that instant", PromotionValidity{StartDate: atp("2026-06-01T09:00:00-04:00")}, berlin,
			[]probe{{"2026-06-01T12:59:59Z", false}, {"2026-06-01T13:00:00Z", true}}},
	} {
		for _, p := range tc.probes {
			if got := tc.v.Contains(at(p.at).In(tc.z)); got != p.want {
				t.Errorf("%s: Contains(%s) = %v, want %v", tc.name, p.at, got, p.want)
			}
		}
	}
}

// TestRecurrenceAcrossDST: "weekend breakfast 07:00–11:00" given without
// an offset stays 07:00–11:00 on the location's clock all year; the hour a
// change skips is in no window, the hour it repeats is in it twice; a
// window given with offsets stays fixed in UTC.
func TestRecurrenceAcrossDST(t *testing.T) {
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	window := func(days []string, from, to string) PromotionValidity {
		return PromotionValidity{Recurrence: &PromotionRecurrence{DaysOfWeek: days, StartDate: atp(from), EndDate: atp(to)}}
	}
	weekend := []string{"Saturday", "Sunday"}
	breakfast := window(weekend, "2026-01-03T07:00:00", "2026-01-03T11:00:00")
	type probe struct {
		at   string
		want bool
	}
	for _, tc := range []struct {
		name   string
		v      PromotionValidity
		z      *time.Location
		probes []probe
	}{
		{"New York breakfast, winter Saturday", breakfast, ny, []probe{
			{"2026-01-10T11:59:59Z", false}, {"2026-01-10T12:00:00Z", true}, {"2026-01-10T15:59:59Z", true}, {"2026-01-10T16:00:00Z", false}}},
		{"New York breakfast, summer Saturday", breakfast, ny, []probe{
			{"2026-07-11T10:59:59Z", false}, {"2026-07-11T11:00:00Z", true}, {"2026-07-11T14:59:59Z", true}, {"2026-07-11T15:00:00Z", false}}},
		{"New York breakfast, the Sunday of the spring change", breakfast, ny, []probe{
			{"2026-03-08T10:59:59Z", false}, {"2026-03-08T11:00:00Z", true}, {"2026-03-08T14:59:59Z", true}, {"2026-03-08T15:00:00Z", false}}},
		{"New York breakfast, the Sunday of the autumn change", breakfast, ny, []probe{
			{"2026-11-01T11:59:59Z", false}, {"2026-11-01T12:00:00Z", true}, {"2026-11-01T15:59:59Z", true}, {"2026-11-01T16:00:00Z", false}}},
		{"New York breakfast, local days: Friday 07:00 EST is not the weekend", breakfast, ny, []probe{
			{"2026-01-09T12:00:00Z", false}, {"2026-01-11T12:00:00Z", true}, {"2026-01-12T12:00:00Z", false}}},
		{"Berlin breakfast, the Sunday of the spring change", breakfast, berlin, []probe{
			{"2026-03-29T04:59:59Z", false}, {"2026-03-29T05:00:00Z", true}, {"2026-03-29T08:59:59Z", true}, {"2026-03-29T09:00:00Z", false}}},
		{"Berlin breakfast, the Sunday of the autumn change", breakfast, berlin, []probe{
			{"2026-10-25T05:59:59Z", false}, {"2026-10-25T06:00:00Z", true}, {"2026-10-25T09:59:59Z", true}, {"2026-10-25T10:00:00Z", false}}},
		{"New York 02:00–03:00 daily: skipped on the spring change", window(nil, "2026-01-01T02:00:00", "2026-01-01T03:00:00"), ny, []probe{
			{"2026-03-07T07:30:00Z", true}, {"2026-03-08T06:59:59Z", false}, {"2026-03-08T07:00:00Z", false}, {"2026-03-09T06:30:00Z", true}}},
		{"New York 01:00–02:00 daily: twice on the autumn change", window(nil, "2026-01-01T01:00:00", "2026-01-01T02:00:00"), ny, []probe{
			{"2026-11-01T04:59:59Z", false}, {"2026-11-01T05:30:00Z", true}, {"2026-11-01T06:30:00Z", true}, {"2026-11-01T07:00:00Z", false}}},
		{"Berlin 02:00–03:00 daily: twice on the autumn change", window(nil, "2026-01-01T02:00:00", "2026-01-01T03:00:00"), berlin, []probe{
			{"2026-10-24T23:59:59Z", false}, {"2026-10-25T00:30:00Z", true}, {"2026-10-25T01:30:00Z", true}, {"2026-10-25T02:00:00Z", false}}},
		{"Berlin Friday 22:00–02:00: Saturday 00:30 local is Friday's", window([]string{"Friday"}, "2026-01-02T22:00:00", "2026-01-03T02:00:00"), berlin, []probe{
			{"2026-01-09T20:59:59Z", false}, {"2026-01-09T21:00:00Z", true}, {"2026-01-09T23:30:00Z", true}, {"2026-01-10T01:00:00Z", false}}},
		{"a window of instants stays in UTC", window(weekend, "2026-01-03T07:00:00Z", "2026-01-03T11:00:00Z"), ny, []probe{
			{"2026-07-11T06:59:59Z", false}, {"2026-07-11T07:00:00Z", true}, {"2026-07-11T10:59:59Z", true}, {"2026-07-11T11:00:00Z", false}}},
	} {
		for _, p := range tc.probes {
			if got := tc.v.Contains(at(p.at).In(tc.z)); got != p.want {
				t.Errorf("%s: Contains(%s = %s) = %v, want %v", tc.name, p.at, at(p.at).In(tc.z).Format("Mon 15:04 MST"), got, p.want)
			}
		}
	}
	// time.Local counts as UTC: posgate never reads the machine's zone.
	if breakfast.Contains(time.Date(2026, 1, 10, 12, 0, 0, 0, time.Local)) != breakfast.Contains(time.Date(2026, 1, 10, 12, 0, 0, 0, time.Local).UTC()) {
		t.Error("a time in time.Local is not read as UTC")
	}
}

func TestPromotionTimeJSON(t *testing.T) {
	for in, want := range map[string]string{
		`"2026-03-08T02:30:00"`:         `"2026-03-08T02:30:00"`,
		`"2026-03-08"`:                  `"2026-03-08T00:00:00"`,
		`"2026-03-08T02:30:00.25"`:      `"2026-03-08T02:30:00.25"`,
		`"2026-03-08T02:30:00Z"`:        `"2026-03-08T02:30:00Z"`,
		`"2026-03-08T02:30:00+01:00"`:   `"2026-03-08T01:30:00Z"`,
		`"2026-03-08T02:30:00.5-05:00"`: `"2026-03-08T07:30:00.5Z"`,
	} {
		var p PromotionTime
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, _ := json.Marshal(p); string(got) != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{`"2026-03-08T25:00:00"`, `"tomorrow"`, `12`, `"0000-01-01T00:00:00"`} {
		var p PromotionTime
		if err := json.Unmarshal([]byte(bad), &p); err == nil {
			t.Errorf("%s decoded: %v", bad, p)
		}
	}
}

func TestWallClockBoundsAndChecks(t *testing.T) {
	p := &Promotion{Validities: []PromotionValidity{{StartDate: atp("2026-03-08T02:30:00"), EndDate: atp("2026-03-09T00:00:00")}}}
	from, until := p.ValidityBounds()
	if !from.Equal(at("2026-03-07T10:30:00Z")) || !until.Equal(at("2026-03-09T16:00:00Z")) {
		t.Errorf("bounds %v %v: a wall-clock time can mean any instant within 16 hours of its clock read as UTC", from, until)
	}
	check := func(v PromotionValidity) []ImportError {
		c := NewPromotionChecker("acme", nil, nil)
		c.Check(1, &Promotion{ID: "P", Name: "n", Validities: []PromotionValidity{v}})
		return c.Result(0, 0).Errors
	}
	// A recurrence mixes no kinds of time.
	got := check(PromotionValidity{Recurrence: &PromotionRecurrence{StartDate: atp("2026-01-03T07:00:00"), EndDate: atp("2026-01-03T11:00:00Z")}})
	want := []ImportError{{EntityID: "P", RowNumber: 1,
		ErrorMessage: "The recurrence's startDate and endDate must both have a zone offset (fixed instants of the day) or both have none (the location's local time).",
		ErrorDetails: "promotionValidities[0].recurrence: startDate 2026-01-03T07:00:00, endDate 2026-01-03T11:00:00Z"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mixed recurrence: %+v", got)
	}
	// Wall-clock bounds compare as clocks.
	got = check(PromotionValidity{StartDate: atp("2026-06-02T00:00:00"), EndDate: atp("2026-06-01T23:00:00")})
	if len(got) != 1 || got[0].ErrorDetails != "promotionValidities[0]: endDate 2026-06-01T23:00:00 is before startDate 2026-06-02T00:00:00" {
		t.Errorf("wall-clock end before start: %+v", got)
	}
	// An instant and a wall-clock time only when the end is before the
	// start in every zone.
	if got := check(PromotionValidity{StartDate: atp("2026-06-02T00:00:00"), EndDate: atp("2026-06-01T23:00:00Z")}); len(got) != 0 {
		t.Errorf("an end that is after the start in some zones: %+v", got)
	}
	if got := check(PromotionValidity{StartDate: atp("2026-06-03T00:00:00"), EndDate: atp("2026-06-01T23:00:00Z")}); len(got) != 1 {
		t.Errorf("an end before the start in every zone: %+v", got)
	}
}

func TestZones(t *testing.T) {
	for _, bad := range []string{"Local", "Mars/Olympus_Mons", "america/new_york ", "../etc/passwd", "UTC+1"} {
		if _, err := LoadZone(bad); err == nil {
			t.Errorf("LoadZone(%q) succeeded", bad)
		}
		v := ValidationError{}
		if CheckTimeZone(v, "timeZone", bad); len(v["timeZone"]) != 1 {
			t.Errorf("CheckTimeZone(%q) recorded %v", bad, v)
		}
	}
	if z, err := LoadZone(""); z != time.UTC || err != nil {
		t.Errorf("LoadZone(\"\") = %v, %v", z, err)
	}
	co := &Company{TimeZone: "Europe/Berlin"}
	for _, tc := range []struct {
		l    *Location
		want string
	}{
		{&Location{}, "UTC"},
		{&Location{Company: &Company{}}, "UTC"},
		{&Location{Company: co}, "Europe/Berlin"},
		{&Location{TimeZone: "America/New_York", Company: co}, "America/New_York"},
	} {
		if got := tc.l.ZoneName(); got != tc.want || tc.l.Zone().String() != tc.want {
			t.Errorf("%+v: zone %s (%s), want %s", tc.l, got, tc.l.Zone(), tc.want)
		}
	}
	l := &Location{POSSystemID: "p", ID: "L", CompanyID: "c", Status: StatusActive, TimeZone: "Europe/Berlin "}
	err := l.Validate()
	var pe *Error
	if !asError(err, &pe) || len(pe.Fields["timeZone"]) != 1 {
		t.Errorf("a location with a bad zone: %v", err)
	}
}

func asError(err error, pe **Error) bool {
	e, ok := err.(*Error)
	*pe = e
	return ok
}
