package fleettest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
)

// clockTick is Linux's USER_HZ, the unit of /proc/PID/stat's times.
const clockTick = 10 * time.Millisecond

// cpuOf returns the CPU time (user + system) pid and its children alive now
// have used; children is a map of parent PID to children PIDs.
func cpuOf(pid int, children map[int][]int) time.Duration {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// The fields after the command (in parentheses, which may hold spaces).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	d := time.Duration(utime+stime) * clockTick
	for _, c := range children[pid] {
		d += cpuOf(c, children)
	}
	return d
}

// processTree maps each process to its children.
func processTree() map[int][]int {
	tree := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		ppid, _ := strconv.Atoi(f[1])
		tree[ppid] = append(tree[ppid], pid)
	}
	return tree
}

// pidFile reads the first line of a PID file ("" when there is none).
func pidFile(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// fleetCPU is the CPU time each part of the fleet has used so far.
func (f *fleet) fleetCPU() map[string]time.Duration {
	tree := processTree()
	out := map[string]time.Duration{}
	for i := range f.instances {
		out["posgate"] += cpuOf(f.pid(i), tree)
	}
	out["postgresql primary"] = cpuOf(pidFile(filepath.Join(f.dir, "primary", "postmaster.pid")), tree)
	out["postgresql standby"] = cpuOf(pidFile(filepath.Join(f.dir, "standby", "postmaster.pid")), tree)
	out["pgbouncer"] = cpuOf(pidFile(filepath.Join(f.dir, "pgbouncer", "pgbouncer.pid")), tree)
	out["haproxy"] = cpuOf(pidFile(filepath.Join(f.dir, "haproxy.pid")), tree)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	out["load generator (this test)"] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return out
}

// TestCPUPerOperation measures the CPU each part of the fleet spends per
// sale (startInteraction and the transaction, with a loyalty user) and per
// loyalty-user lookup, at a steady rate through haproxy: the figures of
// docs/scaling.md's capacity model. It fails when posgate's CPU per sale
// is over 5 ms, far above what it measures, or a sale fails.
func TestCPUPerOperation(t *testing.T) {
	f := getFleet(t)
	const seconds = 10
	// The fleet's own cost without load: health checks, the webhook
	// senders' polls, the standby's replication, pgbouncer's timers.
	before := f.fleetCPU()
	time.Sleep(5 * time.Second)
	after := f.fleetCPU()
	idle := map[string]float64{}
	for k, v := range after {
		idle[k] = (v - before[k]).Seconds() / 5
	}
	t.Logf("idle: cores used: posgate %.3f, PostgreSQL primary %.3f, standby %.3f, pgbouncer %.3f, haproxy %.3f",
		idle["posgate"], idle["postgresql primary"], idle["postgresql standby"], idle["pgbouncer"], idle["haproxy"])
	measure := func(what string, rate float64, lookupsOnly bool) map[string]time.Duration {
		tn := f.newTenant(t, 10)
		tn.noLookups = true
		var count func() int
		var stop func()
		if lookupsOnly {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int)
			go func() {
				n := 0
				tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
				defer tick.Stop()
				sem := make(chan struct{}, 32)
				for {
					select {
					case <-ctx.Done():
						for range cap(sem) {
							sem <- struct{}{}
						}
						done <- n
						return
					case <-tick.C:
					}
					sem <- struct{}{}
					n++
					go func() {
						defer func() { <-sem }()
						if _, err := tn.client.LookupLoyaltyUsers(context.Background(), tn.pos,
							client.LoyaltyUserLookupRequest{PosLocationID: tn.location, Keyword: "U00" + strconv.Itoa(n%10)}); err != nil {
							t.Errorf("lookup: %v", err)
						}
					}()
				}
			}()
			var total int
			stop = func() { cancel(); total = <-done }
			count = func() int { return total }
		} else {
			l := tn.startLoad(rate)
			stop = l.stop
			count = func() int {
				answered, failed := tn.check(t, f, l)
				if failed > 0 {
					t.Errorf("%d sales failed", failed)
				}
				return answered
			}
		}
		time.Sleep(time.Second) // tokens fetched, caches warm
		before := f.fleetCPU()
		began := time.Now()
		time.Sleep(seconds * time.Second)
		after := f.fleetCPU()
		elapsed := time.Since(began)
		stop()
		n := count()
		// The operations of the measured window, at the steady rate.
		ops := int(rate * elapsed.Seconds())
		per := map[string]time.Duration{}
		var total time.Duration
		for k, v := range after {
			d := v - before[k]
			per[k] = d / time.Duration(ops)
			total += d
		}
		t.Logf("%s at %.0f/s for %s (%d in all): CPU per operation: posgate %s, PostgreSQL primary %s, standby %s, pgbouncer %s, haproxy %s, load generator %s; the fleet used %.2f cores",
			what, rate, elapsed.Round(time.Millisecond), n, per["posgate"].Round(time.Microsecond), per["postgresql primary"].Round(time.Microsecond),
			per["postgresql standby"].Round(time.Microsecond), per["pgbouncer"].Round(time.Microsecond), per["haproxy"].Round(time.Microsecond),
			per["load generator (this test)"].Round(time.Microsecond), total.Seconds()/elapsed.Seconds())
		return per
	}
	sale := measure("sales (startInteraction + transaction)", 100, false)
	if p := sale["posgate"]; p <= 0 || p > 5*time.Millisecond {
		t.Errorf("posgate's CPU per sale %s: not within (0, 5 ms]", p)
	}
	lookup := measure("loyalty-user lookups", 200, true)
	if p := lookup["posgate"]; p <= 0 || p > 5*time.Millisecond {
		t.Errorf("posgate's CPU per lookup %s: not within (0, 5 ms]", p)
	}
}
