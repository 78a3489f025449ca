// Package httpapi is posgate's HTTP adapter: the POS API, the operator API,
// health and the OpenAPI document, on the standard library's ServeMux. Every
// route is listed in one place, routes.
package httpapi

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth"
	"github.com/posgate/posgate/internal/buildinfo"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/openapi"
	"github.com/posgate/posgate/internal/service"
)

// Config holds the HTTP layer's settings.
type Config struct {
	// Sandbox registers the sandbox clock routes (docs/api.md §20): set
	// only on a demo server.
	Sandbox bool
	// Recordings are a demo server's recordings of its POS clients' calls
	// (docs/api.md §20.3), served with the sandbox routes; nil: none.
	Recordings Recordings
	// BaseURL and AuthURL are the public addresses posgate advertises
	// ({base_url} and {auth_url}, docs/api.md §1.1).
	BaseURL string
	AuthURL string
	// MaxBodyBytes caps request bodies of ordinary routes (413 beyond).
	MaxBodyBytes int64
	// MaxImportBodyBytes caps the promotion import's body, and
	// ImportTimeout bounds how long that request may take to arrive and be
	// answered (see importBody).
	MaxImportBodyBytes int64
	ImportTimeout      time.Duration
	Logger             *slog.Logger

	// RateLimit is the rule of the per-client rate limits (docs/api.md
	// §16.1), asked again every RateLimitRefresh (default
	// DefaultRateLimitRefresh); nil: no rate limits.
	RateLimit        RateLimitRule
	RateLimitRefresh time.Duration
	// MaxInFlight bounds the requests served at once (0: no bound);
	// MaxQueued more may wait up to QueueWait for a slot, the rest get 503
	// (docs/api.md §16.3). MaxImports caps the imports running at once (0:
	// no cap).
	MaxInFlight int
	MaxQueued   int
	QueueWait   time.Duration
	MaxImports  int
	// Observer receives the measurements of every request (internal/metrics);
	// nil: none are kept.
	Observer Observer
	// Now is the rate limits' clock; default time.Now.
	Now func() time.Time
	// Instance identifies this process in /healthz; empty: a random id
	// made by New, so that two processes never answer the same one.
	Instance string
	// MaxStreams bounds the terminal channel's streams open on the
	// instance, MaxClientStreams those of one client (docs/api.md §25.4);
	// StreamHeartbeat is how often an idle stream sends a comment line.
	// 0: the defaults.
	MaxStreams       int
	MaxClientStreams int
	StreamHeartbeat  time.Duration
	// TerminalFeed is the service's (service.Config.TerminalFeed): the
	// drain ends its streams. nil: none to end.
	TerminalFeed *service.TerminalFeed
}

// Observer receives what the HTTP layer measures. Request is called once
// per request with the ServeMux pattern that served it.
type Observer interface {
	Request(pattern string, status int, elapsed time.Duration)
	Shed(reason string)
	RateLimited(kind string)
}

type nopObserver struct{}

func (nopObserver) Request(string, int, time.Duration) {}
func (nopObserver) Shed(string)                        {}
func (nopObserver) RateLimited(string)                 {}

// Server serves posgate's HTTP surface: it decodes requests, calls the use
// cases of internal/service and encodes their answers.
type Server struct {
	svc  *service.Service
	auth *auth.Auth
	cfg  Config
	log  *slog.Logger

	carouselPageState carouselPageState
	qr                qrCache

	obs      Observer
	limiter  *clientLimiter // nil: no rate limits
	inFlight *slots         // nil: no bound
	imports  *slots         // nil: no cap
	shedLog  *shedLog
	draining atomic.Bool
	conns    connStates // idle keep-alive connections (drain.go)
	streams  *streamBounds
}

