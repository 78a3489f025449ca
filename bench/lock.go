package main

import (
	"fmt"
	"os"
	"syscall"
)

// benchLock is the -lock file: a run that loads a large data set (ten
// million rows take a quarter of an hour) holds the machine's benchmark lock
// only while it measures, so that other benchmarks on a shared machine may
// run during the load. Start such a run with nice: taking the lock restores
// the normal priority, which posgate and wrk, started after it, inherit.
type benchLock struct {
	path string
	f    *os.File
}

// acquire waits for the lock (flock(2), as flock(1) takes it) unless it is
// held or there is none.
func (l *benchLock) acquire(what string) error {
	if l == nil || l.path == "" || l.f != nil {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("-lock: %w", err)
	}
	logf("waiting for the lock %s (%s)", l.path, what)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return fmt.Errorf("-lock: %w", err)
	}
	l.f = f
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, 0, 0); err != nil {
		logf("-lock: cannot restore the normal priority: %v", err)
	}
	logf("acquired the lock %s", l.path)
	return nil
}

// release gives the lock back, and the priority the run started with.
func (l *benchLock) release(nice int) {
	if l == nil || l.f == nil {
		return
	}
	syscall.Setpriority(syscall.PRIO_PROCESS, 0, nice)
	l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	logf("released the lock %s", l.path)
}
