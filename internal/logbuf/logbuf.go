// Package logbuf buffers a log stream in memory and writes it out in large
// pieces. posgate writes one log line per request; written one by one, each
// line is a write system call, which on the benchmark machine cost about as
// much as serving a small request. Buffered, a burst of lines costs one.
//
// A full buffer (the limit) is written by the Writer's own goroutine, woken
// at once, not by the request that filled it: a write(2) of 64 KiB to a log
// file can block for tens of milliseconds on a busy machine (the kernel
// throttling dirty pages), and the request that happened to fill the buffer
// (one in a hundred at 30,000 requests/s) waited that long: that was the
// p99 of every benchmark row that logs (docs/performance.md). Nothing is
// dropped: should the buffer reach hardLimitFactor times the limit while
// the writes are that slow, the writer that fills it flushes before
// returning (back-pressure instead of loss, and bounded memory).
// Lines reach the underlying writer at the latest one interval after they
// were written, and at once on Flush or Close, which `posgate serve` calls
// before it exits; only a crash of the process can lose the last interval.
package logbuf

import (
	"io"
	"sync"
	"time"
)

// Defaults of New.
const (
	DefaultInterval = 100 * time.Millisecond
	DefaultLimit    = 64 << 10
)

// hardLimitFactor sets, in limits, how much may wait while a flush is slow
// before writers flush themselves (1 MiB with the default limit).
const hardLimitFactor = 16

// Writer is a buffered, periodically flushed io.Writer, safe for
// concurrent use. Each Write is kept whole and in order.
type Writer struct {
	w        io.Writer
	limit    int
	interval time.Duration

	mu  sync.Mutex // guards buf
	buf []byte

	flushMu sync.Mutex // serialises writes to w, so that order is kept
	spare   []byte     // guarded by flushMu
	err     error      // the first write error, guarded by flushMu

	kick    chan struct{} // wakes run for a full buffer
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

// New returns a Writer on w that flushes every interval and whenever limit
// bytes are waiting; zero values take the defaults.
func New(w io.Writer, interval time.Duration, limit int) *Writer {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	b := &Writer{w: w, limit: limit, interval: interval, kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go b.run()
	return b
}

// Write buffers p. A full buffer wakes the Writer's goroutine to write it
// out; only beyond hardLimitFactor times the limit does Write flush
// first-hand.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	n := len(b.buf)
	b.mu.Unlock()
	switch {
	case n >= hardLimitFactor*b.limit:
		if err := b.Flush(); err != nil {
			return len(p), err
		}
	case n >= b.limit:
		select {
		case b.kick <- struct{}{}:
		default: // already woken
		}
	}
	return len(p), nil
}

// Flush writes out everything buffered so far.
func (b *Writer) Flush() error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	out := b.buf
	b.buf = b.spare[:0]
	b.mu.Unlock()
	if len(out) > 0 {
		if _, err := b.w.Write(out); err != nil && b.err == nil {
			b.err = err
		}
	}
	b.spare = out[:0]
	return b.err
}

// Close stops the periodic flush and flushes what is left. Writes after
// Close are still accepted and reach w on the next Flush.
func (b *Writer) Close() error {
	b.once.Do(func() { close(b.stop) })
	<-b.stopped
	return b.Flush()
}

func (b *Writer) run() {
	defer close(b.stopped)
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.Flush()
		case <-b.kick:
			b.Flush()
		case <-b.stop:
			return
		}
	}
}
