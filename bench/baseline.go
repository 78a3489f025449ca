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
		b, err := json.Marshal(struct {
			Message string `json:"message"`
		}{"Hello, World!"})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {})
	return http.ListenAndServe(addr, mux)
}

// runBaseline starts the baseline process and drives it with the run's
// load settings at conns connections.
func runBaseline(ctx context.Context, o *options, conns int) (*result, error) {
	l := o.load
	l.Connections = conns
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p := &proc{BaseURL: "http://" + addr, cpus: o.serverCPUs}
	if err := p.start(ctx, self, []string{baselineFlag, addr}, filepath.Join(o.workDir, "baseline.log"), p.BaseURL+"/readyz"); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer p.stop()
	script, err := luaScript(http.MethodGet, "/json", "", nil, nil)
	if err != nil {
		return nil, err
	}
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

// perRequest divides a CPU time among n requests.
func perRequest(cpu time.Duration, n int64) time.Duration {
	if n <= 0 {
		return 0
	}
	return cpu / time.Duration(n)
}
