package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The shed answer, built from a prefix encoded once, is byte for byte the
// problem document writeProblem writes, for each detail.
func TestShedAnswerIsTheProblemDocument(t *testing.T) {
	s := &Server{}
	for _, detail := range []string{"posgate is at capacity; retry in a second.", `Another "detail" <&>.`} {
		for _, id := range []string{newTraceID(), traceIDFrom("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")} {
			r := httptest.NewRequest(http.MethodGet, "/pos/p/x", nil)
			r = r.WithContext(context.WithValue(r.Context(), principalKey, &principalBox{traceID: id}))
			got, want := httptest.NewRecorder(), httptest.NewRecorder()
			s.overloaded(got, r, detail)
			writeProblem(want, r, http.StatusServiceUnavailable, detail, nil)
			if got.Code != 503 || got.Body.String() != want.Body.String() {
				t.Errorf("shed answer %d %s, want %s", got.Code, got.Body, want.Body)
			}
			for _, h := range []string{"Content-Type", "Content-Length"} {
				if got.Header().Get(h) != want.Header().Get(h) {
					t.Errorf("%s %q, want %q", h, got.Header().Get(h), want.Header().Get(h))
				}
			}
			if got.Header().Get("Retry-After") != "1" {
				t.Errorf("Retry-After %q", got.Header().Get("Retry-After"))
			}
		}
	}
}
