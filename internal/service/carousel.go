package service

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// CarouselRequest is the carousel request (docs/api.md §7.1). Unknown
// properties are ignored, as for startInteraction.
type CarouselRequest struct {
	PosLocationID *string `json:"posLocationId"`
	TerminalID    *string `json:"terminalId"`
}

// Validate requires both ids, non-empty.
func (q *CarouselRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "posLocationId", q.PosLocationID)
	required(v, "terminalId", q.TerminalID)
	return v.Err()
}

// Carousel is the carousel's answer, with posStatus beside url so that a
// POS can tell a disabled place (url "") from a failure.
type Carousel struct {
	URL       string            `json:"url"`
	PosStatus posgate.PosStatus `json:"posStatus"`
}

// Carousel returns the URL of a terminal's carousel: the company's external
// template filled in, or posgate's own page behind a signed, expiring link.
// A disabled company, location or terminal, or the carousel feature off,
// answers url "" and posStatus Disabled.
func (s *Service) Carousel(ctx context.Context, p *posgate.Principal, posSystemID string, req *CarouselRequest) (*Carousel, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	loc, term, status, err := s.posTerminal(ctx, p, posSystemID, *req.PosLocationID, *req.TerminalID, posgate.FeatureCarousel)
	if err != nil {
		return nil, err
	}
	if status != posgate.PosAccepted {
		return &Carousel{PosStatus: posgate.PosDisabled}, nil
	}
	u, err := s.carouselURLFor(ctx, posSystemID, loc, term)
	if err != nil {
		return nil, err
	}
	return &Carousel{URL: u, PosStatus: posgate.PosAccepted}, nil
}

// carouselURLFor is the URL the carousel endpoint gives a terminal, "" when
// the carousel is Disabled there; the transaction's answer carries it too
// (cfsTemplate, docs/api.md §13.1).
func (s *Service) carouselURLFor(ctx context.Context, posSystemID string, loc *posgate.Location, term *posgate.Terminal) (string, error) {
	if terminalStatus(loc, term, posgate.FeatureCarousel) != posgate.PosAccepted {
		return "", nil
	}
	settings, err := s.store.FindCarouselSettings(ctx, posSystemID, loc.CompanyID)
	if err != nil && posgate.ErrorCode(err) != posgate.ENOTFOUND {
		return "", err
	}
	if settings != nil && settings.URLTemplate != "" {
		return posgate.ExpandCarouselTemplate(settings.URLTemplate, posSystemID, loc.CompanyID, loc.ID, term.ID), nil
	}
	link := CarouselLink{POSSystemID: posSystemID, CompanyID: loc.CompanyID, LocationID: loc.ID, TerminalID: term.ID,
		Expires: s.now().Add(s.cfg.CarouselURLTTL).Unix()}
	return s.carouselURL(ctx, link)
}

// CarouselSlide is one slide as the carousel page receives it.
type CarouselSlide struct {
	SlideID         string `json:"slideId"`
	ImageURL        string `json:"imageUrl"`
	Title           string `json:"title"`
	Text            string `json:"text"`
	DurationSeconds int    `json:"durationSeconds"`
}

// CarouselContent is what the carousel page polls for.
type CarouselContent struct {
	PosStatus   posgate.PosStatus `json:"posStatus"`
	PollSeconds int               `json:"pollSeconds"`
	Slides      []CarouselSlide   `json:"slides"`
}

// CarouselContent returns the slides a carousel link's terminal shows now:
// the operator's slides (at most 100), then at most 50 of the company's
// promotions valid there now, those of the location first and then those
// ending soonest (posgate.MaxCarouselPromotions); none
// (posStatus Disabled) while the company, location or terminal is disabled
// or the carousel is switched off.
func (s *Service) CarouselContent(ctx context.Context, l CarouselLink) (*CarouselContent, error) {
	if err := s.CheckCarouselLink(ctx, l); err != nil {
		return nil, err
	}
	slides, st, err := s.slidesFor(ctx, l)
	if err != nil {
		return nil, err
	}
	return &CarouselContent{PosStatus: st, PollSeconds: max(1, int(s.cfg.CarouselPoll/time.Second)), Slides: slides}, nil
}

