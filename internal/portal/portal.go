// Package portal is posgate's web portal for operators (docs/api.md §23):
// server-rendered pages at /portal for the people who sign in (§21). It is
// an adapter like the operator API: every page calls the use cases of
// internal/service with the signed-in person's principal, so that the same
// rules (reach, switches, validation) and the same audit log apply; its
// writes are recorded with the channel "portal".
package portal

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth"
	"github.com/posgate/posgate/internal/service"
)

//go:embed templates/*.html static/*
var files embed.FS

// ClientID is the client id of a person's principal in the portal: the
// audit log names it as the client a person acted through.
const ClientID = "portal"

// principalTTL is how long a page's principal is valid; a page needs it
// only for the request it answers.
const principalTTL = time.Minute

// Config holds what the portal needs besides the use cases.
type Config struct {
	// TraceID returns the trace id of the request (docs/api.md §16.5) for
	// the audit log; nil: none.
	TraceID func(ctx context.Context) string
	// Now is the clock of the principals and the dashboard; default
	// time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Portal serves the pages.
type Portal struct {
	svc   *service.Service
	auth  *auth.Auth
	cfg   Config
	log   *slog.Logger
	pages map[string]*template.Template
}

// New returns the portal of svc, signing people in through a (which must
// have been built with People).
func New(svc *service.Service, a *auth.Auth, cfg Config) *Portal {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.TraceID == nil {
		cfg.TraceID = func(context.Context) string { return "" }
	}
	p := &Portal{svc: svc, auth: a, cfg: cfg, log: cfg.Logger, pages: map[string]*template.Template{}}
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		p.pages[name] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", n))
	}
	return p
}

// Routes registers the portal's routes on mux; the HTTP adapter's one
// routes function calls it (internal/httpapi).
func (p *Portal) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /portal/static/{file}", p.static)
	// Browsers ask every site for /favicon.ico: the portal's icon answers
	// for the portal, the sign-in pages and the Swagger UI alike.
	mux.HandleFunc("GET /favicon.ico", p.favicon)
	mux.HandleFunc("GET /portal", p.page(p.dashboard))
	mux.HandleFunc("GET /portal/{$}", p.page(p.dashboard))
	mux.HandleFunc("GET /portal/terminals", p.page(p.terminals))
	mux.HandleFunc("POST /portal/terminals", p.page(p.registerTerminal))
	mux.HandleFunc("POST /portal/terminals/{pos}/{location}/{terminal}/{action}", p.page(p.setTerminalStatus))
	mux.HandleFunc("GET /portal/locations/{pos}/{location}", p.page(p.location))
	mux.HandleFunc("POST /portal/locations/{pos}/{location}", p.page(p.updateLocation))
	mux.HandleFunc("GET /portal/companies/{pos}/{company}", p.page(p.company))
	mux.HandleFunc("POST /portal/companies/{pos}/{company}", p.page(p.updateCompany))
	mux.HandleFunc("GET /portal/places", p.page(p.places))
	mux.HandleFunc("POST /portal/pos-systems", p.page(p.createPOSSystem))
	mux.HandleFunc("POST /portal/companies", p.page(p.createCompany))
	mux.HandleFunc("POST /portal/locations", p.page(p.createLocation))
	mux.HandleFunc("POST /portal/locations/{pos}/{location}/{action}", p.page(p.setLocationStatus))
	mux.HandleFunc("POST /portal/companies/{pos}/{company}/loyalty-program", p.page(p.putLoyaltyProgram))
	mux.HandleFunc("GET /portal/coupons", p.page(p.coupons))
	mux.HandleFunc("POST /portal/coupons", p.page(p.issueCoupon))
	mux.HandleFunc("POST /portal/coupons/import", p.page(p.importCoupons))
	mux.HandleFunc("POST /portal/coupons/{pos}/{company}/{code}/{action}", p.page(p.setCouponStatus))
	mux.HandleFunc("GET /portal/loyalty-users", p.page(p.loyaltyUsers))
	mux.HandleFunc("POST /portal/loyalty-users/{pos}/{company}/{user}", p.page(p.adjustLoyaltyUser))
	mux.HandleFunc("GET /portal/content", p.page(p.content))
	mux.HandleFunc("POST /portal/slides", p.page(p.createSlide))
	mux.HandleFunc("POST /portal/slides/{pos}/{company}/{slide}", p.page(p.updateSlide))
	mux.HandleFunc("POST /portal/slides/{pos}/{company}/{slide}/delete", p.page(p.deleteSlide))
	mux.HandleFunc("POST /portal/receipt-promotions", p.page(p.putReceiptPromotion))
	mux.HandleFunc("POST /portal/receipt-promotions/delete", p.page(p.deleteReceiptPromotion))
	mux.HandleFunc("GET /portal/transactions", p.page(p.transactions))
	mux.HandleFunc("GET /portal/catalogue", p.page(p.catalogue))
	mux.HandleFunc("POST /portal/catalogue/import", p.page(p.importFile))
	mux.HandleFunc("GET /portal/webhooks", p.page(p.webhooks))
	mux.HandleFunc("POST /portal/webhooks", p.page(p.createWebhook))
	mux.HandleFunc("POST /portal/webhooks/{pos}/{company}/{endpoint}/{action}", p.page(p.webhookAction))
	mux.HandleFunc("GET /portal/audit", p.page(p.audit))
	mux.HandleFunc("GET /portal/people", p.page(p.people))
	mux.HandleFunc("POST /portal/people", p.page(p.createPerson))
	mux.HandleFunc("POST /portal/people/{person}/{action}", p.page(p.setPersonDisabled))
	mux.HandleFunc("GET /portal/clients", p.page(p.clients))
	mux.HandleFunc("POST /portal/clients", p.page(p.createClient))
	mux.HandleFunc("POST /portal/clients/{client}/{action}", p.page(p.setClientDisabled))
	mux.HandleFunc("/portal/", p.page(func(q *request) error { return posgate.Errorf(posgate.ENOTFOUND, "There is no such page.") }))
}

