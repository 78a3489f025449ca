package storekit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestGroupQueueBusy: the busy time counts the commits, not the waits for
// requests between them.
func TestGroupQueueBusy(t *testing.T) {
	done := make(chan struct{})
	q := newGroupQueue(4, false, func(group []int) {
		time.Sleep(30 * time.Millisecond)
		done <- struct{}{}
	})
	defer q.close()
	time.Sleep(100 * time.Millisecond) // idle: not busy
	if b := q.busyTime(); b != 0 {
		t.Fatalf("busy %v before any request", b)
	}
	closed := errors.New("closed")
	for range 2 {
		if err := q.submit(context.Background(), 1, func(err error) error { return err }, closed); err != nil {
			t.Fatal(err)
		}
		<-done
	}
	// The second commit's time is added once it returns, just after done.
	for deadline := time.Now().Add(2 * time.Second); q.busyTime() < 60*time.Millisecond; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("busy %v after two commits of 30 ms", q.busyTime())
		}
	}
	if b := q.busyTime(); b > time.Second {
		t.Fatalf("busy %v after two commits of 30 ms and 100 ms idle", b)
	}
}
