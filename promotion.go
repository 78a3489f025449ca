package posgate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// PromotionStore holds imported promotions (docs/api.md §9); the catalogues
// that their category and product ids are checked against are the
// CatalogueStore's.
//
// Semantics every implementation follows, beyond Store's conventions:
//   - A promotion is keyed by (POS system, company, promotion id). An import
//     replaces a stored promotion whole: its lists are the imported ones, not
//     a merge; CreatedAt stays, UpdatedAt is the time of the last import
//     that changed it (an import of an identical promotion counts as an
//     update but leaves it as it is). An import's time is the store clock's
//     when BeginPromotionImport was called.
//   - Lists come back in the order stored, never nil ([] when empty); times in
//     UTC, truncated to microseconds.
type PromotionStore interface {
	// BeginPromotionImport starts an import of promotions into a company
	// (ENOTFOUND when the company does not exist). Nothing is visible until
	// Commit, and Commit stores all of the import or none of it.
	BeginPromotionImport(ctx context.Context, posSystemID, companyID string) (PromotionImport, error)

	// FindPromotion returns one promotion of a company (ENOTFOUND if absent).
	FindPromotion(ctx context.Context, posSystemID, companyID, promotionID string) (*Promotion, error)
	// ListPromotions returns a company's promotions ordered by id, skipping
	// offset and returning at most limit of them (limit <= 0: all), with the
	// number the company has in all.
	ListPromotions(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*Promotion, int, error)
	// ListPromotionsValidAt returns, ordered by id, the company's promotions
	// that apply at location locationID (a location of that company) at time
	// at, per Promotion.AppliesAt: their locationIds name the location or are
	// empty (all locations), and Promotion.ValidAt(at). at's Location is
	// the location's time zone, in which wall-clock dates are read: a store
	// keeps it. An empty locationID matches every location. It is indexed by
	// location and by validity bounds, so that a carousel can call it per
	// request.
	ListPromotionsValidAt(ctx context.Context, posSystemID, companyID, locationID string, at time.Time) ([]*Promotion, error)
	// ListCarouselPromotions returns at most limit of the promotions that
	// ListPromotionsValidAt returns for location locationID (not "") and
	// time at, in the carousel's order (docs/api.md §7.2): those naming the
	// location before those of every location; within each, the one whose
	// validity ends first (the latest endDate of its periods, as
	// ValidityBounds gives it; open-ended last), then by id. It reads them
	// in that order only until it has limit, so that a carousel poll costs
	// the same for a company of 100,000 promotions as for one of 50.
	ListCarouselPromotions(ctx context.Context, posSystemID, companyID, locationID string, at time.Time, limit int) ([]*Promotion, error)
	// PromotionUsageReader reads the budgets' counters (docs/api.md §9.7).
	PromotionUsageReader
}

// PromotionImport stages the valid promotions of one import request, so that
// a store can take them while the request body is still being read and yet
// commit all of them in one transaction once it has been read without error.
// It is used by one goroutine.
type PromotionImport interface {
	// Add stages p, which PromotionChecker.Check has accepted (so it is
	// normalised and its id is not repeated); p must not change afterwards.
	Add(ctx context.Context, p *Promotion) error
	// Commit stores every staged promotion in one transaction and reports how
	// many were created and how many replaced a stored one. An id staged
	// twice makes it fail with ECONFLICT (and store nothing).
	Commit(ctx context.Context) (created, updated int, err error)
	// Rollback discards the import; it does nothing after Commit, so callers
	// defer it.
	Rollback()
}

// MaxPromotionImportItems is the most items one import request may hold
// (docs/api.md §9.2); a larger request is answered 413.
const MaxPromotionImportItems = 100_000

// MaxCarouselPromotions is the most promotion slides a carousel shows
// (docs/api.md §7.2), so that its answer is bounded however many promotions
// a company imports (up to 100,000 per request).
const MaxCarouselPromotions = 50

