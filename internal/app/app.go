// Package app wires posgate together for `posgate serve`: it opens the
// store, binds the listeners, builds the identity provider, the use cases,
// the HTTP API and the portal, mounts their routes side by side (routes.go),
// serves, and shuts them down in order. cmd/posgate parses flags into
// Config; end-to-end tests call Serve directly to run the real server
// in-process.
package app

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth"
	"github.com/posgate/posgate/internal/buildinfo"
	"github.com/posgate/posgate/internal/conformance/record"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/httpapi"
	"github.com/posgate/posgate/internal/metrics"
	"github.com/posgate/posgate/internal/portal"
	"github.com/posgate/posgate/internal/postgres"
	"github.com/posgate/posgate/internal/service"
	"github.com/posgate/posgate/internal/sqlite"
	"github.com/posgate/posgate/internal/storecache"
	"github.com/posgate/posgate/internal/storekit"
	"github.com/posgate/posgate/internal/webhook"
)

// Config is everything `posgate serve` can be told.
type Config struct {
	Listen      string // API (and, by default, identity provider) listener
	AuthListen  string // optional own listener for the identity provider
	DebugListen string // optional private listener for pprof; never the public one
	BaseURL     string // advertised {base_url}; derived from Listen when empty
	AuthURL     string // advertised {auth_url} and token issuer; BaseURL (or AuthListen's) when empty
	Database    string // SQLite path / file: URI, or postgres:// URL
	Demo        bool   // load the fixed demo data set before serving, and run on a sandbox clock (docs/api.md §20)
	DemoReset   bool   // with Demo: first delete every other datum, so that the store holds exactly the demo data set
	NoMigrate   bool   // refuse to start on a stale schema instead of migrating

	// KeyEncryption seals the token signing keys at rest (auth.KeyEncryption);
	// nil: they are stored plain, which serve warns about outside the demo.
	KeyEncryption *auth.KeyEncryption

	Audience        string
	TokenTTL        time.Duration
	SessionTTL      time.Duration
	KeyRefresh      time.Duration
	MaxBodyBytes    int64
	ShutdownTimeout time.Duration
	CarouselURLTTL  time.Duration // lifetime of a carousel URL (docs/api.md §7.2)
	CarouselPoll    time.Duration // how often the carousel page looks for changes
	// TransactionMaxAge is how old a submitted transaction's date may be.
	TransactionMaxAge time.Duration

	// CacheTTL is how long found locations, terminals and clients are
	// reused (internal/storecache): the longest a change made by the CLI or
	// another instance stays unseen. Zero turns the cache off (posgate serve
	// sets storecache.DefaultTTL unless told otherwise), so that code which
	// builds a Config sees every change at once unless it opts in.
	CacheTTL time.Duration

	// MaxImportBodyBytes and ImportTimeout are the promotion import's own
	// body cap and request deadline (httpapi.Config); 0: the defaults.
	MaxImportBodyBytes int64
	ImportTimeout      time.Duration

	Logger *slog.Logger
	Now    func() time.Time

	// RateLimit is the default per-client rate limit in requests per second,
	// in bursts of up to RateBurst (default twice RateLimit); 0: clients
	// without a limit of their own are not limited (docs/api.md §16.1).
	RateLimit float64
	RateBurst int
	// MaxInFlight bounds the requests served at once, MaxQueued more wait
	// up to QueueWait, the rest get 503; MaxInFlight 0: no bound. MaxImports
	// caps the imports running at once; 0: no cap (docs/api.md §16.3).
	MaxInFlight int
	MaxQueued   int
	QueueWait   time.Duration
	MaxImports  int
	// AuthClientFailures, AuthAddressFailures and AuthLockout set the token
	// endpoint's lockout (auth.Config; 0: its defaults, negative: off).
	AuthClientFailures  int
	AuthAddressFailures int
	AuthLockout         time.Duration
	// DrainDelay is how long SIGTERM keeps serving with /readyz at 503
	// before the shutdown (docs/api.md §16.4); 0: shut down at once.
	DrainDelay time.Duration
	// MetricsListen is the address of the Prometheus listener
	// (docs/api.md §16.5); empty: no metrics.
	MetricsListen string

	// NoWebhooks keeps this instance from sending webhooks (events are
	// still written to the outbox, for the instances that send).
	NoWebhooks bool
	// WebhooksAllowLoopback lets endpoints be registered on, and deliveries
	// reach, loopback addresses (tests, demos); no other non-public address
	// (docs/api.md §19.1).
	WebhooksAllowLoopback bool
	// WebhookTimeout bounds one delivery attempt (0: 10 s); WebhookRetryFor
	// is how long a delivery is retried before it is dead (0: 72 h).
	WebhookTimeout  time.Duration
	WebhookRetryFor time.Duration
	// WebhookRetention and WebhookDeadRetention are how long delivered and
	// dead deliveries are kept before the sweep deletes them (0: kept).
	WebhookRetention     time.Duration
	WebhookDeadRetention time.Duration

	// MaxStreams and MaxClientStreams bound the terminal channel's streams
	// per instance and per client on it (docs/api.md §25.4; 0: the
	// defaults). StreamHeartbeat (tests) and TerminalPoll (how often the
	// log is read for other instances' entries) are 0 for their defaults.
	MaxStreams       int
	MaxClientStreams int
	StreamHeartbeat  time.Duration
	TerminalPoll     time.Duration
	// ServerTimeout (tests) replaces the API listener's read and write
	// timeouts (60 s), which the terminal channel's streams outlive.
	ServerTimeout time.Duration
}

