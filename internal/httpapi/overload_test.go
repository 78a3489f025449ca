package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/syncbuf"
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

// TestShedRequestsAreSummedUpInTheLog: a shed request's line is at DEBUG,
// and one WARN line a second gives their count (docs/api.md §16.3); an
// admitted request keeps its INFO line.
func TestShedRequestsAreSummedUpInTheLog(t *testing.T) {
	var sink syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := &Server{log: log, obs: nopObserver{}, inFlight: newSlots(1, 0, 0), shedLog: &shedLog{log: log, window: 100 * time.Millisecond}}
	release, held := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hold", func(w http.ResponseWriter, r *http.Request) {
		close(held)
		<-release
		w.WriteHeader(http.StatusOK)
	})
	srv := httptest.NewServer(s.observe(mux, s.shed(mux)))
	defer srv.Close()

	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.Get(srv.URL + "/hold"); err == nil {
			resp.Body.Close()
		}
	}()
	<-held
	for range 3 {
		resp, err := http.Get(srv.URL + "/hold")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("status %d while the only slot is held, want 503", resp.StatusCode)
		}
	}
	close(release)
	<-done

	deadline := time.Now().Add(5 * time.Second)
	for {
		var infos, debugs, sums int
		for _, l := range logLines(t, &sink) {
			switch {
			case l["msg"] == "request" && l["level"] == "INFO":
				infos++
				if l["status"] != float64(200) {
					t.Fatalf("INFO request line of status %v", l["status"])
				}
			case l["msg"] == "request" && l["level"] == "DEBUG":
				debugs++
				if l["status"] != float64(503) {
					t.Fatalf("DEBUG request line of status %v", l["status"])
				}
			case l["msg"] == "requests shed":
				sums++
				if l["level"] != "WARN" || l["count"] != float64(3) {
					t.Fatalf("sum line %v, want WARN with count 3", l)
				}
			}
		}
		if sums == 1 {
			if infos != 1 || debugs != 3 {
				t.Fatalf("%d INFO and %d DEBUG request lines, want 1 and 3", infos, debugs)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sum of the shed requests logged (%d INFO, %d DEBUG lines)", infos, debugs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
