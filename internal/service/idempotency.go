package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// The Idempotency-Key rules (docs/api.md §14).
const (
	// IdempotencyKeyHeader names the request header; IdempotentReplayedHeader
	// the header that marks a replayed answer.
	IdempotencyKeyHeader     = "Idempotency-Key"
	IdempotentReplayedHeader = "Idempotent-Replayed"
	// MaxIdempotencyKeyLen is the longest key, in characters (bytes: keys
	// are ASCII).
	MaxIdempotencyKeyLen = 255
	// IdempotencyTTL is how long a key and its answer are kept, counted
	// from the first request.
	IdempotencyTTL = 24 * time.Hour
	// DefaultIdempotencyLease is how long an in-flight claim holds its key
	// unless the request says otherwise: twice the server's 60-second
	// read and write timeouts, so that only a request whose instance died
	// loses its claim.
	DefaultIdempotencyLease = 2 * time.Minute
	// IdempotencyRetryAfter is the Retry-After (seconds) of the 409 that a
	// retry gets while the first request runs: POS requests take
	// milliseconds, so a second is enough to find the answer stored.
	IdempotencyRetryAfter = 1
	// finishTimeout bounds storing or releasing a claim once the request
	// has been answered, also when its client has gone: the answer is
	// kept even then.
	finishTimeout = 10 * time.Second
)

// IdempotencyReplayedHeaders are the answer headers kept with an answer and
// replayed: those that describe the body. Per-request headers (a trace, a
// date, Content-Length) are not replayed as stored.
var IdempotencyReplayedHeaders = []string{"Content-Type", "Location"}

// Errors of a key that cannot be used now. ErrIdempotencyInFlight is
// exported so that the HTTP adapter can add Retry-After to it.
var (
	ErrIdempotencyInFlight = posgate.Errorf(posgate.ECONFLICT,
		"A request with this Idempotency-Key is still being processed; retry after the seconds of Retry-After to get its answer.")
	// ErrBodyRead wraps the error of a request body that could not be read.
	ErrBodyRead          = errors.New("the request body could not be read")
	errIdempotencyReused = posgate.Errorf(posgate.EUNPROCESSABLE,
		"This Idempotency-Key was used for another request (method, target, Content-Type or body); send a new key with a new request.")
	msgIdempotencyKey  = "The Idempotency-Key header must be 1-255 printable ASCII characters, bare or as a quoted string (RFC 8941)."
	msgIdempotencyOnce = "The Idempotency-Key header must be sent once."
)

// IdempotentRequest is what BeginIdempotent needs of a POST that carries an
// Idempotency-Key: the key, and the parts of the request known before its
// body is read.
type IdempotentRequest struct {
	// Keys are the values of the request's Idempotency-Key fields; exactly
	// one is accepted.
	Keys []string
	// Method, Target (path and query, as sent) and ContentType (the header
	// as sent) are fingerprinted with the body.
	Method, Target, ContentType string
	// Lease is how long the request may take; 0 is
	// DefaultIdempotencyLease. A claim older than its lease is taken as
	// abandoned (its instance died) and a retry runs.
	Lease time.Duration
}

// ParseIdempotencyKey returns the key an Idempotency-Key field value names.
// The header is a Structured Field String (RFC 8941: "…" with \" and \\
// escapes); a bare value is taken as the key itself, as many clients send
// it, so `"abc"` and `abc` are one key. Keys are 1–255 printable ASCII
// characters and case-sensitive.
func ParseIdempotencyKey(v string) (string, error) {
	key := v
	if strings.HasPrefix(v, `"`) {
		if len(v) < 2 || !strings.HasSuffix(v, `"`) {
			return "", keyError(msgIdempotencyKey)
		}
		var b strings.Builder
		inner := v[1 : len(v)-1]
		for i := 0; i < len(inner); i++ {
			c := inner[i]
			switch c {
			case '"':
				return "", keyError(msgIdempotencyKey)
			case '\\':
				if i++; i == len(inner) || (inner[i] != '"' && inner[i] != '\\') {
					return "", keyError(msgIdempotencyKey)
				}
				c = inner[i]
			}
			b.WriteByte(c)
		}
		key = b.String()
	}
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return "", keyError(msgIdempotencyKey)
	}
	for i := range len(key) {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", keyError(msgIdempotencyKey)
		}
	}
	return key, nil
}

func keyError(msg string) error {
	v := posgate.ValidationError{}
	v.Add(IdempotencyKeyHeader, msg)
	return v.Err()
}

// IdempotentCall is one POST with an Idempotency-Key after BeginIdempotent:
// either it holds the key's claim and runs (Body, then Finish or Release),
// or the key's answer is stored and it is replayed (Replay).
type IdempotentCall struct {
	s      *Service
	rec    *posgate.IdempotencyRecord // the claim, or the stored record
	replay bool
	body   *fingerprintBody
}