// Addrs are the addresses Serve bound, reported once it is ready.
type Addrs struct {
	API, Auth, Debug, Metrics net.Addr
	BaseURL, AuthURL          string
}

// IsPostgres reports whether dsn names a PostgreSQL database rather than a
// SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// OpenStore opens the store named by dsn: PostgreSQL for postgres:// URLs,
// SQLite for anything else (a path or a file: URI).
func OpenStore(ctx context.Context, dsn string, noMigrate bool, now func() time.Time) (posgate.Store, error) {
	if IsPostgres(dsn) {
		return postgres.Open(ctx, dsn, postgres.Options{Now: now, NoMigrate: noMigrate})
	}
	return sqlite.Open(ctx, dsn, sqlite.Options{Now: now, NoMigrate: noMigrate})
}

// Serve runs posgate until ctx is done, then finishes in-flight requests
// (up to ShutdownTimeout) and closes the store. ready, when not nil, is
// called once every listener accepts connections.
func Serve(ctx context.Context, cfg Config, ready func(Addrs)) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 20 * time.Second
	}
	clk := newClocks(cfg)
	st, err := openStores(ctx, cfg, clk)
	if err != nil {
		return err
	}
	defer st.store.Close()
	var lc net.ListenConfig
	lns, addrs, err := listen(ctx, &lc, cfg)
	if err != nil {
		return err
	}
	defer lns.close()
	if cfg.Demo {
		// The Swagger UI's redirect URI is on this server's own base URL.
		if err := demo.RegisterSwaggerUI(ctx, st.store, addrs.BaseURL); err != nil {
			return fmt.Errorf("load demo data: %w", err)
		}
	}
	p, err := buildParts(ctx, cfg, clk, st, addrs)
	if err != nil {
		return err
	}
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBG()
	if clk.sandbox != nil {
		if err := watchDemoReset(ctx, bg, st.store, clk.sandbox, p.auth.ClockRestarted, cfg.Logger); err != nil {
			return err
		}
	}
	senderDone := startBackground(bg, cfg, clk, st, p.auth)
	startTerminalChannel(bg, cfg, st.store, p.feed)
	srvs, err := buildServers(ctx, &lc, cfg, st, p, lns, &addrs)
	if err != nil {
		return err
	}
	err = run(ctx, cfg, p.api, srvs, addrs, ready)
	// The sender records the attempts in flight (each bounded by its
	// timeout) before the store closes.
	stopBG()
	<-senderDone
	return err
}

// clocks are the two clocks of an instance. wall is the real clock, for
// what protects the server rather than applies a rule: rate limits and the
// lookup cache's expiry. Every rule about time (tokens, sessions, coupons,
// the store's timestamps) reads now, which in demo mode is the sandbox
// clock (docs/api.md §20).
type clocks struct {
	now, wall func() time.Time
	sandbox   *posgate.SandboxClock // nil unless Config.Demo
}

func newClocks(cfg Config) clocks {
	c := clocks{now: cfg.Now}
	if c.now == nil {
		c.now = time.Now
	}
	c.wall = c.now
	if cfg.Demo {
		c.sandbox = posgate.NewSandboxClock(c.wall)
		c.now = c.sandbox.Now
	}
	return c
}

