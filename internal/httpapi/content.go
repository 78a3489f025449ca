package httpapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/posgate/posgate"
)

// Defaults of the carousel settings in Config.
const (
	defaultCarouselURLTTL = 24 * time.Hour
	defaultCarouselPoll   = 30 * time.Second
)

// urlSecretName names the store secret that signs carousel and QR URLs.
// It lives in the store so that every instance sharing it verifies the URLs
// another one made.
const urlSecretName = "content-url-signing"

// QR image sizes: the printable width of 58 mm and 80 mm thermal paper at
// 203 dpi (48 mm = 384 dots, 72 mm = 576 dots).
var qrSizes = map[string]int{"58mm": 384, "80mm": 576}

//go:embed carousel.html
var carouselHTML string

// SlideSource supplies slides beyond the operator's for a company's
// carousel at a location and time — the company's currently valid
// promotions. Their SlideIDs must not clash with operator slide ids (use a
// prefix such as "promotion:").
type SlideSource func(ctx context.Context, posSystemID, companyID, locationID string, at time.Time) ([]CarouselSlide, error)

// CarouselSlide is one slide as the carousel page receives it.
type CarouselSlide struct {
	SlideID         string `json:"slideId"`
	ImageURL        string `json:"imageUrl"`
	Title           string `json:"title"`
	Text            string `json:"text"`
	DurationSeconds int    `json:"durationSeconds"`
}

// contentState is made on first use, so that a Server needs no set-up for
// it: the URL-signing key and the carousel page with its CSP header.
type contentState struct {
	mu  sync.Mutex
	key []byte

	pageOnce sync.Once
	page     []byte
	csp      string

	// qr caches rendered QR images by ETag: every receipt of a location
	// prints the same image, and rendering one costs milliseconds.
	qrMu sync.Mutex
	qr   map[string][]byte
}

// maxCachedQR bounds the QR cache (images are 0.5–2 KB); when it is full it
// starts over, which costs one render per image still in use.
const maxCachedQR = 512

// cachedQR returns the image for etag, rendering and caching it if needed.
func (s *Server) cachedQR(etag, target string, px int) ([]byte, error) {
	c := &s.content
	c.qrMu.Lock()
	img, ok := c.qr[etag]
	c.qrMu.Unlock()
	if ok {
		return img, nil
	}
	img, err := renderQR(target, px)
	if err != nil {
		return nil, err
	}
	c.qrMu.Lock()
	if c.qr == nil || len(c.qr) >= maxCachedQR {
		c.qr = make(map[string][]byte)
	}
	c.qr[etag] = img
	c.qrMu.Unlock()
	return img, nil
}

// urlKey returns the URL-signing key, creating it in the store the first
// time any instance needs it.
func (s *Server) urlKey(ctx context.Context) ([]byte, error) {
	c := &s.content
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key != nil {
		return c.key, nil
	}
	candidate := make([]byte, 32)
	rand.Read(candidate)
	key, err := s.store.EnsureSecret(ctx, urlSecretName, candidate)
	if err != nil {
		return nil, fmt.Errorf("URL-signing key: %w", err)
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("URL-signing key: the stored secret has %d bytes, want 32", len(key))
	}
	c.key = key
	return key, nil
}

