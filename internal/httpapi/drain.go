package httpapi

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// The drain's wait for idle keep-alive connections (docs/api.md §16.4).
const (
	// DefaultIdleDrainWait bounds how long WaitIdleGone waits.
	DefaultIdleDrainWait = 2 * time.Second
	// IdleQuiet is how long a connection must have been idle for the
	// shutdown to close it: a client that reuses its connection does so
	// at once (well within a millisecond on a busy connection), so one
	// idle this long is most likely not being written to.
	IdleQuiet = 250 * time.Millisecond
)

// connStates knows since when each of a server's keep-alive connections
// has been idle, so that the drain closes the listener, and the shutdown
// the idle connections, only once none of them was in use a moment ago: a
// connection closed while idle races its client's next request on it,
// which the client then sees reset.
type connStates struct {
	mu   sync.Mutex
	idle map[net.Conn]time.Time // idle since
}

// ConnState is the http.Server.ConnState hook of every server that serves
// s's handlers: it tracks which connections are idle, and since when.
func (s *Server) ConnState(c net.Conn, st http.ConnState) {
	t := &s.conns
	t.mu.Lock()
	defer t.mu.Unlock()
	if st == http.StateIdle {
		if t.idle == nil {
			t.idle = map[net.Conn]time.Time{}
		}
		t.idle[c] = time.Now()
		return
	}
	delete(t.idle, c)
}

// recentlyIdle counts the idle connections, and those idle for less than
// IdleQuiet.
func (s *Server) recentlyIdle() (idle, recent int) {
	t := &s.conns
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	for _, since := range t.idle {
		if now.Sub(since) < IdleQuiet {
			recent++
		}
	}
	return len(t.idle), recent
}

// WaitIdleGone waits, after StartDrain, until no keep-alive connection has
// been idle for less than IdleQuiet, for at most max (DefaultIdleDrainWait
// when 0) or until ctx ends. While draining, a connection that sends a
// request is answered with Connection: close and closed after its answer,
// so a client that keeps sending leaves no idle connection behind; one
// that has sent nothing for IdleQuiet is left to the server's shutdown. It
// returns how many idle connections are left.
func (s *Server) WaitIdleGone(ctx context.Context, max time.Duration) int {
	if max <= 0 {
		max = DefaultIdleDrainWait
	}
	deadline := time.Now().Add(max)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		idle, recent := s.recentlyIdle()
		if recent == 0 || !time.Now().Before(deadline) {
			return idle
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			idle, _ := s.recentlyIdle()
			return idle
		}
	}
}
