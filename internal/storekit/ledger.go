package storekit

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/posgate/posgate"
)

// LedgerApplier is how a store applies sales for its LedgerWriter. The
// writer hands it a context cut loose from its callers' cancellation: a
// sale taken from the queue is applied whatever its caller does since.
type LedgerApplier interface {
	// ApplyGroup applies items in one write transaction, each through a
	// posgate.ApplyLedger call of its own in the order given (so each in its
	// own savepoint: a rejected item is rolled back alone), commits once and
	// returns each item's outcome. A non-nil error means the transaction
	// was rolled back and stored nothing.
	ApplyGroup(ctx context.Context, items []*posgate.TransactionInput) ([]*posgate.TransactionOutcome, error)
}

// LedgerWriterConfig configures NewLedgerWriter.
type LedgerWriterConfig struct {
	// Store names the store at the head of the writer's own errors
	// ("sqlite: apply transactions: context canceled").
	Store string
	// MaxGroup bounds the sales one transaction applies, so that a burst
	// never holds the database (SQLite's single writer above all, which
	// startInteraction's sessions share) for long.
	MaxGroup int
	// Yield makes the writer let the callers that are ready to run reach
	// its queue before it takes a group (see SessionWriterConfig.Yield).
	Yield bool
}

// LedgerWriter applies single sales and refunds (POST
// /pos/{posSystemId}/transaction, docs/api.md §13.1) in groups (group
// commit), as SessionWriter does startInteraction's sessions: a caller
// hands its transaction to the writer's goroutine and waits for the
// transaction that holds it, and the sales that arrive meanwhile go into
// the next one, so that one commit (at SQLite, a WAL write: the costliest
// part of a sale) serves many. Sales of a group are applied one after
// another in arrival order, each by posgate.ApplyLedger in its own
// savepoint, so that every rule holds as if they had been applied one
// transaction each: a duplicate transactionId or a coupon taken by an
// earlier sale of the group is decided by the data that sale wrote. No
// delay is added: a lone sale is applied at once, alone. A caller learns
// its outcome only after the commit of its group has returned, so no
// answered sale can be lost. When a group fails (a store error in one
// sale, or the commit), nothing of it is stored and each of its sales is
// applied again alone, so that each caller gets its own outcome or error.
type LedgerWriter struct {
	app      LedgerApplier
	store    string
	maxGroup int
	closed   error // ErrClosed, with the store's name
	queue    *groupQueue[*ledgerRequest]
	items    []*posgate.TransactionInput // the group's items, reused by the queue's goroutine
	groups   atomic.Int64                // groups applied in one transaction
}

// ledgerRequest is one Apply call waiting in a LedgerWriter.
type ledgerRequest struct {
	ctx  context.Context
	in   *posgate.TransactionInput
	out  *posgate.TransactionOutcome
	err  error
	done chan struct{}
}

// NewLedgerWriter starts a writer that applies sales through app; Close
// stops it.
func NewLedgerWriter(app LedgerApplier, cfg LedgerWriterConfig) *LedgerWriter {
	w := &LedgerWriter{app: app, store: cfg.Store, maxGroup: max(cfg.MaxGroup, 1),
		closed: fmt.Errorf("%s: apply transactions: %w", cfg.Store, ErrClosed)}
	w.items = make([]*posgate.TransactionInput, 0, w.maxGroup)
	w.queue = newGroupQueue(w.maxGroup, cfg.Yield, func(group []*ledgerRequest) {
		w.items = w.commit(group, w.items[:0])
		clear(w.items)
	})
	return w
}

// Apply hands in to the writer and waits for the commit that holds it. A
// context that ends while in waits in the queue fails the call and nothing
// is applied; once in is taken, Apply waits for its outcome, for it may be
// committing.
func (w *LedgerWriter) Apply(ctx context.Context, in *posgate.TransactionInput) (*posgate.TransactionOutcome, error) {
	r := &ledgerRequest{ctx: ctx, in: in, done: make(chan struct{})}
	if err := w.queue.submit(ctx, r, w.canceled, w.closed); err != nil {
		return nil, err
	}
	<-r.done
	return r.out, r.err
}

// Busy returns the time the writer has spent applying groups (its
// goroutine's time in transactions, waits for the store included). At
// SQLite, where it holds the one write connection, a Busy that grows as
// fast as the clock means the sales are bound by that writer.
func (w *LedgerWriter) Busy() time.Duration { return w.queue.busyTime() }

// Close stops the writer once the group in progress is applied; later
// calls do nothing, and Apply answers ErrClosed from then on.
func (w *LedgerWriter) Close() { w.queue.close() }

// Groups returns how many groups of sales the writer has applied in one
// transaction each; tests read it to see that concurrent sales are grouped
// at all, which their outcomes alone cannot show.
func (w *LedgerWriter) Groups() int64 { return w.groups.Load() }

// ApplyGroup applies items as one group, as if their Apply calls (with the
// contexts ctxs, one per item) had arrived together in that order, and
// returns each call's outcome and error. It is the tests' way to form the
// groups they need (a duplicate among them, a caller that left), which
// concurrent calls would form only by chance; it may run beside the writer.
func (w *LedgerWriter) ApplyGroup(ctxs []context.Context, items []*posgate.TransactionInput) ([]*posgate.TransactionOutcome, []error) {
	batch := make([]*ledgerRequest, len(items))
	for i, in := range items {
		batch[i] = &ledgerRequest{ctx: ctxs[i], in: in, done: make(chan struct{})}
	}
	w.commit(slices.Clone(batch), nil) // commit reorders its batch
	outs, errs := make([]*posgate.TransactionOutcome, len(batch)), make([]error, len(batch))
	for i, r := range batch {
		<-r.done
		outs[i], errs[i] = r.out, r.err
	}
	return outs, errs
}

func (w *LedgerWriter) canceled(err error) error {
	return fmt.Errorf("%s: apply transactions: %w", w.store, err)
}

// answer hands r its outcome.
func answer(r *ledgerRequest, out *posgate.TransactionOutcome, err error) {
	r.out, r.err = out, err
	close(r.done)
}

// commit applies a group and answers every caller. It keeps the live
// requests at the front of batch, in place, and gathers their items in
// items (returned for reuse), so that a group costs no allocation of its
// own.
func (w *LedgerWriter) commit(batch []*ledgerRequest, items []*posgate.TransactionInput) []*posgate.TransactionInput {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			answer(r, nil, w.canceled(err)) // gone before its turn: not applied
		} else {
			live = append(live, r)
			items = append(items, r.in)
		}
	}
	if len(live) > 1 {
		// One caller leaving must not abort the others' sales.
		if outs, err := w.app.ApplyGroup(context.WithoutCancel(live[0].ctx), items); err == nil {
			w.groups.Add(1)
			for i, r := range live {
				answer(r, outs[i], nil)
			}
			return items
		}
	}
	for _, r := range live {
		outs, err := w.app.ApplyGroup(context.WithoutCancel(r.ctx), []*posgate.TransactionInput{r.in})
		if err != nil {
			answer(r, nil, err)
		} else {
			answer(r, outs[0], nil)
		}
	}
	return items
}
