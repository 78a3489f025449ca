package portal

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// contentData is the content page's: a company's carousel slides (with
// their impressions of the last seven days) and receipt promotions.
type contentData struct {
	Places      []place
	Company     string
	Slides      []*posgate.Slide
	Receipts    []*service.ReceiptPromotionView
	Locations   []*posgate.Location
	Impressions []hourCount // per slide, the chart's bars
	Total       int64
	Form        url.Values
}

// companyOf returns the company a page is about: the query's or form's
// "company" ("posSystemId/posCompanyId"), else the first one reached.
func companyOf(q *request, places []place) (pos, co string) {
	c := q.r.URL.Query().Get("company")
	if c == "" && q.r.PostForm != nil {
		c = q.r.PostForm.Get("company")
	}
	if c == "" {
		for _, pl := range places {
			if len(pl.Companies) > 0 {
				return pl.POS.ID, pl.Companies[0].ID
			}
		}
	}
	pos, co, _ = strings.Cut(c, "/")
	return pos, co
}

// content shows a company's slides with a live preview, their
// impressions, and its receipt promotions with their QR codes.
func (p *Portal) content(q *request) error { return p.renderContent(q, http.StatusOK, view{}) }

func (p *Portal) renderContent(q *request, status int, v view) error {
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	pos, co := companyOf(q, places)
	d := contentData{Places: places, Company: pos + "/" + co, Form: q.r.PostForm}
	if co != "" {
		if d.Slides, err = p.svc.ListSlides(q.ctx, q.pr, pos, co); err != nil {
			return err
		}
		if d.Receipts, err = p.svc.ListReceiptPromotions(q.ctx, q.pr, pos, co); err != nil {
			return err
		}
		if d.Locations, err = p.svc.ListLocations(q.ctx, q.pr, pos, co); err != nil {
			return err
		}
		now := p.cfg.Now().UTC()
		rep, err := p.svc.Impressions(q.ctx, q.pr, pos, co, &service.ImpressionsRequest{From: now.AddDate(0, 0, -6).Format(service.DateLayout), To: now.Format(service.DateLayout)})
		if err != nil {
			return err
		}
		bySlide := map[string]int{}
		for _, t := range rep.Terminals {
			for _, sl := range t.Slides {
				bySlide[sl.SlideID] += int(sl.Impressions)
			}
		}
		for _, sl := range d.Slides {
			d.Impressions = append(d.Impressions, hourCount{Label: sl.ID, Count: bySlide[sl.ID]})
		}
		d.Total = rep.Total
	} else if v.Error == "" && q.pr.SeesCompanies() {
		v.Error, status = "You reach no company: slides and receipt promotions belong to companies.", http.StatusOK
	}
	v.Title, v.Nav, v.Data = "Carousel and receipt", "content", d
	return p.render(q, status, "content", v)
}

func (p *Portal) contentError(q *request, err error) error {
	return p.formError(q, err, func(status int, v view) error { return p.renderContent(q, status, v) })
}

// backToContent is the content page of a company.
func backToContent(pos, co string) string {
	return "/portal/content?company=" + url.QueryEscape(pos+"/"+co)
}

// optInt parses an optional whole number of a form.
func optInt(f url.Values, field string, v posgate.ValidationError) *int {
	s := strings.TrimSpace(f.Get(field))
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		v.Add(field, "The "+field+" field must be a whole number.")
		return nil
	}
	return &n
}

// createSlide adds a slide.
func (p *Portal) createSlide(q *request) error {
	f := q.r.PostForm
	pos, co, _ := strings.Cut(f.Get("company"), "/")
	v := posgate.ValidationError{}
	req := &service.CreateSlideRequest{ID: strings.TrimSpace(f.Get("slideId")), ImageURL: strings.TrimSpace(f.Get("imageUrl")),
		Title: strings.TrimSpace(f.Get("title")), Text: strings.TrimSpace(f.Get("text")),
		Position: optInt(f, "position", v), DurationSeconds: optInt(f, "durationSeconds", v)}
	err := v.Err()
	var sl *posgate.Slide
	if err == nil {
		sl, err = p.svc.CreateSlide(q.ctx, q.pr, pos, co, req)
	}
	if err != nil {
		return p.contentError(q, err)
	}
	return q.redirect(backToContent(pos, co), "Slide "+sl.ID+" added.")
}

