package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDrainResetsNoConnection: 16 clients each send requests back to back
// on one keep-alive connection while the server is told to stop (SIGTERM's
// context, with --drain-delay 0). Every client is answered until an answer
// carries Connection: close, after which it goes elsewhere, as a balancer
// would; none sees its connection reset or closed under a request, since
// the listener closes only once no keep-alive connection is idle
// (docs/api.md §16.4). Raw connections: a Go transport would retry some
// failures and hide them.
func TestDrainResetsNoConnection(t *testing.T) {
	s := start(t, filepath.Join(t.TempDir(), "posgate.db"))
	const clients = 16
	var (
		wg               sync.WaitGroup
		requests, closes atomic.Int64
		mu               sync.Mutex
		failures         []string
	)
	warm := make(chan struct{}, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(what string, err error) {
				mu.Lock()
				failures = append(failures, what+": "+err.Error())
				mu.Unlock()
			}
			conn, err := net.Dial("tcp", s.addrs.API.String())
			if err != nil {
				fail("dial", err)
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(60 * time.Second))
			br := bufio.NewReader(conn)
			for n := 0; ; n++ {
				if n == 20 {
					warm <- struct{}{}
				}
				if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: posgate.test\r\n\r\n"); err != nil {
					fail("write", err)
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					fail("read", err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				requests.Add(1)
				if resp.StatusCode != http.StatusOK {
					fail("status", &statusError{resp.StatusCode})
					return
				}
				if resp.Close {
					closes.Add(1)
					return
				}
			}
		}()
	}
	for range clients {
		select {
		case <-warm:
		case <-time.After(30 * time.Second):
			t.Fatal("the clients did not get going")
		}
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s.stop(t)
	}()
	wg.Wait()
	<-stopped
	t.Logf("%d requests, %d answers with Connection: close", requests.Load(), closes.Load())
	if len(failures) > 0 {
		t.Fatalf("%d of %d connections failed across the drain: %v", len(failures), clients, failures)
	}
	if closes.Load() != clients {
		t.Fatalf("%d connections were told to close, want %d", closes.Load(), clients)
	}
}

type statusError struct{ code int }

func (e *statusError) Error() string { return http.StatusText(e.code) }
