package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Queries prepared by Open.
const (
	createSessionSQL = `INSERT INTO sessions (session_id, pos_system_id, company_id, location_id, terminal_id, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`
	listSigningKeysSQL = `SELECT key_id, algorithm, private_key, created_at FROM signing_keys ORDER BY created_at, key_id`
	findSessionSQL     = `SELECT session_id, pos_system_id, company_id, location_id, terminal_id, created_at, expires_at
		FROM sessions WHERE session_id = ?`
)

// deleteBatch bounds how many expired sessions one write transaction
// removes, so that a large clean-up never holds the write lock long enough
// to stall startInteraction.
const deleteBatch = 5000

func sessionDest(s *posgate.Session) []any {
	return []any{&s.ID, &s.POSSystemID, &s.CompanyID, &s.LocationID, &s.TerminalID, timeColumn{&s.CreatedAt}, timeColumn{&s.ExpiresAt}}
}

// CreateSession stores s; its terminal must exist. It returns once the row
// is committed: concurrent calls are committed together (see
// storekit.SessionWriter), so that one commit, the costly part of a write,
// serves many sessions.
func (db *DB) CreateSession(ctx context.Context, s *posgate.Session) error {
	return db.sessions.Create(ctx, s)
}

// newSessionWriter starts the store's session writer. It yields before it
// takes a group: a commit at the single writer costs far more than the
// scheduler round that makes the groups larger under load.
func newSessionWriter(db *DB) *storekit.SessionWriter {
	return storekit.NewSessionWriter(sessionInserter{db}, storekit.SessionWriterConfig{Store: "sqlite", Yield: true})
}

// sessionInserter writes the session writer's sessions through the prepared
// INSERT on the write connection.
type sessionInserter struct{ db *DB }

// InsertSession implements storekit.SessionInserter.
func (si sessionInserter) InsertSession(ctx context.Context, s *posgate.Session) error {
	ev := posgate.SessionEvent(s)
	rows, err := si.db.outbox.Rows(ctx, ev, nil)
	if err != nil {
		return err
	}
	if len(rows) == 0 { // no endpoint takes it: no transaction needed
		return si.db.insertSession(ctx, si.db.createSession, s)
	}
	return si.db.inTx(ctx, "create session", func(tx *sql.Tx) error {
		if err := si.db.insertSession(ctx, tx.StmtContext(ctx, si.db.createSession), s); err != nil {
			return err
		}
		return si.db.emitTx(ctx, tx, ev)
	})
}