// stores are the store Serve opened (for the background work and closing)
// and the store the use cases and the identity provider read: the same,
// measured when there are metrics, behind the lookup cache when CacheTTL.
type stores struct {
	store   posgate.Store
	served  posgate.Store
	metrics *metrics.Metrics // nil: no metrics
}

// openStores opens the store, loads the demo data set when asked, and
// wraps it for the metrics and the cache.
func openStores(ctx context.Context, cfg Config, clk clocks) (*stores, error) {
	store, err := OpenStore(ctx, cfg.Database, cfg.NoMigrate, clk.now)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if cfg.Demo {
		load := demo.Load
		if cfg.DemoReset {
			load = demo.Reset
		}
		if err := load(ctx, store); err != nil {
			store.Close()
			return nil, fmt.Errorf("load demo data: %w", err)
		}
	}
	st := &stores{store: store, served: store}
	if cfg.MetricsListen != "" {
		st.metrics = metrics.New()
		instrumentStore(st.metrics, store)
		st.served = st.metrics.Store(st.served)
	}
	if cfg.CacheTTL > 0 {
		st.served = storecache.New(st.served, storecache.Options{TTL: cfg.CacheTTL, Now: clk.wall})
	}
	return st, nil
}

// listeners are the public listeners: the API's and, when AuthListen is
// set, the identity provider's own (nil otherwise).
type listeners struct {
	api, auth net.Listener
}

func (l listeners) close() {
	l.api.Close()
	if l.auth != nil {
		l.auth.Close()
	}
}

// listen binds the public listeners and derives the advertised URLs from
// them where Config leaves them empty.
func listen(ctx context.Context, lc *net.ListenConfig, cfg Config) (listeners, Addrs, error) {
	var lns listeners
	var addrs Addrs
	var err error
	if lns.api, err = lc.Listen(ctx, "tcp", cfg.Listen); err != nil {
		return lns, addrs, fmt.Errorf("listen: %w", err)
	}
	addrs.API = lns.api.Addr()
	addrs.BaseURL = orDefault(cfg.BaseURL, urlOf(lns.api.Addr()))
	addrs.AuthURL = cfg.AuthURL
	if cfg.AuthListen != "" {
		if lns.auth, err = lc.Listen(ctx, "tcp", cfg.AuthListen); err != nil {
			lns.api.Close()
			return lns, addrs, fmt.Errorf("listen (identity provider): %w", err)
		}
		addrs.Auth = lns.auth.Addr()
		addrs.AuthURL = orDefault(addrs.AuthURL, urlOf(lns.auth.Addr()))
	}
	addrs.AuthURL = strings.TrimSuffix(orDefault(addrs.AuthURL, addrs.BaseURL), "/")
	addrs.BaseURL = strings.TrimSuffix(addrs.BaseURL, "/")
	return lns, addrs, nil
}

// parts are what serves requests: the identity provider, the use cases,
// and the two front ends over them, the HTTP API and the portal.
type parts struct {
	auth   *auth.Auth
	svc    *service.Service
	api    *httpapi.Server
	portal *portal.Portal
	// recorder records the POS clients' calls on a demo server
	// (docs/api.md §20.3); nil elsewhere.
	recorder *record.Recorder
	feed     *service.TerminalFeed // the terminal channel's streams
}

