// Package metrics is posgate's Prometheus instrumentation (docs/api.md
// §16.5): the build (posgate_build_info), HTTP requests by route pattern and status, their latency, the
// requests in flight, shed and rate-limited, the store's latency, its
// connection pools, session batches and group writers' busy time, and the Go
// runtime. It is served on a listener of its own (--metrics-listen), never on
// the public one.
package metrics

import (
	"database/sql"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/posgate/posgate/internal/buildinfo"
	"github.com/posgate/posgate/internal/storekit"
)

// latencyBuckets suit posgate's answers, from tens of microseconds (a
// cached lookup) to seconds (an import): the POS routes' targets sit in
// the 1–100 ms buckets.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Metrics holds posgate's collectors in a registry of its own. It
// implements httpapi.Observer. It is safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	shed     *prometheus.CounterVec
	limited  *prometheus.CounterVec
	store    *prometheus.HistogramVec

	// children caches the label lookups of the per-request path.
	children sync.Map // requestKey → *requestChild
	// shedBy holds the shed counter of each reason, looked up once: under
	// overload every shed request counts one, tens of thousands a second.
	shedBy map[string]prometheus.Counter
}

type requestKey struct {
	pattern string
	status  int
}

type requestChild struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// New returns the metrics with the Go runtime's and the process's
// collectors registered.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "posgate_http_requests_total",
			Help: "HTTP requests answered, by route (the ServeMux pattern, method included) and status.",
		}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "posgate_http_request_duration_seconds",
			Help:    "Time from a request's arrival at the handler to its answer, by route.",
			Buckets: latencyBuckets,
		}, []string{"route"}),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "posgate_http_requests_shed_total",
			Help: "Requests answered 503 by the load shedding: reason in_flight (no slot within the wait) or imports (import cap).",
		}, []string{"reason"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "posgate_http_requests_rate_limited_total",
			Help: "Requests answered 429: kind client (the client's rate limit) or token_lockout (failed client authentications).",
		}, []string{"kind"}),
		store: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "posgate_store_operation_duration_seconds",
			Help:    "Latency of the store's operations on the request paths (cache hits excluded), by operation.",
			Buckets: latencyBuckets,
		}, []string{"operation"}),
	}
	bi := buildinfo.Read()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "posgate_build_info",
		Help: "Always 1; its labels are the running build: module version, VCS revision, whether the checkout was modified, Go version.",
	}, []string{"version", "revision", "modified", "goversion"})
	build.WithLabelValues(bi.Version, bi.Revision, strconv.FormatBool(bi.Modified), bi.GoVersion).Set(1)
	m.reg.MustRegister(m.requests, m.latency, m.shed, m.limited, m.store, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.shedBy = map[string]prometheus.Counter{}
	for _, reason := range []string{"in_flight", "imports"} {
		m.shedBy[reason] = m.shed.WithLabelValues(reason)
	}
	for _, kind := range []string{"client", "token_lockout"} {
		m.limited.WithLabelValues(kind)
	}
	return m
}

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Request counts one answered request and its latency.
func (m *Metrics) Request(pattern string, status int, elapsed time.Duration) {
	k := requestKey{pattern, status}
	c, ok := m.children.Load(k)
	if !ok {
		c, _ = m.children.LoadOrStore(k, &requestChild{
			count:   m.requests.WithLabelValues(pattern, strconv.Itoa(status)),
			latency: m.latency.WithLabelValues(pattern),
		})
	}
	rc := c.(*requestChild)
	rc.count.Inc()
	rc.latency.Observe(elapsed.Seconds())
	if status == http.StatusTooManyRequests && pattern == "/connect/token" {
		m.limited.WithLabelValues("token_lockout").Inc()
	}
}

// Shed counts a request refused by the load shedding.
func (m *Metrics) Shed(reason string) {
	if c, ok := m.shedBy[reason]; ok {
		c.Inc()
		return
	}
	m.shed.WithLabelValues(reason).Inc()
}

// RateLimited counts a request refused by a client's rate limit.
func (m *Metrics) RateLimited(kind string) { m.limited.WithLabelValues(kind).Inc() }

// Load publishes the load shedding's state, read at each scrape: the
// requests in flight, those waiting for a slot, the imports running, and
// the terminal channel's open streams (which hold no in-flight slot).
func (m *Metrics) Load(inFlight, waiting, imports, streams func() int) {
	for _, g := range []struct {
		name, help string
		f          func() int
	}{
		{"posgate_http_requests_in_flight", "Requests holding an in-flight slot (imports give theirs back once admitted).", inFlight},
		{"posgate_http_requests_waiting", "Requests waiting for an in-flight slot.", waiting},
		{"posgate_imports_running", "Imports (promotions, coupon batches) running.", imports},
		{"posgate_terminal_streams_open", "Terminal channel streams open on this instance (docs/api.md §25).", streams},
	} {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: g.name, Help: g.help},
			func() float64 { return float64(g.f()) }))
	}
}

