package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// lostClaimStore commits a key's claim and then answers as a store that
// failed over before acknowledging it: unavailable.
type lostClaimStore struct {
	posgate.Store
	lost bool
}

func (s *lostClaimStore) ClaimIdempotencyKey(ctx context.Context, rec *posgate.IdempotencyRecord, now time.Time) (*posgate.IdempotencyRecord, error) {
	held, err := s.Store.ClaimIdempotencyKey(ctx, rec, now)
	if err == nil && held == nil && !s.lost {
		s.lost = true
		return nil, posgate.Errorf(posgate.EUNAVAILABLE, "The database is unavailable.")
	}
	return held, err
}

// TestIdempotencyClaimOfUnknownOutcome: a claim whose commit was not
// acknowledged (a failover) is given up, so that the client's retry runs
// at once instead of meeting it in flight for the claim's lease.
func TestIdempotencyClaimOfUnknownOutcome(t *testing.T) {
	st := &lostClaimStore{Store: newServiceStore(t)}
	svc := service.New(st, service.Config{BaseURL: "http://posgate.test"})
	p := &posgate.Principal{ClientID: "pos-client"}
	req := &service.IdempotentRequest{Keys: []string{"sale-1"}, Method: "POST", Target: "/pos/clover/transaction", ContentType: "application/json"}
	if _, err := svc.BeginIdempotent(t.Context(), p, req); posgate.ErrorCode(err) != posgate.EUNAVAILABLE {
		t.Fatalf("the lost claim: %v, want unavailable", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		call, err := svc.BeginIdempotent(t.Context(), p, req)
		if err == nil {
			if call.Replayed() {
				t.Fatal("a retry replayed an answer that was never given")
			}
			return // the retry holds the key and runs
		}
		if err != service.ErrIdempotencyInFlight || time.Now().After(deadline) {
			t.Fatalf("the retry: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
