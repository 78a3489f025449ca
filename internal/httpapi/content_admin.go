package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/ops"
)

// createSlideRequest is a new slide; slideId is generated when absent,
// position 0 or absent appends, durationSeconds defaults to 8.
type createSlideRequest struct {
	ID              string `json:"slideId"`
	Position        *int   `json:"position"`
	ImageURL        string `json:"imageUrl"`
	Title           string `json:"title"`
	Text            string `json:"text"`
	DurationSeconds *int   `json:"durationSeconds"`
}

func (s *Server) createSlide(r *http.Request, req *createSlideRequest) (int, any, error) {
	sl := &posgate.Slide{POSSystemID: r.PathValue("posSystemId"), CompanyID: r.PathValue("posCompanyId"), ID: req.ID,
		ImageURL: req.ImageURL, Title: req.Title, Text: req.Text, DurationSeconds: posgate.DefaultSlideSeconds}
	if req.Position != nil {
		sl.Position = *req.Position
	}
	if req.DurationSeconds != nil {
		sl.DurationSeconds = *req.DurationSeconds
	}
	return created(sl, ops.CreateSlide(r.Context(), s.store, sl))
}

// needCompany makes a list under an unknown company a 404, not [].
func (s *Server) needCompany(r *http.Request) error {
	_, err := s.store.FindCompany(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"))
	return err
}

func (s *Server) listSlides(r *http.Request) (int, any, error) {
	if err := s.needCompany(r); err != nil {
		return 0, nil, err
	}
	return list(s.store.ListSlides(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

func (s *Server) getSlide(r *http.Request) (int, any, error) {
	return one(s.store.FindSlide(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("slideId")))
}

type updateSlideRequest struct {
	Position        *int    `json:"position"`
	ImageURL        *string `json:"imageUrl"`
	Title           *string `json:"title"`
	Text            *string `json:"text"`
	DurationSeconds *int    `json:"durationSeconds"`
}

func (s *Server) updateSlide(r *http.Request, req *updateSlideRequest) (int, any, error) {
	return one(ops.UpdateSlide(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("slideId"),
		posgate.SlideUpdate{Position: req.Position, ImageURL: req.ImageURL, Title: req.Title, Text: req.Text, DurationSeconds: req.DurationSeconds}))
}

func (s *Server) deleteSlide(r *http.Request) (int, any, error) {
	return one(s.store.DeleteSlide(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("slideId")))
}

// carouselSettingsView shows updatedAt null for a company that never set
// anything.
type carouselSettingsView struct {
	POSSystemID string     `json:"posSystemId"`
	CompanyID   string     `json:"posCompanyId"`
	URLTemplate string     `json:"urlTemplate"`
	UpdatedAt   *time.Time `json:"updatedAt"`
}

func viewCarouselSettings(c *posgate.CarouselSettings, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	v := carouselSettingsView{POSSystemID: c.POSSystemID, CompanyID: c.CompanyID, URLTemplate: c.URLTemplate}
	if !c.UpdatedAt.IsZero() {
		v.UpdatedAt = &c.UpdatedAt
	}
	return http.StatusOK, envelope{v}, nil
}

func (s *Server) getCarouselSettings(r *http.Request) (int, any, error) {
	return viewCarouselSettings(ops.CarouselSettings(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

// putCarouselRequest sets the external template; "" returns the company to
// posgate's own page.
type putCarouselRequest struct {
	URLTemplate *string `json:"urlTemplate"`
}

// Validate requires the property (it may be empty).
func (q *putCarouselRequest) Validate() error {
	if q.URLTemplate == nil {
		v := posgate.ValidationError{}
		v.Add("urlTemplate", "The urlTemplate field is required (\"\" to use posgate's own carousel page).")
		return v.Err()
	}
	return nil
}

func (s *Server) putCarouselSettings(r *http.Request, req *putCarouselRequest) (int, any, error) {
	return viewCarouselSettings(ops.PutCarouselTemplate(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId"), *req.URLTemplate))
}

// receiptPromotionView adds the QR image URL, so that an operator can see
// what a receipt will print.
type receiptPromotionView struct {
	*posgate.ReceiptPromotion
	ImageURL string `json:"imageUrl"`
}

func (s *Server) viewReceipt(ctx context.Context, p *posgate.ReceiptPromotion) (receiptPromotionView, error) {
	img, err := s.svc.ReceiptImageURL(ctx, p.TargetURL)
	return receiptPromotionView{ReceiptPromotion: p, ImageURL: img}, err
}

// receiptPlace returns the company and location a receipt-promotion route
// names: the company default (company routes) or a location (location
// routes, whose company is looked up).
func (s *Server) receiptPlace(r *http.Request) (companyID, locationID string, err error) {
	locationID = r.PathValue("posLocationId")
	companyID, err = ops.ReceiptPromotionPlace(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId"), locationID)
	return companyID, locationID, err
}

func (s *Server) oneReceipt(ctx context.Context, p *posgate.ReceiptPromotion, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	v, err := s.viewReceipt(ctx, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{v}, nil
}

func (s *Server) getReceiptPromotion(r *http.Request) (int, any, error) {
	companyID, locationID, err := s.receiptPlace(r)
	if err != nil {
		return 0, nil, err
	}
	p, err := s.store.FindReceiptPromotion(r.Context(), r.PathValue("posSystemId"), companyID, locationID)
	return s.oneReceipt(r.Context(), p, err)
}

type putReceiptPromotionRequest struct {
	PrimaryText   string `json:"primaryText"`
	SecondaryText string `json:"secondaryText"`
	TargetURL     string `json:"targetUrl"`
}

func (s *Server) putReceiptPromotion(r *http.Request, req *putReceiptPromotionRequest) (int, any, error) {
	companyID, locationID, err := s.receiptPlace(r)
	if err != nil {
		return 0, nil, err
	}
	p := &posgate.ReceiptPromotion{POSSystemID: r.PathValue("posSystemId"), CompanyID: companyID, LocationID: locationID,
		PrimaryText: req.PrimaryText, SecondaryText: req.SecondaryText, TargetURL: req.TargetURL}
	return s.oneReceipt(r.Context(), p, ops.PutReceiptPromotion(r.Context(), s.store, p))
}

func (s *Server) deleteReceiptPromotion(r *http.Request) (int, any, error) {
	companyID, locationID, err := s.receiptPlace(r)
	if err != nil {
		return 0, nil, err
	}
	p, err := s.store.DeleteReceiptPromotion(r.Context(), r.PathValue("posSystemId"), companyID, locationID)
	return s.oneReceipt(r.Context(), p, err)
}

func (s *Server) listReceiptPromotions(r *http.Request) (int, any, error) {
	if err := s.needCompany(r); err != nil {
		return 0, nil, err
	}
	ps, err := s.store.ListReceiptPromotions(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"))
	if err != nil {
		return 0, nil, err
	}
	out := make([]receiptPromotionView, len(ps))
	for i, p := range ps {
		if out[i], err = s.viewReceipt(r.Context(), p); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusOK, envelope{out}, nil
}

// impressions reports a company's carousel impressions per location and
// terminal over ?from= to ?to= (UTC days; the last 30 days by default),
// optionally of one ?posLocationId= and ?terminalId=.
func (s *Server) impressions(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	from, to, err := ops.ParseReportRange(q.Get("from"), q.Get("to"), s.now())
	if err != nil {
		return 0, nil, err
	}
	return one(ops.Impressions(r.Context(), s.store, posgate.ImpressionQuery{POSSystemID: r.PathValue("posSystemId"),
		CompanyID: r.PathValue("posCompanyId"), LocationID: q.Get("posLocationId"), TerminalID: q.Get("terminalId"), From: from, To: to}))
}