// MaxPromotionAmount is the largest Amount value accepted: far above any
// real discount, and the bound of posgate's money amounts, so that a value
// such as 1e300 cannot reach the carousel's text or later arithmetic.
const MaxPromotionAmount = 1e9

// MaxPromotionNameLen is the longest promotion name accepted, in bytes.
const MaxPromotionNameLen = 500

// PromotionType says what a promotion result's value is.
type PromotionType string

// Promotion result types (docs/api.md §9.1, §9.3).
const (
	PromotionAmount     PromotionType = "Amount"     // value off each unit, in the currency of the location
	PromotionPercentage PromotionType = "Percentage" // value percent off, 0–100
	PromotionFixedPrice PromotionType = "FixedPrice" // the unit price becomes value
	// PromotionBuyXGetY: for every buyQuantity units bought, getQuantity
	// units (the cheapest) are value percent off (100: free).
	PromotionBuyXGetY PromotionType = "BuyXGetY"
)

// PromotionTypes lists the result types in the order docs/api.md names
// them.
var PromotionTypes = []PromotionType{PromotionAmount, PromotionPercentage, PromotionFixedPrice, PromotionBuyXGetY}

// Valid reports whether t is a known promotion type.
func (t PromotionType) Valid() bool { return slices.Contains(PromotionTypes, t) }

// Bounds of the promotion model's conditions and buy-X-get-Y results
// (docs/api.md §9.3).
const (
	MaxPromotionPriority     = 1_000_000 // priority lies in ±this
	MaxPromotionBuyQuantity  = 10_000    // buyQuantity and getQuantity
	MaxPromotionApplications = 1_000_000 // maxApplications
)

