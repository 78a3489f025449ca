package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/posgate/posgate"
)

// CreateSlide completes and stores a new carousel slide: it generates the
// id when s.ID is empty and refuses a company's slide beyond
// posgate.MaxSlidesPerCompany, so that the carousel page stays light.
func CreateSlide(ctx context.Context, st posgate.Store, s *posgate.Slide) error {
	if s.ID == "" {
		s.ID = "slide-" + randomID()
	}
	if err := s.Validate(); err != nil {
		return err
	}
	existing, err := st.ListSlides(ctx, s.POSSystemID, s.CompanyID)
	if err != nil {
		return err
	}
	if len(existing) >= posgate.MaxSlidesPerCompany {
		return posgate.Errorf(posgate.ECONFLICT, "Company '%s' has %d slides, the most allowed; remove one first.", s.CompanyID, posgate.MaxSlidesPerCompany)
	}
	return st.CreateSlide(ctx, s)
}

// UpdateSlide validates the slide as the update would leave it, then stores
// the update. A position, when given, must be 1 or more.
func UpdateSlide(ctx context.Context, st posgate.Store, posSystemID, companyID, slideID string, upd posgate.SlideUpdate) (*posgate.Slide, error) {
	if upd.Position != nil && *upd.Position < 1 {
		return nil, invalid("position", fmt.Sprintf("The position field must be between 1 and %d.", posgate.MaxSlidePosition))
	}
	cur, err := st.FindSlide(ctx, posSystemID, companyID, slideID)
	if err != nil {
		return nil, err
	}
	next := upd.Apply(*cur)
	if err := next.Validate(); err != nil {
		return nil, err
	}
	return st.UpdateSlide(ctx, posSystemID, companyID, slideID, upd)
}

// PutCarouselTemplate sets (or, with "", clears) a company's external
// carousel URL template.
func PutCarouselTemplate(ctx context.Context, st posgate.Store, posSystemID, companyID, tmpl string) (*posgate.CarouselSettings, error) {
	c := &posgate.CarouselSettings{POSSystemID: posSystemID, CompanyID: companyID, URLTemplate: tmpl}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := st.PutCarouselSettings(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// CarouselSettings returns a company's carousel settings; a company that
// never set any gets the defaults (posgate's own page) with a zero
// UpdatedAt. An unknown company is ENOTFOUND.
func CarouselSettings(ctx context.Context, st posgate.Store, posSystemID, companyID string) (*posgate.CarouselSettings, error) {
	c, err := st.FindCarouselSettings(ctx, posSystemID, companyID)
	if posgate.ErrorCode(err) != posgate.ENOTFOUND {
		return c, err
	}
	if _, err := st.FindCompany(ctx, posSystemID, companyID); err != nil {
		return nil, err
	}
	return &posgate.CarouselSettings{POSSystemID: posSystemID, CompanyID: companyID}, nil
}

// ReceiptPromotionPlace resolves where a receipt promotion belongs: the
// company default when locationID is empty, else the location, whose company
// is looked up (and must equal companyID when that is given).
func ReceiptPromotionPlace(ctx context.Context, st posgate.Store, posSystemID, companyID, locationID string) (string, error) {
	if locationID == "" {
		if _, err := st.FindCompany(ctx, posSystemID, companyID); err != nil {
			return "", err
		}
		return companyID, nil
	}
	loc, err := st.FindLocation(ctx, posSystemID, locationID)
	if err != nil {
		return "", err
	}
	if companyID != "" && loc.CompanyID != companyID {
		return "", posgate.Errorf(posgate.ENOTFOUND, "location %q not found", locationID)
	}
	return loc.CompanyID, nil
}

// PutReceiptPromotion validates and stores a receipt promotion of a
// location (p.LocationID set) or the company default.
func PutReceiptPromotion(ctx context.Context, st posgate.Store, p *posgate.ReceiptPromotion) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return st.PutReceiptPromotion(ctx, p)
}

// DateLayout is how impression report days are written (UTC days).
const DateLayout = "2006-01-02"

// MaxReportDays bounds an impression report's date range.
const MaxReportDays = 366

// ImpressionReport is the impressions of a company's carousels over a range
// of UTC days, per location and terminal, with each slide's share.
type ImpressionReport struct {
	POSSystemID string                `json:"posSystemId"`
	CompanyID   string                `json:"posCompanyId"`
	From        string                `json:"from"`
	To          string                `json:"to"`
	Total       int64                 `json:"impressions"`
	Terminals   []TerminalImpressions `json:"terminals"`
}

// TerminalImpressions is one terminal's impressions in a report.
type TerminalImpressions struct {
	LocationID  string             `json:"posLocationId"`
	TerminalID  string             `json:"terminalId"`
	Impressions int64              `json:"impressions"`
	Slides      []SlideImpressions `json:"slides"`
}

// SlideImpressions is how often one slide was shown on a terminal.
type SlideImpressions struct {
	SlideID     string `json:"slideId"`
	Impressions int64  `json:"impressions"`
}

// ParseReportRange reads a report's "from" and "to" days (YYYY-MM-DD, UTC,
// both included). An empty to is today; an empty from is 29 days before
// to, so that the default is the last 30 days.
func ParseReportRange(from, to string, now time.Time) (time.Time, time.Time, error) {
	v := posgate.ValidationError{}
	day := func(field, s string, def time.Time) time.Time {
		if s == "" {
			return def
		}
		d, err := time.Parse(DateLayout, s)
		if err != nil {
			v.Add(field, fmt.Sprintf("The %s field must be a date written YYYY-MM-DD.", field))
		}
		return d
	}
	t := day("to", to, posgate.ImpressionDay(now))
	f := day("from", from, t.AddDate(0, 0, -29))
	if len(v) == 0 {
		if f.After(t) {
			v.Add("from", "The from date must not be after the to date.")
		} else if t.Sub(f) >= MaxReportDays*24*time.Hour {
			v.Add("from", fmt.Sprintf("A report covers at most %d days.", MaxReportDays))
		}
	}
	return f, t, v.Err()
}

// Impressions builds the impression report of q's company; an unknown
// company is ENOTFOUND.
func Impressions(ctx context.Context, st posgate.Store, q posgate.ImpressionQuery) (*ImpressionReport, error) {
	if _, err := st.FindCompany(ctx, q.POSSystemID, q.CompanyID); err != nil {
		return nil, err
	}
	rows, err := st.CountImpressions(ctx, q)
	if err != nil {
		return nil, err
	}
	rep := &ImpressionReport{POSSystemID: q.POSSystemID, CompanyID: q.CompanyID,
		From: q.From.Format(DateLayout), To: q.To.Format(DateLayout), Terminals: []TerminalImpressions{}}
	for _, r := range rows {
		n := len(rep.Terminals)
		if n == 0 || rep.Terminals[n-1].LocationID != r.LocationID || rep.Terminals[n-1].TerminalID != r.TerminalID {
			rep.Terminals = append(rep.Terminals, TerminalImpressions{LocationID: r.LocationID, TerminalID: r.TerminalID})
			n++
		}
		term := &rep.Terminals[n-1]
		term.Impressions += r.Count
		term.Slides = append(term.Slides, SlideImpressions{SlideID: r.SlideID, Impressions: r.Count})
		rep.Total += r.Count
	}
	return rep, nil
}
