package service

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// TestSettleWaitsOutAnUnavailableStore: settling a claim is tried again
// while the store answers EUNAVAILABLE, until it answers or the context
// ends; any other outcome is returned at once.
func TestSettleWaitsOutAnUnavailableStore(t *testing.T) {
	away := posgate.Errorf(posgate.EUNAVAILABLE, "The database is unavailable; try again.")
	calls := 0
	err := settle(context.Background(), func(context.Context) error {
		if calls++; calls < 3 {
			return away
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("back on the third call: %v after %d calls", err, calls)
	}

	other := errors.New("disk full")
	calls = 0
	if err := settle(context.Background(), func(context.Context) error { calls++; return other }); err != other || calls != 1 {
		t.Fatalf("another error: %v after %d calls, want it at once", err, calls)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*settleRetry/2)
	defer cancel()
	calls = 0
	began := time.Now()
	if err := settle(ctx, func(context.Context) error { calls++; return away }); posgate.ErrorCode(err) != posgate.EUNAVAILABLE || calls != 2 {
		t.Fatalf("never back: %v after %d calls, want EUNAVAILABLE after 2", err, calls)
	}
	if d := time.Since(began); d > time.Second {
		t.Fatalf("never back: returned after %s, want at the context's end", d)
	}
}
