package storekit

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// groupQueue is the queue and the goroutine that SessionWriter and
// LedgerWriter share (group commit): callers hand in a request and wait for
// its answer; the goroutine takes the request that arrives first, then every
// request already waiting (up to max), and hands the group to commit, which
// answers each request. While commit runs, new requests wait and form the
// next group, so that one commit serves many callers without any delay added
// to a lone one.
type groupQueue[R any] struct {
	requests chan R
	stop     chan struct{}
	stopped  chan struct{}
	once     sync.Once
	busy     atomic.Int64 // nanoseconds spent in commit
}

// newGroupQueue starts the goroutine; commit is called with each group (it
// must answer every request of it; the slice is reused afterwards). yield
// lets the callers that are ready to run reach the queue before a group is
// taken (see SessionWriterConfig.Yield).
func newGroupQueue[R any](max int, yield bool, commit func(group []R)) *groupQueue[R] {
	q := &groupQueue[R]{requests: make(chan R), stop: make(chan struct{}), stopped: make(chan struct{})}
	go q.run(max, yield, commit)
	return q
}

// submit hands r to the goroutine. It fails with ctx's error while r still
// waits in the queue (r is then never committed), and with closed once the
// queue is closed; once r is taken, the caller must wait for its answer.
func (q *groupQueue[R]) submit(ctx context.Context, r R, canceled func(error) error, closed error) error {
	select {
	case q.requests <- r:
		return nil
	case <-ctx.Done():
		return canceled(ctx.Err())
	case <-q.stop:
		return closed
	}
}

// close stops the goroutine once the group in progress is committed; later
// calls do nothing.
func (q *groupQueue[R]) close() {
	q.once.Do(func() { close(q.stop) })
	<-q.stopped
}

// busyTime is the time the goroutine has spent committing groups: against
// the wall-clock time, how close the writer is to being the bottleneck.
func (q *groupQueue[R]) busyTime() time.Duration { return time.Duration(q.busy.Load()) }

func (q *groupQueue[R]) run(max int, yield bool, commit func(group []R)) {
	defer close(q.stopped)
	batch := make([]R, 0, max)
	for {
		select {
		case r := <-q.requests:
			batch = append(batch[:0], r)
		case <-q.stop:
			return
		}
		if yield {
			runtime.Gosched()
		}
	collect:
		for len(batch) < max {
			select {
			case r := <-q.requests:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		start := time.Now()
		commit(batch)
		q.busy.Add(int64(time.Since(start)))
		clear(batch)
	}
}