// New returns a Server; zero Config fields get their defaults.
func New(svc *service.Service, a *auth.Auth, cfg Config) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 10
	}
	if cfg.MaxImportBodyBytes <= 0 {
		cfg.MaxImportBodyBytes = DefaultMaxImportBodyBytes
	}
	if cfg.ImportTimeout <= 0 {
		cfg.ImportTimeout = DefaultImportTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Instance == "" {
		cfg.Instance = uuid.NewString()
	}
	cfg.MaxStreams = cmp.Or(max(cfg.MaxStreams, 0), DefaultMaxStreams)
	cfg.MaxClientStreams = cmp.Or(max(cfg.MaxClientStreams, 0), DefaultMaxClientStreams)
	cfg.StreamHeartbeat = cmp.Or(max(cfg.StreamHeartbeat, 0), DefaultStreamHeartbeat)
	if cfg.TerminalFeed == nil {
		cfg.TerminalFeed = service.NewTerminalFeed()
	}
	s := &Server{svc: svc, auth: a, cfg: cfg, log: cfg.Logger, obs: cfg.Observer,
		inFlight: newSlots(cfg.MaxInFlight, cfg.MaxQueued, cfg.QueueWait),
		imports:  newSlots(cfg.MaxImports, 0, 0), shedLog: &shedLog{log: cfg.Logger, window: shedLogWindow},
		streams: &streamBounds{byClient: map[string]int{}, maxTotal: cfg.MaxStreams, maxOfOne: cfg.MaxClientStreams}}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	if cfg.RateLimit != nil {
		s.limiter = newClientLimiter(cfg.RateLimit, cmp.Or(cfg.RateLimitRefresh, DefaultRateLimitRefresh), cfg.Now)
	}
	return s
}

// InFlight is the number of requests holding an in-flight slot (for the
// metrics).
func (s *Server) InFlight() int { return s.inFlight.inUse() }

// Waiting is the number of requests waiting for an in-flight slot.
func (s *Server) Waiting() int {
	if s.inFlight == nil {
		return 0
	}
	return int(s.inFlight.waiting.Load())
}

// ImportsRunning is the number of imports holding an import slot.
func (s *Server) ImportsRunning() int { return s.imports.inUse() }

// Middleware wraps mux, on which internal/app mounts this server's routes
// beside the identity provider's and the portal's, in the server's
// middleware: trace ids, the access log and the metrics (observe), the
// bound on requests in flight (shed). Every listener's mux goes through
// it.
func (s *Server) Middleware(mux *http.ServeMux) http.Handler {
	return s.observe(mux, s.shed(mux))
}

// TraceID returns the trace id the middleware gave the request of ctx
// ("" outside a request), for the neighbours that log or audit (the
// portal).
func TraceID(ctx context.Context) string { return traceID(ctx) }

// SwaggerRoutes mounts the OpenAPI document, the Swagger UI (docs/api.md
// §21.5) and the start page, where a visitor starts.
func (s *Server) SwaggerRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /swagger/v1/swagger.json", s.swagger)
	mux.HandleFunc("GET /swagger", s.swaggerPage)
	mux.HandleFunc("GET /swagger/{$}", s.swaggerPage)
	mux.HandleFunc("GET /swagger/{file}", s.swaggerFile)
	mux.HandleFunc("GET /{$}", s.startPage)
	mux.HandleFunc("GET /docs", s.startPage)
}