// updateSlide changes a slide's fields.
func (p *Portal) updateSlide(q *request) error {
	f := q.r.PostForm
	pos, co, id := q.r.PathValue("pos"), q.r.PathValue("company"), q.r.PathValue("slide")
	v := posgate.ValidationError{}
	str := func(field string) *string { s := strings.TrimSpace(f.Get(field)); return &s }
	req := &service.UpdateSlideRequest{ImageURL: str("imageUrl"), Title: str("title"), Text: str("text"),
		Position: optInt(f, "position", v), DurationSeconds: optInt(f, "durationSeconds", v)}
	err := v.Err()
	if err == nil {
		_, err = p.svc.UpdateSlide(q.ctx, q.pr, pos, co, id, req)
	}
	if err != nil {
		q.r.URL.RawQuery = url.Values{"company": {pos + "/" + co}}.Encode()
		return p.contentError(q, err)
	}
	return q.redirect(backToContent(pos, co), "Slide "+id+" saved.")
}

// deleteSlide removes a slide.
func (p *Portal) deleteSlide(q *request) error {
	pos, co, id := q.r.PathValue("pos"), q.r.PathValue("company"), q.r.PathValue("slide")
	if _, err := p.svc.DeleteSlide(q.ctx, q.pr, pos, co, id); err != nil {
		return err
	}
	return q.redirect(backToContent(pos, co), "Slide "+id+" deleted.")
}

// putReceiptPromotion sets the receipt promotion of a location, or the
// company's default (location empty).
func (p *Portal) putReceiptPromotion(q *request) error {
	f := q.r.PostForm
	pos, co, _ := strings.Cut(f.Get("company"), "/")
	loc := f.Get("location")
	_, err := p.svc.PutReceiptPromotion(q.ctx, q.pr, pos, co, loc, &service.PutReceiptPromotionRequest{PrimaryText: strings.TrimSpace(f.Get("primaryText")),
		SecondaryText: strings.TrimSpace(f.Get("secondaryText")), TargetURL: strings.TrimSpace(f.Get("targetUrl"))})
	if err != nil {
		return p.contentError(q, err)
	}
	where := "the company's default"
	if loc != "" {
		where = loc
	}
	return q.redirect(backToContent(pos, co), "Receipt promotion of "+where+" saved.")
}

// deleteReceiptPromotion removes a location's receipt promotion (or the
// company's default).
func (p *Portal) deleteReceiptPromotion(q *request) error {
	f := q.r.PostForm
	pos, co, _ := strings.Cut(f.Get("company"), "/")
	loc := f.Get("location")
	if _, err := p.svc.DeleteReceiptPromotion(q.ctx, q.pr, pos, co, loc); err != nil {
		return err
	}
	return q.redirect(backToContent(pos, co), "Receipt promotion removed.")
}

// imageSrc is a slide's image URL for an <img src>. html/template refuses
// every data: URL there (it writes "#ZgotmplZ" instead), which would break
// the demo's slides and any operator's inline image; a data: URL of an image
// type a slide may have (posgate.IsImageDataURL: PNG, JPEG, GIF, WebP, SVG)
// is let through on purpose, since an <img> shows it as an image and runs
// nothing (not even an SVG's scripts), and the portal's
// Content-Security-Policy allows data: images. Anything else goes through
// html/template's own URL filter as before.
func imageSrc(s string) any {
	if posgate.IsImageDataURL(s) {
		return template.URL(s)
	}
	return s
}
