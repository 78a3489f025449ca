package webhook

import (
	"context"
	"log/slog"
	"time"

	"github.com/posgate/posgate"
)

// Defaults of the outbox's retention (docs/api.md §19.4): a delivered
// delivery is kept a week for the operator's list; a dead one a month,
// long enough to notice and redeliver it (a redelivery makes it Pending,
// and a Pending delivery is never swept).
const (
	DefaultRetention     = 168 * time.Hour
	DefaultDeadRetention = 720 * time.Hour
	// SweepEvery is how often the retention sweep runs.
	SweepEvery = 10 * time.Minute
	// SweepBatch is how many outbox rows one statement of the sweep reads:
	// each batch commits on its own, so the sweep never holds the single
	// SQLite writer, or PostgreSQL's row locks, for long.
	SweepBatch = 500
)

// Retention says how long ended deliveries are kept; 0 keeps them.
type Retention struct {
	Delivered, Dead time.Duration
}

// SweepOnce deletes the deliveries past their retention at now and returns
// how many.
func SweepOnce(ctx context.Context, store posgate.WebhookStore, now time.Time, r Retention) (int64, error) {
	if r.Delivered <= 0 && r.Dead <= 0 {
		return 0, nil
	}
	// A zero limit keeps: a time before any delivery.
	var delivered, dead time.Time
	if r.Delivered > 0 {
		delivered = now.Add(-r.Delivered)
	}
	if r.Dead > 0 {
		dead = now.Add(-r.Dead)
	}
	return store.SweepWebhookDeliveries(ctx, delivered, dead, SweepBatch)
}

// Sweep runs SweepOnce every SweepEvery until ctx ends. Every instance may
// run it: deleting a row twice is harmless.
func Sweep(ctx context.Context, store posgate.WebhookStore, now func() time.Time, r Retention, log *slog.Logger) {
	if r.Delivered <= 0 && r.Dead <= 0 {
		return
	}
	t := time.NewTicker(SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, err := SweepOnce(ctx, store, now().UTC(), r)
			if err != nil && ctx.Err() == nil {
				log.Warn("webhooks: sweep the outbox", slog.Any("err", err))
			} else if n > 0 {
				log.Info("webhooks: swept ended deliveries", slog.Int64("count", n))
			}
		}
	}
}
