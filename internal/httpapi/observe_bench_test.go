package httpapi

import (
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
			s := &Server{log: tc.log(f)}
			h := s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
			req := httptest.NewRequest(http.MethodPost, "/pos/clover/startInteraction", nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
