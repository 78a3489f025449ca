package posgate

import (
	"fmt"
	"sync"
	"time"
)

// Time zones of companies and locations (docs/api.md §1.3): a location's
// promotions are valid in its local wall-clock time (PromotionTime). A
// location's zone is its own, else its company's, else UTC.

// MaxTimeZoneLen bounds a timeZone value; IANA names are far shorter.
const MaxTimeZoneLen = 64

// zones memoises LoadZone: time.LoadLocation reads and parses the zone
// database on every call, and evaluation asks for a location's zone on
// every request. Zones never change while posgate runs.
var zones sync.Map // name → *time.Location

// LoadZone returns the IANA time zone name ("" is UTC), or an error for a
// name the zone database does not know. "Local" is refused: it would mean
// the zone of the machine posgate runs on.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if z, ok := zones.Load(name); ok {
		return z.(*time.Location), nil
	}
	if name == "Local" || len(name) > MaxTimeZoneLen {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	zones.Store(name, z)
	return z, nil
}

// CheckTimeZone records in v an error of field when name is not an IANA
// time zone name ("" is allowed: not set).
func CheckTimeZone(v ValidationError, field, name string) {
	if name == "" {
		return
	}
	if _, err := LoadZone(name); err != nil {
		v.Add(field, timeZoneMessage(field, name))
	}
}

// timeZoneMessage is the validation message of an unknown time zone.
func timeZoneMessage(field, name string) string {
	if len(name) > MaxTimeZoneLen {
		name = name[:MaxTimeZoneLen] + "…"
	}
	return fmt.Sprintf("The %s field must be an IANA time zone name such as Europe/Berlin or America/New_York (or empty for none); %q is not one.", field, name)
}

// ZoneName is the name of the zone the location's local times are read in:
// its own timeZone, else its company's (when Company is filled in), else
// "UTC".
func (l *Location) ZoneName() string {
	switch {
	case l.TimeZone != "":
		return l.TimeZone
	case l.Company != nil && l.Company.TimeZone != "":
		return l.Company.TimeZone
	}
	return "UTC"
}

// Zone is the location's time zone (ZoneName); a stored name that the zone
// database no longer knows reads as UTC.
func (l *Location) Zone() *time.Location {
	z, err := LoadZone(l.ZoneName())
	if err != nil {
		return time.UTC
	}
	return z
}

// Zone is the company's time zone, UTC when it has none.
func (c *Company) Zone() *time.Location {
	z, err := LoadZone(c.TimeZone)
	if err != nil {
		return time.UTC
	}
	return z
}
