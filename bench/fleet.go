package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A row with instances > 1 (transaction+webhooks@3) runs on several posgate
// processes sharing one PostgreSQL, as a fleet does (docs/fleet.md): the
// benchmark starts the others beside the store's posgate for the row, runs
// one wrk process per instance with its share of the connections (the
// sequence's threads split among them, so that no request repeats), and
// counts the CPU time of every instance.

// subscriptionWait is how long an instance may go on writing no events for
// an endpoint registered through another one (docs/api.md §19.1: within
// 5 s), and a margin.
const subscriptionWait = 5*time.Second + 500*time.Millisecond

// runsOn reports whether the row is measured on the store kind: a row of
// several instances needs a database they can share.
func (sc *scenario) runsOn(kind string) bool {
	return sc.instances <= 1 || kind == "postgres"
}

// startInstances starts n more posgate processes on the run's database.
// They take the first instance's address as their public one, as a fleet
// behind one address does (docs/fleet.md): the tokens' issuer is the same
// on every instance, so that each accepts the row's token.
func startInstances(ctx context.Context, o *options, e *env, n int) ([]*proc, error) {
	fleet := *o
	fleet.serveArgs = append(slices.Clone(o.serveArgs), "--base-url", e.BaseURL, "--auth-url", e.BaseURL)
	var procs []*proc
	for i := range n {
		logPath := filepath.Join(o.workDir, fmt.Sprintf("posgate-%s-instance%d.log", e.Kind, i+2))
		p, err := startPosgate(ctx, &fleet, e.bin, e.DSN, logPath, false)
		if err != nil {
			stopAll(procs)
			return nil, fmt.Errorf("instance %d: %w", i+2, err)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// stopAll stops procs.
func stopAll(procs []*proc) {
	for _, p := range procs {
		p.stop()
	}
}

// splitLoad is each wrk process's load when n share l: one thread and an
// n-th of the connections each.
func splitLoad(l load, n int) load {
	if n <= 1 {
		return l
	}
	return load{Threads: 1, Connections: max(1, l.Connections/n), Duration: l.Duration}
}

// runWrkAll runs one wrk process per instance at once, process i with
// script(i) against procs[i], and merges their results: requests, errors
// and issued requests add up, the rate is their sum, the latency
// percentiles are the highest of the processes' (wrk's histograms cannot be
// merged).
func runWrkAll(ctx context.Context, procs []*proc, script func(part int) (string, error), l load, workDir, name string) (*result, error) {
	if len(procs) == 1 {
		s, err := script(0)
		if err != nil {
			return nil, err
		}
		return runWrk(ctx, procs[0].BaseURL, s, l, workDir, name)
	}
	rs, errs := make([]*result, len(procs)), make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		s, err := script(i)
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i], errs[i] = runWrk(ctx, p.BaseURL, s, l, workDir, name+"-"+strconv.Itoa(i+1))
		}()
	}
	wg.Wait()
	out := &result{}
	for i, r := range rs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out.Connections += r.Connections
		out.Requests += r.Requests
		out.Status += r.Status
		out.Socket += r.Socket
		out.RPS += r.RPS
		out.Duration = max(out.Duration, r.Duration)
		out.P50, out.P99 = max(out.P50, r.P50), max(out.P99, r.P99)
		out.Issued += r.Issued
		out.IssuedMost = max(out.IssuedMost, r.IssuedMost)
	}
	return out, nil
}

// cpuTimeAll is the CPU time of every instance.
func cpuTimeAll(procs []*proc) (time.Duration, error) {
	var sum time.Duration
	for _, p := range procs {
		t, err := p.cpuTime()
		if err != nil {
			return 0, err
		}
		sum += t
	}
	return sum, nil
}

// delivered reads how many deliveries each instance has sent with a 2xx
// answer (posgate_webhook_attempts_total{outcome="delivered"}).
func delivered(ctx context.Context, procs []*proc) ([]int64, error) {
	out := make([]int64, len(procs))
	for i, p := range procs {
		text, err := p.scrapeMetrics(ctx)
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(text) {
			if v, ok := strings.CutPrefix(line, `posgate_webhook_attempts_total{outcome="delivered"} `); ok {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					return nil, fmt.Errorf("instance %d: %q: %w", i+1, line, err)
				}
				out[i] = int64(f)
			}
		}
	}
	return out, nil
}

// describeDelivered is the note's share of the events each instance sent.
func describeDelivered(before, after []int64) string {
	parts := make([]string, len(after))
	for i := range after {
		parts[i] = strconv.FormatInt(after[i]-before[i], 10)
	}
	return "deliveries per instance: " + strings.Join(slices.Clip(parts), " / ")
}