// Routes mounts the API: the POS API, the operator API and the
// customer-facing pages of the carousel and the receipt.
func (s *Server) Routes(mux *http.ServeMux) {
	// POS API (docs/api.md §1.2).
	mux.HandleFunc("POST /pos/{posSystemId}/startInteraction", s.pos(bodyEndpoint(s, posBody, s.startInteraction)))
	mux.HandleFunc("GET /pos/{posSystemId}/location/{posLocationId}/terminal/{terminalId}/events", s.pos(s.terminalEvents))

	// Customer-facing content: carousel (docs/api.md §7) and receipt promotion
	// (§8), the pages and images their URLs lead to (authorised by
	// the signed URL itself), and their operator routes.
	mux.HandleFunc("POST /v2/pos/{posSystemId}/carousel", s.pos(bodyEndpoint(s, posBody, s.carousel)))
	mux.HandleFunc("GET /pos/{posSystemId}/receipt/promotion/location/{posLocationId}", s.pos(s.endpoint(s.receiptPromotion)))
	mux.HandleFunc("GET /carousel", s.carouselErrors(s.carouselPage))
	mux.HandleFunc("GET /carousel/content", s.carouselLink(noStore(s.endpoint(s.carouselContent))))
	mux.HandleFunc("POST /carousel/impressions", s.carouselLink(noStore(bodyEndpoint(s, adminBody, s.recordImpression))))
	mux.HandleFunc("GET /receipt/qr.png", s.rawEndpoint(s.receiptQR))
	const company = "/admin/v1/pos-systems/{posSystemId}/companies/{posCompanyId}"
	mux.HandleFunc("POST "+company+"/slides", s.admin(bodyEndpoint(s, adminBody, s.createSlide)))
	mux.HandleFunc("GET "+company+"/slides", s.admin(s.endpoint(s.listSlides)))
	mux.HandleFunc("GET "+company+"/slides/{slideId}", s.admin(s.endpoint(s.getSlide)))
	mux.HandleFunc("PATCH "+company+"/slides/{slideId}", s.admin(bodyEndpoint(s, adminBody, s.updateSlide)))
	mux.HandleFunc("DELETE "+company+"/slides/{slideId}", s.admin(s.endpoint(s.deleteSlide)))
	mux.HandleFunc("GET "+company+"/carousel", s.admin(s.endpoint(s.getCarouselSettings)))
	mux.HandleFunc("PUT "+company+"/carousel", s.admin(bodyEndpoint(s, adminBody, s.putCarouselSettings)))
	mux.HandleFunc("GET "+company+"/receipt-promotion", s.admin(s.endpoint(s.getReceiptPromotion)))
	mux.HandleFunc("PUT "+company+"/receipt-promotion", s.admin(bodyEndpoint(s, adminBody, s.putReceiptPromotion)))
	mux.HandleFunc("DELETE "+company+"/receipt-promotion", s.admin(s.endpoint(s.deleteReceiptPromotion)))
	mux.HandleFunc("GET "+company+"/receipt-promotions", s.admin(s.endpoint(s.listReceiptPromotions)))
	mux.HandleFunc("GET "+company+"/impressions", s.admin(s.endpoint(s.impressions)))
	const location = "/admin/v1/pos-systems/{posSystemId}/locations/{posLocationId}"
	mux.HandleFunc("GET "+location+"/receipt-promotion", s.admin(s.endpoint(s.getReceiptPromotion)))
	mux.HandleFunc("PUT "+location+"/receipt-promotion", s.admin(bodyEndpoint(s, adminBody, s.putReceiptPromotion)))
	mux.HandleFunc("DELETE "+location+"/receipt-promotion", s.admin(s.endpoint(s.deleteReceiptPromotion)))

	// Coupons and loyalty users: coupon search, v2 coupon lookup
	// and v2 loyalty-card user lookup (docs/api.md §5, §6),
	// and their operator routes.
	mux.HandleFunc("POST /pos/{posSystemId}/coupon/couponCode/search", s.pos(bodyEndpoint(s, strictPOSBody, s.searchCoupons)))
	mux.HandleFunc("POST /v2/pos/{posSystemId}/coupon/couponCodes/lookup", s.pos(bodyEndpoint(s, posBody, s.lookupCoupon)))
	mux.HandleFunc("POST /v2/pos/{posSystemId}/loyaltyCard/users/lookup", s.pos(bodyEndpoint(s, posBody, s.lookupUsers)))
	mux.HandleFunc("GET /pos/{posSystemId}/coupon/active/locationId/{posLocationId}", s.pos(s.endpoint(s.activeCoupons)))
	mux.HandleFunc("POST "+company+"/coupons", s.admin(bodyEndpoint(s, adminBody, s.createCoupon)))
	mux.HandleFunc("POST "+company+"/coupons/import", s.admin(s.importSlot(s.cappedEndpoint(couponImportBodyBytes, s.importCoupons))))
	mux.HandleFunc("GET "+company+"/coupons/{code}", s.admin(s.endpoint(s.getCoupon)))
	mux.HandleFunc("POST "+company+"/coupons/{code}/cancel", s.admin(s.endpoint(s.setCouponStatus(posgate.CouponCancelled))))
	mux.HandleFunc("POST "+company+"/coupons/{code}/redeem", s.admin(s.endpoint(s.setCouponStatus(posgate.CouponRedeemed))))
	mux.HandleFunc("POST "+company+"/loyalty-users", s.admin(bodyEndpoint(s, adminBody, s.createLoyaltyUser)))
	mux.HandleFunc("GET "+company+"/loyalty-users/{userId}", s.admin(s.endpoint(s.getLoyaltyUser)))
	mux.HandleFunc("PATCH "+company+"/loyalty-users/{userId}", s.admin(bodyEndpoint(s, adminBody, s.updateLoyaltyUser)))

	// Webhook endpoints and their deliveries (docs/api.md §19).
	const hook = company + "/webhooks/{endpointId}"
	mux.HandleFunc("POST "+company+"/webhooks", s.admin(bodyEndpoint(s, adminBody, s.createWebhook)))
	mux.HandleFunc("GET "+company+"/webhooks", s.admin(s.endpoint(s.listWebhooks)))
	mux.HandleFunc("GET "+hook, s.admin(s.endpoint(s.getWebhook)))
	mux.HandleFunc("PATCH "+hook, s.admin(bodyEndpoint(s, adminBody, s.updateWebhook)))
	mux.HandleFunc("DELETE "+hook, s.admin(s.endpoint(s.deleteWebhook)))
	mux.HandleFunc("POST "+hook+"/rotate-secret", s.admin(s.endpoint(s.rotateWebhookSecret)))
	mux.HandleFunc("POST "+hook+"/test", s.admin(s.endpoint(s.testWebhook)))
	mux.HandleFunc("GET "+hook+"/deliveries", s.admin(s.endpoint(s.listWebhookDeliveries)))
	mux.HandleFunc("POST "+hook+"/deliveries/redeliver", s.admin(s.endpoint(s.redeliverWebhooks)))
	mux.HandleFunc("POST "+hook+"/deliveries/{deliveryId}/redeliver", s.admin(s.endpoint(s.redeliverWebhook)))

	// Operator API.
	mux.HandleFunc("POST /admin/v1/pos-systems", s.admin(bodyEndpoint(s, adminBody, s.createPOSSystem)))
	mux.HandleFunc("GET /admin/v1/pos-systems", s.admin(s.endpoint(s.listPOSSystems)))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}", s.admin(s.endpoint(s.getPOSSystem)))
	mux.HandleFunc("POST /admin/v1/pos-systems/{posSystemId}/companies", s.admin(bodyEndpoint(s, adminBody, s.createCompany)))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}/companies", s.admin(s.endpoint(s.listCompanies)))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}/companies/{posCompanyId}", s.admin(s.endpoint(s.getCompany)))
	mux.HandleFunc("PATCH /admin/v1/pos-systems/{posSystemId}/companies/{posCompanyId}", s.admin(bodyEndpoint(s, adminBody, s.updateCompany)))
	mux.HandleFunc("POST /admin/v1/pos-systems/{posSystemId}/locations", s.admin(bodyEndpoint(s, adminBody, s.createLocation)))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}/locations", s.admin(s.endpoint(s.listLocations)))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}/locations/{posLocationId}", s.admin(s.endpoint(s.getLocation)))
	mux.HandleFunc("PATCH /admin/v1/pos-systems/{posSystemId}/locations/{posLocationId}", s.admin(bodyEndpoint(s, adminBody, s.updateLocation)))
	mux.HandleFunc("POST /admin/v1/pos-systems/{posSystemId}/locations/{posLocationId}/terminals", s.admin(bodyEndpoint(s, adminBody, s.createTerminal)))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}/locations/{posLocationId}/terminals", s.admin(s.endpoint(s.listTerminals)))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}/locations/{posLocationId}/terminals/{terminalId}", s.admin(s.endpoint(s.getTerminal)))
	mux.HandleFunc("POST /admin/v1/pos-systems/{posSystemId}/locations/{posLocationId}/terminals/{terminalId}/disable", s.admin(s.endpoint(s.setTerminalStatus(posgate.StatusDisabled))))
	mux.HandleFunc("POST /admin/v1/pos-systems/{posSystemId}/locations/{posLocationId}/terminals/{terminalId}/enable", s.admin(s.endpoint(s.setTerminalStatus(posgate.StatusActive))))
	mux.HandleFunc("POST /admin/v1/clients", s.admin(bodyEndpoint(s, adminBody, s.createClient)))
	mux.HandleFunc("GET /admin/v1/clients", s.admin(s.endpoint(s.listClients)))
	mux.HandleFunc("GET /admin/v1/clients/{clientId}", s.admin(s.endpoint(s.getClient)))
	mux.HandleFunc("POST /admin/v1/clients/{clientId}/disable", s.admin(s.endpoint(s.setClientDisabled(true))))
	mux.HandleFunc("POST /admin/v1/clients/{clientId}/enable", s.admin(s.endpoint(s.setClientDisabled(false))))
	mux.HandleFunc("POST /admin/v1/clients/{clientId}/rotate-secret", s.admin(s.endpoint(s.rotateClientSecret)))
	mux.HandleFunc("PUT /admin/v1/clients/{clientId}/rate-limit", s.admin(bodyEndpoint(s, adminBody, s.putClientRateLimit)))
	mux.HandleFunc("DELETE /admin/v1/clients/{clientId}/rate-limit", s.admin(s.endpoint(s.deleteClientRateLimit)))
	mux.HandleFunc("PUT /admin/v1/clients/{clientId}/redirect-uris", s.admin(bodyEndpoint(s, adminBody, s.putClientRedirectURIs)))
	mux.HandleFunc("POST /admin/v1/people", s.admin(bodyEndpoint(s, adminBody, s.createPerson)))
	mux.HandleFunc("GET /admin/v1/people", s.admin(s.endpoint(s.listPeople)))
	mux.HandleFunc("GET /admin/v1/people/{personId}", s.admin(s.endpoint(s.getPerson)))
	mux.HandleFunc("POST /admin/v1/people/{personId}/disable", s.admin(s.endpoint(s.setPersonDisabled(true))))
	mux.HandleFunc("POST /admin/v1/people/{personId}/enable", s.admin(s.endpoint(s.setPersonDisabled(false))))
	mux.HandleFunc("GET /admin/v1/sessions/{sessionId}", s.admin(s.endpoint(s.getSession)))
	mux.HandleFunc("GET /admin/v1/keys", s.admin(s.endpoint(s.listKeys)))
	mux.HandleFunc("POST /admin/v1/keys/rotate", s.admin(s.endpoint(s.rotateKey)))
	if s.cfg.Sandbox {
		mux.HandleFunc("GET /admin/v1/sandbox/clock", s.admin(s.endpoint(s.getSandboxClock)))
		mux.HandleFunc("PUT /admin/v1/sandbox/clock", s.admin(bodyEndpoint(s, adminBody, s.setSandboxClock)))
		mux.HandleFunc("POST /admin/v1/sandbox/clock/advance", s.admin(bodyEndpoint(s, adminBody, s.advanceSandboxClock)))
	}
	if s.cfg.Sandbox && s.cfg.Recordings != nil {
		mux.HandleFunc("GET /admin/v1/sandbox/recordings/{clientId}", s.admin(s.endpoint(s.getRecording)))
		mux.HandleFunc("DELETE /admin/v1/sandbox/recordings/{clientId}", s.admin(s.endpoint(s.forgetRecording)))
	}

	// Promotion import (docs/api.md §9) and its operator side: promotions and
	// the catalogue their category and product ids are checked against.
	mux.HandleFunc("POST /pos/{posSystemId}/company/{posCompanyId}/import/promotions", s.importBody(s.pos(s.importSlot(s.endpoint(s.importPromotions)))))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}/companies/{posCompanyId}/promotions", s.admin(s.endpoint(s.listPromotions)))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}/companies/{posCompanyId}/promotions/{promotionId}", s.admin(s.endpoint(s.getPromotion)))
	mux.HandleFunc("GET /admin/v1/pos-systems/{posSystemId}/companies/{posCompanyId}/catalogue", s.admin(s.endpoint(s.getCatalogue)))
	mux.HandleFunc("PUT /admin/v1/pos-systems/{posSystemId}/companies/{posCompanyId}/catalogue", s.admin(bodyEndpoint(s, adminBody, s.replaceCatalogue)))

	// The catalogue (docs/api.md §17), its operator lists, and promotion
	// evaluation (§18).
	mux.HandleFunc("POST /pos/{posSystemId}/company/{posCompanyId}/import/products", s.importBody(s.pos(s.endpoint(s.importProducts))))
	mux.HandleFunc("POST /pos/{posSystemId}/company/{posCompanyId}/import/productCategories", s.importBody(s.pos(s.endpoint(s.importCategories))))
	mux.HandleFunc("GET "+company+"/products", s.admin(s.endpoint(s.listProducts)))
	mux.HandleFunc("GET "+company+"/categories", s.admin(s.endpoint(s.listCategories)))
	mux.HandleFunc("POST /v2/pos/{posSystemId}/promotions/evaluate", s.pos(bodyEndpoint(s, posBody, s.evaluatePromotions)))

	// Settings lookup (docs/api.md §15.1): a body, or the query on GET.
	mux.HandleFunc("POST /v2/pos/{posSystemId}/settings/lookup", s.pos(bodyEndpoint(s, posBody, s.lookupSettings)))
	mux.HandleFunc("GET /v2/pos/{posSystemId}/settings/lookup", s.pos(s.endpoint(s.lookupSettingsQuery)))
	// Transactions (docs/api.md §13) and their operator routes.
	mux.HandleFunc("POST /pos/{posSystemId}/transaction", s.pos(bodyEndpoint(s, posBody, s.recordTransaction)))
	mux.HandleFunc("POST /v2/pos/{posSystemId}/transactions/batch", s.pos(bodyEndpoint(s, batchBody, s.recordTransactionBatch)))
	mux.HandleFunc("POST /pos/{posSystemId}/coupon/validate/byTransaction", s.pos(bodyEndpoint(s, posBody, s.validateCouponByTransaction)))
	mux.HandleFunc("GET "+company+"/loyalty-program", s.admin(s.endpoint(s.getLoyaltyProgram)))
	mux.HandleFunc("PUT "+company+"/loyalty-program", s.admin(bodyEndpoint(s, adminBody, s.putLoyaltyProgram)))
	mux.HandleFunc("GET "+company+"/transactions", s.admin(s.endpoint(s.listTransactions)))
	// Offline kits and their conflicts (docs/api.md §24).
	mux.HandleFunc("GET /v2/pos/{posSystemId}/locations/{posLocationId}/offline-kit", s.pos(s.rawEndpoint(s.offlineKit)))
	mux.HandleFunc("GET "+company+"/offline-conflicts", s.admin(s.endpoint(s.listOfflineConflicts)))
	mux.HandleFunc("GET "+company+"/transactions/{transactionId}", s.admin(s.endpoint(s.getTransaction)))
	mux.HandleFunc("POST "+company+"/transactions/{transactionId}/refund", s.admin(bodyEndpoint(s, adminBody, s.refundTransaction)))

	// The audit log of operator writes (docs/api.md §22).
	mux.HandleFunc("GET /admin/v1/audit", s.admin(s.endpoint(s.listAudit)))
}

