package main

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/logbuf"
)

// syncBuffer is a bytes.Buffer safe for the log writer's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A request line waits in the buffer; any other line is written at once,
// with the request lines before it, in order.
func TestFlushingLogger(t *testing.T) {
	var out syncBuffer
	buf := logbuf.New(&out, time.Hour, 0)
	defer buf.Close()
	log, err := newLogger("info", "json", buf)
	if err != nil {
		t.Fatal(err)
	}
	l := slog.New(flushing{log.Handler(), buf}).With("app", "posgate")
	l.Info("request", "path", "/a")
	if got := out.String(); got != "" {
		t.Fatalf("a request line was written at once: %q", got)
	}
	l.Info("transaction batch: applying", "items", 1000)
	got := out.String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"msg":"request"`) ||
		!strings.Contains(lines[1], `"msg":"transaction batch: applying"`) || !strings.Contains(lines[1], `"app":"posgate"`) {
		t.Fatalf("written: %q", got)
	}
}