// sign returns the base64url HMAC-SHA256 of parts, each ended by a newline
// (ids cannot hold one, so the encoding is unambiguous).
func (s *Server) sign(ctx context.Context, parts ...string) (string, error) {
	key, err := s.urlKey(ctx)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	for _, p := range parts {
		mac.Write([]byte(p))
		mac.Write([]byte{'\n'})
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

// verify reports whether sig is the signature of parts, in constant time.
func (s *Server) verify(ctx context.Context, sig string, parts ...string) (bool, error) {
	want, err := s.sign(ctx, parts...)
	if err != nil {
		return false, err
	}
	return hmac.Equal([]byte(sig), []byte(want)), nil
}

func (s *Server) carouselTTL() time.Duration {
	if s.cfg.CarouselURLTTL > 0 {
		return s.cfg.CarouselURLTTL
	}
	return defaultCarouselURLTTL
}

func (s *Server) carouselPoll() time.Duration {
	if s.cfg.CarouselPoll > 0 {
		return s.cfg.CarouselPoll
	}
	return defaultCarouselPoll
}

// carouselRequest is the carousel request of interface.md §2.9. Unknown
// properties are ignored, as for startInteraction.
type carouselRequest struct {
	PosLocationID *string `json:"posLocationId"`
	TerminalID    *string `json:"terminalId"`
}

// Validate requires both ids, non-empty.
func (q *carouselRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "posLocationId", q.PosLocationID)
	required(v, "terminalId", q.TerminalID)
	return v.Err()
}

// carouselResult is §2.9's result, with posStatus beside url so that a POS
// can tell a disabled place (url "") from a failure.
type carouselResult struct {
	URL       string            `json:"url"`
	PosStatus posgate.PosStatus `json:"posStatus"`
}

// carousel is endpoint 5: the URL of the terminal's carousel — the
// company's external template filled in, or posgate's own page behind a
// signed, expiring link. A disabled company, location or terminal, or the
// carousel feature off, answers url "" and posStatus Disabled.
func (s *Server) carousel(r *http.Request, req *carouselRequest) (int, any, error) {
	ctx := r.Context()
	posSystemID := r.PathValue("posSystemId")
	loc, term, status, err := s.findTerminal(ctx, posSystemID, *req.PosLocationID, *req.TerminalID, posgate.FeatureCarousel)
	if err != nil {
		return 0, nil, err
	}
	if status != posgate.PosAccepted {
		return http.StatusOK, envelope{carouselResult{PosStatus: posgate.PosDisabled}}, nil
	}
	settings, err := s.store.FindCarouselSettings(ctx, posSystemID, loc.CompanyID)
	if err != nil && posgate.ErrorCode(err) != posgate.ENOTFOUND {
		return 0, nil, err
	}
	var u string
	if settings != nil && settings.URLTemplate != "" {
		u = posgate.ExpandCarouselTemplate(settings.URLTemplate, posSystemID, loc.CompanyID, loc.ID, term.ID)
	} else {
		link := carouselLinkData{POSSystemID: posSystemID, CompanyID: loc.CompanyID, LocationID: loc.ID, TerminalID: term.ID,
			Expires: s.now().Add(s.carouselTTL()).Unix()}
		if u, err = s.carouselURL(ctx, link); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusOK, envelope{carouselResult{URL: u, PosStatus: posgate.PosAccepted}}, nil
}

// carouselLinkData is what a carousel URL carries and its signature covers.
type carouselLinkData struct {
	POSSystemID, CompanyID, LocationID, TerminalID string
	Expires                                        int64 // Unix seconds
}

func (l carouselLinkData) parts() []string {
	return []string{"carousel", l.POSSystemID, l.CompanyID, l.LocationID, l.TerminalID, strconv.FormatInt(l.Expires, 10)}
}

// carouselURL is the signed URL of posgate's carousel page for l.
func (s *Server) carouselURL(ctx context.Context, l carouselLinkData) (string, error) {
	sig, err := s.sign(ctx, l.parts()...)
	if err != nil {
		return "", err
	}
	q := url.Values{"pos": {l.POSSystemID}, "company": {l.CompanyID}, "location": {l.LocationID}, "terminal": {l.TerminalID},
		"expires": {strconv.FormatInt(l.Expires, 10)}, "sig": {sig}}
	return s.cfg.BaseURL + "/carousel?" + q.Encode(), nil
}

// Messages of refused carousel links; the page shows them as they are.
const (
	msgBadCarouselLink     = "This carousel link is not valid. Ask the POS for a new one."
	msgExpiredCarouselLink = "This carousel link has expired. Ask the POS for a new one."
)

// parseCarouselLink checks the signed query of a carousel URL: a tampered
// or incomplete link, or an expired one, is EFORBIDDEN.
func (s *Server) parseCarouselLink(r *http.Request) (carouselLinkData, error) {
	q := r.URL.Query()
	one := func(name string) string {
		if vs := q[name]; len(vs) == 1 {
			return vs[0]
		}
		return ""
	}
	l := carouselLinkData{POSSystemID: one("pos"), CompanyID: one("company"), LocationID: one("location"), TerminalID: one("terminal")}
	exp, err := strconv.ParseInt(one("expires"), 10, 64)
	sig := one("sig")
	if err != nil || sig == "" || l.POSSystemID == "" || l.CompanyID == "" || l.LocationID == "" || l.TerminalID == "" {
		return l, posgate.Errorf(posgate.EFORBIDDEN, msgBadCarouselLink)
	}
	l.Expires = exp
	ok, err := s.verify(r.Context(), sig, l.parts()...)
	if err != nil {
		return l, err
	} else if !ok {
		return l, posgate.Errorf(posgate.EFORBIDDEN, msgBadCarouselLink)
	}
	if s.now().Unix() >= l.Expires {
		return l, posgate.Errorf(posgate.EFORBIDDEN, msgExpiredCarouselLink)
	}
	return l, nil
}

type carouselLinkKey struct{}

// carouselLink guards the carousel page's data routes: they are authorised
// by the signed link in their query (the page passes its own on), not by a
// bearer token, because the customer screen has none.
func (s *Server) carouselLink(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		l, err := s.parseCarouselLink(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), carouselLinkKey{}, l)))
	}
}

