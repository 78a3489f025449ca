package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
)

// clientCols reads back as "" the NULL that CreateClient stores for an
// operator client's POS system (NULL, so that the foreign key skips it).
const clientCols = `c.id, c.name, c.secret_hash, coalesce(c.pos_system_id, ''), c.scopes, c.company_ids, c.disabled, c.created_at, c.updated_at,
	c.rate_limit, c.rate_burst`

func scanClient(r pgx.Row) (*posgate.Client, error) {
	c := &posgate.Client{}
	var rate *float64
	var burst *int32
	if err := r.Scan(&c.ID, &c.Name, &c.SecretHash, &c.POSSystemID, &c.Scopes, &c.CompanyIDs, &c.Disabled, &c.CreatedAt, &c.UpdatedAt, &rate, &burst); err != nil {
		return c, err
	}
	if rate != nil && burst != nil {
		c.RateLimit = &posgate.RateLimit{RequestsPerSecond: *rate, Burst: int(*burst)}
	}
	return c, nil
}

// rateLimitArgs are the rate_limit and rate_burst values of l (NULL for nil).
func rateLimitArgs(l *posgate.RateLimit) (rate *float64, burst *int32) {
	if l == nil {
		return nil, nil
	}
	b := int32(l.Burst)
	return &l.RequestsPerSecond, &b
}

// CreateClient stores c and sets its CreatedAt and UpdatedAt. Each of its
// CompanyIDs must be a company of its POS system; as companies are never
// deleted, checking before the INSERT is as good as a foreign key.
func (db *DB) CreateClient(ctx context.Context, c *posgate.Client) error {
	if len(c.CompanyIDs) > 0 {
		var missing string
		err := db.q(ctx).QueryRow(ctx, `SELECT u.id FROM unnest($2::text[]) WITH ORDINALITY AS u(id, n)
			WHERE NOT EXISTS (SELECT 1 FROM companies c WHERE c.pos_system_id = $1 AND c.company_id = u.id)
			ORDER BY u.n LIMIT 1`, c.POSSystemID, c.CompanyIDs).Scan(&missing)
		if err == nil {
			return posgate.NotFound("company", missing)
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return wrap(err, "create client")
		}
	}
	now := posgate.Timestamp(db.now())
	rate, burst := rateLimitArgs(c.RateLimit)
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO clients (id, name, secret_hash, pos_system_id, scopes, company_ids, disabled, created_at, updated_at, rate_limit, rate_burst)
		VALUES ($1, $2, $3, nullif($4, ''), coalesce($5, '{}'::text[]), coalesce($6, '{}'::text[]), $7, $8, $8, $9, $10)`,
		c.ID, c.Name, c.SecretHash, c.POSSystemID, c.Scopes, c.CompanyIDs, c.Disabled, now, rate, burst)
	if err != nil {
		return writeErr(err, "create client", posgate.AlreadyExists("client", c.ID), posgate.NotFound("POS system", c.POSSystemID))
	}
	c.CreatedAt, c.UpdatedAt = now, now
	return nil
}

// FindClient returns the client id; the token endpoint calls it for every
// token request.
func (db *DB) FindClient(ctx context.Context, id string) (*posgate.Client, error) {
	c, err := scanClient(db.q(ctx).QueryRow(ctx, `SELECT `+clientCols+` FROM clients c WHERE c.id = $1`, id))
	if err != nil {
		return nil, readErr(err, "find client", posgate.NotFound("client", id))
	}
	return c, nil
}

// ListClients returns every client by id.
func (db *DB) ListClients(ctx context.Context) ([]*posgate.Client, error) {
	return collect(ctx, db, "list clients", scanClient, `SELECT `+clientCols+` FROM clients c ORDER BY c.id`)
}

// UpdateClient changes the fields upd names and returns the result.
func (db *DB) UpdateClient(ctx context.Context, id string, upd posgate.ClientUpdate) (*posgate.Client, error) {
	rate, burst := rateLimitArgs(upd.RateLimit)
	var secret any // NULL keeps the hash
	if upd.SecretHash != nil {
		secret = upd.SecretHash
	}
	c, err := scanClient(db.q(ctx).QueryRow(ctx, `UPDATE clients c SET
		name = coalesce($2, c.name), disabled = coalesce($3, c.disabled), updated_at = $4,
		rate_limit = CASE WHEN $5 THEN NULL ELSE coalesce($6, c.rate_limit) END,
		rate_burst = CASE WHEN $5 THEN NULL ELSE coalesce($7, c.rate_burst) END,
		secret_hash = coalesce($8::bytea, c.secret_hash)
		WHERE c.id = $1
		RETURNING `+clientCols,
		id, upd.Name, upd.Disabled, posgate.Timestamp(db.now()), upd.ClearRateLimit, rate, burst, secret))
	if err != nil {
		return nil, readErr(err, "update client", posgate.NotFound("client", id))
	}
	return c, nil
}

// CreateSession stores s with the times it carries; its terminal must exist.
// startInteraction calls it for every interaction: concurrent calls are
// inserted together by one statement (see newSessionWriter in session.go).
func (db *DB) CreateSession(ctx context.Context, s *posgate.Session) error {
	return db.sessions.Create(ctx, s)
}

// FindSession returns the session id, expired or not.
func (db *DB) FindSession(ctx context.Context, id string) (*posgate.Session, error) {
	return scanSession(db.q(ctx).QueryRow(ctx, findSessionSQL, id), id)
}

// findSessionSQL reads a session by its id ($1).
const findSessionSQL = `SELECT id, pos_system_id, company_id, location_id, terminal_id, created_at, expires_at FROM sessions WHERE id = $1`

// scanSession reads the row of findSessionSQL for session id.
func scanSession(r pgx.Row, id string) (*posgate.Session, error) {
	s := &posgate.Session{}
	if err := r.Scan(&s.ID, &s.POSSystemID, &s.CompanyID, &s.LocationID, &s.TerminalID, &s.CreatedAt, &s.ExpiresAt); err != nil {
		return nil, readErr(err, "find session", posgate.NotFound("session", id))
	}
	return s, nil
}

// DeleteExpiredSessions removes the sessions that expired before t.
func (db *DB) DeleteExpiredSessions(ctx context.Context, t time.Time) (int64, error) {
	tag, err := db.q(ctx).Exec(ctx, `DELETE FROM sessions WHERE expires_at < $1`, t)
	if err != nil {
		return 0, wrap(err, "delete expired sessions")
	}
	return tag.RowsAffected(), nil
}

// CreateSigningKey stores k with the time it carries.
func (db *DB) CreateSigningKey(ctx context.Context, k *posgate.SigningKey) error {
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO signing_keys (id, algorithm, private_key, created_at) VALUES ($1, $2, $3, $4)`,
		k.ID, k.Algorithm, k.PrivateKey, k.CreatedAt)
	if err != nil {
		return writeErr(err, "create signing key", posgate.AlreadyExists("signing key", k.ID), nil)
	}
	return nil
}

