package httpapi

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultIdleDrainWait bounds how long WaitIdleGone waits for the idle
// keep-alive connections of a draining server to be gone.
const DefaultIdleDrainWait = 2 * time.Second

// connStates counts a server's idle keep-alive connections, so that the
// drain closes the listener only once none is left (docs/api.md §16.4): a
// connection closed by the server while idle races the client's next
// request on it, which the client then sees reset.
type connStates struct {
	mu    sync.Mutex
	idle  map[net.Conn]struct{}
	empty chan struct{} // closed and replaced whenever idle becomes empty
}

// ConnState is the http.Server.ConnState hook of every server that serves
// s's handlers: it tracks which connections are idle.
func (s *Server) ConnState(c net.Conn, st http.ConnState) {
	t := &s.conns
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.idle == nil {
		t.idle = map[net.Conn]struct{}{}
	}
	if st == http.StateIdle {
		t.idle[c] = struct{}{}
		return
	}
	delete(t.idle, c)
	if len(t.idle) == 0 && t.empty != nil {
		close(t.empty)
		t.empty = nil
	}
}

// idleCount is the number of idle keep-alive connections.
func (s *Server) idleCount() int {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	return len(s.conns.idle)
}

// WaitIdleGone waits, after StartDrain, until no keep-alive connection is
// idle, or for at most max (DefaultIdleDrainWait when 0), or until ctx ends.
// While draining, a connection that sends a request is answered with
// Connection: close and closed after its answer, so a client that keeps
// sending leaves no idle connection behind; one that sends nothing is left
// for the server's shutdown to close. It returns how many are still idle.
func (s *Server) WaitIdleGone(ctx context.Context, max time.Duration) int {
	if max <= 0 {
		max = DefaultIdleDrainWait
	}
	timer := time.NewTimer(max)
	defer timer.Stop()
	for {
		t := &s.conns
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			return 0
		}
		if t.empty == nil {
			t.empty = make(chan struct{})
		}
		empty := t.empty
		t.mu.Unlock()
		select {
		case <-empty:
		case <-timer.C:
			return s.idleCount()
		case <-ctx.Done():
			return s.idleCount()
		}
	}
}
