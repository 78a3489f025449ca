package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// baselineFlag makes the bench binary serve the baseline instead of
// benchmarking: the benchmark re-runs itself with it, so that the baseline
// is a process of its own like posgate.
const baselineFlag = "-serve-baseline"

// serveBaseline is the machine's ceiling: a bare net/http server answering
// GET /json with a small JSON object encoded per request (TechEmpower's
// "JSON serialization" test), and GET /readyz.
func serveBaseline(addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		writeBareJSON(w, struct {
			Message string `json:"message"`
		}{"Hello, World!"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {})
	return http.ListenAndServe(addr, mux)
}

// runBaseline starts the baseline process and drives it with the run's
// load settings at conns connections.
func runBaseline(ctx context.Context, o *options, conns int) (*result, error) {
	l := o.load
	l.Connections = conns
	p, script, err := startBaseline(ctx, o)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	if o.warmup > 0 {
		if _, err := runWrk(ctx, p.BaseURL, script, load{l.Threads, l.Connections, o.warmup}, o.workDir, "baseline-warmup"); err != nil {
			return nil, err
		}
	}
	cpu0, err := p.cpuTime()
	if err != nil {
		return nil, err
	}
	r, err := runWrk(ctx, p.BaseURL, script, l, o.workDir, "baseline")
	if err != nil {
		return nil, err
	}
	cpu1, err := p.cpuTime()
	if err != nil {
		return nil, err
	}
	r.CPUPerReq = perRequest(cpu1-cpu0, r.Requests)
	r.Scenario, r.Store, r.Ratio = "baseline (net/http JSON hello-world)", "-", 1
	return r, nil
}

// startBaseline starts the baseline as a process of its own, on the
// server's CPUs, and returns once it answers, with the wrk script of its
// one request.
func startBaseline(ctx context.Context, o *options) (*proc, string, error) {
	script, err := luaScript(http.MethodGet, "/json", "", nil, nil)
	if err != nil {
		return nil, "", err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	p := &proc{BaseURL: "http://" + addr, cpus: o.serverCPUs}
	if err := p.start(ctx, self, []string{baselineFlag, addr}, filepath.Join(o.workDir, "baseline.log"), p.BaseURL+"/readyz"); err != nil {
		return nil, "", fmt.Errorf("baseline: %w", err)
	}
	return p, script, nil
}

// runOverloadBaseline measures the baseline as runOverload measures
// posgate: wrk on overloadConnections connections and the probe beside it,
// whose answers give the p50 and p99. It is the floor of the overload row's
// latency: with every connection sending its next request as soon as it has
// an answer, a server's answers wait about connections / (answers per
// second) whatever it does with them (Little's law), so the row's bar is
// only meaningful next to what a server that does nothing shows here.
func runOverloadBaseline(ctx context.Context, o *options) (*result, error) {
	if err := raiseFileLimit(overloadConnections*2 + 256); err != nil {
		return nil, err
	}
	p, script, err := startBaseline(ctx, o)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	cpu0, err := p.cpuTime()
	if err != nil {
		return nil, err
	}
	probeCtx, stopProbe := context.WithCancel(ctx)
	probed := make(chan probeTally, 1)
	go func() {
		probed <- probeLoad(probeCtx, func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, p.BaseURL+"/json", nil)
			return req
		})
	}()
	r, err := runWrk(ctx, p.BaseURL, script, load{Threads: o.load.Threads, Connections: overloadConnections, Duration: overloadDuration}, o.workDir, "baseline-overload")
	stopProbe()
	t := <-probed
	if err != nil {
		return nil, err
	}
	cpu1, err := p.cpuTime()
	if err != nil {
		return nil, err
	}
	n := int64(len(t.ok))
	r.Requests += n + int64(len(t.shed)) + t.other
	r.Status += int64(len(t.shed)) + t.other
	r.Socket += t.timeouts + t.socketErrs
	r.CPUPerReq = perRequest(cpu1-cpu0, r.Requests)
	r.Connections = overloadConnections + overloadProbes
	r.Note = fmt.Sprintf("wrk: all answers p50 %s p99 %s; probe (%d connections): %d answered (p50 %s, p99 %s, max %s)",
		fmtDur(r.P50), fmtDur(r.P99), overloadProbes, n, fmtDur(quantile(t.ok, 0.5)), fmtDur(quantile(t.ok, 0.99)), fmtDur(quantile(t.ok, 1)))
	r.P50, r.P99 = quantile(t.ok, 0.5), quantile(t.ok, 0.99)
	r.ShedP99 = r.P99 // the bare server sheds nothing: its answers are the 503s' bar too
	r.Scenario, r.Store = "baseline (net/http JSON hello-world)", "-"
	return r, nil
}

// perRequest divides a CPU time among n requests.
func perRequest(cpu time.Duration, n int64) time.Duration {
	if n <= 0 {
		return 0
	}
	return cpu / time.Duration(n)
}

// writeBareJSON answers v encoded per request, as the bare servers (the
// baseline and the read floors) do.
func writeBareJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
