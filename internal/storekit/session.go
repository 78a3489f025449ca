package storekit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/posgate/posgate"
)

// ErrClosed is the error of CreateSession on a store that has been closed.
// Each store wraps it with its name ("sqlite: the store is closed"), and
// errors.Is finds it whichever store answered.
var ErrClosed = errors.New("the store is closed")

// maxSessionBatch bounds the sessions one transaction stores, so that a
// burst never holds the database (SQLite's single writer above all) for
// long.
const maxSessionBatch = 256

// SessionInserter is how a store writes sessions for its SessionWriter. The
// writer hands it contexts cut loose from their callers' cancellation: a
// session taken from the queue is written whatever its caller does since
// (the caller waits for the answer), and SQLite's driver then starts no
// goroutine to watch the context.
type SessionInserter interface {
	// InsertSession stores s alone and returns its own error (ECONFLICT for
	// a taken id, ENOTFOUND for an unknown terminal).
	InsertSession(ctx context.Context, s *posgate.Session) error
	// InsertSessions stores the sessions of group (two or more) in one
	// transaction. A non-nil err means the transaction failed and stored
	// nothing; the writer then stores each session on its own, so that
	// each caller gets its own answer. Otherwise errs holds each session's
	// own failure, where the database confines a constraint violation to
	// its row (SQLite), or is nil when every session was stored.
	InsertSessions(ctx context.Context, group []*SessionRequest) (errs []error, err error)
}

// SessionRequest is one CreateSession call waiting in a SessionWriter.
type SessionRequest struct {
	// Session is the session to store; the inserter only reads it.
	Session *posgate.Session
	ctx     context.Context
	done    chan error
}

// SessionWriterConfig configures NewSessionWriter.
type SessionWriterConfig struct {
	// Store names the store at the head of the writer's own errors, as in
	// its other errors ("sqlite: create session: context canceled").
	Store string
	// Yield makes the writer let the callers that are ready to run reach
	// its queue before it takes a group (one scheduler round): under load
	// the groups get larger, idle it costs next to nothing. It pays where a
	// commit costs far more than a round, as at SQLite's single writer.
	Yield bool
}

// SessionWriter commits startInteraction's sessions in groups (group
// commit): a caller hands its session to the writer's goroutine and waits
// for the transaction that holds it, and while one transaction is on its
// way, the sessions that arrive meanwhile wait and go into the next one.
// This spares the database a transaction per session, the costliest part of
// startInteraction. No delay is added: a lone session is stored at once,
// alone. A caller learns of success only after the commit of its session
// has returned, so no answered session can be lost; and each caller gets its
// own error (see SessionInserter). Both stores use it, so that they group
// alike and their tests are one (internal/storetest).
type SessionWriter struct {
	ins    SessionInserter
	store  string
	closed error // ErrClosed, with the store's name
	queue  *groupQueue[*SessionRequest]
	groups atomic.Int64 // groups stored in one transaction
	sizes  batchSizes   // sizes of the batches taken from the queue
}

// BatchSizeBounds are the upper bounds of the buckets of BatchSizes: powers
// of two up to the largest batch.
var BatchSizeBounds = []float64{1, 2, 4, 8, 16, 32, 64, 128, maxSessionBatch}

// BatchSizes is the distribution of the sizes of the batches a
// SessionWriter took from its queue (live requests only), for the metrics:
// how much grouping the writer achieves under the load it sees.
type BatchSizes struct {
	Counts []uint64 // per bucket of BatchSizeBounds, not cumulative
	Count  uint64   // batches
	Sum    uint64   // sessions
}

type batchSizes struct {
	counts [9]atomic.Uint64 // len(BatchSizeBounds)
	count  atomic.Uint64
	sum    atomic.Uint64
}

func (b *batchSizes) observe(n int) {
	i := 0
	for i < len(BatchSizeBounds)-1 && float64(n) > BatchSizeBounds[i] {
		i++
	}
	b.counts[i].Add(1)
	b.sum.Add(uint64(n))
	b.count.Add(1)
}

