package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/auth"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/httpapi"
	"github.com/posgate/posgate/internal/logbuf"
	"github.com/posgate/posgate/internal/storecache"
	"github.com/posgate/posgate/internal/webhook"
)

// defaultDatabase is the SQLite file used when --database is not given.
const defaultDatabase = "posgate.db"

// demoDatabase keeps the demo's well-known credentials out of posgate.db.
const demoDatabase = "posgate-demo.db"

// demoListen is serve --demo's listener: loopback only, since anyone who
// reads the README knows the demo's secrets.
const demoListen = "127.0.0.1:8080"

func cmdServe(ctx context.Context, env *cli, args []string) error {
	fs := env.newFlags("serve")
	var cfg app.Config
	fs.StringVar(&cfg.Listen, "listen", ":8080", "address of the API listener (with --demo: "+demoListen+", since the demo publishes its secrets)")
	fs.StringVar(&cfg.AuthListen, "auth-listen", "", "serve the identity provider on this address of its own instead of on --listen")
	fs.StringVar(&cfg.DebugListen, "debug-listen", "", "private address for pprof (e.g. 127.0.0.1:6060); never expose it")
	fs.StringVar(&cfg.BaseURL, "base-url", "", "public address of the API ({base_url}); default derived from --listen")
	fs.StringVar(&cfg.AuthURL, "auth-url", "", "public address of the identity provider ({auth_url}, the token issuer); default --base-url")
	fs.StringVar(&cfg.Database, "database", defaultDatabase, "store: a SQLite file path or file: URI, or a postgres:// URL")
	fs.BoolVar(&cfg.Demo, "demo", false, "load the fixed demo data set (into "+demoDatabase+" unless --database is given), print its credentials and run on a sandbox clock")
	fs.BoolVar(&cfg.DemoReset, "reset", false, "with --demo: first make the store hold exactly the demo data set again (as 'posgate demo reset')")
	fs.BoolVar(&cfg.NoMigrate, "no-migrate", false, "refuse to start on a stale schema instead of migrating it")
	fs.StringVar(&cfg.Audience, "audience", "posgate", "the aud claim of access tokens")
	fs.DurationVar(&cfg.TokenTTL, "token-ttl", time.Hour, "access token lifetime (expires_in)")
	fs.DurationVar(&cfg.SessionTTL, "session-ttl", 24*time.Hour, "lifetime of a startInteraction session")
	fs.DurationVar(&cfg.KeyRefresh, "key-refresh", 30*time.Second, "how often signing keys are re-read from the store (for keys rotated by another instance)")
	fs.DurationVar(&cfg.CacheTTL, "cache-ttl", storecache.DefaultTTL, "how long found locations, terminals, clients, companies' POS configuration and active coupon lists are reused: the longest a change made by the CLI or another instance stays unseen (0: no cache)")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body", 64<<10, "largest request body accepted by the POS and operator routes, in bytes (413 beyond)")
	fs.DurationVar(&cfg.CarouselURLTTL, "carousel-ttl", 24*time.Hour, "how long a carousel URL from the carousel endpoint stays valid")
	fs.DurationVar(&cfg.CarouselPoll, "carousel-poll", 30*time.Second, "how often the carousel page looks for changed slides")
	fs.DurationVar(&cfg.TransactionMaxAge, "transaction-max-age", 30*24*time.Hour, "how old a submitted transaction's transactionDate may be")
	fs.Int64Var(&cfg.MaxImportBodyBytes, "max-import-body", httpapi.DefaultMaxImportBodyBytes, "largest promotion import body, in bytes (413 beyond)")
	fs.DurationVar(&cfg.ImportTimeout, "import-timeout", httpapi.DefaultImportTimeout, "how long a promotion import request may take to arrive and be answered")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "how long SIGTERM waits for in-flight requests")
	fs.Float64Var(&cfg.RateLimit, "rate-limit", defaultRateLimit, "requests per second each API client may send to this instance, unless it has a limit of its own (0: no default limit)")
	fs.IntVar(&cfg.RateBurst, "rate-burst", 0, "largest burst of requests of an API client under --rate-limit (0: twice --rate-limit)")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", httpapi.DefaultMaxInFlight, "requests served at once; beyond them and --max-queued, 503 (0: no bound)")
	fs.IntVar(&cfg.MaxQueued, "max-queued", httpapi.DefaultMaxInFlight, "requests that may wait for one of the --max-in-flight slots")
	fs.DurationVar(&cfg.QueueWait, "queue-wait", httpapi.DefaultQueueWait, "how long a request may wait for a slot before it is answered 503")
	fs.IntVar(&cfg.MaxImports, "max-imports", httpapi.DefaultMaxImports, "imports (promotions, coupon batches) running at once; beyond, 503 (0: no cap)")
	fs.IntVar(&cfg.MaxStreams, "max-streams", httpapi.DefaultMaxStreams, "terminal channel streams open on this instance; beyond, 503")
	fs.IntVar(&cfg.MaxClientStreams, "max-client-streams", httpapi.DefaultMaxClientStreams, "terminal channel streams of one API client on this instance; beyond, 429")
	fs.IntVar(&cfg.AuthClientFailures, "auth-failures", auth.DefaultClientFailures, "failed client authentications of one client id within --auth-lockout that lock it out of the token endpoint (-1: never)")
	fs.IntVar(&cfg.AuthAddressFailures, "auth-address-failures", auth.DefaultAddressFailures, "failed client authentications from one address within --auth-lockout that lock it out (-1: never)")
	fs.DurationVar(&cfg.AuthLockout, "auth-lockout", auth.DefaultLockout, "the window failed client authentications are counted in, and how long a lockout lasts")
	fs.DurationVar(&cfg.DrainDelay, "drain-delay", defaultDrainDelay, "how long SIGTERM keeps serving, with /readyz at 503 and Connection: close, before it shuts down (0: at once)")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", "", "private address for Prometheus metrics (/metrics), e.g. 127.0.0.1:9090; never the public listener")
	fs.BoolVar(&cfg.NoWebhooks, "no-webhooks", false, "send no webhooks from this instance (events still go to the outbox, for the instances that send)")
	fs.BoolVar(&cfg.WebhooksAllowLoopback, "webhooks-allow-loopback", false, "allow webhook endpoints on loopback addresses (tests, demos); private, link-local and other special-purpose addresses are refused all the same")
	allowPrivate := fs.Bool("webhooks-allow-private", false, "deprecated: the same as --webhooks-allow-loopback (private and link-local addresses are refused all the same)")
	fs.DurationVar(&cfg.WebhookTimeout, "webhook-timeout", webhook.DefaultTimeout, "how long one webhook delivery attempt may take")
	fs.DurationVar(&cfg.WebhookRetention, "webhook-retention", webhook.DefaultRetention, "how long delivered webhook deliveries (and their events) are kept before they are swept (0: kept)")
	fs.DurationVar(&cfg.WebhookDeadRetention, "webhook-dead-retention", webhook.DefaultDeadRetention, "how long dead webhook deliveries are kept for redelivery before they are swept (0: kept)")
	fs.DurationVar(&cfg.WebhookRetryFor, "webhook-retry-for", webhook.DefaultRetryFor, "how long a failing webhook delivery is retried before it is dead")
	gcPercent := fs.Int("gc-percent", defaultGCPercent, "garbage collector target: heap growth in percent over the live heap before a collection (Go's GOGC, which wins when set)")
	memLimit := fs.Int64("memory-limit", defaultMemoryLimit, "soft memory limit in bytes: the collector works harder near it (Go's GOMEMLIMIT, which wins when set; 0: none)")
	kf := addKEKFlags(fs)
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "text or json")
	_, err := env.parse(fs, args)
	if err != nil {
		return err
	}
	tuneGC(*gcPercent, *memLimit)
	if cfg.Demo && !env.isSet(fs, "database") {
		cfg.Database = demoDatabase
	}
	// The demo's secrets are in the README: it answers on this machine
	// only, unless --listen says otherwise.
	if cfg.Demo && !env.isSet(fs, "listen") {
		cfg.Listen = demoListen
		if !env.isSet(fs, "base-url") {
			cfg.BaseURL = "http://localhost:8080" // as the README's examples write it
		}
	}
	if cfg.DemoReset && !cfg.Demo {
		return usagef("--reset works only with --demo")
	}
	if cfg.KeyEncryption, err = kf.load(env); err != nil {
		return err
	}
	// The log is buffered (one write per burst of request lines, not one
	// per line) and flushed every 100 ms and before serve returns.
	logOut := logbuf.New(os.Stderr, 0, 0)
	defer logOut.Close()
	log, err := newLogger(*logLevel, *logFormat, logOut)
	if err != nil {
		return err
	}
	cfg.Logger = slog.New(flushing{log.Handler(), logOut})
	if *allowPrivate {
		cfg.WebhooksAllowLoopback = true
		cfg.Logger.Warn("--webhooks-allow-private is deprecated: it allows loopback receivers only, as --webhooks-allow-loopback does")
	}
	return app.Serve(ctx, cfg, func(a app.Addrs) {
		logOut.Flush() // the start-up lines before the demo banner
		if cfg.Demo {
			printDemo(env, a, cfg.Database)
		}
	})
}