// ListSigningKeys returns every key, oldest first (ties by id).
func (db *DB) ListSigningKeys(ctx context.Context) ([]*posgate.SigningKey, error) {
	return collect(ctx, db, "list signing keys", func(r pgx.Row) (*posgate.SigningKey, error) {
		k := &posgate.SigningKey{}
		return k, r.Scan(&k.ID, &k.Algorithm, &k.PrivateKey, &k.CreatedAt)
	}, `SELECT id, algorithm, private_key, created_at FROM signing_keys ORDER BY created_at, id`)
}

// ReplaceSigningKey sets key id's private key to next if it still is old.
func (db *DB) ReplaceSigningKey(ctx context.Context, id string, old, next []byte) (bool, error) {
	tag, err := db.q(ctx).Exec(ctx, `UPDATE signing_keys SET private_key = $1 WHERE id = $2 AND private_key = $3`, next, id, old)
	if err != nil {
		return false, wrap(err, "replace signing key")
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteSigningKey removes the key id; an absent key is ENOTFOUND.
func (db *DB) DeleteSigningKey(ctx context.Context, id string) error {
	tag, err := db.q(ctx).Exec(ctx, `DELETE FROM signing_keys WHERE id = $1`, id)
	if err != nil {
		return wrap(err, "delete signing key")
	}
	if tag.RowsAffected() == 0 {
		return posgate.NotFound("signing key", id)
	}
	return nil
}
