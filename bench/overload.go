package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Parameters of the overload row (issue 17): startInteraction from 2,000
// connections at once, each sending its next request as soon as it has its
// answer, against the instance's default in-flight bound.
const (
	overloadConnections = 2000
	overloadDuration    = 10 * time.Second
	overloadTimeout     = 2 * time.Second // wrk's default: an answer later than this is a timeout
)

// runOverload drives the overload row with a load generator of its own
// rather than wrk: the row's bar is on the latency of the answered 200s
// alone (the 503s of the shed requests are meant to be fast, and would pull
// wrk's one latency distribution down), so it needs the latencies by status.
// Every connection is its own keep-alive connection, as wrk's are.
func runOverload(ctx context.Context, e *env) (*result, error) {
	if err := raiseFileLimit(overloadConnections*2 + 256); err != nil {
		return nil, err
	}
	tr := &http.Transport{
		MaxIdleConnsPerHost: overloadConnections, MaxConnsPerHost: overloadConnections,
		DialContext: (&net.Dialer{Timeout: overloadTimeout}).DialContext, DisableCompression: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: overloadTimeout}
	url := fmt.Sprintf("%s/pos/%s/startInteraction", e.BaseURL, e.Data.POSSystem)
	keys := e.Data.ActiveTerminals

	type tally struct {
		ok, shed                  []time.Duration
		other, timeouts, socketEr int64
	}
	tallies := make([]tally, overloadConnections)
	deadline := time.Now().Add(overloadDuration)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range overloadConnections {
		wg.Go(func() {
			t := &tallies[i]
			for time.Now().Before(deadline) && ctx.Err() == nil {
				k := keys[rand.IntN(len(keys))]
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url,
					strings.NewReader(`{"terminalId":"`+k[1]+`","posLocationId":"`+k[0]+`"}`))
				req.Header.Set("Authorization", "Bearer "+e.Token)
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						t.timeouts++
					} else {
						t.socketEr++
					}
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d := time.Since(t0)
				switch {
				case err != nil:
					t.socketEr++
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
	elapsed := time.Since(start)

	var ok, shed []time.Duration
	var other, timeouts, socketErrs int64
	for _, t := range tallies {
		ok, shed = append(ok, t.ok...), append(shed, t.shed...)
		other, timeouts, socketErrs = other+t.other, timeouts+t.timeouts, socketErrs+t.socketEr
	}
	slices.Sort(ok)
	slices.Sort(shed)
	r := &result{Connections: overloadConnections, Duration: elapsed,
		Requests: int64(len(ok)+len(shed)) + other, Status: other, Socket: timeouts + socketErrs,
		RPS: float64(len(ok)) / elapsed.Seconds(), P50: quantile(ok, 0.5), P99: quantile(ok, 0.99)}
	r.Note = fmt.Sprintf("%d answered 200 (%.0f/s, p50 %s, p99 %s); %d shed with 503 (%.0f/s, p50 %s, p99 %s, max %s); %d other statuses, %d timeouts, %d socket errors",
		len(ok), r.RPS, fmtDur(r.P50), fmtDur(r.P99), len(shed), float64(len(shed))/elapsed.Seconds(),
		fmtDur(quantile(shed, 0.5)), fmtDur(quantile(shed, 0.99)), fmtDur(quantile(shed, 1)), other, timeouts, socketErrs)
	if len(ok) == 0 {
		r.Failed = append(r.Failed, "no request was answered 200")
	}
	return r, nil
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
