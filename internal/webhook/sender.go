package webhook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/webhook/endpoint"
)

// Defaults of Config.
const (
	DefaultTimeout  = 10 * time.Second
	DefaultRetryFor = 72 * time.Hour
	DefaultWorkers  = 32
	// DefaultClaimed bounds the deliveries claimed and not yet recorded.
	DefaultClaimed = 512
	DefaultPoll    = time.Second
	// DefaultGather is how long the sender lets work gather before it goes
	// to the store (see Config.Gather).
	DefaultGather = 10 * time.Millisecond
)

// Config configures a Sender; zero fields get their defaults.
type Config struct {
	// Store holds the outbox.
	Store posgate.WebhookStore
	// Now is the clock of the schedule (when a delivery is due, when its
	// retries end), the store's clock: the sandbox clock in demo mode.
	Now func() time.Time
	// Wall is the real clock, for what receivers check against theirs
	// (docs/api.md §20): the webhook-timestamp and which secrets still sign
	// after a rotation. Default time.Now.
	Wall func() time.Time
	// Timeout bounds one attempt: connecting, sending and reading the
	// answer (docs/api.md §19.4: 10 s).
	Timeout time.Duration
	// RetryFor is how long a delivery is retried before it is dead.
	RetryFor time.Duration
	// Workers bounds the attempts in flight (the HTTP requests at once).
	Workers int
	// Claimed bounds the deliveries claimed and not yet recorded: those
	// waiting for a worker, in flight, and awaiting the recorder's
	// transaction. It is larger than Workers so that the workers need not
	// wait for the store's round trips (claim, record) between attempts.
	Claimed int
	// Poll is how often the sender looks for due deliveries without being
	// woken (retries coming due, events committed by another instance).
	Poll time.Duration
	// Gather is the least time between two claims, and how long the
	// recorder waits for more outcomes after the first before it records
	// them: under a stream of sales, each claim and each recording then
	// takes the deliveries of many commits at once instead of a few, which
	// the store (SQLite's single writer above all) pays per statement, not
	// per row. It adds at most twice Gather to an event's delivery lag.
	Gather time.Duration
	// AllowLoopback lets deliveries reach loopback addresses (tests,
	// demos); no other non-public address is ever reached (AddressPolicy).
	AllowLoopback bool
	// Jitter returns a number in [0, 1) (math/rand by default); tests fix
	// it.
	Jitter func() float64
	// Observer is told each attempt's outcome (metrics); nil for none.
	Observer Observer
	Logger   *slog.Logger
}

// Outcomes of an attempt, as Observer.Attempt gets them.
const (
	OutcomeDelivered = "delivered"
	OutcomeFailed    = "failed" // retried later
	OutcomeDead      = "dead"
)

// Observer is told of the sender's attempts.
type Observer interface {
	// Attempt reports an attempt's outcome; for a delivered one, lag is
	// the time from the event's commit (or the operator's redelivery) to
	// the receiver's 2xx, on the sender's clock.
	Attempt(outcome string, lag time.Duration)
}

// Sender delivers the outbox (docs/api.md §19.4). Run it in one goroutine;
// Notify wakes it. Several senders (instances) may share a PostgreSQL
// outbox: each claims deliveries under a lease of its own.
type Sender struct {
	cfg    Config
	owner  string
	client *http.Client
	wake   chan struct{}
	slots  chan struct{} // one per claimed delivery not yet recorded
	busy   chan struct{} // one per attempt in flight
	wg     sync.WaitGroup
}

