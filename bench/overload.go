package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Parameters of the overload row: startInteraction from 2,000
// connections at once, each sending its next request as soon as it has its
// answer, against the instance's default in-flight bound.
const (
	overloadConnections = 2000
	overloadDuration    = 10 * time.Second
	overloadTimeout     = 2 * time.Second // the probe's: wrk's own default
)

// runOverload drives the overload row: wrk holds the 2,000 connections (it
// costs far less CPU per request than a Go client would, and the machine
// has two cores for both), while a probe of a few connections of its own
// sends the same requests and times each answer by status. The row's bar is
// on the latency of the answered 200s alone: wrk has one latency
// distribution for all answers, which the fast 503s of the shed requests
// would pull down; the probe's requests compete for slots exactly as wrk's
// do, so their 200s sample what every connection sees.
func runOverload(ctx context.Context, e *env) (*result, error) {
	if err := raiseFileLimit(overloadConnections*2 + 256); err != nil {
		return nil, err
	}
	path := "/pos/" + e.Data.POSSystem + "/startInteraction"
	const body = `{"terminalId":"$2","posLocationId":"$1"}`
	script, err := luaScript(http.MethodPost, path, body,
		[][2]string{{"Authorization", "Bearer " + e.Token}, {"Content-Type", "application/json"}}, e.Data.ActiveTerminals)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "posgate-overload")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	probeCtx, stopProbe := context.WithCancel(ctx)
	probed := make(chan probeTally, 1)
	go func() { probed <- probeOverload(probeCtx, e, path) }()
	r, err := runWrk(ctx, e.BaseURL, script, load{Threads: 2, Connections: overloadConnections, Duration: overloadDuration}, dir, "overload")
	stopProbe()
	p := <-probed
	if err != nil {
		return nil, err
	}
	wrkP50, wrkP99 := r.P50, r.P99
	r.Connections = overloadConnections + overloadProbes
	r.Requests += int64(len(p.ok)+len(p.shed)) + p.other
	shedByWrk := r.Status // wrk counts every non-2xx; the others are the probe's
	r.Status = p.other
	r.Socket += p.timeouts + p.socketErrs
	r.RPS = float64(r.Requests-shedByWrk-int64(len(p.shed))-p.other) / r.Duration.Seconds()
	r.P50, r.P99 = quantile(p.ok, 0.5), quantile(p.ok, 0.99)
	r.ShedP99 = quantile(p.shed, 0.99)
	r.Note = fmt.Sprintf("wrk: %d answers, %d of them not 2xx (the 503s), all answers p50 %s p99 %s, %d socket errors/timeouts (5 s); "+
		"probe (%d connections): %d answered 200 (p50 %s, p99 %s, max %s), %d shed with 503 (p50 %s, p99 %s, max %s), %d other, %d timeouts (2 s), %d socket errors",
		r.Requests-int64(len(p.ok)+len(p.shed))-p.other, shedByWrk, fmtDur(wrkP50), fmtDur(wrkP99), r.Socket-p.timeouts-p.socketErrs,
		overloadProbes, len(p.ok), fmtDur(r.P50), fmtDur(r.P99), fmtDur(quantile(p.ok, 1)),
		len(p.shed), fmtDur(quantile(p.shed, 0.5)), fmtDur(quantile(p.shed, 0.99)), fmtDur(quantile(p.shed, 1)), p.other, p.timeouts, p.socketErrs)
	if len(p.ok) == 0 {
		r.Failed = append(r.Failed, "the probe got no 200")
	}
	return r, nil
}

// overloadProbes is the probe's connection count.
const overloadProbes = 4

// probeTally is what the probe saw: latencies by status, sorted.
type probeTally struct {
	ok, shed                    []time.Duration
	other, timeouts, socketErrs int64
}

// probeOverload sends startInteraction requests in a closed loop on
// overloadProbes keep-alive connections until ctx is done.
func probeOverload(ctx context.Context, e *env, path string) probeTally {
	keys := e.Data.ActiveTerminals
	return probeLoad(ctx, func() *http.Request {
		k := keys[rand.IntN(len(keys))]
		req, _ := http.NewRequest(http.MethodPost, e.BaseURL+path,
			strings.NewReader(`{"terminalId":"`+k[1]+`","posLocationId":"`+k[0]+`"}`))
		req.Header.Set("Authorization", "Bearer "+e.Token)
		req.Header.Set("Content-Type", "application/json")
		return req
	})
}

// probeLoad sends the requests of newReq in a closed loop on overloadProbes
// keep-alive connections until ctx is done, and times each answer by status.
func probeLoad(ctx context.Context, newReq func() *http.Request) probeTally {
	tr := &http.Transport{MaxIdleConnsPerHost: overloadProbes, MaxConnsPerHost: overloadProbes,
		DialContext: (&net.Dialer{Timeout: overloadTimeout}).DialContext, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: overloadTimeout}
	tallies := make([]probeTally, overloadProbes)
	var wg sync.WaitGroup
	for i := range tallies {
		wg.Go(func() {
			t := &tallies[i]
			for ctx.Err() == nil {
				req := newReq()
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						t.timeouts++
					} else {
						t.socketErrs++
					}
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d := time.Since(t0)
				switch {
				case err != nil:
					t.socketErrs++
				case resp.StatusCode == http.StatusOK:
					t.ok = append(t.ok, d)
				case resp.StatusCode == http.StatusServiceUnavailable:
					t.shed = append(t.shed, d)
				default:
					t.other++
				}
			}
		})
	}
	wg.Wait()
	var all probeTally
	for _, t := range tallies {
		all.ok, all.shed = append(all.ok, t.ok...), append(all.shed, t.shed...)
		all.other, all.timeouts, all.socketErrs = all.other+t.other, all.timeouts+t.timeouts, all.socketErrs+t.socketErrs
	}
	slices.Sort(all.ok)
	slices.Sort(all.shed)
	return all
}

// quantile returns the q-quantile of sorted durations (0 for none).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// raiseFileLimit raises the soft limit on open files to at least n (within
// the hard limit): 2,000 connections need as many sockets in this process
// and in posgate, which inherits the limit when it is started after this.
func raiseFileLimit(n uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	if l.Cur >= n {
		return nil
	}
	if l.Max < n {
		return fmt.Errorf("the hard limit on open files is %d, the overload row needs %d: raise it (ulimit -Hn)", l.Max, n)
	}
	l.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("setrlimit: %w", err)
	}
	return nil
}