// SQLPools publishes the statistics of database/sql pools (SQLite's read
// pool and its one writer connection), labelled db_name.
func (m *Metrics) SQLPools(pools map[string]*sql.DB) {
	for name, db := range pools {
		m.reg.MustRegister(collectors.NewDBStatsCollector(db, name))
	}
}

// PgxPool publishes the statistics of the PostgreSQL connection pool.
func (m *Metrics) PgxPool(stat func() *pgxpool.Stat) {
	m.reg.MustRegister(&pgxCollector{stat: stat})
}

// GroupWriters publishes the time the store's group-commit writers have
// spent in their transactions, labelled writer (internal/storekit): its
// rate is the share of the time each is busy, and one near 1 is the
// bottleneck of its writes (at SQLite, "sales" and "sessions" share the
// one write connection).
func (m *Metrics) GroupWriters(busy func() map[string]time.Duration) {
	m.reg.MustRegister(&writerCollector{busy: busy})
}

var writerBusyDesc = prometheus.NewDesc("posgate_store_group_writer_busy_seconds_total",
	"Time the store's group-commit writer spent in its transactions, by writer (sessions, sales).", []string{"writer"}, nil)

type writerCollector struct {
	busy func() map[string]time.Duration
}

func (c *writerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- writerBusyDesc }

func (c *writerCollector) Collect(ch chan<- prometheus.Metric) {
	for name, d := range c.busy() {
		ch <- prometheus.MustNewConstMetric(writerBusyDesc, prometheus.CounterValue, d.Seconds(), name)
	}
}

// SessionBatches publishes the session writer's batch sizes (internal/storekit).
func (m *Metrics) SessionBatches(sizes func() storekit.BatchSizes) {
	m.reg.MustRegister(&batchCollector{sizes: sizes})
}

var (
	pgxAcquired = prometheus.NewDesc("posgate_pgxpool_acquired_conns", "Connections in use.", nil, nil)
	pgxIdle     = prometheus.NewDesc("posgate_pgxpool_idle_conns", "Idle connections.", nil, nil)
	pgxTotal    = prometheus.NewDesc("posgate_pgxpool_total_conns", "Open connections.", nil, nil)
	pgxMax      = prometheus.NewDesc("posgate_pgxpool_max_conns", "The pool's maximum.", nil, nil)
	pgxAcquires = prometheus.NewDesc("posgate_pgxpool_acquires_total", "Connections acquired.", nil, nil)
	pgxWaits    = prometheus.NewDesc("posgate_pgxpool_empty_acquires_total", "Acquires that had to wait for a connection.", nil, nil)
	pgxWait     = prometheus.NewDesc("posgate_pgxpool_acquire_wait_seconds_total", "Time spent waiting for a connection.", nil, nil)
	pgxCanceled = prometheus.NewDesc("posgate_pgxpool_canceled_acquires_total", "Acquires canceled by their context.", nil, nil)
)

type pgxCollector struct{ stat func() *pgxpool.Stat }

func (c *pgxCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pgxAcquired, pgxIdle, pgxTotal, pgxMax, pgxAcquires, pgxWaits, pgxWait, pgxCanceled} {
		ch <- d
	}
}

func (c *pgxCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stat()
	ch <- prometheus.MustNewConstMetric(pgxAcquired, prometheus.GaugeValue, float64(s.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(pgxIdle, prometheus.GaugeValue, float64(s.IdleConns()))
	ch <- prometheus.MustNewConstMetric(pgxTotal, prometheus.GaugeValue, float64(s.TotalConns()))
	ch <- prometheus.MustNewConstMetric(pgxMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(pgxAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(pgxWaits, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(pgxWait, prometheus.CounterValue, s.AcquireDuration().Seconds())
	ch <- prometheus.MustNewConstMetric(pgxCanceled, prometheus.CounterValue, float64(s.CanceledAcquireCount()))
}

var batchDesc = prometheus.NewDesc("posgate_session_writer_batch_size",
	"Sessions per batch of the startInteraction session writer (group commit).", nil, nil)

type batchCollector struct{ sizes func() storekit.BatchSizes }

func (c *batchCollector) Describe(ch chan<- *prometheus.Desc) { ch <- batchDesc }

func (c *batchCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.sizes()
	buckets := make(map[float64]uint64, len(storekit.BatchSizeBounds))
	var cum uint64
	for i, bound := range storekit.BatchSizeBounds {
		cum += s.Counts[i]
		buckets[bound] = cum
	}
	ch <- prometheus.MustNewConstHistogram(batchDesc, s.Count, float64(s.Sum), buckets)
}
