package posgate

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// ContentStore holds customer-facing content: carousel slides, the external
// carousel template, receipt promotions and impressions (docs/api.md §7 and
// docs/api.md §8), plus the secret that signs the URLs posgate hands out for
// them.
type ContentStore interface {
	// CreateSlide stores s and sets its CreatedAt and UpdatedAt. A Position
	// of 0 puts the slide after the company's last one (and sets Position).
	// ECONFLICT for an existing slide id in the company, ENOTFOUND for an
	// unknown company.
	CreateSlide(ctx context.Context, s *Slide) error
	FindSlide(ctx context.Context, posSystemID, companyID, slideID string) (*Slide, error)
	// ListSlides lists a company's slides in showing order: by Position,
	// then by id.
	ListSlides(ctx context.Context, posSystemID, companyID string) ([]*Slide, error)
	UpdateSlide(ctx context.Context, posSystemID, companyID, slideID string, upd SlideUpdate) (*Slide, error)
	// DeleteSlide removes the slide and returns it as it was.
	DeleteSlide(ctx context.Context, posSystemID, companyID, slideID string) (*Slide, error)

	// PutCarouselSettings creates or replaces a company's carousel settings
	// and sets UpdatedAt; ENOTFOUND for an unknown company.
	PutCarouselSettings(ctx context.Context, c *CarouselSettings) error
	// FindCarouselSettings is ENOTFOUND when the company never set any.
	FindCarouselSettings(ctx context.Context, posSystemID, companyID string) (*CarouselSettings, error)

	// PutReceiptPromotion creates or replaces the receipt promotion of a
	// location (LocationID set) or the company default (LocationID empty),
	// keeping CreatedAt of a replaced one and setting UpdatedAt. ENOTFOUND
	// when the company, or the location within that company, does not exist.
	PutReceiptPromotion(ctx context.Context, p *ReceiptPromotion) error
	// FindReceiptPromotion returns exactly the promotion of that location
	// (or, with locationID empty, the company default).
	FindReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*ReceiptPromotion, error)
	// EffectiveReceiptPromotion returns the location's promotion, else the
	// company default, else ENOTFOUND: the receipt promotion endpoint
	// (docs/api.md §8.1) in one round trip.
	EffectiveReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*ReceiptPromotion, error)
	// ListReceiptPromotions lists a company's promotions, the default first,
	// then by location id.
	ListReceiptPromotions(ctx context.Context, posSystemID, companyID string) ([]*ReceiptPromotion, error)
	// DeleteReceiptPromotion removes it and returns it as it was.
	DeleteReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*ReceiptPromotion, error)

	// RecordImpression counts one showing of a slide at a terminal on the
	// UTC day of At; ENOTFOUND when the terminal does not exist.
	RecordImpression(ctx context.Context, i *Impression) error
	// CountImpressions sums the impressions of a company's terminals over
	// the days of q, one row per location, terminal and slide, ordered by
	// those keys.
	CountImpressions(ctx context.Context, q ImpressionQuery) ([]*ImpressionCount, error)

	// EnsureSecret returns the secret stored under name, first storing
	// candidate when there is none. Every instance sharing the store thus
	// ends up with the same secret, whoever created it.
	EnsureSecret(ctx context.Context, name string, candidate []byte) ([]byte, error)
}

// Limits of customer-facing content. They keep the carousel page light and
// the QR codes scannable on a 58 mm receipt.
const (
	MinSlideSeconds     = 5
	MaxSlideSeconds     = 15
	DefaultSlideSeconds = 8
	MaxSlidesPerCompany = 100
	MaxSlidePosition    = 10000
	maxContentURLLen    = 2048
	maxDataURLLen       = 16 << 10
	maxSlideTitleLen    = 200
	maxSlideTextLen     = 1000
	maxReceiptTextLen   = 500
	// MaxQRTargetLen keeps the QR code at a version whose modules print at
	// least 3 dots wide on a 384-dot (58 mm) printer.
	MaxQRTargetLen = 500
)

