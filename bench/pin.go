package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// pinnedEnv carries the CPU split of -pin into the bench after it has
// re-executed itself on the load's CPUs (where runtime.NumCPU no longer
// sees the server's): "server/load", each a taskset CPU list.
const pinnedEnv = "POSGATE_BENCH_PINNED"

// pinSelf implements -pin: the server side (posgate, the baseline, a
// PostgreSQL server on this machine) gets the first half of the CPUs and
// the load side (wrk, and the bench with its webhook receiver and probes)
// the rest, so that the load generator never takes a core from the server
// in the middle of a request. Without it, on two cores, wrk's threads and
// the server's share both, and the kernel's time slices put milliseconds
// into the tail of a request that costs 100 µs. The first call
// re-executes the bench under taskset and does not return; in the
// re-executed bench it fills o.serverCPUs and o.loadCPUs.
func pinSelf(o *options, args []string) error {
	if split := os.Getenv(pinnedEnv); split != "" {
		var ok bool
		o.serverCPUs, o.loadCPUs, ok = strings.Cut(split, "/")
		if !ok {
			return fmt.Errorf("%s=%q: want server/load CPU lists", pinnedEnv, split)
		}
		return nil
	}
	n := runtime.NumCPU()
	if n < 2 {
		return fmt.Errorf("-pin needs at least 2 CPUs, this process may use %d", n)
	}
	half := n / 2
	server, load := cpuRange(0, half-1), cpuRange(half, n-1)
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return fmt.Errorf("-pin needs taskset (Debian's util-linux): %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	argv := append([]string{"taskset", "-c", load, self}, args...)
	env := append(os.Environ(), pinnedEnv+"="+server+"/"+load)
	return syscall.Exec(taskset, argv, env)
}

// cpuRange is the taskset list of CPUs lo to hi.
func cpuRange(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// pinPostgres moves the PostgreSQL server behind dsn onto cpus when it runs
// on this machine: its postmaster (whose later backends inherit the CPUs)
// and every process it has started. It says what it did, for the report.
// The server stays on those CPUs after the run: the bench is meant for a
// server of its own (.ci/pg-start), which it does not restore.
func pinPostgres(ctx context.Context, dsn, cpus string) (string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", fmt.Errorf("connect to -postgres: %w", err)
	}
	var backend int
	err = conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend)
	conn.Close(ctx)
	if err != nil {
		return "", fmt.Errorf("pg_backend_pid: %w", err)
	}
	postmaster, err := parentPID(backend)
	if err != nil {
		return "PostgreSQL not pinned (its processes are not on this machine)", nil
	}
	pids := []int{postmaster}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, err := parentPID(pid); err == nil && ppid == postmaster {
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		if out, err := exec.CommandContext(ctx, "taskset", "-a", "-p", "-c", cpus, strconv.Itoa(pid)).CombinedOutput(); err != nil {
			return "", fmt.Errorf("pin PostgreSQL process %d: %w: %s", pid, err, out)
		}
	}
	return fmt.Sprintf("PostgreSQL (postmaster %d and its %d processes) on CPUs %s", postmaster, len(pids)-1, cpus), nil
}

// parentPID reads a process's parent from /proc/<pid>/stat, whose second
// field (the command in parentheses) may hold spaces.
func parentPID(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	return strconv.Atoi(f[1])
}