// buildParts builds the identity provider, the service and the front ends.
func buildParts(ctx context.Context, cfg Config, clk clocks, st *stores, addrs Addrs) (*parts, error) {
	log := cfg.Logger
	// instance names this process in /healthz and in the start-up line.
	instance := uuid.NewString()
	a, err := auth.New(ctx, st.served, auth.Config{
		Issuer:        addrs.AuthURL,
		Audience:      cfg.Audience,
		TokenTTL:      cfg.TokenTTL,
		KeyRefresh:    cfg.KeyRefresh,
		Now:           clk.now,
		Logger:        log,
		KeyEncryption: cfg.KeyEncryption,

		ClientFailures:  cfg.AuthClientFailures,
		AddressFailures: cfg.AuthAddressFailures,
		Lockout:         cfg.AuthLockout,

		People:  st.served,
		Origins: []string{addrs.BaseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("identity provider: %w", err)
	}
	warnPlainKeys(cfg, log) // the keys loaded without a KEK: they are plain
	// Promotion evaluation's index of a company is revalidated as often as
	// the lookups are cached; without a cache, every evaluation reads it.
	feed := service.NewTerminalFeed()
	promotionTTL := time.Duration(-1)
	if cfg.CacheTTL > 0 {
		promotionTTL = cfg.CacheTTL
	}
	svc := service.New(st.served, service.Config{
		PromotionCacheTTL: promotionTTL,
		BaseURL:           addrs.BaseURL,
		SessionTTL:        cfg.SessionTTL,
		CarouselURLTTL:    cfg.CarouselURLTTL,
		CarouselPoll:      cfg.CarouselPoll,
		TransactionMaxAge: cfg.TransactionMaxAge,
		Keys:              a,
		Kits:              a,
		Now:               clk.now,
		Wall:              clk.wall,
		Sandbox:           clk.sandbox,
		RateLimit:         defaultRateLimit(cfg.RateLimit, cfg.RateBurst),

		WebhookAllowLoopback: cfg.WebhooksAllowLoopback,
		TerminalFeed:         feed,
	})
	rec, recordings := recorder(clk)
	api := httpapi.New(svc, a, httpapi.Config{
		BaseURL:            addrs.BaseURL,
		AuthURL:            addrs.AuthURL,
		MaxBodyBytes:       cfg.MaxBodyBytes,
		MaxImportBodyBytes: cfg.MaxImportBodyBytes,
		ImportTimeout:      cfg.ImportTimeout,
		Logger:             log,

		RateLimit:   svc.RateLimitOf,
		MaxInFlight: cfg.MaxInFlight,
		MaxQueued:   cfg.MaxQueued,
		QueueWait:   cfg.QueueWait,
		MaxImports:  cfg.MaxImports,
		Observer:    observer(st.metrics),
		Now:         clk.wall,
		Sandbox:     clk.sandbox != nil,
		Recordings:  recordings,
		Instance:    instance,

		MaxStreams:       cfg.MaxStreams,
		MaxClientStreams: cfg.MaxClientStreams,
		StreamHeartbeat:  cfg.StreamHeartbeat,
		TerminalFeed:     feed,
	})
	// The portal's dashboard counts the last hours by the use cases' clock.
	p := portal.New(svc, a, portal.Config{TraceID: httpapi.TraceID, Now: clk.now, Logger: log})
	return &parts{auth: a, svc: svc, api: api, portal: p, recorder: rec, feed: feed}, nil
}

// recorder is a demo server's recorder of its POS clients' calls, always
// on there and nowhere else (docs/api.md §20.3), and the same as the HTTP
// layer's Recordings (nil, not a nil pointer, outside the demo).
func recorder(clk clocks) (*record.Recorder, httpapi.Recordings) {
	if clk.sandbox == nil {
		return nil, nil
	}
	rec := record.New(clk.now, clk.wall, 0)
	return rec, rec
}

// startBackground starts the work that runs beside the requests until bg
// is done: the identity provider's key refresh, the sweeps and, unless
// NoWebhooks, the webhook sender, whose end the returned channel reports.
func startBackground(bg context.Context, cfg Config, clk clocks, st *stores, a *auth.Auth) <-chan struct{} {
	log := cfg.Logger
	go a.Run(bg)
	go sweepSessions(bg, st.store, clk.now, cmp.Or(cfg.TransactionMaxAge, service.DefaultTransactionMaxAge), log)
	go webhook.Sweep(bg, st.store, clk.now, webhook.Retention{Delivered: cfg.WebhookRetention, Dead: cfg.WebhookDeadRetention}, log)
	var observeWebhooks webhook.Observer
	if st.metrics != nil {
		observeWebhooks = st.metrics.Webhooks(st.store.WebhookBacklog, !cfg.NoWebhooks)
	}
	senderDone := make(chan struct{})
	if cfg.NoWebhooks {
		close(senderDone)
		return senderDone
	}
	sender := webhook.New(webhook.Config{Store: st.store, Now: clk.now, Wall: clk.wall, Timeout: cfg.WebhookTimeout, RetryFor: cfg.WebhookRetryFor,
		AllowLoopback: cfg.WebhooksAllowLoopback, Observer: observeWebhooks, Logger: log})
	st.store.NotifyWebhooks(sender.Notify)
	go func() {
		defer close(senderDone)
		sender.Run(bg)
	}()
	return senderDone
}

// served is one HTTP server and the listener it serves.
type served struct {
	srv *http.Server
	ln  net.Listener
}

// buildServers gives each listener its server: the public ones (routes),
// and the private debug and metrics listeners when configured, which it
// binds and records in addrs.
func buildServers(ctx context.Context, lc *net.ListenConfig, cfg Config, st *stores, p *parts, lns listeners, addrs *Addrs) ([]served, error) {
	log := cfg.Logger
	api, identity := routes(p, lns.auth != nil)
	srvs := []served{{newServer(api, log), lns.api}}
	if cfg.ServerTimeout > 0 {
		srvs[0].srv.ReadTimeout, srvs[0].srv.WriteTimeout = cfg.ServerTimeout, cfg.ServerTimeout
	}
	if lns.auth != nil {
		srvs = append(srvs, served{newServer(identity, log), lns.auth})
	}
	public := len(srvs)
	closePrivate := func() { // the public listeners are Serve's to close
		for _, s := range srvs[public:] {
			s.ln.Close()
		}
	}
	for _, s := range srvs {
		s.srv.ConnState = p.api.ConnState // the drain waits for idle connections
		// Streams end when the server shuts down, drained or not.
		s.srv.RegisterOnShutdown(p.feed.Close)
	}
	if cfg.DebugListen != "" {
		ln, err := lc.Listen(ctx, "tcp", cfg.DebugListen)
		if err != nil {
			return nil, fmt.Errorf("listen (debug): %w", err)
		}
		addrs.Debug = ln.Addr()
		srvs = append(srvs, served{newServer(debugMux(), log), ln})
	}
	if m := st.metrics; m != nil {
		ln, err := lc.Listen(ctx, "tcp", cfg.MetricsListen)
		if err != nil {
			closePrivate()
			return nil, fmt.Errorf("listen (metrics): %w", err)
		}
		addrs.Metrics = ln.Addr()
		m.Load(p.api.InFlight, p.api.Waiting, p.api.ImportsRunning, p.api.OpenStreams)
		srvs = append(srvs, served{newServer(metricsMux(m), log), ln})
	}
	return srvs, nil
}

// run serves every listener until ctx is done or a server fails, then
// drains (DrainDelay) and shuts the servers down, finishing the requests
// in flight within ShutdownTimeout.
func run(ctx context.Context, cfg Config, api *httpapi.Server, srvs []served, addrs Addrs, ready func(Addrs)) error {
	log := cfg.Logger
	errc := make(chan error, len(srvs))
	for _, s := range srvs {
		go func() { errc <- s.srv.Serve(s.ln) }()
	}
	log.Info("posgate serving", slog.String("api", addrs.API.String()), slog.String("baseUrl", addrs.BaseURL),
		slog.String("authUrl", addrs.AuthURL), slog.Bool("ownIdentityListener", addrs.Auth != nil),
		slog.String("version", buildinfo.Read().String()), slog.String("instance", api.Instance()))
	if ready != nil {
		ready(addrs)
	}

	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			log.Error("server failed", slog.Any("err", err))
		}
	}
	if ctx.Err() != nil {
		// Load balancers see /readyz fail and stop sending; until they do,
		// every request is still served, each with Connection: close. The
		// listeners close once no keep-alive connection is idle, so that
		// none is closed under a request its client is sending.
		api.StartDrain()
		if cfg.DrainDelay > 0 {
			log.Info("draining: /readyz answers 503, still serving", slog.Duration("delay", cfg.DrainDelay))
			time.Sleep(cfg.DrainDelay)
		}
		if n := api.WaitIdleGone(context.WithoutCancel(ctx), 0); n > 0 {
			log.Info("draining: idle connections left to the shutdown", slog.Int("idle", n))
		}
	}
	log.Info("shutting down: finishing in-flight requests", slog.Duration("timeout", cfg.ShutdownTimeout))
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	var firstErr error
	for _, s := range srvs {
		if err := s.srv.Shutdown(sctx); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("shutdown: %w", err)
		}
	}
	return firstErr
}

