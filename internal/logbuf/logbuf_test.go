package logbuf

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sink is an io.Writer that records every write.
type sink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	err    error
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	s.buf.Write(p)
	return len(p), s.err
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func TestLinesWaitForFlushAndKeepTheirOrder(t *testing.T) {
	s := &sink{}
	b := New(s, time.Hour, 1<<20)
	defer b.Close()
	for i := range 100 {
		fmt.Fprintf(b, "line %d\n", i)
	}
	if s.String() != "" {
		t.Fatalf("written before a flush: %q", s.String())
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 100 {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if s.String() != want.String() || s.writes != 1 {
		t.Errorf("after Flush: %d writes of %q", s.writes, s.String())
	}
}

// A full buffer is written out at once, by the Writer's goroutine: the
// Write that filled it returns without waiting for the write.
func TestAFullBufferIsFlushedAtOnceInTheBackground(t *testing.T) {
	s := &blockingSink{release: make(chan struct{})}
	b := New(s, time.Hour, 10)
	defer b.Close()
	defer close(s.release)
	b.Write([]byte("12345"))
	time.Sleep(20 * time.Millisecond)
	if s.String() != "" || s.started.Load() {
		t.Fatal("flushed below the limit")
	}
	done := make(chan struct{})
	go func() {
		b.Write([]byte("67890")) // fills the buffer; the sink's write blocks
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the Write that filled the buffer waited for the flush")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !s.started.Load() {
		if time.Now().After(deadline) {
			t.Fatal("a full buffer was not flushed")
		}
		time.Sleep(time.Millisecond)
	}
}

// While a flush is slow, writes go on into the buffer up to hardLimitFactor
// times the limit; beyond it the writer flushes first-hand (back-pressure,
// bounded memory, nothing lost).
func TestBackPressureBeyondTheHardLimit(t *testing.T) {
	s := &blockingSink{release: make(chan struct{})}
	b := New(s, time.Hour, 10)
	b.Write([]byte("0123456789")) // full: the background flush starts and blocks
	deadline := time.Now().Add(5 * time.Second)
	for !s.started.Load() {
		if time.Now().After(deadline) {
			t.Fatal("a full buffer was not flushed")
		}
		time.Sleep(time.Millisecond)
	}
	line := []byte("abcdefghij")
	for range hardLimitFactor - 1 {
		b.Write(line) // below the hard limit: returns at once
	}
	blocked := make(chan struct{})
	go func() {
		b.Write(line) // reaches the hard limit: waits for the slow flush
		close(blocked)
	}()
	select {
	case <-blocked:
		t.Fatal("a Write beyond the hard limit did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	close(s.release)
	<-blocked
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if want := 10 + (hardLimitFactor)*10; len(s.String()) != want {
		t.Errorf("%d bytes written, want %d", len(s.String()), want)
	}
}

// blockingSink's writes wait until release is closed.
type blockingSink struct {
	sink
	started atomic.Bool
	release chan struct{}
}

func (s *blockingSink) Write(p []byte) (int, error) {
	s.started.Store(true)
	<-s.release
	return s.sink.Write(p)
}

func TestPeriodicFlush(t *testing.T) {
	s := &sink{}
	b := New(s, 5*time.Millisecond, 1<<20)
	defer b.Close()
	b.Write([]byte("tick\n"))
	deadline := time.Now().Add(5 * time.Second)
	for s.String() != "tick\n" {
		if time.Now().After(deadline) {
			t.Fatal("not flushed by the timer")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCloseFlushesAndStops(t *testing.T) {
	s := &sink{}
	b := New(s, time.Hour, 1<<20)
	b.Write([]byte("last words\n"))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if s.String() != "last words\n" {
		t.Errorf("after Close: %q", s.String())
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestConcurrentWritesStayWhole(t *testing.T) {
	s := &sink{}
	b := New(s, time.Millisecond, 256)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				fmt.Fprintf(b, "g%d-%03d\n", g, i)
			}
		})
	}
	wg.Wait()
	b.Close()
	lines := strings.Split(strings.TrimSuffix(s.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	next := map[string]int{}
	for _, l := range lines {
		var g, i int
		if _, err := fmt.Sscanf(l, "g%d-%03d", &g, &i); err != nil {
			t.Fatalf("torn line %q", l)
		}
		key := fmt.Sprint(g)
		if i != next[key] {
			t.Fatalf("writer %d: line %d after %d", g, i, next[key]-1)
		}
		next[key]++
	}
}

func TestWriteErrorsAreReported(t *testing.T) {
	s := &sink{err: errors.New("disk full")}
	b := New(s, time.Hour, 1<<20)
	b.Write([]byte("x"))
	if err := b.Close(); err == nil || err.Error() != "disk full" {
		t.Errorf("Close = %v, want the write error", err)
	}
}
