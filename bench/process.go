package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a posgate (or baseline) process started by the benchmark.
type proc struct {
	cmd     *exec.Cmd
	BaseURL string
	// DebugURL is posgate's private pprof listener ("" unless profiling).
	DebugURL string
	// MetricsURL is posgate's metrics listener, whose handler-time
	// histogram the rows read ("" for the baseline).
	MetricsURL string
	// cpus, when set, is the taskset CPU list the process runs on (-pin);
	// taskset executes the program in its own place, so the process's id
	// (whose CPU time and memory the rows report) is the program's.
	cpus string
	done chan error
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// buildPosgate builds cmd/posgate of the module at root into dir.
func buildPosgate(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "posgate")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/posgate")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/posgate: %w", err)
	}
	return bin, nil
}

// startPosgate starts `posgate serve` on dsn, with a private pprof
// listener when profile is set, and returns once /readyz answers 200.
func startPosgate(ctx context.Context, o *options, bin, dsn, logPath string, profile bool) (*proc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	// The rate limit is on (its cost is measured) but far above one
	// client's load: every row is one client. -serve-args may override it.
	// Webhooks may reach the benchmark's own receiver on 127.0.0.1 (the
	// transaction+webhooks row); no other row registers an endpoint.
	args := append([]string{"serve", "--listen", addr, "--database", dsn, "--rate-limit", "1000000", "--rate-burst", "1000000",
		"--webhooks-allow-loopback"}, o.serveArgs...)
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args = append(args, "--metrics-listen", metrics)
	p := &proc{BaseURL: "http://" + addr, MetricsURL: "http://" + metrics, cpus: o.serverCPUs}
	if profile {
		dbg, err := freeAddr()
		if err != nil {
			return nil, err
		}
		args = append(args, "--debug-listen", dbg)
		p.DebugURL = "http://" + dbg
	}
	if err := p.start(ctx, bin, args, logPath, p.BaseURL+"/readyz"); err != nil {
		return nil, err
	}
	return p, nil
}

// start execs bin and waits until readyURL answers 200.
func (p *proc) start(ctx context.Context, bin string, args []string, logPath, readyURL string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	if p.cpus != "" {
		args = append([]string{"-c", p.cpus, bin}, args...)
		bin = "taskset"
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.Env = cleanEnv()
	p.done = make(chan error, 1)
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { p.done <- p.cmd.Wait(); logf.Close() }()
	return p.waitReady(ctx, readyURL, logPath)
}

// cleanEnv is the environment without POSGATE_* variables, so that the
// benchmark's flags alone configure posgate.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "POSGATE_") {
			env = append(env, kv)
		}
	}
	return env
}

// waitReady polls url every millisecond until it answers 200.
func (p *proc) waitReady(ctx context.Context, url, logPath string) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(url)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-p.done:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("%s exited before it was ready (%v): %s", p.cmd.Path, err, tail(log, 2000))
		case <-ctx.Done():
			p.stop()
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return fmt.Errorf("%s not ready after 30s", p.cmd.Path)
		}
	}
}

// coldStart starts posgate and measures the time from exec to the first
// 200 of /readyz.
func coldStart(ctx context.Context, o *options, bin, dsn, logPath string, profile bool) (*proc, time.Duration, error) {
	t0 := time.Now()
	p, err := startPosgate(ctx, o, bin, dsn, logPath, profile)
	return p, time.Since(t0), err
}

// stop sends SIGTERM and waits for the process to finish its in-flight
// requests and exit; it kills it after 30 s.
func (p *proc) stop() error {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err // for a second stop
		var ee *exec.ExitError
		if errors.As(err, &ee) && !ee.Exited() { // killed by a signal
			return nil
		}
		return err
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		return fmt.Errorf("%s did not stop in 30s; killed", p.cmd.Path)
	}
}

// clockTicks is the unit of utime and stime in /proc/<pid>/stat
// (sysconf(_SC_CLK_TCK), 100 on Linux).
const clockTicks = 100

// cpuTime returns the CPU time (user and system) the process has used.
func (p *proc) cpuTime() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it do not.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("malformed /proc/<pid>/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("malformed /proc/<pid>/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// resetPeakRSS resets the kernel's peak RSS of the process (VmHWM), so that
// the next reading is the peak of one row only.
func (p *proc) resetPeakRSS() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0)
}

// peakRSSKB reads the process's peak resident set size (VmHWM) in kB.
func (p *proc) peakRSSKB() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/<pid>/status")
}

// profile fetches a CPU and an allocation profile covering the next secs
// seconds from posgate's private pprof listener into dir; it returns once
// both are written.
func (p *proc) profile(ctx context.Context, dir, name string, secs int) error {
	if p.DebugURL == "" || secs < 1 {
		return nil
	}
	client := &http.Client{Timeout: time.Duration(secs+30) * time.Second}
	errc := make(chan error, 2)
	for _, kind := range []string{"profile", "allocs"} {
		go func() {
			url := fmt.Sprintf("%s/debug/pprof/%s?seconds=%d", p.DebugURL, kind, secs)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				errc <- err
				return
			}
			resp, err := client.Do(req)
			if err != nil {
				errc <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errc <- fmt.Errorf("%s: status %d", url, resp.StatusCode)
				return
			}
			suffix := map[string]string{"profile": "cpu", "allocs": "allocs"}[kind]
			f, err := os.Create(filepath.Join(dir, name+"."+suffix+".pprof"))
			if err != nil {
				errc <- err
				return
			}
			_, err = io.Copy(f, resp.Body)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			errc <- err
		}()
	}
	return errors.Join(<-errc, <-errc)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
