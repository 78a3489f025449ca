package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// writeCounter is a ResponseWriter that remembers whether anything was
// written to the client.
type writeCounter struct {
	header http.Header
	writes int
	status int
}

func (w *writeCounter) Header() http.Header         { return w.header }
func (w *writeCounter) WriteHeader(code int)        { w.writes++; w.status = code }
func (w *writeCounter) Write(b []byte) (int, error) { w.writes++; return len(b), nil }

// logLines decodes the JSON log lines in buf (a bytes.Buffer, or a
// syncbuf.Buffer that a logger's goroutine writes).
func logLines(t *testing.T, buf fmt.Stringer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// A request whose client went away while a store call ran (the call fails
// with "context canceled") is logged as 499 at INFO, and nothing is written
// or logged as an error; the same failure with the client still there is a
// 500 logged at ERROR.
func TestClientGoneIs499(t *testing.T) {
	for _, gone := range []bool{true, false} {
		t.Run(fmt.Sprintf("gone=%v", gone), func(t *testing.T) {
			var buf bytes.Buffer
			s := New(nil, nil, Config{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))})
			h := s.observe(http.NewServeMux(), s.endpoint(func(r *http.Request) (int, any, error) {
				return 0, nil, fmt.Errorf("sqlite: find location: %w", context.Canceled)
			}))
			ctx, cancel := context.WithCancel(context.Background())
			if gone {
				cancel()
			} else {
				defer cancel()
			}
			w := &writeCounter{header: http.Header{}}
			h.ServeHTTP(w, httptest.NewRequest("POST", "/pos/clover/startInteraction", nil).WithContext(ctx))
			lines := logLines(t, &buf)
			last := lines[len(lines)-1]
			if gone {
				if w.writes != 0 {
					t.Errorf("%d writes to a client that went away (status %d)", w.writes, w.status)
				}
				if len(lines) != 1 || last["level"] != "INFO" || last["msg"] != "request" || last["status"] != float64(499) {
					t.Errorf("log %v, want one INFO request line with status 499", lines)
				}
				return
			}
			if w.status != 500 || len(lines) != 2 || lines[0]["level"] != "ERROR" || last["status"] != float64(500) {
				t.Errorf("status %d, log %v; want 500 with an ERROR line", w.status, lines)
			}
		})
	}
}

// A panic is an error of posgate's even when the client has gone.
func TestPanicWithClientGoneIsLogged(t *testing.T) {
	var buf bytes.Buffer
	s := New(nil, nil, Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	h := s.observe(http.NewServeMux(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.ServeHTTP(&writeCounter{header: http.Header{}}, httptest.NewRequest("GET", "/x", nil).WithContext(ctx))
	lines := logLines(t, &buf)
	if len(lines) != 2 || lines[0]["level"] != "ERROR" || !strings.Contains(fmt.Sprint(lines[0]["err"]), "panic: boom") || lines[1]["status"] != float64(499) {
		t.Errorf("log %v", lines)
	}
}
