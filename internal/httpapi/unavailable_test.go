package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/posgate/posgate"
)

// An unreachable database (a store error carrying EUNAVAILABLE) is
// answered 503 with Retry-After and the store's message, and its cause is
// logged at WARN, never shown.
func TestStoreUnavailableIs503(t *testing.T) {
	var buf bytes.Buffer
	s := New(nil, nil, Config{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	away := &posgate.Error{Code: posgate.EUNAVAILABLE, Message: "The database is unavailable; try again."}
	h := s.observe(http.NewServeMux(), s.endpoint(func(r *http.Request) (int, any, error) {
		return 0, nil, fmt.Errorf("postgres: find location: %w", errors.Join(away, errors.New("FATAL: server conn crashed? (SQLSTATE 08P01)")))
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/pos/clover/x", nil))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("status %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if body := w.Body.String(); !strings.Contains(body, `"detail":"The database is unavailable; try again."`) || strings.Contains(body, "SQLSTATE") {
		t.Fatalf("body %s", body)
	}
	found := false
	for _, line := range logLines(t, &buf) {
		if line["msg"] == "store unavailable" {
			found = line["level"] == "WARN" && strings.Contains(fmt.Sprint(line["err"]), "server conn crashed")
		}
	}
	if !found {
		t.Fatalf("no WARN line with the cause: %s", buf.String())
	}
}