// Busy returns the time the writer has spent storing groups (its
// goroutine's time in transactions, waits for the store included).
func (w *SessionWriter) Busy() time.Duration { return w.queue.busyTime() }

// BatchSizes returns the batch-size distribution so far.
func (w *SessionWriter) BatchSizes() BatchSizes {
	out := BatchSizes{Counts: make([]uint64, len(BatchSizeBounds)), Count: w.sizes.count.Load(), Sum: w.sizes.sum.Load()}
	for i := range out.Counts {
		out.Counts[i] = w.sizes.counts[i].Load()
	}
	return out
}

// NewSessionWriter starts a writer that stores sessions through ins; Close
// stops it.
func NewSessionWriter(ins SessionInserter, cfg SessionWriterConfig) *SessionWriter {
	w := &SessionWriter{ins: ins, store: cfg.Store, closed: fmt.Errorf("%s: %w", cfg.Store, ErrClosed)}
	w.queue = newGroupQueue(maxSessionBatch, cfg.Yield, w.commit)
	return w
}

// Create hands s to the writer and waits for the commit that holds it. A
// context that ends while s waits in the queue fails the call and s is not
// stored; once s is taken, Create waits for its outcome, for the session
// may be committing.
func (w *SessionWriter) Create(ctx context.Context, s *posgate.Session) error {
	r := &SessionRequest{ctx: ctx, Session: s, done: make(chan error, 1)}
	if err := w.queue.submit(ctx, r, w.canceled, w.closed); err != nil {
		return err
	}
	return <-r.done
}

// Close stops the writer once the group in progress is stored; later calls
// do nothing, and Create answers ErrClosed from then on.
func (w *SessionWriter) Close() { w.queue.close() }

// Groups returns how many groups of sessions the writer has stored in one
// transaction each. The conformance suite reads it to see that concurrent
// calls are grouped at all, which their answers alone cannot show.
func (w *SessionWriter) Groups() int64 { return w.groups.Load() }

// CommitGroup stores sessions as one group, as if their Create calls (with
// the contexts ctxs, one per session) had arrived together, and returns each
// call's answer. It is the conformance suite's way to form the groups it
// needs (a duplicate among them, a caller that left), which concurrent calls
// would form only by chance; it may run beside the writer. err reports a
// call that got no answer, which would leave its caller waiting forever.
func (w *SessionWriter) CommitGroup(ctxs []context.Context, sessions []*posgate.Session) (answers []error, err error) {
	batch := make([]*SessionRequest, len(sessions))
	for i, s := range sessions {
		batch[i] = &SessionRequest{ctx: ctxs[i], Session: s, done: make(chan error, 1)}
	}
	w.commit(slices.Clone(batch)) // commit reorders its batch
	answers = make([]error, len(batch))
	for i, r := range batch {
		select {
		case answers[i] = <-r.done:
		default:
			return nil, fmt.Errorf("storekit: call %d of the group got no answer", i)
		}
	}
	return answers, nil
}

func (w *SessionWriter) canceled(err error) error {
	return fmt.Errorf("%s: create session: %w", w.store, err)
}

// commit stores a group and answers every caller. It keeps the live
// requests at the front of batch, in place: a new slice for them would be
// an allocation per group, since the inserter's interface lets it escape.
func (w *SessionWriter) commit(batch []*SessionRequest) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- w.canceled(err) // gone before its turn: not stored
		} else {
			live = append(live, r)
		}
	}
	if len(live) > 0 {
		w.sizes.observe(len(live))
	}
	if len(live) > 1 {
		// One caller leaving must not abort the others' sessions.
		if errs, err := w.ins.InsertSessions(context.WithoutCancel(live[0].ctx), live); err == nil {
			w.groups.Add(1)
			for i, r := range live {
				if errs == nil {
					r.done <- nil
				} else {
					r.done <- errs[i]
				}
			}
			return
		}
	}
	for _, r := range live {
		r.done <- w.ins.InsertSession(context.WithoutCancel(r.ctx), r.Session)
	}
}
