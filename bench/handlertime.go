package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// handlerHist is posgate's own histogram of handler time
// (posgate_http_request_duration_seconds, summed over every route): the
// time from the request's arrival at posgate's handler to its answer, which
// leaves out reading the request, writing the bulk of a small answer, and
// every wait for a CPU before and between them. Next to wrk's latency of the
// same requests it tells how much of a row's tail is spent in posgate's code
// and how much waiting to run (docs/performance.md, "How to measure").
type handlerHist struct {
	bounds []float64 // upper bounds in seconds, ascending; the last is +Inf
	counts []float64 // cumulative counts, one per bound
}

const handlerMetric = "posgate_http_request_duration_seconds_bucket"

// scrapeMetrics reads the exposition of posgate's metrics listener.
func (p *proc) scrapeMetrics(ctx context.Context) (string, error) {
	if p.MetricsURL == "" {
		return "", fmt.Errorf("posgate runs without a metrics listener")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.MetricsURL+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("metrics: %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return string(b), err
}

// rowMetrics is what a row reads of posgate's metrics before and after
// its load, from one scrape.
type rowMetrics struct {
	hist    handlerHist
	writers map[string]float64 // busy seconds by group-commit writer
}

// scrapeRowMetrics reads the handler histogram and the writers' busy time
// from one scrape of posgate's metrics listener.
func (p *proc) scrapeRowMetrics(ctx context.Context) (rowMetrics, error) {
	text, err := p.scrapeMetrics(ctx)
	if err != nil {
		return rowMetrics{}, err
	}
	h, err := parseHandlerHist(text)
	if err != nil {
		return rowMetrics{}, err
	}
	w, err := parseWritersBusy(text)
	if err != nil {
		return rowMetrics{}, err
	}
	return rowMetrics{hist: h, writers: w}, nil
}

// parseHandlerHist reads the histogram, its routes summed, from an
// exposition.
func parseHandlerHist(text string) (handlerHist, error) {
	byBound := map[float64]float64{}
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if !strings.HasPrefix(line, handlerMetric+"{") {
			continue
		}
		_, rest, _ := strings.Cut(line, `le="`)
		le, rest, ok := strings.Cut(rest, `"`)
		fields := strings.Fields(rest)
		if !ok || len(fields) == 0 {
			return handlerHist{}, fmt.Errorf("metrics: cannot read %q", line)
		}
		bound, err1 := strconv.ParseFloat(le, 64)
		n, err2 := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err1 != nil || err2 != nil {
			return handlerHist{}, fmt.Errorf("metrics: cannot read %q", line)
		}
		byBound[bound] += n
	}
	var h handlerHist
	for b := range byBound {
		h.bounds = append(h.bounds, b)
	}
	slices.Sort(h.bounds)
	for _, b := range h.bounds {
		h.counts = append(h.counts, byBound[b])
	}
	return h, nil
}

// since is the histogram of the requests answered between earlier and h.
func (h handlerHist) since(earlier handlerHist) handlerHist {
	out := handlerHist{bounds: h.bounds, counts: slices.Clone(h.counts)}
	for i, b := range h.bounds {
		if j := slices.Index(earlier.bounds, b); j >= 0 {
			out.counts[i] -= earlier.counts[j]
		}
	}
	return out
}

// quantile is the upper bound of the bucket that holds the q-quantile (0 for
// an empty histogram, +Inf beyond the last finite bound).
func (h handlerHist) quantile(q float64) float64 {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return 0
	}
	want := q * h.counts[len(h.counts)-1]
	for i, c := range h.counts {
		if c >= want {
			return h.bounds[i]
		}
	}
	return h.bounds[len(h.bounds)-1]
}

// describe is the note a row gets: the buckets of posgate's p50 and p99.
func (h handlerHist) describe() string {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return ""
	}
	secs := func(s float64) string {
		if s < 1 {
			return strconv.FormatFloat(s*1000, 'g', -1, 64) + " ms"
		}
		return strconv.FormatFloat(s, 'g', -1, 64) + " s"
	}
	bound := func(s float64) string {
		if math.IsInf(s, 1) && len(h.bounds) > 1 {
			return "> " + secs(h.bounds[len(h.bounds)-2])
		}
		return "≤ " + secs(s)
	}
	return fmt.Sprintf("in posgate's handlers (its histogram): p50 %s, p99 %s", bound(h.quantile(0.5)), bound(h.quantile(0.99)))
}

const writersMetric = `posgate_store_group_writer_busy_seconds_total{writer="`

// parseWritersBusy reads, by writer, the seconds posgate's group-commit
// writers have spent in their transactions
// (posgate_store_group_writer_busy_seconds_total) from an exposition.
func parseWritersBusy(text string) (map[string]float64, error) {
	out := map[string]float64{}
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, writersMetric)
		if !ok {
			continue
		}
		name, value, ok := strings.Cut(rest, `"} `)
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("metrics: cannot read %q", line)
		}
		out[name] = v
	}
	return out, nil
}

// describeWritersBusy is the note a row gets: the share of its wall time
// that each writer busy during it spent in transactions. A share near
// 100 % names the row's bottleneck (docs/performance.md, "What is met").
func describeWritersBusy(before, after map[string]float64, wall time.Duration) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if d := after[name] - before[name]; d > 0 && wall > 0 {
			parts = append(parts, fmt.Sprintf("%s writer %.0f %%", name, 100*d/wall.Seconds()))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "group writers busy (share of the row's time): " + strings.Join(parts, ", ")
}
