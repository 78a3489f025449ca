package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// exposition is a metrics page with two routes' handler-time histograms and
// a metric whose name starts alike.
const exposition = `# HELP posgate_http_request_duration_seconds Time ...
# TYPE posgate_http_request_duration_seconds histogram
posgate_http_request_duration_seconds_bucket{route="GET /a",le="0.0005"} 10
posgate_http_request_duration_seconds_bucket{route="GET /a",le="0.001"} 90
posgate_http_request_duration_seconds_bucket{route="GET /a",le="0.0025"} 99
posgate_http_request_duration_seconds_bucket{route="GET /a",le="+Inf"} 100
posgate_http_request_duration_seconds_sum{route="GET /a"} 0.1
posgate_http_request_duration_seconds_count{route="GET /a"} 100
posgate_http_request_duration_seconds_bucket{route="POST /b",le="0.0005"} 0
posgate_http_request_duration_seconds_bucket{route="POST /b",le="0.001"} 0
posgate_http_request_duration_seconds_bucket{route="POST /b",le="0.0025"} 0
posgate_http_request_duration_seconds_bucket{route="POST /b",le="+Inf"} 100
posgate_http_request_duration_seconds_bucket_extra{le="0.001"} 7
`

func TestHandlerHist(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(exposition)) }))
	defer srv.Close()
	p := &proc{MetricsURL: srv.URL}
	m, err := p.scrapeRowMetrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h := m.hist
	if got, want := h.counts, []float64{10, 90, 99, 200}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("counts %v, want %v (the routes summed per bound)", got, want)
	}
	if q := h.quantile(0.4); q != 0.001 {
		t.Errorf("p40 bound %v, want 0.001", q)
	}
	if got := h.describe(); got != "in posgate's handlers (its histogram): p50 > 2.5 ms, p99 > 2.5 ms" {
		t.Errorf("describe: %q", got)
	}
	// Since a first scrape of route a alone: only b's requests remain.
	first := handlerHist{bounds: h.bounds, counts: []float64{10, 90, 99, 100}}
	if got := h.since(first).describe(); got != "in posgate's handlers (its histogram): p50 > 2.5 ms, p99 > 2.5 ms" {
		t.Errorf("since: %q", got)
	}
	a := handlerHist{bounds: h.bounds, counts: []float64{10, 90, 99, 100}}
	if got := a.describe(); got != "in posgate's handlers (its histogram): p50 ≤ 1 ms, p99 ≤ 2.5 ms" {
		t.Errorf("route a: %q", got)
	}
	if got := a.since(a).describe(); got != "" {
		t.Errorf("no requests: %q, want none", got)
	}
}

// TestWritersBusy: the busy seconds of each writer are read from the
// exposition, and a row's note gives the share of its time of those that
// were busy during it.
func TestWritersBusy(t *testing.T) {
	page := exposition + `# TYPE posgate_store_group_writer_busy_seconds_total counter
posgate_store_group_writer_busy_seconds_total{writer="sales"} 12.5
posgate_store_group_writer_busy_seconds_total{writer="sessions"} 3
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) }))
	defer srv.Close()
	m, err := (&proc{MetricsURL: srv.URL}).scrapeRowMetrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after := m.writers
	if len(after) != 2 || after["sales"] != 12.5 || after["sessions"] != 3 {
		t.Fatalf("read %v", after)
	}
	before := map[string]float64{"sales": 2.5, "sessions": 3}
	if got := describeWritersBusy(before, after, 10*time.Second); got != "group writers busy (share of the row's time): sales writer 100 %" {
		t.Errorf("note %q", got)
	}
	if got := describeWritersBusy(after, after, 10*time.Second); got != "" {
		t.Errorf("note %q for writers that did nothing", got)
	}
	if _, err := parseWritersBusy(`posgate_store_group_writer_busy_seconds_total{writer="sales"} x` + "\n"); err == nil {
		t.Error("an unreadable value was taken")
	}
}
