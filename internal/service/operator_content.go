package service

import (
	"context"
	"fmt"
	"time"

	"github.com/posgate/posgate"
)

// The operator's content use cases: carousel slides and settings, receipt
// promotions and the impression report, all under a company p must reach.

// CreateSlideRequest is a new slide; slideId is generated when empty,
// position 0 or absent appends, durationSeconds defaults to
// posgate.DefaultSlideSeconds.
type CreateSlideRequest struct {
	ID              string `json:"slideId"`
	Position        *int   `json:"position"`
	ImageURL        string `json:"imageUrl"`
	Title           string `json:"title"`
	Text            string `json:"text"`
	DurationSeconds *int   `json:"durationSeconds"`
}

// CreateSlide adds a slide to a company's carousel; beyond
// posgate.MaxSlidesPerCompany it is ECONFLICT, so that the carousel page
// stays light.
func (s *Service) CreateSlide(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *CreateSlideRequest) (*posgate.Slide, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	sl := &posgate.Slide{POSSystemID: posSystemID, CompanyID: companyID, ID: req.ID, ImageURL: req.ImageURL, Title: req.Title,
		Text: req.Text, Position: intOr(req.Position, 0), DurationSeconds: intOr(req.DurationSeconds, posgate.DefaultSlideSeconds)}
	if sl.ID == "" {
		sl.ID = "slide-" + randomID()
	}
	if err := sl.Validate(); err != nil {
		return nil, err
	}
	err := s.audited(ctx, p, "slide.create", func(ctx context.Context, c *change) error {
		existing, err := s.store.ListSlides(ctx, posSystemID, companyID)
		if err != nil {
			return err
		}
		if len(existing) >= posgate.MaxSlidesPerCompany {
			return posgate.Errorf(posgate.ECONFLICT, "Company '%s' has %d slides, the most allowed; remove one first.", companyID, posgate.MaxSlidesPerCompany)
		}
		c.target, c.after = companyTarget("slide", sl.ID, posSystemID, companyID), sl
		return s.store.CreateSlide(ctx, sl)
	})
	if err != nil {
		return nil, err
	}
	return sl, nil
}

// ListSlides lists a company's slides in showing order; an unknown or
// hidden company is ENOTFOUND, not an empty list.
func (s *Service) ListSlides(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) ([]*posgate.Slide, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	return s.store.ListSlides(ctx, posSystemID, companyID)
}

// FindSlide returns one slide of a company p reaches.
func (s *Service) FindSlide(ctx context.Context, p *posgate.Principal, posSystemID, companyID, slideID string) (*posgate.Slide, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	return s.store.FindSlide(ctx, posSystemID, companyID, slideID)
}

// UpdateSlideRequest changes the fields it names.
type UpdateSlideRequest struct {
	Position        *int    `json:"position"`
	ImageURL        *string `json:"imageUrl"`
	Title           *string `json:"title"`
	Text            *string `json:"text"`
	DurationSeconds *int    `json:"durationSeconds"`
}

// Validate checks what can be checked without the slide: a position, when
// given, must be 1 or more (0, "append", only means something on create).
func (q *UpdateSlideRequest) Validate() error {
	if q.Position != nil && *q.Position < 1 {
		return invalid("position", fmt.Sprintf("The position field must be between 1 and %d.", posgate.MaxSlidePosition))
	}
	return nil
}