// BeginIdempotent claims the request's key for p's client. The claim is one
// insert-if-absent in the store, so that of concurrent requests with one key
// (on any instance) exactly one runs. A key held for another method, target
// or Content-Type is EUNPROCESSABLE (422) at once; one still in flight is
// ErrIdempotencyInFlight (409); one whose answer is stored gives a call to
// Replay. Keys are per client: another client's key of the same text is
// another key.
func (s *Service) BeginIdempotent(ctx context.Context, p *posgate.Principal, req *IdempotentRequest) (*IdempotentCall, error) {
	if p == nil {
		return nil, posgate.Errorf(posgate.EUNAUTHORIZED, msgNoPrincipal)
	}
	if len(req.Keys) != 1 {
		return nil, keyError(msgIdempotencyOnce)
	}
	key, err := ParseIdempotencyKey(req.Keys[0])
	if err != nil {
		return nil, err
	}
	lease := req.Lease
	if lease <= 0 {
		lease = DefaultIdempotencyLease
	}
	now := s.now()
	rec := &posgate.IdempotencyRecord{
		ClientID:    p.ClientID,
		Key:         key,
		ClaimID:     rand.Text(),
		RequestHash: requestHash(req),
		CreatedAt:   now,
		LockedUntil: now.Add(lease),
		ExpiresAt:   now.Add(IdempotencyTTL),
	}
	held, err := s.store.ClaimIdempotencyKey(ctx, rec, now)
	switch {
	case posgate.ErrorCode(err) == posgate.EUNAVAILABLE:
		// The claim may have committed without its answer reaching us (the
		// database failed over meanwhile): give it up once the store is
		// back (within finishTimeout; a claim that never committed is
		// nothing to release), so that the client's retry runs rather than
		// meeting it held for its lease. The 503 does not wait for it.
		go (&IdempotentCall{s: s, rec: rec}).Release(context.WithoutCancel(ctx))
		return nil, err
	case err != nil:
		return nil, err
	case held == nil:
		return &IdempotentCall{s: s, rec: rec}, nil
	case !bytes.Equal(held.RequestHash, rec.RequestHash):
		return nil, errIdempotencyReused
	case !held.Done:
		return nil, ErrIdempotencyInFlight
	}
	return &IdempotentCall{s: s, rec: held, replay: true}, nil
}

// requestHash fingerprints what is known of a request before its body: the
// SHA-256 of method, target and Content-Type, one per line.
func requestHash(req *IdempotentRequest) []byte {
	h := sha256.New()
	io.WriteString(h, req.Method+"\n"+req.Target+"\n"+req.ContentType+"\n")
	return h.Sum(nil)
}

// Replayed reports whether the key's answer is stored: the call is then
// answered by Replay and the request is not run.
func (c *IdempotentCall) Replayed() bool { return c.replay }

// Replay reads the retry's body (no more than the stored body's length and
// one byte) and returns the stored answer when the body is the one the key
// was first used with; any other body is EUNPROCESSABLE. A body that cannot
// be read is an ErrBodyRead, wrapping the reader's error for the adapter
// that owns the body to word (too large, or broken).
func (c *IdempotentCall) Replay(body io.Reader) (*posgate.IdempotentAnswer, error) {
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(body, c.rec.BodyLength+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBodyRead, err)
	}
	if n != c.rec.BodyLength || !bytes.Equal(h.Sum(nil), c.rec.BodyHash) {
		return nil, errIdempotencyReused
	}
	return c.rec.Answer, nil
}

// Body returns the request body to hand to the handler in place of b: it
// fingerprints the bytes as they are read, so that no body is held in
// memory for it, streamed imports included.
func (c *IdempotentCall) Body(b io.ReadCloser) io.ReadCloser {
	c.body = &fingerprintBody{rc: b, h: sha256.New()}
	return c.body
}

// Finish settles the claim once the request has been answered with a. A
// 5xx or 429 answer releases the key, so that a retry runs; so does an
// answer to a body that was not read to its end (the caller reads what the
// handler left, within its cap), since that body has no fingerprint to
// match a retry against. Any other answer is stored for replay. It runs
// even when ctx is cancelled (the client left): the request took effect, and
// its retry must find the answer.
func (c *IdempotentCall) Finish(ctx context.Context, a *posgate.IdempotentAnswer) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if a.Status >= 500 || a.Status == 429 || c.body == nil || !c.body.eof {
		return c.release(ctx)
	}
	c.rec.Done = true
	c.rec.BodyHash = c.body.h.Sum(nil)
	c.rec.BodyLength = c.body.n
	c.rec.Answer = a
	return settle(ctx, func(ctx context.Context) error { return c.s.store.CompleteIdempotencyKey(ctx, c.rec) })
}

// settleRetry is how often settle tries again.
const settleRetry = 100 * time.Millisecond

// settle runs a store call that settles a claim, again every settleRetry
// while the store is unavailable (a database failover), until ctx ends: a
// claim left held would answer the client's retries 409 until its lease
// ran out (minutes), where a database back within seconds lets the retry
// run, or find its answer.
func settle(ctx context.Context, call func(context.Context) error) error {
	for {
		err := call(ctx)
		if posgate.ErrorCode(err) != posgate.EUNAVAILABLE {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(settleRetry):
		}
	}
}

// Release gives the key up without an answer (the request failed before it
// had one), so that a retry runs.
func (c *IdempotentCall) Release(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	return c.release(ctx)
}

func (c *IdempotentCall) release(ctx context.Context) error {
	return settle(ctx, func(ctx context.Context) error {
		return c.s.store.ReleaseIdempotencyKey(ctx, c.rec.ClientID, c.rec.Key, c.rec.ClaimID)
	})
}

// fingerprintBody hashes a request body as it is read and notes whether it
// was read to its end.
type fingerprintBody struct {
	rc  io.ReadCloser
	h   hash.Hash
	n   int64
	eof bool
}

// Read implements io.Reader.
func (b *fingerprintBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.h.Write(p[:n])
	b.n += int64(n)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// Close implements io.Closer.
func (b *fingerprintBody) Close() error { return b.rc.Close() }