// request is one page request of a signed-in person.
type request struct {
	w      http.ResponseWriter
	r      *http.Request
	ctx    context.Context
	person *posgate.Person
	pr     *posgate.Principal
	csrf   string
	// notice is a message of the change that led here (the done query
	// parameter of a redirect after a post).
	notice string
}

// page adapts a page: the person must be signed in (else the sign-in page,
// which leads back here), a post must pass the form checks (a same-origin
// Origin and the CSRF token, docs/api.md §21.2) before anything is read,
// and an error fn returns is shown as a page with its status.
func (p *Portal) page(fn func(q *request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		person, err := p.auth.SignedIn(r)
		if err != nil {
			p.fail(w, r, nil, err)
			return
		}
		if person == nil {
			target := "/portal"
			if r.Method == http.MethodGet {
				target = r.URL.RequestURI()
			}
			http.Redirect(w, r, auth.LoginPath+"?ReturnUrl="+url.QueryEscape(target), http.StatusSeeOther)
			return
		}
		q := &request{w: w, r: r, person: person,
			pr: person.Principal(ClientID, []string{posgate.ScopeAdmin}, p.cfg.Now().Add(principalTTL))}
		q.ctx = posgate.WithAuditOrigin(r.Context(), posgate.AuditOrigin{Channel: posgate.ChannelPortal,
			TraceID: p.cfg.TraceID(r.Context()), UserAgent: truncate(r.UserAgent(), 256)})
		if r.Method == http.MethodPost {
			// A file upload is multipart: read it (capped) first, so that
			// CheckForm finds its CSRF field among the parsed values.
			if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
				r.Body = http.MaxBytesReader(w, r.Body, maxCouponUpload)
				if err := r.ParseMultipartForm(8 << 20); err != nil {
					q.csrf = p.auth.CSRFToken(w, r)
					p.fail(w, r, q, posgate.Errorf(posgate.EINVALID, "The upload could not be read (at most %d MiB).", maxCouponUpload>>20))
					return
				}
			}
			if err := p.auth.CheckForm(r); err != nil {
				q.csrf = p.auth.CSRFToken(w, r)
				p.fail(w, r, q, err)
				return
			}
		}
		q.csrf = p.auth.CSRFToken(w, r)
		// The notice of a change is shown on the page a post redirected
		// to; a link from elsewhere (or typed) carrying one shows nothing,
		// so that nobody can make the portal say their words.
		if site := r.Header.Get("Sec-Fetch-Site"); site == "" || site == "same-origin" {
			q.notice = truncate(r.URL.Query().Get("done"), 200)
		}
		if err := fn(q); err != nil {
			p.fail(w, r, q, err)
		}
	}
}