// bodyOpts says how a route reads its body.
type bodyOpts struct {
	strict   bool  // unknown properties are rejected (else ignored)
	jsonOnly bool  // only the JSON content types (the operator API)
	limit    int64 // the body's cap when above --max-body (a batch)
}

var (
	posBody   = bodyOpts{}
	adminBody = bodyOpts{strict: true, jsonOnly: true}
)

// bodyEndpoint adapts a handler with a request body: decode (capped) → fn →
// encode. Validation is the use case's (internal/service), so that the CLI
// gets it too. Every error path returns through writeError, so no handler
// can forget to stop.
func bodyEndpoint[Req any](s *Server, o bodyOpts, fn func(r *http.Request, req *Req) (int, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		var err error
		limit := max(s.cfg.MaxBodyBytes, o.limit)
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		switch {
		case o.jsonOnly && codec.KindOf(r.Header.Get("Content-Type")) != codec.JSON:
			err = errJSONOnly
		case r.ContentLength > limit:
			// Rare: only here is the content type checked before Decode.
			if err = codec.CheckContentType(r.Header.Get("Content-Type")); err == nil {
				err = declaredTooLarge(r, limit)
			}
		default:
			err = codec.Decode(r, &req, codec.Options{DisallowUnknown: o.strict})
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		status, out, err := fn(r, &req)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, r, status, out)
	}
}

