package storetest

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// idemBase is the time the idempotency tests claim at: in a zone other than
// UTC and with nanoseconds, so that the store has to normalise it.
var idemBase = time.Date(2031, 2, 3, 4, 5, 6, 789123456, time.FixedZone("UTC-03", -3*3600))

// idemClaim is a claim of key by client at idemBase (nanoseconds and all),
// leased for a minute and kept for a day.
func idemClaim(client, key, claimID string) *posgate.IdempotencyRecord {
	h := sha256.Sum256([]byte("POST\n/x\napplication/json\n" + client))
	return &posgate.IdempotencyRecord{ClientID: client, Key: key, ClaimID: claimID, RequestHash: h[:],
		CreatedAt: idemBase, LockedUntil: idemBase.Add(time.Minute), ExpiresAt: idemBase.Add(24 * time.Hour)}
}

// asStored is rec as the store must return it: times in UTC, microseconds.
func asStored(rec *posgate.IdempotencyRecord) *posgate.IdempotencyRecord {
	c := *rec
	c.CreatedAt, c.LockedUntil, c.ExpiresAt = posgate.Timestamp(c.CreatedAt), posgate.Timestamp(c.LockedUntil), posgate.Timestamp(c.ExpiresAt)
	return &c
}

// claim claims rec at now and fails the test on a store error.
func (e *env) claim(rec *posgate.IdempotencyRecord, now time.Time) *posgate.IdempotencyRecord {
	e.t.Helper()
	held, err := e.s.ClaimIdempotencyKey(e.t.Context(), rec, now)
	if err != nil {
		e.t.Fatalf("ClaimIdempotencyKey(%s, %s): %v", rec.ClientID, rec.Key, err)
	}
	return held
}

// complete gives rec the answer status/body and stores it.
func (e *env) complete(rec *posgate.IdempotencyRecord, status int, body string) *posgate.IdempotencyRecord {
	e.t.Helper()
	bh := sha256.Sum256([]byte("request body"))
	rec.Done, rec.BodyHash, rec.BodyLength = true, bh[:], int64(len("request body"))
	rec.Answer = &posgate.IdempotentAnswer{Status: status, Header: map[string]string{"Content-Type": "application/json; charset=utf-8", "Location": "/x/1"}, Body: []byte(body)}
	if err := e.s.CompleteIdempotencyKey(e.t.Context(), rec); err != nil {
		e.t.Fatalf("CompleteIdempotencyKey(%s): %v", rec.Key, err)
	}
	return rec
}

func testIdempotencyClaimCompleteReplay(t *testing.T, e *env) {
	ctx := t.Context()
	first := idemClaim("pos-1", "key-1", "claim-a")
	if held := e.claim(first, idemBase); held != nil {
		t.Fatalf("first claim of a fresh key is held by %s", show(held))
	}
	// While in flight, another claim gets the claim as it was stored.
	again := idemClaim("pos-1", "key-1", "claim-b")
	check(t, "claim of an in-flight key", e.claim(again, idemBase.Add(time.Second)), asStored(first))
	// Keys are per client and case-sensitive.
	if held := e.claim(idemClaim("pos-2", "key-1", "claim-c"), idemBase); held != nil {
		t.Fatalf("another client's claim of the same key is held by %s", show(held))
	}
	if held := e.claim(idemClaim("pos-1", "KEY-1", "claim-d"), idemBase); held != nil {
		t.Fatalf("claim of the key in other case is held by %s", show(held))
	}

	// Only the claim that holds the key completes it, once.
	wrong := *first
	wrong.ClaimID = "claim-b"
	wrong.Answer = &posgate.IdempotentAnswer{Status: 200, Body: []byte("{}")}
	checkErr(t, "CompleteIdempotencyKey by a claim that does not hold the key", e.s.CompleteIdempotencyKey(ctx, &wrong),
		posgate.ErrNotFound, `idempotency key claim "key-1" not found`)
	done := e.complete(first, 201, `{"data":{"code":"X"}}`)
	checkErr(t, "CompleteIdempotencyKey twice", e.s.CompleteIdempotencyKey(ctx, done),
		posgate.ErrNotFound, `idempotency key claim "key-1" not found`)
	checkErr(t, "ReleaseIdempotencyKey of a completed key", e.s.ReleaseIdempotencyKey(ctx, "pos-1", "key-1", "claim-a"),
		posgate.ErrNotFound, `idempotency key claim "key-1" not found`)

	// A later claim (even past the lease) gets the answer.
	check(t, "claim of a completed key", e.claim(idemClaim("pos-1", "key-1", "claim-e"), idemBase.Add(23*time.Hour)), asStored(done))

	// An answer without headers and with an empty body round-trips too.
	bare := idemClaim("pos-1", "key-bare", "claim-f")
	e.claim(bare, idemBase)
	bare.Done, bare.BodyHash, bare.BodyLength = true, make([]byte, 32), 0
	bare.Answer = &posgate.IdempotentAnswer{Status: 204}
	if err := e.s.CompleteIdempotencyKey(ctx, bare); err != nil {
		t.Fatal(err)
	}
	got := e.claim(idemClaim("pos-1", "key-bare", "claim-g"), idemBase)
	if got == nil || got.Answer == nil || got.Answer.Status != 204 || got.Answer.Header != nil || len(got.Answer.Body) != 0 || got.BodyLength != 0 {
		t.Fatalf("bare answer read back as %s", show(got))
	}
}