// InsertSessions implements storekit.SessionInserter: every row of group in
// one transaction, in which SQLite confines a constraint violation to its
// statement, so that errs holds each row's own failure; any other failure
// aborts the transaction (err), and nothing is stored.
func (si sessionInserter) InsertSessions(ctx context.Context, group []*storekit.SessionRequest) (errs []error, err error) {
	tx, err := si.db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	stmt := tx.StmtContext(ctx, si.db.createSession)
	var outbox *sql.Stmt // bound once an event needs it
	errs = make([]error, len(group))
	for i, r := range group {
		if errs[i] = si.db.insertSession(ctx, stmt, r.Session); errs[i] != nil && posgate.ErrorCode(errs[i]) == posgate.EINTERNAL {
			return nil, errs[i]
		}
		if errs[i] == nil {
			if outbox == nil {
				outbox = tx.StmtContext(ctx, si.db.insertOutbox)
			}
			if _, err := si.db.emit(ctx, outbox, posgate.SessionEvent(r.Session)); err != nil {
				return nil, err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	si.db.outbox.Committed()
	return errs, nil
}

// insertSession runs the prepared INSERT of s.
func (db *DB) insertSession(ctx context.Context, stmt *sql.Stmt, s *posgate.Session) error {
	if _, err := stmt.ExecContext(ctx, s.ID, s.POSSystemID, s.CompanyID, s.LocationID, s.TerminalID,
		formatTime(s.CreatedAt), formatTime(s.ExpiresAt)); err != nil {
		return writeErr(err, "create session", posgate.AlreadyExists("session", s.ID), posgate.NotFound("terminal", s.TerminalID))
	}
	return nil
}

// FindSession returns session id, expired or not.
func (db *DB) FindSession(ctx context.Context, id string) (*posgate.Session, error) {
	s, err := scanRow(db.findSession.QueryRowContext(ctx, id), sessionDest)
	if err != nil {
		return nil, readErr(err, "find session", posgate.NotFound("session", id))
	}
	return s, nil
}

// DeleteExpiredSessions removes the sessions that expired before t, in
// batches of deleteBatch, and returns how many it removed.
func (db *DB) DeleteExpiredSessions(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	for {
		res, err := db.w(ctx).ExecContext(ctx, `DELETE FROM sessions WHERE session_id IN
			(SELECT session_id FROM sessions WHERE expires_at < ? LIMIT ? + 0)`, formatTime(t), deleteBatch)
		if err != nil {
			return total, fmt.Errorf("sqlite: delete expired sessions: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("sqlite: delete expired sessions: %w", err)
		}
		total += n
		if n < deleteBatch {
			return total, nil
		}
	}
}

func signingKeyDest(k *posgate.SigningKey) []any {
	return []any{&k.ID, &k.Algorithm, &k.PrivateKey, timeColumn{&k.CreatedAt}}
}

// CreateSigningKey stores k.
func (db *DB) CreateSigningKey(ctx context.Context, k *posgate.SigningKey) error {
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO signing_keys (key_id, algorithm, private_key, created_at) VALUES (?, ?, ?, ?)`,
		k.ID, k.Algorithm, k.PrivateKey, formatTime(k.CreatedAt)); err != nil {
		return writeErr(err, "create signing key", posgate.AlreadyExists("signing key", k.ID), nil)
	}
	return nil
}

// ListSigningKeys returns every signing key, oldest first.
func (db *DB) ListSigningKeys(ctx context.Context) ([]*posgate.SigningKey, error) {
	rows, err := db.listSigningKeys.QueryContext(ctx)
	return scanAll(rows, err, "list signing keys", signingKeyDest)
}

// DeleteSigningKey removes key id; an absent key is ENOTFOUND, so that a
// caller racing another instance's rotation can tell and ignore it.
func (db *DB) DeleteSigningKey(ctx context.Context, id string) error {
	res, err := db.w(ctx).ExecContext(ctx, `DELETE FROM signing_keys WHERE key_id = ?`, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete signing key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: delete signing key: %w", err)
	}
	if n == 0 {
		return posgate.NotFound("signing key", id)
	}
	return nil
}

// SessionsPerHour implements posgate.Store. The stored times are fixed-width
// UTC text, so an hour is the first 13 characters.
func (db *DB) SessionsPerHour(ctx context.Context, posSystemID, companyID string, from, to time.Time) (map[time.Time]int, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT substr(created_at, 1, 13), count(*) FROM sessions
		WHERE pos_system_id = ? AND company_id = ? AND created_at >= ? AND created_at < ? GROUP BY 1`,
		posSystemID, companyID, formatTime(from), formatTime(to))
	if err != nil {
		return nil, fmt.Errorf("sqlite: sessions per hour: %w", err)
	}
	defer rows.Close()
	out := map[time.Time]int{}
	for rows.Next() {
		var hour string
		var n int
		if err := rows.Scan(&hour, &n); err != nil {
			return nil, fmt.Errorf("sqlite: sessions per hour: %w", err)
		}
		h, err := time.Parse("2006-01-02T15", hour)
		if err != nil {
			return nil, fmt.Errorf("sqlite: sessions per hour: stored time %q: %w", hour, err)
		}
		out[h] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: sessions per hour: %w", err)
	}
	return out, nil
}

// ReplaceSigningKey sets key id's private key to next if it still is old.
func (db *DB) ReplaceSigningKey(ctx context.Context, id string, old, next []byte) (bool, error) {
	res, err := db.w(ctx).ExecContext(ctx, `UPDATE signing_keys SET private_key = ? WHERE key_id = ? AND private_key = ?`, next, id, old)
	if err != nil {
		return false, fmt.Errorf("sqlite: replace signing key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: replace signing key: %w", err)
	}
	return n == 1, nil
}