// endpoint adapts a handler without a request body.
func (s *Server) endpoint(fn func(r *http.Request) (int, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status, out, err := fn(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, r, status, out)
	}
}

// cappedEndpoint is endpoint for a JSON-only operator handler that reads its
// body itself (a streamed batch), capped at limit bytes or MaxBodyBytes if
// that is more.
func (s *Server) cappedEndpoint(limit int64, fn func(r *http.Request) (int, any, error)) http.HandlerFunc {
	next := s.endpoint(fn)
	limit = max(s.cfg.MaxBodyBytes, limit)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			var err error = errJSONOnly
			if codec.KindOf(r.Header.Get("Content-Type")) == codec.JSON {
				err = declaredTooLarge(r, limit)
			}
			s.writeError(w, r, err)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next(w, r)
	}
}

// errJSONOnly is the 415 of the routes that take JSON only (the operator
// API, the carousel page's impressions).
var errJSONOnly error = posgate.Errorf(posgate.EUNSUPPORTED, "Send the body as application/json.")

// declaredTooLarge is the 413 of a body whose Content-Length already says
// it is over limit: answered at once, before a byte of it is read, rather
// than after waiting up to the read timeout for a body that may never come
// (docs/api.md §2.8). The content type is checked before it (415 before
// 413, §2.7).
func declaredTooLarge(r *http.Request, limit int64) error {
	if r.ContentLength <= limit {
		return nil
	}
	return posgate.Errorf(posgate.ETOOLARGE, "The request body is larger than %d bytes.", limit)
}