func testIdempotencyRelease(t *testing.T, e *env) {
	ctx := t.Context()
	rec := idemClaim("pos-1", "key-1", "claim-a")
	e.claim(rec, idemBase)
	checkErr(t, "ReleaseIdempotencyKey by a claim that does not hold the key", e.s.ReleaseIdempotencyKey(ctx, "pos-1", "key-1", "claim-x"),
		posgate.ErrNotFound, `idempotency key claim "key-1" not found`)
	checkErr(t, "ReleaseIdempotencyKey of another client's key", e.s.ReleaseIdempotencyKey(ctx, "pos-2", "key-1", "claim-a"),
		posgate.ErrNotFound, `idempotency key claim "key-1" not found`)
	if err := e.s.ReleaseIdempotencyKey(ctx, "pos-1", "key-1", "claim-a"); err != nil {
		t.Fatalf("ReleaseIdempotencyKey: %v", err)
	}
	checkErr(t, "ReleaseIdempotencyKey twice", e.s.ReleaseIdempotencyKey(ctx, "pos-1", "key-1", "claim-a"),
		posgate.ErrNotFound, `idempotency key claim "key-1" not found`)
	// A released key is free at once: the retry runs.
	if held := e.claim(idemClaim("pos-1", "key-1", "claim-b"), idemBase); held != nil {
		t.Fatalf("claim after release is held by %s", show(held))
	}
	checkErr(t, "CompleteIdempotencyKey of a released claim", e.s.CompleteIdempotencyKey(ctx, &posgate.IdempotencyRecord{
		ClientID: "pos-1", Key: "key-1", ClaimID: "claim-a", Answer: &posgate.IdempotentAnswer{Status: 200}}),
		posgate.ErrNotFound, `idempotency key claim "key-1" not found`)
}

func testIdempotencyLeaseAndExpiry(t *testing.T, e *env) {
	ctx := t.Context()
	// A claim holds the key until its lease ends (LockedUntil, exclusive).
	slow := idemClaim("pos-1", "key-1", "claim-slow")
	e.claim(slow, idemBase)
	lease := slow.LockedUntil
	check(t, "claim just before the lease ends", e.claim(idemClaim("pos-1", "key-1", "claim-b"), lease.Add(-time.Microsecond)), asStored(slow))
	taker := idemClaim("pos-1", "key-1", "claim-taker")
	taker.CreatedAt, taker.LockedUntil, taker.ExpiresAt = lease, lease.Add(time.Minute), lease.Add(24*time.Hour)
	if held := e.claim(taker, lease); held != nil {
		t.Fatalf("claim when the lease ended is held by %s", show(held))
	}
	// The request that lost its claim can neither complete nor release it.
	slow.Answer = &posgate.IdempotentAnswer{Status: 200}
	checkErr(t, "CompleteIdempotencyKey of a claim taken over", e.s.CompleteIdempotencyKey(ctx, slow),
		posgate.ErrNotFound, `idempotency key claim "key-1" not found`)
	checkErr(t, "ReleaseIdempotencyKey of a claim taken over", e.s.ReleaseIdempotencyKey(ctx, "pos-1", "key-1", "claim-slow"),
		posgate.ErrNotFound, `idempotency key claim "key-1" not found`)
	done := e.complete(taker, 200, `{"data":1}`)

	// A completed record holds until it expires (ExpiresAt, exclusive), then
	// a claim replaces it.
	expiry := done.ExpiresAt
	check(t, "claim just before expiry", e.claim(idemClaim("pos-1", "key-1", "claim-c"), expiry.Add(-time.Microsecond)), asStored(done))
	fresh := idemClaim("pos-1", "key-1", "claim-fresh")
	fresh.CreatedAt, fresh.LockedUntil, fresh.ExpiresAt = expiry, expiry.Add(time.Minute), expiry.Add(24*time.Hour)
	if held := e.claim(fresh, expiry); held != nil {
		t.Fatalf("claim at expiry is held by %s", show(held))
	}
	check(t, "the replaced record is a fresh claim", e.claim(idemClaim("pos-1", "key-1", "claim-d"), expiry), asStored(fresh))
}

