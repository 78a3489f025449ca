package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkGuardedWithoutKey measures what the Idempotency-Key support adds
// to a POST that does not carry the header (docs/api.md §14): a method
// comparison and one header lookup, no allocation.
func BenchmarkGuardedWithoutKey(b *testing.B) {
	s := &Server{}
	r := httptest.NewRequest(http.MethodPost, "/pos/clover/startInteraction", strings.NewReader(`{}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer x")
	w := httptest.NewRecorder()
	calls := 0
	next := func(http.ResponseWriter, *http.Request) { calls++ }
	b.ReportAllocs()
	for b.Loop() {
		s.guarded(w, r, next)
	}
	if calls == 0 {
		b.Fatal("next was not called")
	}
}