// warnPlainKeys says, outside the demo, that the signing keys are stored
// unencrypted: whoever copies the database can then mint tokens
// (docs/deployment.md, "Signing keys at rest").
func warnPlainKeys(cfg Config, log *slog.Logger) {
	if cfg.KeyEncryption == nil && !cfg.Demo {
		log.Warn("token signing keys are stored unencrypted: a copy of the database can mint access tokens; " +
			"give a key-encryption key (--key-encryption-key-file or POSGATE_KEY_ENCRYPTION_KEY)")
	}
}

// newServer sets every timeout: a slow or stalled client cannot hold a
// connection or a goroutine for long.
func newServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// metricsMux serves the metrics at /metrics, and nothing else.
func metricsMux(m *metrics.Metrics) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	return mux
}

// instrumentStore publishes the statistics the store offers: its pools, its
// session writer's batches and its group writers' busy time.
func instrumentStore(m *metrics.Metrics, store posgate.Store) {
	if s, ok := store.(interface{ Pools() (read, write *sql.DB) }); ok {
		read, write := s.Pools()
		m.SQLPools(map[string]*sql.DB{"sqlite_read": read, "sqlite_write": write})
	}
	if s, ok := store.(interface{ PoolStat() *pgxpool.Stat }); ok {
		m.PgxPool(s.PoolStat)
	}
	if s, ok := store.(interface{ SessionBatchSizes() storekit.BatchSizes }); ok {
		m.SessionBatches(s.SessionBatchSizes)
	}
	if s, ok := store.(interface {
		GroupWritersBusy() map[string]time.Duration
	}); ok {
		m.GroupWriters(s.GroupWritersBusy)
	}
}

