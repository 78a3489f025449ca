package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/posgate/posgate/internal/webhook"
)

// lagBuckets suit the delivery lag (docs/api.md §19.4): tens of
// milliseconds when the sender keeps up, seconds when a backlog builds,
// minutes to days for retried deliveries.
var lagBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86400}

// webhookMetrics are the sender's collectors.
type webhookMetrics struct {
	attempts *prometheus.CounterVec
	lag      prometheus.Histogram
	children map[string]prometheus.Counter
}

// Attempt implements webhook.Observer.
func (w *webhookMetrics) Attempt(outcome string, lag time.Duration) {
	w.children[outcome].Inc()
	if outcome == webhook.OutcomeDelivered {
		w.lag.Observe(lag.Seconds())
	}
}

// Webhooks registers the webhook metrics and returns the observer the
// sender reports to (nil when this instance sends none): attempts by
// outcome, the delivery lag, and the outbox's backlog, counted by backlog
// at each scrape (bounded by a second, so that a slow store does not hold
// the scrape).
func (m *Metrics) Webhooks(backlog func(ctx context.Context) (int64, error), sending bool) webhook.Observer {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "posgate_webhook_deliveries_pending",
		Help: "Webhook deliveries Pending in the outbox (due, waiting behind an earlier event of their user, or to be retried); -1 when the count failed.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		n, err := backlog(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	}))
	if !sending {
		return nil
	}
	w := &webhookMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "posgate_webhook_attempts_total",
			Help: "Webhook delivery attempts of this instance by outcome: delivered (a 2xx), failed (to be retried) or dead (410, or retries ran out).",
		}, []string{"outcome"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "posgate_webhook_delivery_lag_seconds",
			Help:    "Time from an event's commit (or its redelivery) to the receiver's 2xx, for the deliveries of this instance.",
			Buckets: lagBuckets,
		}),
		children: map[string]prometheus.Counter{},
	}
	for _, o := range []string{webhook.OutcomeDelivered, webhook.OutcomeFailed, webhook.OutcomeDead} {
		w.children[o] = w.attempts.WithLabelValues(o)
	}
	m.reg.MustRegister(w.attempts, w.lag)
	return w
}
