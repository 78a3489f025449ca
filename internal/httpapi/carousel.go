package httpapi

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

//go:embed carousel.html
var carouselHTML string

// carousel returns a terminal's carousel URL (docs/api.md §7.1).
func (s *Server) carousel(r *http.Request, req *service.CarouselRequest) (int, any, error) {
	return enveloped(s.svc.Carousel(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

type carouselLinkKey struct{}

// linkOf returns the carousel link carouselLink put in the context.
func linkOf(ctx context.Context) service.CarouselLink {
	l, _ := ctx.Value(carouselLinkKey{}).(service.CarouselLink)
	return l
}

// carouselLink guards the carousel page's data routes: they are authorised
// by the signed link in their query (the page passes its own on), not by a
// bearer token, because the customer screen has none. The link is checked
// before a body is read; the use cases check it again themselves.
func (s *Server) carouselLink(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		l := service.ParseCarouselQuery(r.URL.Query())
		if err := s.svc.CheckCarouselLink(r.Context(), l); err != nil {
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

// carouselPageState is the carousel page and its Content-Security-Policy,
// made on first use.
type carouselPageState struct {
	once sync.Once
	page []byte
	csp  string
}

// carouselPage serves the carousel page for a valid link. Its errors are
// answered by carouselErrors as a plain HTML page: a customer screen must never
// show a JSON problem.
func (s *Server) carouselPage(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	// The URL carries the link's signature: never send it to the hosts of
	// the slides' images.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	if err := s.svc.CheckCarouselLink(r.Context(), service.ParseCarouselQuery(r.URL.Query())); err != nil {
		return err
	}
	page, csp := s.carouselPageBytes()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("Content-Length", strconv.Itoa(len(page)))
	w.Write(page)
	return nil
}

// carouselErrors adapts the carousel page's handler: its errors are
// answered as a plain HTML page (403 with the message for a refused link,
// 500 with a generic one, logged with the trace id, for anything else).
func (s *Server) carouselErrors(fn func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := fn(w, r)
		if err == nil {
			return
		}
		status, msg := http.StatusForbidden, posgate.ErrorMessage(err)
		if posgate.ErrorCode(err) != posgate.EFORBIDDEN {
			s.log.ErrorContext(r.Context(), "internal error", slog.String("traceId", traceID(r.Context())),
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
			status, msg = http.StatusInternalServerError, "The carousel is unavailable. Please try again later."
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.WriteHeader(status)
		fmt.Fprintf(w, errorPage, html.EscapeString(msg))
	}
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
	c := &s.carouselPageState
	c.once.Do(func() {
		c.page = []byte(carouselHTML)
		script := carouselHTML[strings.Index(carouselHTML, "<script>")+len("<script>") : strings.Index(carouselHTML, "</script>")]
		sum := sha256.Sum256([]byte(script))
		c.csp = "default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline'; connect-src 'self'; " +
			"script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
	})
	return c.page, c.csp
}

// carouselContent answers the page's poll for slides.
func (s *Server) carouselContent(r *http.Request) (int, any, error) {
	return enveloped(s.svc.CarouselContent(r.Context(), linkOf(r.Context())))
}

// recordImpression counts one showing of a slide.
func (s *Server) recordImpression(r *http.Request, req *service.ImpressionRequest) (int, any, error) {
	return enveloped(s.svc.RecordImpression(r.Context(), linkOf(r.Context()), req))
}