// DayNames lists the accepted daysOfWeek values, in week order (Sunday
// first, as time.Weekday counts).
var DayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// Promotion is an imported promotion (docs/api.md §9.1) of a company.
type Promotion struct {
	POSSystemID         string              `json:"posSystemId"`
	CompanyID           string              `json:"posCompanyId"`
	ID                  string              `json:"id"`
	Name                string              `json:"name"`
	UseForAllCategories bool                `json:"useForAllCategories"`
	UseForAllProducts   bool                `json:"useForAllProducts"`
	LocationIDs         []string            `json:"locationIds"` // empty: every location of the company
	CategoryIDs         []string            `json:"categoryIds"`
	ProductIDs          []string            `json:"productIds"`
	Validities          []PromotionValidity `json:"promotionValidities"` // empty: always valid
	Results             []PromotionResult   `json:"promotionResults"`
	// Priority orders the promotions of a line: higher first (0 by
	// default); see PromotionIndex.EvaluateInput.
	Priority int `json:"priority"`
	// Stackable promotions apply together on a line; one that is not
	// (the default) applies alone.
	Stackable bool `json:"stackable"`
	// Conditions, every one met for the promotion to apply (0 / false:
	// none): the quantity of the basket's lines it targets, the basket's
	// amount before discounts (in the currency), and a presented coupon
	// that carries the promotion.
	MinQuantity     float64   `json:"minQuantity"`
	MinBasketAmount float64   `json:"minBasketAmount"`
	RequiresCoupon  bool      `json:"requiresCoupon"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
	// Redemption is the promotion's budget (docs/api.md §9.7); nil (left
	// out of the JSON) for none.
	Redemption *PromotionRedemption `json:"redemption,omitempty"`
}

// PromotionValidity is a period in which a promotion applies; a missing
// bound leaves that side open. Its times are instants or wall-clock times
// of the location (PromotionTime).
type PromotionValidity struct {
	StartDate  *PromotionTime       `json:"startDate"`
	EndDate    *PromotionTime       `json:"endDate"`
	Recurrence *PromotionRecurrence `json:"recurrence"`
}

// PromotionRecurrence narrows a validity period to a window repeated on some
// days of the week: see PromotionValidity.Contains.
type PromotionRecurrence struct {
	DaysOfWeek []string       `json:"daysOfWeek"`
	StartDate  *PromotionTime `json:"startDate"`
	EndDate    *PromotionTime `json:"endDate"`
}

// PromotionResult is one effect of a promotion. BuyQuantity, GetQuantity,
// GetProductIDs and MaxApplications are BuyXGetY's (0 and empty for the
// other types): the units bought per application, the units it discounts
// per application, the products those are among (empty: the promotion's
// own targeted lines) and the most applications per basket (0: no limit).
type PromotionResult struct {
	PromotionType   PromotionType `json:"promotionType"`
	Value           float64       `json:"value"`
	BuyQuantity     int           `json:"buyQuantity"`
	GetQuantity     int           `json:"getQuantity"`
	GetProductIDs   []string      `json:"getProductIds"`
	MaxApplications int           `json:"maxApplications"`
}

// Catalogue lists the ids of a company's categories and products
// (docs/api.md §17), so that a promotion import can warn about ids that are
// not in it (docs/api.md §9.3). An empty list means "no catalogue" for that
// kind: nothing is checked against it.
type Catalogue struct {
	POSSystemID string   `json:"posSystemId"`
	CompanyID   string   `json:"posCompanyId"`
	CategoryIDs []string `json:"categoryIds"`
	ProductIDs  []string `json:"productIds"`
}

// MaxCatalogueIDLen is the longest category or product id of a catalogue.
const MaxCatalogueIDLen = 128

// Validate checks the ids and normalises the lists (sorted, without
// repeats), the order in which stores return them.
func (c *Catalogue) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", c.POSSystemID)
	checkKey(v, "posCompanyId", c.CompanyID)
	for _, l := range []struct {
		field string
		ids   *[]string
	}{{"categoryIds", &c.CategoryIDs}, {"productIds", &c.ProductIDs}} {
		for i, id := range *l.ids {
			if id == "" || len(id) > MaxCatalogueIDLen || !utf8.ValidString(id) {
				v.Add(fmt.Sprintf("%s[%d]", l.field, i), fmt.Sprintf("Catalogue ids must be valid text of 1-%d bytes.", MaxCatalogueIDLen))
			}
		}
		ids := slices.Clone(*l.ids)
		slices.Sort(ids)
		*l.ids = promoNonNil(slices.Compact(ids))
	}
	return v.Err()
}

// AppliesAt reports whether the promotion applies at location locationID
// (of its company; "" for any) at time at (in the location's zone, see
// ValidAt): its locationIds name the location or are empty, and it is
// ValidAt(at).
func (p *Promotion) AppliesAt(locationID string, at time.Time) bool {
	if locationID != "" && len(p.LocationIDs) > 0 && !slices.Contains(p.LocationIDs, locationID) {
		return false
	}
	return p.ValidAt(at)
}

// ValidAt reports whether at lies in one of the promotion's validity
// periods; a promotion without any is always valid. at's Location is the
// time zone of the place the promotion is checked for (Location.Zone): its
// wall-clock times are read in it (time.Local counts as UTC). It is the
// one check of a promotion's validity: evaluation, a sale's promotions,
// the carousel and the operator's listing all come here.
func (p *Promotion) ValidAt(at time.Time) bool { return validAt(p.Validities, at) }

// validAt reports whether at lies in one of vs, or vs is empty.
func validAt(vs []PromotionValidity, at time.Time) bool {
	if len(vs) == 0 {
		return true
	}
	for i := range vs {
		if vs[i].Contains(at) {
			return true
		}
	}
	return false
}

// Contains reports whether at lies in the validity period: from StartDate to
// EndDate, both included (a missing one is open). A wall-clock bound is
// read in at's Location (ValidAt) by PromotionTime.In: the period starts at
// the first instant the clock shows startDate or later and ends after the
// first instant it shows endDate (the hour that daylight-saving time skips
// or repeats does not make a period begin or end twice).
//
// With a recurrence, at must also lie in one of its windows: each day
// named in daysOfWeek (every day when it is empty), from the time of day of
// recurrence.startDate up to the time of day of recurrence.endDate
// (excluded). A window of wall-clock times is read on the local clock and
// calendar of at's Location, so "07:00–11:00" is 07:00–11:00 local all
// year (a skipped hour is not in it, a repeated one is twice); a window of
// instants (given with an offset) is read on the UTC clock, as fixed
// instants of the day. An end time of day earlier than the start's makes
// the window run past midnight, and it then belongs to the day it starts on
// (Friday 22:00–02:00 includes Saturday 01:00); equal times of day, or a
// missing one, make it the whole day. The dates of the recurrence's bounds
// are not used: the validity bounds the period.
func (v *PromotionValidity) Contains(at time.Time) bool {
	z := zoneOf(at)
	at = at.In(z)
	if v.StartDate != nil && at.Before(v.StartDate.In(z)) {
		return false
	}
	if e := v.EndDate; e != nil {
		if !e.wall && at.After(e.t) {
			return false
		}
		// Included: at is before the first instant the clock shows a
		// later time than the end.
		if e.wall && !at.Before(firstInstant(e.t.Add(time.Nanosecond), z)) {
			return false
		}
	}
	r := v.Recurrence
	if r == nil {
		return true
	}
	day := at.Weekday()
	tod := promoTimeOfDay(WallTime(at).t)
	if !r.local() {
		day, tod = at.UTC().Weekday(), promoTimeOfDay(at.UTC())
	}
	if r.StartDate == nil || r.EndDate == nil || r.StartDate.timeOfDay() == r.EndDate.timeOfDay() {
		return r.onDay(day)
	}
	from, to := r.StartDate.timeOfDay(), r.EndDate.timeOfDay()
	if from < to {
		return tod >= from && tod < to && r.onDay(day)
	}
	// The window runs past midnight: the evening part belongs to today,
	// the early-morning part to yesterday's window.
	if tod >= from {
		return r.onDay(day)
	}
	return tod < to && r.onDay((day+6)%7)
}

// local reports whether the recurrence's window is on the local clock: its
// times are wall-clock times, or it has none (its days are local days).
// An import refuses a recurrence whose two times differ in kind.
func (r *PromotionRecurrence) local() bool {
	switch {
	case r.StartDate != nil:
		return r.StartDate.wall
	case r.EndDate != nil:
		return r.EndDate.wall
	}
	return true
}

// onDay reports whether the recurrence repeats on day d.
func (r *PromotionRecurrence) onDay(d time.Weekday) bool {
	return len(r.DaysOfWeek) == 0 || slices.Contains(r.DaysOfWeek, DayNames[d])
}

// timeOfDay is t's offset from its UTC midnight.
func promoTimeOfDay(t time.Time) time.Duration {
	t = t.UTC()
	y, m, d := t.Date()
	return t.Sub(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
}

// ValidityBounds returns the earliest start and the latest end of the
// promotion's validity periods, nil where one is open (or there is none),
// so that stores can index validity without reading recurrences or
// knowing the location's zone: a promotion can only be ValidAt a time
// within them. A wall-clock bound counts as the earliest (start) or latest
// (end) instant it can mean anywhere, 16 hours before or after its clock
// read as UTC.
func (p *Promotion) ValidityBounds() (from, until *time.Time) {
	if len(p.Validities) == 0 {
		return nil, nil
	}
	openStart, openEnd := false, false
	for _, v := range p.Validities {
		if v.StartDate == nil {
			openStart = true
		} else if t := v.StartDate.earliest(); from == nil || t.Before(*from) {
			from = &t
		}
		if v.EndDate == nil {
			openEnd = true
		} else if t := v.EndDate.latest(); until == nil || t.After(*until) {
			until = &t
		}
	}
	if openStart {
		from = nil
	}
	if openEnd {
		until = nil
	}
	return from, until
}

// normalize makes p what stores keep and return: lists without repeats
// (first occurrence kept) and never nil, days in week order, times in UTC
// truncated to microseconds.
func (p *Promotion) normalize() {
	p.Redemption = p.Redemption.normalize()
	p.LocationIDs = Dedupe(p.LocationIDs)
	p.CategoryIDs = Dedupe(p.CategoryIDs)
	p.ProductIDs = Dedupe(p.ProductIDs)
	if p.Validities == nil {
		p.Validities = []PromotionValidity{}
	}
	if p.Results == nil {
		p.Results = []PromotionResult{}
	}
	for i := range p.Results {
		p.Results[i].GetProductIDs = Dedupe(p.Results[i].GetProductIDs)
	}
	for i := range p.Validities {
		v := &p.Validities[i]
		v.StartDate, v.EndDate = promoStamp(v.StartDate), promoStamp(v.EndDate)
		if r := v.Recurrence; r != nil {
			r.StartDate, r.EndDate = promoStamp(r.StartDate), promoStamp(r.EndDate)
			r.DaysOfWeek = promoWeekOrder(r.DaysOfWeek)
		}
	}
}

// promoWeekOrder returns valid day names in week order without repeats,
// days itself when it is so already (the usual case).
func promoWeekOrder(days []string) []string {
	last := -1
	for _, d := range days {
		n := slices.Index(DayNames, d)
		if n <= last {
			out := make([]string, 0, len(days))
			for _, name := range DayNames {
				if slices.Contains(days, name) {
					out = append(out, name)
				}
			}
			return out
		}
		last = n
	}
	return promoNonNil(days)
}

// Dedupe drops repeated entries, keeping the first of each; never nil. A
// list without repeats is answered as it is, not copied.
func Dedupe(xs []string) []string {
	if len(xs) <= 16 { // a scan beats a map for the usual short lists
		for i, x := range xs {
			if slices.Contains(xs[:i], x) {
				return dedupeCopy(xs)
			}
		}
		return promoNonNil(xs)
	}
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		if seen[x] {
			return dedupeCopy(xs)
		}
		seen[x] = true
	}
	return xs
}

// dedupeCopy is Dedupe's answer for a list with repeats.
func dedupeCopy(xs []string) []string {
	out := make([]string, 0, len(xs))
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func promoNonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// promoStamp normalises *t in place (the promotion owns its times).
func promoStamp(t *PromotionTime) *PromotionTime {
	if t != nil {
		*t = t.stamp()
	}
	return t
}

// ImportStatus is the outcome of a promotion import (docs/api.md §9.4).
type ImportStatus string

// Import outcomes.
const (
	ImportCompleted           ImportStatus = "Completed"           // every item stored
	ImportCompletedWithErrors ImportStatus = "CompletedWithErrors" // some items failed their checks, the others are stored
	ImportFailed              ImportStatus = "Failed"              // items failed and nothing is stored
)

// ImportError reports an item that failed a check and is not stored.
type ImportError struct {
	EntityID     string `json:"entityId"`
	RowNumber    int    `json:"rowNumber"`
	ErrorMessage string `json:"errorMessage"`
	ErrorDetails string `json:"errorDetails"`
}

// ImportWarning reports something doubtful about an item that is stored
// anyway.
type ImportWarning struct {
	EntityID  string `json:"entityId"`
	RowNumber int    `json:"rowNumber"`
	Message   string `json:"message"`
	Details   string `json:"details"`
}

// ImportResult is the result of a promotion import (docs/api.md §9.4).
type ImportResult struct {
	Status       ImportStatus    `json:"status"`
	CreatedCount int             `json:"createdCount"`
	UpdatedCount int             `json:"updatedCount"`
	Errors       []ImportError   `json:"errors"`
	Warnings     []ImportWarning `json:"warnings"`
}

// PromotionChecker applies the item checks of docs/api.md §9.3 to the items
// of one import request, in order, and collects the result's errors and
// warnings.
// It holds what the checks need (the company's locations and catalogue), so
// that checking an item costs no store access.
type PromotionChecker struct {
	companyID  string
	locations  map[string]string // the company's location ids, each mapped to itself
	categories map[string]bool   // nil: no catalogue of categories
	products   map[string]bool   // nil: no catalogue of products
	rows       map[string]int    // id → the row it first appeared on
	warning    string            // the message of every warning
	accepted   int

	errors   []ImportError
	warnings []ImportWarning
}

// NewPromotionChecker returns a checker for an import into a company with
// these locations and this catalogue (nil: none).
func NewPromotionChecker(companyID string, locationIDs []string, cat *Catalogue) *PromotionChecker {
	c := &PromotionChecker{companyID: companyID, locations: make(map[string]string, len(locationIDs)), rows: make(map[string]int, 1024)}
	for _, l := range locationIDs {
		c.locations[l] = l
	}
	c.warning = fmt.Sprintf("The promotion names categories or products that are not in the catalogue of company '%s'; it is imported anyway.", companyID)
	if cat != nil && len(cat.CategoryIDs) > 0 {
		c.categories = promoSet(cat.CategoryIDs)
	}
	if cat != nil && len(cat.ProductIDs) > 0 {
		c.products = promoSet(cat.ProductIDs)
	}
	return c
}

func promoSet(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Check checks item number row (1-based) of the request and reports whether
// it is to be stored; it records the item's errors or warning, and
// normalises p when it passes. Only the first item with a given id can be
// stored: every later one is an error, whether the first passed or not.
func (c *PromotionChecker) Check(row int, p *Promotion) bool {
	n := len(c.errors)
	fail := func(msg, details string) {
		c.errors = append(c.errors, ImportError{EntityID: p.ID, RowNumber: row, ErrorMessage: msg, ErrorDetails: details})
	}
	switch {
	case p.ID == "":
		fail("The id field is required.", `id: missing or empty`)
	case !ValidKey(p.ID):
		fail(fmt.Sprintf("The id field must be 1-%d printable characters without '/', '\\', '?', '#', '%%' or surrounding spaces.", MaxKeyLen),
			"id: "+promoQuote(p.ID))
	default:
		if first, ok := c.rows[p.ID]; ok {
			fail(fmt.Sprintf("The id '%s' is given more than once in this request; only its first item (row %d) is imported.", p.ID, first),
				fmt.Sprintf("id: %s also on row %d", promoQuote(p.ID), first))
		} else {
			c.rows[p.ID] = row
		}
	}
	switch {
	case p.Name == "":
		fail("The name field is required.", `name: missing or empty`)
	case len(p.Name) > MaxPromotionNameLen:
		fail(fmt.Sprintf("The name field must be at most %d bytes.", MaxPromotionNameLen), fmt.Sprintf("name: %d bytes", len(p.Name)))
	}
	var unknown []string
	for i, id := range p.LocationIDs {
		if known, ok := c.locations[id]; ok {
			// The company's own string: the import holds on to the lists
			// of its items, and every item then shares these.
			p.LocationIDs[i] = known
		} else if !slices.Contains(unknown, id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		fail(fmt.Sprintf("The locationIds name locations that are not locations of company '%s'.", c.companyID),
			"locationIds: "+promoQuoteList(unknown))
	}
	for i := range p.Validities {
		v := &p.Validities[i]
		path := func() string { return "promotionValidities[" + strconv.Itoa(i) + "]" }
		promoCheckPeriod(fail, path, v.StartDate, v.EndDate)
		if r := v.Recurrence; r != nil {
			if r.StartDate != nil && r.EndDate != nil && r.StartDate.wall != r.EndDate.wall {
				fail("The recurrence's startDate and endDate must both have a zone offset (fixed instants of the day) or both have none (the location's local time).",
					fmt.Sprintf("%s.recurrence: startDate %s, endDate %s", path(), r.StartDate, r.EndDate))
			}
			promoCheckPeriod(fail, func() string { return path() + ".recurrence" }, r.StartDate, r.EndDate)
			for j, d := range r.DaysOfWeek {
				if !slices.Contains(DayNames, d) {
					fail("The daysOfWeek must be day names from Sunday to Saturday ("+strings.Join(DayNames, ", ")+").",
						fmt.Sprintf("%s.recurrence.daysOfWeek[%d]: %s", path(), j, promoQuote(d)))
				}
			}
		}
	}
	for i, r := range p.Results {
		path := func() string { return "promotionResults[" + strconv.Itoa(i) + "]" }
		switch {
		case !r.PromotionType.Valid():
			fail("The promotionType must be Amount, Percentage, FixedPrice or BuyXGetY.", fmt.Sprintf("%s.promotionType: %s", path(), promoQuote(string(r.PromotionType))))
		case r.Value < 0:
			fail("The value must not be negative.", fmt.Sprintf("%s.value: %s", path(), promoNumber(r.Value)))
		case (r.PromotionType == PromotionPercentage || r.PromotionType == PromotionBuyXGetY) && r.Value > 100:
			fail("A "+string(r.PromotionType)+" value must be between 0 and 100.", fmt.Sprintf("%s.value: %s", path(), promoNumber(r.Value)))
		case (r.PromotionType == PromotionAmount || r.PromotionType == PromotionFixedPrice) && r.Value > MaxPromotionAmount:
			article := "An "
			if r.PromotionType == PromotionFixedPrice {
				article = "A "
			}
			fail(article+string(r.PromotionType)+" value must be at most 1000000000.", fmt.Sprintf("%s.value: %s", path(), promoNumber(r.Value)))
		}
		checkBuyXGetY(fail, path, &r)
	}
	checkConditions(fail, p)
	p.Redemption.check(fail)
	if len(c.errors) > n {
		return false
	}
	var details []string
	if ids := promoMissing(p.CategoryIDs, c.categories); len(ids) > 0 {
		details = append(details, "categoryIds: "+promoQuoteList(ids))
	}
	if ids := promoMissing(p.ProductIDs, c.products); len(ids) > 0 {
		details = append(details, "productIds: "+promoQuoteList(ids))
	}
	for i := range p.Results {
		if ids := promoMissing(p.Results[i].GetProductIDs, c.products); len(ids) > 0 {
			details = append(details, fmt.Sprintf("promotionResults[%d].getProductIds: %s", i, promoQuoteList(ids)))
		}
	}
	if len(details) > 0 {
		c.warnings = append(c.warnings, ImportWarning{EntityID: p.ID, RowNumber: row, Message: c.warning, Details: strings.Join(details, "; ")})
	}
	p.normalize()
	c.accepted++
	return true
}

// checkBuyXGetY checks a result's buy-X-get-Y fields: required (1 to
// MaxPromotionBuyQuantity) for a BuyXGetY result, absent from the others.
func checkBuyXGetY(fail func(msg, details string), path func() string, r *PromotionResult) {
	if r.PromotionType != PromotionBuyXGetY {
		if r.BuyQuantity != 0 || r.GetQuantity != 0 || len(r.GetProductIDs) > 0 || r.MaxApplications != 0 {
			fail("The buyQuantity, getQuantity, getProductIds and maxApplications belong to BuyXGetY results only.",
				fmt.Sprintf("%s.promotionType: %s", path(), promoQuote(string(r.PromotionType))))
		}
		return
	}
	for _, q := range []struct {
		name string
		v    int
	}{{"buyQuantity", r.BuyQuantity}, {"getQuantity", r.GetQuantity}} {
		if q.v < 1 || q.v > MaxPromotionBuyQuantity {
			fail(fmt.Sprintf("A BuyXGetY result's %s must be a whole number from 1 to %d.", q.name, MaxPromotionBuyQuantity),
				fmt.Sprintf("%s.%s: %d", path(), q.name, q.v))
		}
	}
	if r.MaxApplications < 0 || r.MaxApplications > MaxPromotionApplications {
		fail(fmt.Sprintf("The maxApplications must be a whole number from 0 (no limit) to %d.", MaxPromotionApplications),
			fmt.Sprintf("%s.maxApplications: %d", path(), r.MaxApplications))
	}
	for j, id := range r.GetProductIDs {
		if id == "" {
			fail("The getProductIds must not hold an empty id.", fmt.Sprintf("%s.getProductIds[%d]: \"\"", path(), j))
		}
	}
}

// checkConditions checks a promotion's priority and conditions.
func checkConditions(fail func(msg, details string), p *Promotion) {
	if p.Priority < -MaxPromotionPriority || p.Priority > MaxPromotionPriority {
		fail(fmt.Sprintf("The priority must be a whole number from -%d to %d.", MaxPromotionPriority, MaxPromotionPriority),
			fmt.Sprintf("priority: %d", p.Priority))
	}
	if _, ok := promoScaled(p.MinQuantity, QuantityScale, MaxQuantity); !ok {
		fail("The minQuantity must be a number from 0 to 1000000 with at most 3 decimals.", "minQuantity: "+promoNumber(p.MinQuantity))
	}
	if _, ok := promoScaled(p.MinBasketAmount, 2, int64(MaxPrice)); !ok {
		fail("The minBasketAmount must be a number from 0 to 1000000000 with at most 2 decimals.", "minBasketAmount: "+promoNumber(p.MinBasketAmount))
	}
}

// promoScaled returns v × 10^scale when v is a number from 0 to max (in
// those units) with at most scale decimals.
func promoScaled(v float64, scale int, max int64) (int64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	n, exact, err := Decimal(strconv.FormatFloat(v, 'f', -1, 64)).Scaled(scale)
	return n, err == nil && exact && n <= max
}

// checkPeriod reports an end before the start: of two wall-clock times or
// two instants, as they compare; of one of each, only when the end is
// before the start in every time zone.
func promoCheckPeriod(fail func(msg, details string), path func() string, start, end *PromotionTime) {
	if start == nil || end == nil {
		return
	}
	before := end.t.Before(start.t)
	if start.wall != end.wall {
		before = end.latest().Before(start.earliest())
	}
	if before {
		fail("The endDate must not be before the startDate.",
			fmt.Sprintf("%s: endDate %s is before startDate %s", path(), end, start))
	}
}

// missing lists the ids (without repeats) that known lacks; none when there
// is nothing to check against.
func promoMissing(ids []string, known map[string]bool) []string {
	if known == nil {
		return nil
	}
	var out []string
	for _, id := range ids {
		if !known[id] && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// quoteList renders ids for errorDetails; a long list is cut after 20.
func promoQuoteList(ids []string) string {
	var b strings.Builder
	for i, id := range ids {
		if i == 20 {
			fmt.Fprintf(&b, " and %d more", len(ids)-20)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(promoQuote(id))
	}
	return b.String()
}

// quoteShort quotes s as Go (and JSON, for printable text) would, cut to
// 100 bytes so that one huge value cannot bloat the result.
func promoQuote(s string) string {
	if len(s) > 100 {
		cut := 100
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

func promoNumber(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Sprint(f)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Accepted is how many items Check has accepted so far.
func (c *PromotionChecker) Accepted() int { return c.accepted }

// Result returns the import result for the counts the store reported.
func (c *PromotionChecker) Result(created, updated int) *ImportResult {
	r := &ImportResult{CreatedCount: created, UpdatedCount: updated, Errors: c.errors, Warnings: c.warnings}
	if r.Errors == nil {
		r.Errors = []ImportError{}
	}
	if r.Warnings == nil {
		r.Warnings = []ImportWarning{}
	}
	switch {
	case len(c.errors) == 0:
		r.Status = ImportCompleted
	case created+updated > 0:
		r.Status = ImportCompletedWithErrors
	default:
		r.Status = ImportFailed
	}
	return r
}