// slidesFor returns the slides the link's terminal shows now, and the
// place's status.
func (s *Service) slidesFor(ctx context.Context, l CarouselLink) ([]CarouselSlide, posgate.PosStatus, error) {
	loc, err := s.store.FindLocation(ctx, l.POSSystemID, l.LocationID)
	if err != nil {
		return nil, "", err
	}
	term, err := s.store.FindTerminal(ctx, l.POSSystemID, l.LocationID, l.TerminalID)
	if err != nil {
		return nil, "", err
	}
	if loc.CompanyID != l.CompanyID || terminalStatus(loc, term, posgate.FeatureCarousel) != posgate.PosAccepted {
		return []CarouselSlide{}, posgate.PosDisabled, nil
	}
	stored, err := s.store.ListSlides(ctx, l.POSSystemID, l.CompanyID)
	if err != nil {
		return nil, "", err
	}
	promotions, err := s.store.ListCarouselPromotions(ctx, l.POSSystemID, l.CompanyID, l.LocationID, s.now().In(loc.Zone()), posgate.MaxCarouselPromotions)
	if err != nil {
		return nil, "", fmt.Errorf("promotion slides: %w", err)
	}
	out := make([]CarouselSlide, 0, len(stored)+len(promotions))
	for _, sl := range stored {
		out = append(out, CarouselSlide{SlideID: sl.ID, ImageURL: sl.ImageURL, Title: sl.Title, Text: sl.Text, DurationSeconds: sl.DurationSeconds})
	}
	for _, p := range promotions {
		out = append(out, CarouselSlide{SlideID: "promotion:" + p.ID, Title: p.Name, Text: promotionText(p.Results), DurationSeconds: promotionSlideSeconds})
	}
	return out, posgate.PosAccepted, nil
}

// promotionSlideSeconds is how long a promotion stays on screen; operator
// slides carry their own duration.
const promotionSlideSeconds = 8

// promotionText says what a promotion gives, e.g. "10% off", "5.00 off",
// "for 3.00" or "buy 1, get 1 free".
func promotionText(results []posgate.PromotionResult) string {
	parts := make([]string, 0, len(results))
	for _, r := range results {
		v := strconv.FormatFloat(r.Value, 'f', -1, 64)
		switch r.PromotionType {
		case posgate.PromotionPercentage:
			parts = append(parts, v+"% off")
		case posgate.PromotionFixedPrice:
			parts = append(parts, "for "+strconv.FormatFloat(r.Value, 'f', 2, 64))
		case posgate.PromotionBuyXGetY:
			off := "free"
			if r.Value < 100 {
				off = v + "% off"
			}
			parts = append(parts, fmt.Sprintf("buy %d, get %d %s", r.BuyQuantity, r.GetQuantity, off))
		default:
			parts = append(parts, strconv.FormatFloat(r.Value, 'f', 2, 64)+" off")
		}
	}
	return strings.Join(parts, ", ")
}

// ImpressionRequest is what the carousel page posts when it shows a slide.
type ImpressionRequest struct {
	SlideID *string `json:"slideId"`
}

// Validate requires the slide id.
func (q *ImpressionRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "slideId", q.SlideID)
	return v.Err()
}

// ImpressionResult says whether a showing was counted.
type ImpressionResult struct {
	SlideID  string `json:"slideId"`
	Recorded bool   `json:"recorded"`
}

// RecordImpression counts one showing of a slide at a carousel link's
// terminal. Only a slide the terminal's carousel holds now is counted
// (ENOTFOUND else); a disabled place records nothing (recorded false).
func (s *Service) RecordImpression(ctx context.Context, l CarouselLink, req *ImpressionRequest) (*ImpressionResult, error) {
	if err := s.CheckCarouselLink(ctx, l); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	slides, st, err := s.slidesFor(ctx, l)
	if err != nil {
		return nil, err
	}
	out := &ImpressionResult{SlideID: *req.SlideID}
	if st != posgate.PosAccepted {
		return out, nil
	}
	found := false
	for _, sl := range slides {
		found = found || sl.SlideID == *req.SlideID
	}
	if !found {
		return nil, posgate.Errorf(posgate.ENOTFOUND, "Slide '%s' is not in this carousel.", *req.SlideID)
	}
	if err := s.store.RecordImpression(ctx, &posgate.Impression{POSSystemID: l.POSSystemID, CompanyID: l.CompanyID,
		LocationID: l.LocationID, TerminalID: l.TerminalID, SlideID: *req.SlideID, At: s.now()}); err != nil {
		return nil, err
	}
	out.Recorded = true
	return out, nil
}