// noStore keeps webviews and proxies from caching an answer.
func noStore(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next(w, r)
	}
}

// carouselPage serves the carousel page for a valid link, and a plain HTML
// error page (403) for a tampered or expired one: a customer screen must
// never show a JSON problem.
func (s *Server) carouselPage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	// The URL carries the link's signature: never send it to the hosts of
	// the slides' images.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Type", "text/html; charset=utf-8")
	if _, err := s.parseCarouselLink(r); err != nil {
		status, msg := http.StatusForbidden, posgate.ErrorMessage(err)
		if posgate.ErrorCode(err) != posgate.EFORBIDDEN {
			s.log.ErrorContext(r.Context(), "internal error", slog.String("traceId", traceID(r.Context())),
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
			status, msg = http.StatusInternalServerError, "The carousel is unavailable. Please try again later."
		}
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.WriteHeader(status)
		fmt.Fprintf(w, errorPage, html.EscapeString(msg))
		return
	}
	page, csp := s.carouselPageBytes()
	h.Set("Content-Security-Policy", csp)
	h.Set("Content-Length", strconv.Itoa(len(page)))
	w.Write(page)
}

// errorPage is the carousel's plain error page; %s is the escaped message.
const errorPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Carousel unavailable</title>
<style>html,body{margin:0;height:100%%;background:#111;color:#ddd;font:1.2rem system-ui,sans-serif}
body{display:flex;align-items:center;justify-content:center;text-align:center;padding:1em;box-sizing:border-box}</style>
</head><body><p>%s</p></body></html>
`

// carouselPageBytes returns the page and its Content-Security-Policy. The
// policy allows exactly the page's inline script (by hash), its inline
// style, images from anywhere (operators host them) and requests to posgate
// only.
func (s *Server) carouselPageBytes() ([]byte, string) {
	c := &s.content
	c.pageOnce.Do(func() {
		c.page = []byte(carouselHTML)
		script := carouselHTML[strings.Index(carouselHTML, "<script>")+len("<script>") : strings.Index(carouselHTML, "</script>")]
		sum := sha256.Sum256([]byte(script))
		c.csp = "default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline'; connect-src 'self'; " +
			"script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
	})
	return c.page, c.csp
}

// carouselContent is what the page polls for.
type carouselContent struct {
	PosStatus   posgate.PosStatus `json:"posStatus"`
	PollSeconds int               `json:"pollSeconds"`
	Slides      []CarouselSlide   `json:"slides"`
}

// slidesFor returns the slides the link's terminal shows now, and the
// place's status: none while the company, location or terminal is disabled
// or the carousel is switched off.
func (s *Server) slidesFor(ctx context.Context, l carouselLinkData) ([]CarouselSlide, posgate.PosStatus, error) {
	loc, err := s.store.FindLocation(ctx, l.POSSystemID, l.LocationID)
	if err != nil {
		return nil, "", err
	}
	term, err := s.store.FindTerminal(ctx, l.POSSystemID, l.LocationID, l.TerminalID)
	if err != nil {
		return nil, "", err
	}
	if loc.CompanyID != l.CompanyID || placeStatus(loc, posgate.FeatureCarousel) != posgate.PosAccepted || term.Status != posgate.StatusActive {
		return []CarouselSlide{}, posgate.PosDisabled, nil
	}
	stored, err := s.store.ListSlides(ctx, l.POSSystemID, l.CompanyID)
	if err != nil {
		return nil, "", err
	}
	out := make([]CarouselSlide, 0, len(stored))
	for _, sl := range stored {
		out = append(out, CarouselSlide{SlideID: sl.ID, ImageURL: sl.ImageURL, Title: sl.Title, Text: sl.Text, DurationSeconds: sl.DurationSeconds})
	}
	if s.cfg.PromotionSlides != nil {
		extra, err := s.cfg.PromotionSlides(ctx, l.POSSystemID, l.CompanyID, l.LocationID, s.now())
		if err != nil {
			return nil, "", fmt.Errorf("promotion slides: %w", err)
		}
		out = append(out, extra...)
	}
	return out, posgate.PosAccepted, nil
}

func (s *Server) carouselContent(r *http.Request) (int, any, error) {
	l := r.Context().Value(carouselLinkKey{}).(carouselLinkData)
	slides, st, err := s.slidesFor(r.Context(), l)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{carouselContent{PosStatus: st, PollSeconds: max(1, int(s.carouselPoll()/time.Second)), Slides: slides}}, nil
}

// impressionRequest is what the page posts when it shows a slide.
type impressionRequest struct {
	SlideID *string `json:"slideId"`
}

// Validate requires the slide id.
func (q *impressionRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "slideId", q.SlideID)
	return v.Err()
}

type impressionResult struct {
	SlideID  string `json:"slideId"`
	Recorded bool   `json:"recorded"`
}

// recordImpression counts one showing of a slide at the link's terminal.
// Only a slide the terminal's carousel holds now is counted (404 else); a
// disabled place records nothing (recorded false).
func (s *Server) recordImpression(r *http.Request, req *impressionRequest) (int, any, error) {
	ctx := r.Context()
	l := ctx.Value(carouselLinkKey{}).(carouselLinkData)
	slides, st, err := s.slidesFor(ctx, l)
	if err != nil {
		return 0, nil, err
	}
	out := impressionResult{SlideID: *req.SlideID}
	if st != posgate.PosAccepted {
		return http.StatusOK, envelope{out}, nil
	}
	found := false
	for _, sl := range slides {
		found = found || sl.SlideID == *req.SlideID
	}
	if !found {
		return 0, nil, posgate.Errorf(posgate.ENOTFOUND, "Slide '%s' is not in this carousel.", *req.SlideID)
	}
	if err := s.store.RecordImpression(ctx, &posgate.Impression{POSSystemID: l.POSSystemID, CompanyID: l.CompanyID,
		LocationID: l.LocationID, TerminalID: l.TerminalID, SlideID: *req.SlideID, At: s.now()}); err != nil {
		return 0, nil, err
	}
	out.Recorded = true
	return http.StatusOK, envelope{out}, nil
}

// receiptPromotionResult is interface.md §2.10.
type receiptPromotionResult struct {
	PrimaryText   string            `json:"primaryText"`
	SecondaryText string            `json:"secondaryText"`
	ImageURL      string            `json:"imageUrl"`
	PosStatus     posgate.PosStatus `json:"posStatus"`
}

// receiptPromotion is endpoint 6: the location's receipt promotion, else
// the company default; NotAvailable with empty strings when neither is set,
// Disabled when the company or location is disabled or the feature is off.
func (s *Server) receiptPromotion(r *http.Request) (int, any, error) {
	ctx := r.Context()
	posSystemID := r.PathValue("posSystemId")
	loc, err := s.findLocation(ctx, posSystemID, r.PathValue("posLocationId"))
	if err != nil {
		return 0, nil, err
	}
	if placeStatus(loc, posgate.FeatureReceiptPromotion) != posgate.PosAccepted {
		return http.StatusOK, envelope{receiptPromotionResult{PosStatus: posgate.PosDisabled}}, nil
	}
	p, err := s.store.EffectiveReceiptPromotion(ctx, posSystemID, loc.CompanyID, loc.ID)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return http.StatusOK, envelope{receiptPromotionResult{PosStatus: posgate.PosNotAvailable}}, nil
	} else if err != nil {
		return 0, nil, err
	}
	img, err := s.qrURL(ctx, p.TargetURL)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{receiptPromotionResult{PrimaryText: p.PrimaryText, SecondaryText: p.SecondaryText, ImageURL: img, PosStatus: posgate.PosAccepted}}, nil
}

// qrURL is the URL of the QR code image of target. The URL carries the
// target itself, signed, so the image never changes for a URL (it is
// cacheable for good) and posgate renders only targets an operator set.
func (s *Server) qrURL(ctx context.Context, target string) (string, error) {
	sig, err := s.sign(ctx, "qr", target)
	if err != nil {
		return "", err
	}
	q := url.Values{"d": {base64.RawURLEncoding.EncodeToString([]byte(target))}, "sig": {sig}}
	return s.cfg.BaseURL + "/receipt/qr.png?" + q.Encode(), nil
}

// receiptQR serves the PNG QR code of a signed target, sized for the
// thermal printer named by ?size= (58mm, the default, or 80mm).
func (s *Server) receiptQR(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size := q.Get("size")
	if size == "" {
		size = "58mm"
	}
	px, ok := qrSizes[size]
	if !ok || len(q["size"]) > 1 {
		v := posgate.ValidationError{}
		v.Add("size", "The size parameter must be 58mm or 80mm.")
		s.writeError(w, r, v.Err())
		return
	}
	target, err := base64.RawURLEncoding.DecodeString(q.Get("d"))
	valid := err == nil && len(target) > 0 && len(q["d"]) == 1 && len(q["sig"]) == 1
	if valid {
		if valid, err = s.verify(r.Context(), q.Get("sig"), "qr", string(target)); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if !valid {
		s.writeError(w, r, posgate.Errorf(posgate.EFORBIDDEN, "This QR code link is not valid."))
		return
	}
	sum := sha256.Sum256([]byte(size + "\n" + string(target)))
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	if match := r.Header.Get("If-None-Match"); match != "" && (match == "*" || strings.Contains(match, etag)) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	img, err := s.cachedQR(etag, string(target), px)
	if err != nil {
		h.Del("ETag")
		h.Del("Cache-Control")
		s.writeError(w, r, err)
		return
	}
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(img)))
	w.Write(img)
}

// renderQR draws target's QR code (error correction M, 4-module quiet
// zone) as a px × px black-and-white PNG. Every module is the same whole
// number of pixels, centred: thermal printers print dots, and uneven
// modules scan badly.
func renderQR(target string, px int) ([]byte, error) {
	code, err := qrcode.New(target, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("QR code: %w", err)
	}
	bits := code.Bitmap() // includes the quiet zone
	n := len(bits)
	scale := px / n
	if scale < 1 {
		return nil, fmt.Errorf("QR code: %d modules do not fit %d pixels", n, px)
	}
	off := (px - n*scale) / 2
	img := image.NewPaletted(image.Rect(0, 0, px, px), color.Palette{color.White, color.Black}) // a 1-bit PNG
	for y, row := range bits {
		for x, dark := range row {
			if !dark {
				continue
			}
			for dy := range scale {
				line := img.Pix[(off+y*scale+dy)*img.Stride:]
				for dx := range scale {
					line[off+x*scale+dx] = 1
				}
			}
		}
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&b, img); err != nil {
		return nil, fmt.Errorf("QR code: %w", err)
	}
	return b.Bytes(), nil
}
