package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/logbuf"
	"github.com/posgate/posgate/internal/syncbuf"
)

// A request line waits in the buffer; any other line is written at once,
// with the request lines before it, in order.
func TestFlushingLogger(t *testing.T) {
	var out syncbuf.Buffer
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