func testIdempotencyDeleteExpired(t *testing.T, e *env) {
	ctx := t.Context()
	cut := time.Date(2031, 6, 1, 12, 0, 0, 0, time.UTC)
	for key, exp := range map[string]time.Time{
		"long-ago": cut.Add(-48 * time.Hour), "just-before": cut.Add(-time.Microsecond),
		"exactly-then": cut, "just-after": cut.Add(time.Microsecond),
	} {
		rec := idemClaim("pos-1", key, "claim-"+key)
		rec.CreatedAt, rec.LockedUntil, rec.ExpiresAt = exp.Add(-24*time.Hour), exp.Add(-24*time.Hour), exp.In(time.FixedZone("EST", -5*3600))
		e.claim(rec, rec.CreatedAt)
		if key != "long-ago" {
			e.complete(rec, 200, "{}")
		}
	}
	n := must[int64](t, "DeleteExpiredIdempotencyKeys")(e.s.DeleteExpiredIdempotencyKeys(ctx, cut.In(time.FixedZone("CEST", 2*3600))))
	check(t, "DeleteExpiredIdempotencyKeys count", n, 2)
	// What is left is found by a claim (at a time before its expiry, so
	// that the claim cannot replace it); what is gone is claimed afresh.
	before := cut.Add(-48 * time.Hour)
	for key, gone := range map[string]bool{"long-ago": true, "just-before": true, "exactly-then": false, "just-after": false} {
		probe := idemClaim("pos-1", key, "probe-"+key)
		probe.CreatedAt, probe.LockedUntil, probe.ExpiresAt = before, before.Add(time.Minute), cut.Add(24*time.Hour)
		held := e.claim(probe, before)
		if gone && held != nil {
			t.Fatalf("%s: not deleted: %s", key, show(held))
		} else if !gone && (held == nil || held.ClaimID != "claim-"+key) {
			t.Fatalf("%s: deleted before its expiry (claim found %s)", key, show(held))
		}
	}
	check(t, "DeleteExpiredIdempotencyKeys count again", must[int64](t, "DeleteExpiredIdempotencyKeys")(e.s.DeleteExpiredIdempotencyKeys(ctx, cut)), 0)
}

// testConcurrentIdempotencyClaims races 50 claims of one key: the store
// must let exactly one through and show the others that one's claim.
func testConcurrentIdempotencyClaims(t *testing.T, e *env) {
	const n = 50
	start := make(chan struct{})
	held := make([]*posgate.IdempotencyRecord, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			held[i], errs[i] = e.s.ClaimIdempotencyKey(t.Context(), idemClaim("pos-1", "race", fmt.Sprintf("claim-%02d", i)), idemBase)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		if held[i] == nil {
			if winner >= 0 {
				t.Fatalf("claims %d and %d both got the key", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no claim got the key")
	}
	for i := range n {
		if i != winner && held[i].ClaimID != fmt.Sprintf("claim-%02d", winner) {
			t.Fatalf("claim %d was refused by %q, want the winner claim-%02d", i, held[i].ClaimID, winner)
		}
	}
}