// UpdateSlide validates the slide as the update would leave it, then stores
// the update.
func (s *Service) UpdateSlide(ctx context.Context, p *posgate.Principal, posSystemID, companyID, slideID string, req *UpdateSlideRequest) (*posgate.Slide, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	upd := posgate.SlideUpdate{Position: req.Position, ImageURL: req.ImageURL, Title: req.Title, Text: req.Text, DurationSeconds: req.DurationSeconds}
	var out *posgate.Slide
	err := s.audited(ctx, p, "slide.update", func(ctx context.Context, c *change) error {
		cur, err := s.store.FindSlide(ctx, posSystemID, companyID, slideID)
		if err != nil {
			return err
		}
		next := upd.Apply(*cur)
		if err := next.Validate(); err != nil {
			return err
		}
		c.target, c.before = companyTarget("slide", slideID, posSystemID, companyID), cur
		out, err = s.store.UpdateSlide(ctx, posSystemID, companyID, slideID, upd)
		c.after = out
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteSlide removes a slide and returns it as it was.
func (s *Service) DeleteSlide(ctx context.Context, p *posgate.Principal, posSystemID, companyID, slideID string) (*posgate.Slide, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	var out *posgate.Slide
	err := s.audited(ctx, p, "slide.delete", func(ctx context.Context, c *change) error {
		var err error
		out, err = s.store.DeleteSlide(ctx, posSystemID, companyID, slideID)
		c.target, c.before = companyTarget("slide", slideID, posSystemID, companyID), out
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CarouselSettings is a company's carousel settings as operators see them:
// updatedAt is null for a company that never set anything.
type CarouselSettings struct {
	POSSystemID string     `json:"posSystemId"`
	CompanyID   string     `json:"posCompanyId"`
	URLTemplate string     `json:"urlTemplate"`
	UpdatedAt   *time.Time `json:"updatedAt"`
}

func viewCarouselSettings(c *posgate.CarouselSettings) *CarouselSettings {
	v := &CarouselSettings{POSSystemID: c.POSSystemID, CompanyID: c.CompanyID, URLTemplate: c.URLTemplate}
	if !c.UpdatedAt.IsZero() {
		v.UpdatedAt = &c.UpdatedAt
	}
	return v
}

// FindCarouselSettings returns a company's carousel settings; a company
// that never set any gets the defaults (posgate's own page).
func (s *Service) FindCarouselSettings(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) (*CarouselSettings, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	c, err := s.store.FindCarouselSettings(ctx, posSystemID, companyID)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		c, err = &posgate.CarouselSettings{POSSystemID: posSystemID, CompanyID: companyID}, nil
	}
	if err != nil {
		return nil, err
	}
	return viewCarouselSettings(c), nil
}

// PutCarouselSettingsRequest sets the external template; "" returns the
// company to posgate's own page.
type PutCarouselSettingsRequest struct {
	URLTemplate *string `json:"urlTemplate"`
}

// Validate requires the property (it may be empty), so that a typo in its
// name cannot silently switch a company back to posgate's page.
func (q *PutCarouselSettingsRequest) Validate() error {
	if q.URLTemplate == nil {
		return invalid("urlTemplate", "The urlTemplate field is required (\"\" to use posgate's own carousel page).")
	}
	return nil
}

// PutCarouselSettings sets (or, with "", clears) a company's external
// carousel URL template.
func (s *Service) PutCarouselSettings(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *PutCarouselSettingsRequest) (*CarouselSettings, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	c := &posgate.CarouselSettings{POSSystemID: posSystemID, CompanyID: companyID, URLTemplate: *req.URLTemplate}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	err := s.audited(ctx, p, "carousel.update", func(ctx context.Context, ch *change) error {
		before, err := s.store.FindCarouselSettings(ctx, posSystemID, companyID)
		if err == nil {
			ch.before = viewCarouselSettings(before)
		} else if posgate.ErrorCode(err) != posgate.ENOTFOUND {
			return err
		}
		if err := s.store.PutCarouselSettings(ctx, c); err != nil {
			return err
		}
		ch.target, ch.after = companyTarget("carousel", companyID, posSystemID, companyID), viewCarouselSettings(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return viewCarouselSettings(c), nil
}

// ReceiptPromotionView is a stored receipt promotion with the URL of its QR
// image, so that an operator sees what a receipt will print.
type ReceiptPromotionView struct {
	*posgate.ReceiptPromotion
	ImageURL string `json:"imageUrl"`
}

func (s *Service) viewReceipt(ctx context.Context, rp *posgate.ReceiptPromotion) (*ReceiptPromotionView, error) {
	img, err := s.qrURL(ctx, rp.TargetURL)
	if err != nil {
		return nil, err
	}
	return &ReceiptPromotionView{ReceiptPromotion: rp, ImageURL: img}, nil
}

// receiptPlace resolves, for a principal, where a receipt promotion
// belongs: the company default when locationID is empty, else the
// location, whose company is looked up (and must equal companyID when that
// is given). A place p does not reach is as absent as an unknown one.
func (s *Service) receiptPlace(ctx context.Context, p *posgate.Principal, posSystemID, companyID, locationID string) (string, error) {
	if locationID == "" {
		if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
			return "", err
		}
		return companyID, nil
	}
	loc, err := s.operatorLocation(ctx, p, posSystemID, locationID)
	if err != nil {
		return "", err
	}
	if companyID != "" && loc.CompanyID != companyID {
		return "", posgate.NotFound("location", locationID)
	}
	return loc.CompanyID, nil
}

// FindReceiptPromotion returns the receipt promotion of a location
// (locationID set; companyID, when given, is checked) or a company's
// default (locationID empty).
func (s *Service) FindReceiptPromotion(ctx context.Context, p *posgate.Principal, posSystemID, companyID, locationID string) (*ReceiptPromotionView, error) {
	companyID, err := s.receiptPlace(ctx, p, posSystemID, companyID, locationID)
	if err != nil {
		return nil, err
	}
	rp, err := s.store.FindReceiptPromotion(ctx, posSystemID, companyID, locationID)
	if err != nil {
		return nil, err
	}
	return s.viewReceipt(ctx, rp)
}

// PutReceiptPromotionRequest is a receipt promotion's content.
type PutReceiptPromotionRequest struct {
	PrimaryText   string `json:"primaryText"`
	SecondaryText string `json:"secondaryText"`
	TargetURL     string `json:"targetUrl"`
}

// PutReceiptPromotion sets the receipt promotion of a location or a
// company's default (places as for FindReceiptPromotion).
func (s *Service) PutReceiptPromotion(ctx context.Context, p *posgate.Principal, posSystemID, companyID, locationID string, req *PutReceiptPromotionRequest) (*ReceiptPromotionView, error) {
	companyID, err := s.receiptPlace(ctx, p, posSystemID, companyID, locationID)
	if err != nil {
		return nil, err
	}
	rp := &posgate.ReceiptPromotion{POSSystemID: posSystemID, CompanyID: companyID, LocationID: locationID,
		PrimaryText: req.PrimaryText, SecondaryText: req.SecondaryText, TargetURL: req.TargetURL}
	if err := rp.Validate(); err != nil {
		return nil, err
	}
	err = s.audited(ctx, p, "receipt-promotion.put", func(ctx context.Context, c *change) error {
		before, err := s.store.FindReceiptPromotion(ctx, posSystemID, companyID, locationID)
		if err == nil {
			c.before = before
		} else if posgate.ErrorCode(err) != posgate.ENOTFOUND {
			return err
		}
		c.target, c.after = receiptTarget(posSystemID, companyID, locationID), rp
		return s.store.PutReceiptPromotion(ctx, rp)
	})
	if err != nil {
		return nil, err
	}
	return s.viewReceipt(ctx, rp)
}

// DeleteReceiptPromotion removes the receipt promotion of a location or a
// company's default and returns it as it was.
func (s *Service) DeleteReceiptPromotion(ctx context.Context, p *posgate.Principal, posSystemID, companyID, locationID string) (*ReceiptPromotionView, error) {
	companyID, err := s.receiptPlace(ctx, p, posSystemID, companyID, locationID)
	if err != nil {
		return nil, err
	}
	var rp *posgate.ReceiptPromotion
	err = s.audited(ctx, p, "receipt-promotion.delete", func(ctx context.Context, c *change) error {
		var err error
		rp, err = s.store.DeleteReceiptPromotion(ctx, posSystemID, companyID, locationID)
		c.target, c.before = receiptTarget(posSystemID, companyID, locationID), rp
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.viewReceipt(ctx, rp)
}

// receiptTarget is a receipt promotion as the target of a change: its id
// is its location's, or its company's for the company's default.
func receiptTarget(posSystemID, companyID, locationID string) posgate.AuditTarget {
	id := locationID
	if id == "" {
		id = companyID
	}
	return locationTarget("receipt-promotion", id, posSystemID, companyID, locationID)
}

// ListReceiptPromotions lists a company's receipt promotions, its default
// first.
func (s *Service) ListReceiptPromotions(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) ([]*ReceiptPromotionView, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	rps, err := s.store.ListReceiptPromotions(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	out := make([]*ReceiptPromotionView, len(rps))
	for i, rp := range rps {
		if out[i], err = s.viewReceipt(ctx, rp); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DateLayout is how impression report days are written (UTC days).
const DateLayout = "2006-01-02"

// MaxReportDays bounds an impression report's date range, so that one
// report cannot scan years of impressions.
const MaxReportDays = 366

// ImpressionsRequest selects an impression report: From and To are UTC days
// (YYYY-MM-DD, both included; the last 30 days by default); LocationID and
// TerminalID, when not empty, narrow it.
type ImpressionsRequest struct {
	From, To   string
	LocationID string
	TerminalID string

	from, to time.Time
}

// Validate reads the days against now: an empty To is today, an empty From
// 29 days before To.
func (q *ImpressionsRequest) Validate(now time.Time) error {
	var err error
	q.from, q.to, err = ParseReportRange(q.From, q.To, now)
	return err
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

// Impressions builds the impression report of a company p reaches.
func (s *Service) Impressions(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *ImpressionsRequest) (*ImpressionReport, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(s.now()); err != nil {
		return nil, err
	}
	rows, err := s.store.CountImpressions(ctx, posgate.ImpressionQuery{POSSystemID: posSystemID, CompanyID: companyID,
		LocationID: req.LocationID, TerminalID: req.TerminalID, From: req.from, To: req.to})
	if err != nil {
		return nil, err
	}
	rep := &ImpressionReport{POSSystemID: posSystemID, CompanyID: companyID,
		From: req.from.Format(DateLayout), To: req.to.Format(DateLayout), Terminals: []TerminalImpressions{}}
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
