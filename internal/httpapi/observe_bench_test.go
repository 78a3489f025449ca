package httpapi

import (
	"github.com/posgate/posgate/internal/service"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/posgate/posgate/internal/logbuf"
)

// BenchmarkObserve measures the per-request cost of the middleware (trace
// id, request log line) around an empty handler, with the log going to a
// file as `posgate serve` writes it to stderr.
func BenchmarkObserve(b *testing.B) {
	for _, tc := range []struct {
		name string
		log  func(f *os.File) *slog.Logger
	}{
		{"nolog", func(*os.File) *slog.Logger { return slog.New(slog.DiscardHandler) }},
		{"text", func(f *os.File) *slog.Logger { return slog.New(slog.NewTextHandler(f, nil)) }},
		{"json", func(f *os.File) *slog.Logger { return slog.New(slog.NewJSONHandler(f, nil)) }},
		// As posgate serve logs: through logbuf (flushed every 100 ms).
		{"text-buffered", func(f *os.File) *slog.Logger { return slog.New(slog.NewTextHandler(logbuf.New(f, 0, 0), nil)) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			s := &Server{log: tc.log(f), obs: nopObserver{}}
			mux := http.NewServeMux()
			mux.HandleFunc("POST /pos/{posSystemId}/startInteraction", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
			h := s.observe(mux, mux)
			req := httptest.NewRequest(http.MethodPost, "/pos/clover/startInteraction", nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

// BenchmarkTraceID measures the trace id every request gets.
func BenchmarkTraceID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = newTraceID()
	}
}

// BenchmarkWriteJSON measures encoding startInteraction's answer.
func BenchmarkWriteJSON(b *testing.B) {
	id := "0b6f0c0e-8a4c-4bd4-9a07-3f1c3c0b9c1e"
	out := envelope{service.Interaction{TerminalID: "TERM-05", PosLocationID: "LOC123", SessionID: &id, PosStatus: "Accepted"}}
	req := httptest.NewRequest(http.MethodPost, "/pos/clover/startInteraction", nil)
	b.ReportAllocs()
	for b.Loop() {
		writeJSON(httptest.NewRecorder(), req, http.StatusOK, out)
	}
}