// Slide is one operator-configured page of a company's carousel. ImageURL is
// an http(s) URL the screen loads, or a small data:image URL that works
// offline; Title and Text are drawn over or beside it.
type Slide struct {
	POSSystemID     string    `json:"posSystemId"`
	CompanyID       string    `json:"posCompanyId"`
	ID              string    `json:"slideId"`
	Position        int       `json:"position"`
	ImageURL        string    `json:"imageUrl"`
	Title           string    `json:"title"`
	Text            string    `json:"text"`
	DurationSeconds int       `json:"durationSeconds"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// Validate checks the fields an operator supplies; Position 0 is allowed
// (it means "at the end" on creation).
func (s *Slide) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", s.POSSystemID)
	checkKey(v, "posCompanyId", s.CompanyID)
	checkKey(v, "slideId", s.ID)
	checkSlideFields(v, s.Position, s.ImageURL, s.Title, s.Text, s.DurationSeconds)
	return v.Err()
}

func checkSlideFields(v ValidationError, position int, imageURL, title, text string, duration int) {
	if position < 0 || position > MaxSlidePosition {
		v.Add("position", fmt.Sprintf("The position field must be between 1 and %d (0 or absent: after the last slide).", MaxSlidePosition))
	}
	if imageURL != "" {
		if msg := checkImageURL(imageURL); msg != "" {
			v.Add("imageUrl", msg)
		}
	}
	checkContentText(v, "title", title, maxSlideTitleLen)
	checkContentText(v, "text", text, maxSlideTextLen)
	if imageURL == "" && strings.TrimSpace(title) == "" && strings.TrimSpace(text) == "" {
		v.Add("imageUrl", "A slide needs an imageUrl, a title or a text.")
	}
	if duration < MinSlideSeconds || duration > MaxSlideSeconds {
		v.Add("durationSeconds", fmt.Sprintf("The durationSeconds field must be between %d and %d.", MinSlideSeconds, MaxSlideSeconds))
	}
}

// SlideUpdate names the fields of a slide to change; nil leaves one as it is.
type SlideUpdate struct {
	Position        *int
	ImageURL        *string
	Title           *string
	Text            *string
	DurationSeconds *int
}

// Apply returns s with the update's fields applied, for validating the
// result before storing it.
func (u SlideUpdate) Apply(s Slide) Slide {
	if u.Position != nil {
		s.Position = *u.Position
	}
	if u.ImageURL != nil {
		s.ImageURL = *u.ImageURL
	}
	if u.Title != nil {
		s.Title = *u.Title
	}
	if u.Text != nil {
		s.Text = *u.Text
	}
	if u.DurationSeconds != nil {
		s.DurationSeconds = *u.DurationSeconds
	}
	return s
}

// CarouselSettings is a company's carousel configuration. With URLTemplate
// set, the carousel endpoint answers that template filled in instead of
// posgate's own page (docs/api.md §7.3; see ExpandCarouselTemplate).
type CarouselSettings struct {
	POSSystemID string    `json:"posSystemId"`
	CompanyID   string    `json:"posCompanyId"`
	URLTemplate string    `json:"urlTemplate"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// CarouselPlaceholders are the placeholders an external carousel URL
// template may hold.
var CarouselPlaceholders = []string{"{posSystemId}", "{posCompanyId}", "{posLocationId}", "{terminalId}"}

// Validate checks the template: empty, or an absolute http(s) URL once its
// placeholders are filled, with no other {…} placeholder.
func (c *CarouselSettings) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", c.POSSystemID)
	checkKey(v, "posCompanyId", c.CompanyID)
	if t := c.URLTemplate; t != "" {
		filled := ExpandCarouselTemplate(t, "p", "c", "l", "t")
		if len(t) > maxContentURLLen || !utf8.ValidString(t) {
			v.Add("urlTemplate", fmt.Sprintf("The urlTemplate field must be at most %d bytes.", maxContentURLLen))
		} else if strings.ContainsAny(filled, "{}") {
			v.Add("urlTemplate", "The urlTemplate field may only hold the placeholders "+strings.Join(CarouselPlaceholders, " ")+".")
		} else if !isContentURL(filled) {
			v.Add("urlTemplate", "The urlTemplate field must be an absolute http or https URL.")
		}
	}
	return v.Err()
}

// ExpandCarouselTemplate fills a template's placeholders. Each value is
// percent-encoded except for RFC 3986's unreserved characters, so that it is
// safe in a path segment and in a query alike.
func ExpandCarouselTemplate(tmpl, posSystemID, companyID, locationID, terminalID string) string {
	return strings.NewReplacer(
		"{posSystemId}", escapeTemplateValue(posSystemID),
		"{posCompanyId}", escapeTemplateValue(companyID),
		"{posLocationId}", escapeTemplateValue(locationID),
		"{terminalId}", escapeTemplateValue(terminalID),
	).Replace(tmpl)
}

func escapeTemplateValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// ReceiptPromotion is what a receipt printed at a location shows: two lines
// of text and a QR code of TargetURL. LocationID is empty for the company
// default, which applies to every location without one of its own.
type ReceiptPromotion struct {
	POSSystemID   string    `json:"posSystemId"`
	CompanyID     string    `json:"posCompanyId"`
	LocationID    string    `json:"posLocationId"`
	PrimaryText   string    `json:"primaryText"`
	SecondaryText string    `json:"secondaryText"`
	TargetURL     string    `json:"targetUrl"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// Validate checks the fields an operator supplies.
func (p *ReceiptPromotion) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", p.POSSystemID)
	checkKey(v, "posCompanyId", p.CompanyID)
	if p.LocationID != "" {
		checkKey(v, "posLocationId", p.LocationID)
	}
	if strings.TrimSpace(p.PrimaryText) == "" {
		v.Add("primaryText", "The primaryText field is required.")
	}
	checkContentText(v, "primaryText", p.PrimaryText, maxReceiptTextLen)
	checkContentText(v, "secondaryText", p.SecondaryText, maxReceiptTextLen)
	switch {
	case p.TargetURL == "":
		v.Add("targetUrl", "The targetUrl field is required.")
	case len(p.TargetURL) > MaxQRTargetLen || !utf8.ValidString(p.TargetURL):
		v.Add("targetUrl", fmt.Sprintf("The targetUrl field must be at most %d bytes, so that its QR code stays scannable on a 58 mm receipt.", MaxQRTargetLen))
	case !isContentURL(p.TargetURL):
		v.Add("targetUrl", "The targetUrl field must be an absolute http or https URL.")
	}
	return v.Err()
}

// Impression is one showing of a slide on a terminal's carousel.
type Impression struct {
	POSSystemID string
	CompanyID   string
	LocationID  string
	TerminalID  string
	SlideID     string
	At          time.Time
}

// ImpressionQuery selects a company's impressions on the UTC days From to
// To (both included, times at midnight UTC), of one location and one
// terminal when those are set.
type ImpressionQuery struct {
	POSSystemID string
	CompanyID   string
	LocationID  string
	TerminalID  string
	From, To    time.Time
}

// ImpressionCount is the number of showings of a slide on a terminal over
// a query's days.
type ImpressionCount struct {
	LocationID string
	TerminalID string
	SlideID    string
	Count      int64
}

// ImpressionDay is t's UTC calendar day at midnight, the granularity at which
// impressions are counted.
func ImpressionDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// imageDataTypes are the media types a slide's data: URL may have: raster
// images and SVG. A browser shows each in an <img> as an image only: it
// runs no script of an SVG there, nor loads what the SVG refers to.
var imageDataTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"}

// IsImageDataURL reports whether s is a data: URL of one of imageDataTypes
// ("data:image/png;base64,…", "data:image/svg+xml,…"): what a slide may
// carry inline, and what the portal lets through into an <img src>.
func IsImageDataURL(s string) bool {
	for _, t := range imageDataTypes {
		if rest, ok := strings.CutPrefix(s, "data:"+t); ok && (strings.HasPrefix(rest, ",") || strings.HasPrefix(rest, ";")) {
			return true
		}
	}
	return false
}

// checkImageURL returns why s is not a usable slide image URL, "" when it is.
func checkImageURL(s string) string {
	if strings.HasPrefix(s, "data:") {
		if len(s) > maxDataURLLen {
			return fmt.Sprintf("A data: imageUrl must be at most %d bytes; host larger images and give their http(s) URL.", maxDataURLLen)
		}
		if IsImageDataURL(s) {
			return ""
		}
		return "A data: imageUrl must be a PNG, JPEG, GIF, WebP or SVG image."
	}
	if len(s) > maxContentURLLen || !utf8.ValidString(s) {
		return fmt.Sprintf("The imageUrl field must be at most %d bytes.", maxContentURLLen)
	}
	if !isContentURL(s) {
		return "The imageUrl field must be an absolute http or https URL (or a data:image URL)."
	}
	return ""
}

func isContentURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && !strings.ContainsAny(s, " \t\r\n")
}

func checkContentText(v ValidationError, field, s string, max int) {
	if len(s) > max || !utf8.ValidString(s) {
		v.Add(field, fmt.Sprintf("The %s field must be valid text of at most %d bytes.", field, max))
	}
}
