// Package logbuf buffers a log stream in memory and writes it out in large
// pieces. posgate writes one log line per request; written one by one, each
// line is a write system call, which on the benchmark machine cost about as
// much as serving a small request. Buffered, a burst of lines costs one.
//
// Nothing is dropped: when the buffer reaches its limit the writer that
// filled it flushes it before returning (back-pressure instead of loss).
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
	b := &Writer{w: w, limit: limit, interval: interval, stop: make(chan struct{}), stopped: make(chan struct{})}
	go b.run()
	return b
}

// Write buffers p; it flushes first-hand when the buffer is full.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	full := len(b.buf) >= b.limit
	b.mu.Unlock()
	if full {
		if err := b.Flush(); err != nil {
			return len(p), err
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
		case <-b.stop:
			return
		}
	}
}