// defaultRateLimit is the default per-client rate limit of posgate serve
// (docs/decisions.md, "Rate limits"): far above what a till sends, far below
// what one instance serves, so that one client's runaway loop cannot take
// an instance from the others.
const defaultRateLimit = 500

// defaultDrainDelay covers a load balancer's health check interval (a few
// seconds) with margin, and stays well within Kubernetes' 30 s grace period
// together with --shutdown-timeout.
const defaultDrainDelay = 5 * time.Second

// defaultGCPercent lets the heap grow to three times the live heap between
// collections instead of Go's two: a request allocates a few kilobytes that
// die with it and the live heap of a serving posgate is a few megabytes, so
// with GOGC 100 collections cost 10–20 % of the CPU of a request
// (docs/performance.md). 300 saved a little more CPU but took the peak RSS
// under the coupon-lookup load at 1,000,000 rows to 66–69 MB, over the
// 64 MB that posgate keeps to; 200 kept it at 56–63 MB (65 MB under the
// keyword-search load).
const defaultGCPercent = 200

// defaultMemoryLimit caps what the larger GC target may cost: near it the
// collector runs as often as it must. Under 2,000 connections (the overload
// row of go run ./bench) the heap in use is some 25 MB and the rest is the
// connections' goroutine stacks and buffers and the collector's headroom:
// with 256 MiB the peak RSS was 161–259 MB, with 96 MiB 120 MB, within the
// 128 MB posgate keeps to under overload (docs/performance.md). A promotion
// import of 100,000 items holds a larger live heap for its duration and
// takes longer near the limit (1.1–2.6 s against 0.6–1.2 s on the loaded
// benchmark machine).
const defaultMemoryLimit = 96 << 20

