package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// claimIdempotencySQL inserts a claim, or replaces the row of the key only
// when it expired or is a claim whose lease ran out (the last parameter is
// now). A live row makes the WHERE false: no row comes back, and the row
// stays as it was. Claims run one at a time on the single write connection,
// so exactly one of concurrent claims of a key gets a row back.
const claimIdempotencySQL = `INSERT INTO idempotency_keys AS k
	(client_id, idem_key, claim_id, request_hash, done, created_at, locked_until, expires_at)
	VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7)
	ON CONFLICT (client_id, idem_key) DO UPDATE SET
		claim_id = excluded.claim_id, request_hash = excluded.request_hash, done = 0,
		body_hash = NULL, body_length = NULL, status = NULL, header = NULL, body = NULL,
		created_at = excluded.created_at, locked_until = excluded.locked_until, expires_at = excluded.expires_at
	WHERE k.expires_at <= ?8 OR (k.done = 0 AND k.locked_until <= ?8)
	RETURNING claim_id`

// ClaimIdempotencyKey claims rec's key unless a live record holds it, and
// then returns that record.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, rec *posgate.IdempotencyRecord, now time.Time) (*posgate.IdempotencyRecord, error) {
	for range storekit.ClaimAttempts {
		var claimID string
		err := db.w(ctx).QueryRowContext(ctx, claimIdempotencySQL, rec.ClientID, rec.Key, rec.ClaimID, rec.RequestHash,
			formatTime(rec.CreatedAt), formatTime(rec.LockedUntil), formatTime(rec.ExpiresAt), formatTime(now)).Scan(&claimID)
		if err == nil {
			return nil, nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("sqlite: claim idempotency key: %w", err)
		}
		// The claim was refused by a committed row, which a read connection
		// that starts now sees.
		held, err := db.findIdempotencyKey(ctx, rec.ClientID, rec.Key)
		if posgate.ErrorCode(err) != posgate.ENOTFOUND {
			return held, err
		}
		// Released or swept since the INSERT saw it: claim again.
	}
	return nil, fmt.Errorf("sqlite: claim idempotency key: the key changed hands %d times", storekit.ClaimAttempts)
}

// findIdempotencyKey reads the record of a key.
func (db *DB) findIdempotencyKey(ctx context.Context, clientID, key string) (*posgate.IdempotencyRecord, error) {
	rec := &posgate.IdempotencyRecord{ClientID: clientID, Key: key}
	var (
		length, status sql.NullInt64
		header         sql.NullString
		body           []byte
	)
	err := db.read.QueryRowContext(ctx, `SELECT claim_id, request_hash, done, body_hash, body_length, status, header, body,
		created_at, locked_until, expires_at FROM idempotency_keys WHERE client_id = ? AND idem_key = ?`, clientID, key).
		Scan(&rec.ClaimID, &rec.RequestHash, &rec.Done, &rec.BodyHash, &length, &status, &header, &body,
			timeColumn{&rec.CreatedAt}, timeColumn{&rec.LockedUntil}, timeColumn{&rec.ExpiresAt})
	if err != nil {
		return nil, readErr(err, "find idempotency key", storekit.IdempotencyClaimLost(key))
	}
	rec.BodyLength = length.Int64
	if rec.Done {
		rec.Answer = &posgate.IdempotentAnswer{Status: int(status.Int64), Body: body}
		if rec.Answer.Header, err = storekit.DecodeHeader(header.String); err != nil {
			return nil, fmt.Errorf("sqlite: find idempotency key: %w", err)
		}
	}
	return rec, nil
}

// CompleteIdempotencyKey stores the answer on the claim rec.ClaimID.
func (db *DB) CompleteIdempotencyKey(ctx context.Context, rec *posgate.IdempotencyRecord) error {
	a := rec.Answer
	if a == nil {
		return fmt.Errorf("sqlite: complete idempotency key: no answer")
	}
	header, err := storekit.EncodeHeader(a.Header)
	if err != nil {
		return fmt.Errorf("sqlite: complete idempotency key: %w", err)
	}
	body := a.Body
	if body == nil {
		body = []byte{}
	}
	res, err := db.w(ctx).ExecContext(ctx, `UPDATE idempotency_keys SET done = 1, body_hash = ?4, body_length = ?5,
		status = ?6, header = nullif(?7, ''), body = ?8
		WHERE client_id = ?1 AND idem_key = ?2 AND claim_id = ?3 AND done = 0`,
		rec.ClientID, rec.Key, rec.ClaimID, rec.BodyHash, rec.BodyLength, a.Status, header, body)
	return claimChanged(res, err, "complete idempotency key", rec.Key)
}

// ReleaseIdempotencyKey deletes the in-flight claim claimID of the key.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, clientID, key, claimID string) error {
	res, err := db.w(ctx).ExecContext(ctx, `DELETE FROM idempotency_keys WHERE client_id = ? AND idem_key = ? AND claim_id = ? AND done = 0`,
		clientID, key, claimID)
	return claimChanged(res, err, "release idempotency key", key)
}

// claimChanged turns the result of a write to one claim into its error: the
// claim is lost when no row matched.
func claimChanged(res sql.Result, err error, op, key string) error {
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if n == 0 {
		return storekit.IdempotencyClaimLost(key)
	}
	return nil
}

// DeleteExpiredIdempotencyKeys removes the records that expired before t,
// in batches of deleteBatch (see DeleteExpiredSessions), and returns how
// many it removed.
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	for {
		res, err := db.w(ctx).ExecContext(ctx, `DELETE FROM idempotency_keys WHERE rowid IN
			(SELECT rowid FROM idempotency_keys WHERE expires_at < ? LIMIT ? + 0)`, formatTime(t), deleteBatch)
		if err != nil {
			return total, fmt.Errorf("sqlite: delete expired idempotency keys: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("sqlite: delete expired idempotency keys: %w", err)
		}
		total += n
		if n < deleteBatch {
			return total, nil
		}
	}
}
