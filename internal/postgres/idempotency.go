package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// claimIdempotencySQL inserts a claim, or replaces the row of the key only
// when it expired or is a claim whose lease ran out ($8 is now). A live row
// makes the WHERE false: no row comes back, and the row stays as it was.
// Concurrent claims of one key wait on the row lock of the first, then see
// its committed row, so exactly one of them gets a row back.
const claimIdempotencySQL = `INSERT INTO idempotency_keys AS k
	(client_id, idem_key, claim_id, request_hash, done, created_at, locked_until, expires_at)
	VALUES ($1, $2, $3, $4, false, $5, $6, $7)
	ON CONFLICT (client_id, idem_key) DO UPDATE SET
		claim_id = EXCLUDED.claim_id, request_hash = EXCLUDED.request_hash, done = false,
		body_hash = NULL, body_length = NULL, status = NULL, header = NULL, body = NULL,
		created_at = EXCLUDED.created_at, locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at
	WHERE k.expires_at <= $8 OR (NOT k.done AND k.locked_until <= $8)
	RETURNING k.claim_id`

// ClaimIdempotencyKey claims rec's key unless a live record holds it, and
// then returns that record.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, rec *posgate.IdempotencyRecord, now time.Time) (*posgate.IdempotencyRecord, error) {
	for range storekit.ClaimAttempts {
		var claimID string
		err := db.q(ctx).QueryRow(ctx, claimIdempotencySQL, rec.ClientID, rec.Key, rec.ClaimID, rec.RequestHash,
			posgate.Timestamp(rec.CreatedAt), posgate.Timestamp(rec.LockedUntil), posgate.Timestamp(rec.ExpiresAt), posgate.Timestamp(now)).Scan(&claimID)
		if err == nil {
			return nil, nil
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return nil, wrap(err, "claim idempotency key")
		}
		held, err := db.findIdempotencyKey(ctx, rec.ClientID, rec.Key)
		if posgate.ErrorCode(err) != posgate.ENOTFOUND {
			return held, err
		}
		// Released or swept since the INSERT saw it: claim again.
	}
	return nil, fmt.Errorf("postgres: claim idempotency key: the key changed hands %d times", storekit.ClaimAttempts)
}

// findIdempotencyKey reads the record of a key.
func (db *DB) findIdempotencyKey(ctx context.Context, clientID, key string) (*posgate.IdempotencyRecord, error) {
	rec := &posgate.IdempotencyRecord{ClientID: clientID, Key: key}
	var (
		length *int64
		status *int32
		header *string
		body   []byte
	)
	err := db.q(ctx).QueryRow(ctx, `SELECT claim_id, request_hash, done, body_hash, body_length, status, header, body,
		created_at, locked_until, expires_at FROM idempotency_keys WHERE client_id = $1 AND idem_key = $2`, clientID, key).
		Scan(&rec.ClaimID, &rec.RequestHash, &rec.Done, &rec.BodyHash, &length, &status, &header, &body,
			&rec.CreatedAt, &rec.LockedUntil, &rec.ExpiresAt)
	if err != nil {
		return nil, readErr(err, "find idempotency key", storekit.IdempotencyClaimLost(key))
	}
	if length != nil {
		rec.BodyLength = *length
	}
	if rec.Done {
		rec.Answer = &posgate.IdempotentAnswer{Body: body}
		if status != nil {
			rec.Answer.Status = int(*status)
		}
		if header != nil {
			if rec.Answer.Header, err = storekit.DecodeHeader(*header); err != nil {
				return nil, wrap(err, "find idempotency key")
			}
		}
	}
	return rec, nil
}

// CompleteIdempotencyKey stores the answer on the claim rec.ClaimID.
func (db *DB) CompleteIdempotencyKey(ctx context.Context, rec *posgate.IdempotencyRecord) error {
	a := rec.Answer
	if a == nil {
		return fmt.Errorf("postgres: complete idempotency key: no answer")
	}
	header, err := storekit.EncodeHeader(a.Header)
	if err != nil {
		return wrap(err, "complete idempotency key")
	}
	body := a.Body
	if body == nil {
		body = []byte{}
	}
	tag, err := db.q(ctx).Exec(ctx, `UPDATE idempotency_keys SET done = true, body_hash = $4, body_length = $5,
		status = $6, header = nullif($7, ''), body = $8
		WHERE client_id = $1 AND idem_key = $2 AND claim_id = $3 AND NOT done`,
		rec.ClientID, rec.Key, rec.ClaimID, rec.BodyHash, rec.BodyLength, a.Status, header, body)
	if err != nil {
		return wrap(err, "complete idempotency key")
	}
	if tag.RowsAffected() == 0 {
		return storekit.IdempotencyClaimLost(rec.Key)
	}
	return nil
}

// ReleaseIdempotencyKey deletes the in-flight claim claimID of the key.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, clientID, key, claimID string) error {
	tag, err := db.q(ctx).Exec(ctx, `DELETE FROM idempotency_keys WHERE client_id = $1 AND idem_key = $2 AND claim_id = $3 AND NOT done`,
		clientID, key, claimID)
	if err != nil {
		return wrap(err, "release idempotency key")
	}
	if tag.RowsAffected() == 0 {
		return storekit.IdempotencyClaimLost(key)
	}
	return nil
}

// DeleteExpiredIdempotencyKeys removes the records that expired before t.
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context, t time.Time) (int64, error) {
	tag, err := db.q(ctx).Exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at < $1`, t)
	if err != nil {
		return 0, wrap(err, "delete expired idempotency keys")
	}
	return tag.RowsAffected(), nil
}