// tuneGC applies the collector settings, unless Go's own GOGC or GOMEMLIMIT
// is set in the environment: operators who tune Go programs expect those to
// work.
func tuneGC(percent int, limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" && limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}

func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

// flushing buffers only the per-request log lines ("request"), the
// volume the buffer is for: any other line (start-up, a warning, a long
// operation saying what it is waiting for, such as "transaction batch:
// applying") is written out at once, so that an operator reads it while it
// is true rather than up to an interval later, when a fast batch may have
// been answered already.
type flushing struct {
	slog.Handler
	out *logbuf.Writer
}

// Handle implements slog.Handler.
func (h flushing) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Message != "request" {
		h.out.Flush()
	}
	return err
}

// WithAttrs implements slog.Handler.
func (h flushing) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushing{h.Handler.WithAttrs(attrs), h.out}
}

// WithGroup implements slog.Handler.
func (h flushing) WithGroup(name string) slog.Handler {
	return flushing{h.Handler.WithGroup(name), h.out}
}

// redact hides a PostgreSQL URL's password before it is printed.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	return u.Redacted()
}

func printDemo(env *cli, a app.Addrs, db string) {
	w := env.stdout
	fmt.Fprintf(w, "posgate demo is serving %s on %s (identity provider %s), data in %s\n\n", a.BaseURL, a.API, a.AuthURL, redact(db))
	fmt.Fprintf(w, "  POS client:       %s / %s   (scope pos_integration, POS system %s)\n", demo.POSClientID, demo.POSSecret, demo.POSSystemID)
	fmt.Fprintf(w, "  operator client:  %s / %s   (scope admin)\n", demo.AdminClientID, demo.AdminSecret)
	fmt.Fprintf(w, "  people:           %s / %s (admin), %s / %s (location manager of %s)\n", demo.AdminEmail, demo.AdminPassword, demo.ManagerEmail, demo.ManagerPassword, demo.ManagerLocation)
	fmt.Fprintf(w, "  Swagger UI:       %s/swagger (Authorize, sign in, Try it out)\n", a.BaseURL)
	fmt.Fprintf(w, "  portal:           %s/portal (sign in as one of the people)\n", a.BaseURL)
	fmt.Fprintf(w, "  company %s, locations LOC123 (TERM-05, TERM-06, TERM-99 disabled) and LOC456 (TERM-07)\n\n", demo.CompanyID)
	fmt.Fprintf(w, "  sandbox clock:    posgate sandbox clock advance 24h --server %s   (expiry without waiting)\n\n", a.BaseURL)
	fmt.Fprintf(w, "Get a token:\n  curl -s -u %s:%s -d grant_type=client_credentials -d scope=pos_integration %s/connect/token\n",
		demo.POSClientID, demo.POSSecret, strings.TrimSuffix(a.AuthURL, "/"))
}