// view is what the layout shows around a page's own data.
type view struct {
	Title  string
	Nav    string
	Person *posgate.Person
	CSRF   string
	Notice string
	Error  string
	Fields map[string][]string
	// Admin is whether the person reaches the whole installation (the
	// API clients page). Companies is whether the person sees companies
	// (not a location manager): the pages of what belongs to a company
	// (content, coupons, loyalty, catalogue, webhooks) and the form that
	// adds a location. NewCompanies is whether the person may register
	// companies. The menus and forms show only what the person may use.
	Admin        bool
	Companies    bool
	NewCompanies bool
	Data         any
}

// render writes page name with status.
func (p *Portal) render(q *request, status int, name string, v view) error {
	t, ok := p.pages[name]
	if !ok {
		return errors.New("portal: no page " + name)
	}
	v.Person, v.CSRF, v.Admin = q.person, q.csrf, q.pr.Unrestricted()
	v.Companies, v.NewCompanies = q.pr.SeesCompanies(), service.MayRegisterCompanies(q.pr)
	if v.Notice == "" {
		v.Notice = q.notice
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return err
	}
	q.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q.w.WriteHeader(status)
	_, err := q.w.Write(buf.Bytes())
	return err
}

// redirect answers a successful post: back to a page (Post/Redirect/Get),
// which shows done.
func (q *request) redirect(path, done string) error {
	if done != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "done=" + url.QueryEscape(done)
	}
	http.Redirect(q.w, q.r, path, http.StatusSeeOther)
	return nil
}

// statusOf is the HTTP status of an application error's code.
var statusOf = map[string]int{
	posgate.EINVALID:       http.StatusBadRequest,
	posgate.EUNAUTHORIZED:  http.StatusUnauthorized,
	posgate.EFORBIDDEN:     http.StatusForbidden,
	posgate.ENOTFOUND:      http.StatusNotFound,
	posgate.ECONFLICT:      http.StatusConflict,
	posgate.ETOOLARGE:      http.StatusRequestEntityTooLarge,
	posgate.EUNPROCESSABLE: http.StatusUnprocessableEntity,
}

// fail shows err as a page: an application error with its message, any
// other as "Internal error." (logged with the trace id).
func (p *Portal) fail(w http.ResponseWriter, r *http.Request, q *request, err error) {
	status, ok := statusOf[posgate.ErrorCode(err)]
	msg := posgate.ErrorMessage(err)
	if !ok {
		status, msg = http.StatusInternalServerError, "Internal error."
		if r.Context().Err() == nil {
			p.log.Error("portal: request failed", "path", r.URL.Path, "trace_id", p.cfg.TraceID(r.Context()), "err", err)
		}
	}
	if q == nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		w.Write([]byte(msg + "\n"))
		return
	}
	v := view{Title: http.StatusText(status), Error: msg}
	var pe *posgate.Error
	if ok && errors.As(err, &pe) {
		v.Fields = pe.Fields
	}
	if err := p.render(q, status, "error", v); err != nil {
		p.log.Error("portal: writing an error page failed", "err", err)
	}
}

// formError shows a refused form: a validation (or conflict, or unknown
// reference) error renders the form's page again, with the error's status,
// its message and the fields at fault; nothing was changed. Any other
// error is fail's.
func (p *Portal) formError(q *request, err error, again func(status int, v view) error) error {
	status, ok := statusOf[posgate.ErrorCode(err)]
	if !ok || status == http.StatusUnauthorized {
		return err
	}
	v := view{Error: posgate.ErrorMessage(err)}
	var pe *posgate.Error
	if errors.As(err, &pe) {
		v.Fields = pe.Fields
	}
	return again(status, v)
}

// securityHeaders: the portal's own script and style only, no framing,
// forms only to itself, no caching of pages that hold CSRF tokens.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; "+
		"connect-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// static serves the portal's CSS and JS.
func (p *Portal) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	b, err := files.ReadFile("static/" + name)
	if err != nil || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	switch {
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".ico"):
		w.Header().Set("Content-Type", "image/x-icon")
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(b)
}

// favicon serves the site's icon (static/favicon.ico, 32 × 32).
func (p *Portal) favicon(w http.ResponseWriter, r *http.Request) {
	b, err := files.ReadFile("static/favicon.ico")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/x-icon")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Write(b)
}

// truncate cuts s to at most n bytes, at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