// health is the /healthz answer: the process serves, which build it runs
// (internal/buildinfo) and which process it is.
type health struct {
	Status string `json:"status"`
	buildinfo.Info
	Instance string `json:"instance"`
}

// Healthz answers that the process serves (GET /healthz), with its build
// and instance.
func (s *Server) Healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, health{Status: "ok", Info: buildinfo.Read(), Instance: s.cfg.Instance})
}

// Instance is the id that names this process in /healthz.
func (s *Server) Instance() string {
	return s.cfg.Instance
}

// Readyz (GET /readyz) answers 503 while the store cannot serve or the
// instance drains, so a load balancer takes the instance out instead of
// sending it POS traffic that would fail.
func (s *Server) Readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if s.draining.Load() {
		writeJSON(w, r, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	if err := s.svc.Ready(ctx); err != nil {
		s.log.WarnContext(ctx, "not ready", slog.Any("err", err))
		writeJSON(w, r, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) swagger(w http.ResponseWriter, r *http.Request) {
	doc, err := openapi.Document(s.cfg.BaseURL, s.cfg.AuthURL)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(doc)
}

// NotFound answers what no route of mux took: 405 with Allow when the path
// exists for other methods, else 404; both as problem documents. (With a
// catch-all route the ServeMux never answers 405 itself.) Mount it last,
// at "/".
func (s *Server) NotFound(mux *http.ServeMux) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			probe := &http.Request{Method: m, URL: r.URL, Host: r.Host}
			if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeProblem(w, r, http.StatusMethodNotAllowed, "The method "+r.Method+" is not allowed here; allowed: "+strings.Join(allow, ", ")+".", nil)
			return
		}
		writeProblem(w, r, http.StatusNotFound, "No such route: "+r.Method+" "+r.URL.Path+".", nil)
	}
}
