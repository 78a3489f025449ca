package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbServer is the PostgreSQL server on this machine whose CPU time the
// rows count (its postmaster and every process it started: the backends,
// the WAL writer, the checkpointer…). A server on another machine is not
// seen: its CPU counts as 0 and the report says so.
type dbServer struct{ postmaster int }

// findDBServer finds the postmaster of the server at dsn through a
// backend's parent process.
func findDBServer(ctx context.Context, dsn string) (*dbServer, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return nil, err
	}
	f, err := procStat(backend)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL server is not on this machine (backend %d: %w)", backend, err)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return nil, err
	}
	return &dbServer{postmaster: ppid}, nil
}

// procStat returns the fields of /proc/<pid>/stat after the command name
// (f[0] is field 3, the state).
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, errors.New("malformed /proc/<pid>/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return nil, errors.New("malformed /proc/<pid>/stat")
	}
	return f, nil
}

// statCPU is the user and system time of a stat's fields.
func statCPU(f []string) time.Duration {
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// cpuTime is the CPU time the server's processes have used so far: the
// postmaster's, its children's that ended (autovacuum's workers, closed
// connections) and those that run. A child that ended but was not reaped
// yet counts in neither, so a difference over a short row may come out
// a little low (the rows count it as at least 0).
func (s *dbServer) cpuTime() time.Duration {
	if s == nil {
		return 0
	}
	var total time.Duration
	if f, err := procStat(s.postmaster); err == nil {
		// Its own time, and that of its children that ended (which it
		// waited for): cutime and cstime, fields 16 and 17.
		cutime, _ := strconv.ParseInt(f[13], 10, 64)
		cstime, _ := strconv.ParseInt(f[14], 10, 64)
		total += statCPU(f) + time.Duration(cutime+cstime)*time.Second/clockTicks
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return total
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := procStat(pid)
		if err != nil || f[1] != strconv.Itoa(s.postmaster) {
			continue
		}
		total += statCPU(f)
	}
	return total
}