// New returns a sender; cfg.Store is required.
func New(cfg Config) *Sender {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Wall == nil {
		cfg.Wall = time.Now
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = DefaultRetryFor
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Claimed < cfg.Workers {
		cfg.Claimed = max(cfg.Workers, DefaultClaimed)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Gather <= 0 {
		cfg.Gather = DefaultGather
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Sender{cfg: cfg, owner: uuid.NewString(), wake: make(chan struct{}, 1), slots: make(chan struct{}, cfg.Claimed),
		busy: make(chan struct{}, cfg.Workers)}
	s.client = NewClient(cfg.Timeout, endpoint.AddressPolicy{AllowLoopback: cfg.AllowLoopback})
	// Keep a connection per worker to a receiver: with fewer idle
	// connections than workers, each attempt beyond them opened (and
	// closed) a connection of its own.
	s.client.Transport.(*http.Transport).MaxIdleConnsPerHost = cfg.Workers
	return s
}

// Lease is how long a claimed delivery stays reserved for its sender: the
// attempt's timeout and a margin for recording it. A sender that dies
// mid-attempt leaves the delivery to be claimed again once it expires.
func (s *Sender) Lease() time.Duration { return s.cfg.Timeout + 5*time.Second }

// Notify wakes the sender (events were committed); it never blocks.
func (s *Sender) Notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// maxRecordBatch bounds the outcomes one transaction records.
const maxRecordBatch = 256

// releaseEvery is how many polls pass between sweeps of waiting
// deliveries (see posgate.WebhookStore.ReleaseWaiting).
const releaseEvery = 5

// Run sends due deliveries until ctx ends, then waits for the attempts in
// flight (each bounded by the timeout) to be recorded. Workers hand their
// outcomes to one recorder, which stores every outcome waiting in one
// transaction (group commit, as the stores' writers do): at SQLite's single
// writer a commit per event would cost the sales their throughput.
func (s *Sender) Run(ctx context.Context) {
	results := make(chan *posgate.DeliveryResult, cap(s.slots))
	recorded := make(chan struct{})
	go s.record(context.WithoutCancel(ctx), results, recorded)
	defer func() {
		s.wg.Wait()
		close(results)
		<-recorded
	}()
	poll := time.NewTicker(s.cfg.Poll)
	defer poll.Stop()
	polls := 0
	var lastClaim time.Time
	for {
		if wait := s.cfg.Gather - time.Since(lastClaim); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		lastClaim = time.Now()
		free := cap(s.slots) - len(s.slots)
		claimed := 0
		if free > 0 {
			tasks, err := s.cfg.Store.ClaimDeliveries(ctx, s.owner, s.cfg.Now().UTC(), s.Lease(), free)
			if err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("webhooks: claim deliveries", slog.Any("err", err))
			}
			claimed = len(tasks)
			// An attempt must start while the lease still covers its
			// timeout; one that waited longer for a worker is left to be
			// claimed again once the lease expires (nil result), and so is
			// one not yet started when the sender stops.
			startBy := s.cfg.Now().UTC().Add(s.Lease() - s.cfg.Timeout)
			for _, t := range tasks {
				s.slots <- struct{}{}
				s.wg.Add(1)
				go func() {
					defer s.wg.Done()
					s.busy <- struct{}{}
					var r *posgate.DeliveryResult
					if ctx.Err() == nil && s.cfg.Now().Before(startBy) {
						r = s.attempt(context.WithoutCancel(ctx), t)
					}
					<-s.busy
					results <- r
				}()
			}
		}
		if claimed > 0 && claimed == free {
			// There may be more: claim again as soon as a slot frees.
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-poll.C:
			if polls++; polls%releaseEvery == 0 {
				if _, err := s.cfg.Store.ReleaseWaiting(ctx, s.cfg.Now().UTC()); err != nil && ctx.Err() == nil {
					s.cfg.Logger.Warn("webhooks: release waiting deliveries", slog.Any("err", err))
				}
			}
		}
	}
}

// record stores the outcomes of results in batches until it is closed,
// frees their workers' slots and wakes the claim loop (a user's next event
// is due once the previous one is recorded).
func (s *Sender) record(ctx context.Context, results <-chan *posgate.DeliveryResult, done chan<- struct{}) {
	defer close(done)
	batch := make([]*posgate.DeliveryResult, 0, maxRecordBatch)
	for r := range results {
		batch, skipped := batch[:0], 0
		add := func(r *posgate.DeliveryResult) {
			if r == nil {
				skipped++
			} else {
				batch = append(batch, r)
			}
		}
		add(r)
		gather := time.NewTimer(s.cfg.Gather)
	collect:
		for len(batch)+skipped < maxRecordBatch {
			select {
			case r, ok := <-results:
				if !ok {
					break collect
				}
				add(r)
			case <-gather.C:
				break collect
			}
		}
		gather.Stop()
		if len(batch) > 0 {
			if _, err := s.cfg.Store.RecordDeliveries(ctx, s.owner, batch); err != nil {
				s.cfg.Logger.Warn("webhooks: record deliveries", slog.Int("count", len(batch)), slog.Any("err", err))
			}
		}
		for range len(batch) + skipped {
			<-s.slots
		}
		s.Notify()
	}
}

// RunOnce releases waiting deliveries, claims due ones and attempts them,
// records their outcomes in one transaction, and returns how many it
// attempted. Tests drive the schedule with it.
func (s *Sender) RunOnce(ctx context.Context) (int, error) {
	if _, err := s.cfg.Store.ReleaseWaiting(ctx, s.cfg.Now().UTC()); err != nil {
		return 0, err
	}
	tasks, err := s.cfg.Store.ClaimDeliveries(ctx, s.owner, s.cfg.Now().UTC(), s.Lease(), s.cfg.Workers)
	if err != nil {
		return 0, err
	}
	results := make([]*posgate.DeliveryResult, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.attempt(ctx, t)
		}()
	}
	wg.Wait()
	if len(results) > 0 {
		if _, err := s.cfg.Store.RecordDeliveries(ctx, s.owner, results); err != nil {
			return 0, err
		}
	}
	return len(tasks), nil
}

// Delay is the wait before retry n (1: the first retry): 5 s doubled with
// each retry up to an hour, then hourly, each spread by ±20 % (jitter in
// [0, 1)) so that the deliveries that failed together do not all come
// back at once.
func Delay(n int, jitter float64) time.Duration {
	d := 5 * time.Second
	for i := 1; i < n && d < time.Hour; i++ {
		d *= 2
	}
	d = min(d, time.Hour)
	return time.Duration(float64(d) * (0.8 + 0.4*jitter))
}

// attempt sends one delivery and returns its outcome, to be recorded.
func (s *Sender) attempt(ctx context.Context, t *posgate.DeliveryTask) *posgate.DeliveryResult {
	now := s.cfg.Now().UTC()
	r := &posgate.DeliveryResult{ID: t.ID, At: now}
	code, body, err := s.send(ctx, t, s.cfg.Wall().UTC())
	r.StatusCode, r.Response = code, body
	switch {
	case err != nil:
		r.Error = err.Error()
	case code >= 200 && code < 300:
		r.Status = posgate.DeliveryDelivered
	case code == http.StatusGone:
		r.Status, r.DisableEndpoint = posgate.DeliveryDead, true
		r.Error = "The endpoint answered 410 Gone: it is disabled."
	default:
		r.Error = fmt.Sprintf("The endpoint answered %d.", code)
	}
	if r.Status == "" {
		r.NextAttemptAt = now.Add(Delay(t.Attempts+1, s.cfg.Jitter()))
		if r.NextAttemptAt.After(t.RetryFrom.Add(s.cfg.RetryFor)) {
			r.Status = posgate.DeliveryDead
		} else {
			r.Status = posgate.DeliveryPending
		}
	}
	if o := s.cfg.Observer; o != nil {
		switch r.Status {
		case posgate.DeliveryDelivered:
			o.Attempt(OutcomeDelivered, s.cfg.Now().Sub(t.RetryFrom))
		case posgate.DeliveryDead:
			o.Attempt(OutcomeDead, 0)
		default:
			o.Attempt(OutcomeFailed, 0)
		}
	}
	if r.Status != posgate.DeliveryDelivered {
		s.cfg.Logger.Info("webhooks: delivery failed", slog.Int64("delivery", t.ID), slog.String("endpoint", t.Endpoint.ID),
			slog.String("status", r.Status), slog.String("error", r.Error))
	}
	return r
}

// send posts the delivery, signed at wall (the real time: receivers
// check the timestamp against their own clock); it returns the answer's
// status and the first MaxWebhookResponse bytes of its body.
func (s *Sender) send(ctx context.Context, t *posgate.DeliveryTask, wall time.Time) (int, string, error) {
	ts := wall.Unix()
	sig, err := SignatureHeader(t.Endpoint.Secrets(wall), t.EventID, ts, t.Payload)
	if err != nil {
		return 0, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.Endpoint.URL, bytes.NewReader(t.Payload))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "posgate-webhooks")
	req.Header.Set("webhook-id", t.EventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, posgate.MaxWebhookResponse))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	for !utf8.Valid(b) && len(b) > 0 {
		b = b[:len(b)-1] // a cut through a character
	}
	return resp.StatusCode, string(b), nil
}
