package fleettest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate/client"
)

// TestTerminalChannelAcrossRollingRestart: tills watch their channel
// through haproxy while every instance is restarted in turn and an
// operator changes their location's content through haproxy all along:
// each till gets every change once, in order, whichever instance served
// the change and whichever it was connected to (behind pgbouncer in
// transaction mode, where LISTEN does not reach: the watchers' poll).
func TestTerminalChannelAcrossRollingRestart(t *testing.T) {
	f := getFleet(t)
	tn := f.newTenant(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	got := make([][]int, len(tn.users))
	var wg sync.WaitGroup
	for i, u := range tn.users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tn.client.WatchTerminal(ctx, tn.pos, tn.location, "T"+u, "", func(ev *client.TerminalEvent) error {
				id, err := strconv.Atoi(ev.ID)
				if err != nil || ev.Type != "SettingsChanged" {
					return fmt.Errorf("event %q %q", ev.ID, ev.Type)
				}
				mu.Lock()
				got[i] = append(got[i], id)
				mu.Unlock()
				return nil
			})
		}()
	}
	change := func(n int) error {
		_, err := f.admin.Admin.PutLocationReceiptPromotion(context.Background(), tn.pos, tn.location,
			client.PutReceiptPromotionRequest{PrimaryText: "change " + strconv.Itoa(n), TargetURL: "https://example.com/p"})
		return err
	}
	// Every till is connected once a change reaches all of them; the
	// changes before that are not counted.
	connected := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, g := range got {
			if len(g) == 0 {
				return false
			}
		}
		return true
	}
	for n := 0; !connected(); n++ {
		if n > 100 {
			t.Fatal("the tills did not connect")
		}
		if err := change(n); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	from := 0
	for _, g := range got {
		from = max(from, g[len(g)-1])
	}
	mu.Unlock()

	stop := make(chan struct{})
	changes := make(chan int, 1)
	go func() {
		made := 0
		for n := 0; ; n++ {
			select {
			case <-stop:
				changes <- made
				return
			case <-time.After(150 * time.Millisecond):
			}
			if err := change(1000 + n); err != nil {
				t.Errorf("change %d: %v", n, err)
				continue
			}
			made++
		}
	}()
	for i := range f.instances {
		f.signal(t, i, syscall.SIGTERM)
		f.start(t, i, "")
	}
	close(stop)
	made := <-changes
	// The log holds made changes or more (a PUT whose answer a restart cut
	// is sent again by the client, and made again): each till must end
	// with exactly the log's events after from, in order, none twice.
	want := f.terminalEventIDs(t, tn.pos, from)
	if len(want) < made {
		t.Fatalf("the log holds %d events after %d, fewer than the %d changes answered", len(want), from, made)
	}
	made = len(want)
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		done := true
		for _, g := range got {
			if n := countAfter(g, from); n < made {
				done = false
			}
		}
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	for i, g := range got {
		var after []int
		for _, id := range g {
			if id > from {
				after = append(after, id)
			}
		}
		if fmt.Sprint(after) != fmt.Sprint(want) {
			t.Errorf("till %d got %v, the log holds %v", i, after, want)
		}
	}
	t.Logf("%d changes across a rolling restart reached each of %d tills once, in order", made, len(got))
}

// terminalEventIDs are the ids of the terminal channel's log of a POS
// system after from, as the primary holds them.
func (f *fleet) terminalEventIDs(t *testing.T, pos string, from int) []int {
	t.Helper()
	// Through pgbouncer, as the instances: after TestDatabaseFailover the
	// primary of the fleet's start is gone, and pgbouncer names the new one.
	conn, err := pgx.Connect(context.Background(), f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT id FROM terminal_events WHERE pos_system_id = $1 AND id > $2 ORDER BY id`,
		pgx.QueryExecModeSimpleProtocol, pos, from)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func countAfter(ids []int, from int) int {
	n := 0
	for _, id := range ids {
		if id > from {
			n++
		}
	}
	return n
}
