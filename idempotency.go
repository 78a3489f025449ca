package posgate

import (
	"context"
	"time"
)

// IdempotencyRecord is what posgate keeps of one Idempotency-Key of one API
// client (docs/api.md §14): first an in-flight claim, taken by the request
// that runs, then that request's answer, replayed to every retry until the
// record expires. It lives in the store, not in one instance's memory, so
// that a retry reaching another instance behind a load balancer sees it.
type IdempotencyRecord struct {
	ClientID string
	Key      string
	// ClaimID names the request that holds the claim, so that a request
	// whose lease ran out (and whose claim another request took over)
	// cannot complete or release the newer claim.
	ClaimID string
	// RequestHash is the SHA-256 of the request's method, target and
	// content type: known before the body is read, so that a key reused on
	// another route is refused without reading the body.
	RequestHash []byte
	// Done is set once the answer is stored; until then the record is an
	// in-flight claim that holds until LockedUntil.
	Done bool
	// BodyHash and BodyLength fingerprint the request body (SHA-256 and
	// length in bytes); set with the answer.
	BodyHash   []byte
	BodyLength int64
	// Answer is the stored answer; nil while in flight.
	Answer      *IdempotentAnswer
	CreatedAt   time.Time
	LockedUntil time.Time
	ExpiresAt   time.Time
}

// IdempotentAnswer is an HTTP answer as it is replayed: status, the headers
// that describe the body (Content-Type, Location) and the body's bytes.
type IdempotentAnswer struct {
	Status int
	Header map[string]string
	Body   []byte
}

// IdempotencyStore keeps Idempotency-Key records. Every decision that two
// concurrent requests could race on is taken by the database in one
// statement, never by a read followed by a write in Go.
type IdempotencyStore interface {
	// ClaimIdempotencyKey stores rec (not Done) as the claim of
	// (rec.ClientID, rec.Key) unless a live record holds that key: one that
	// has not expired at now and is either done or still leased
	// (LockedUntil after now). An expired record, or a claim whose lease
	// ran out, is replaced. It returns nil when rec was stored, else the
	// live record that holds the key.
	ClaimIdempotencyKey(ctx context.Context, rec *IdempotencyRecord, now time.Time) (*IdempotencyRecord, error)
	// CompleteIdempotencyKey stores the answer, body hash and length of
	// rec on the claim rec.ClaimID and marks it done; ENOTFOUND when that
	// claim no longer holds the key.
	CompleteIdempotencyKey(ctx context.Context, rec *IdempotencyRecord) error
	// ReleaseIdempotencyKey deletes the in-flight claim claimID of
	// (clientID, key), so that a retry can run; ENOTFOUND when that claim
	// no longer holds the key.
	ReleaseIdempotencyKey(ctx context.Context, clientID, key, claimID string) error
	// DeleteExpiredIdempotencyKeys removes the records whose ExpiresAt is
	// before t and returns how many it removed.
	DeleteExpiredIdempotencyKeys(ctx context.Context, t time.Time) (int64, error)
}