// observer is m as the HTTP layer's Observer; nil when there are no metrics.
func observer(m *metrics.Metrics) httpapi.Observer {
	if m == nil {
		return nil
	}
	return m
}

// defaultRateLimit is the service's default rate limit; zero when rate is.
func defaultRateLimit(rate float64, burst int) posgate.RateLimit {
	if rate <= 0 {
		return posgate.RateLimit{}
	}
	if burst <= 0 {
		burst = max(1, int(2*rate))
	}
	return posgate.RateLimit{RequestsPerSecond: rate, Burst: burst}
}

func debugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// sweepSessions deletes expired sessions, sign-ins, authorization codes,
// refresh tokens and Idempotency-Key records hourly; every instance may run it, the deletes are idempotent. (An expired
// key is refused by its claim anyway: the sweep only frees the space.)
func sweepSessions(ctx context.Context, store posgate.Store, now func() time.Time, maxAge time.Duration, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, err := store.DeleteExpiredSessions(ctx, now().UTC())
			if err != nil {
				log.Warn("sweep sessions", slog.Any("err", err))
			} else if n > 0 {
				log.Info("swept expired sessions", slog.Int64("count", n))
			}
			n, err = store.DeleteExpiredGrants(ctx, now().UTC())
			if err != nil {
				log.Warn("sweep sign-ins and grants", slog.Any("err", err))
			} else if n > 0 {
				log.Info("swept expired sign-ins, codes and refresh tokens", slog.Int64("count", n))
			}
			n, err = store.DeleteExpiredIdempotencyKeys(ctx, now().UTC())
			if err != nil {
				log.Warn("sweep idempotency keys", slog.Any("err", err))
			} else if n > 0 {
				log.Info("swept expired idempotency keys", slog.Int64("count", n))
			}
			// An offline kit's sales may be replayed until they are as
			// old as a transaction may be (docs/api.md §24.5).
			n, err = store.DeleteExpiredOfflineAllowances(ctx, now().UTC().Add(-maxAge))
			if err != nil {
				log.Warn("sweep offline allowances", slog.Any("err", err))
			} else if n > 0 {
				log.Info("swept expired offline allowances", slog.Int64("count", n))
			}
			n, err = store.DeleteTerminalEventsBefore(ctx, now().UTC().Add(-posgate.TerminalEventRetention))
			if err != nil {
				log.Warn("sweep terminal events", slog.Any("err", err))
			} else if n > 0 {
				log.Info("swept terminal events past their retention", slog.Int64("count", n))
			}
		}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// urlOf is the URL a client on this machine reaches addr at; a wildcard
// listener is advertised as localhost.
func urlOf(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		_, port, _ := net.SplitHostPort(addr.String())
		return "http://localhost:" + port
	}
	return "http://" + tcp.String()
}
