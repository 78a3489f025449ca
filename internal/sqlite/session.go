package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Queries prepared by Open.
const (
	createSessionSQL = `INSERT INTO sessions (session_id, pos_system_id, company_id, location_id, terminal_id, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`
	listSigningKeysSQL = `SELECT key_id, algorithm, private_key, created_at FROM signing_keys ORDER BY created_at, key_id`
)

// deleteBatch bounds how many expired sessions one write transaction
// removes, so that a large clean-up never holds the write lock long enough
// to stall startInteraction.
const deleteBatch = 5000

func sessionDest(s *posgate.Session) []any {
	return []any{&s.ID, &s.POSSystemID, &s.CompanyID, &s.LocationID, &s.TerminalID, timeColumn{&s.CreatedAt}, timeColumn{&s.ExpiresAt}}
}

// CreateSession stores s; its terminal must exist. It returns once the row
// is committed: concurrent calls are committed together (see sessionWriter),
// so that one commit, the costly part of a write, serves many sessions.
func (db *DB) CreateSession(ctx context.Context, s *posgate.Session) error {
	return db.sessions.create(ctx, s)
}

// maxSessionBatch bounds the sessions one transaction commits, so that a
// burst never holds the write lock for long.
const maxSessionBatch = 256

// sessionWriter commits startInteraction's sessions in groups (group
// commit). A caller hands its session to the writer goroutine and waits for
// the commit that holds it; while one transaction commits, the sessions that
// arrive meanwhile wait and go into the next one. No delay is added: a lone
// session is committed at once, alone. A caller learns of success only
// after the COMMIT of its row has returned, so no answered session can be
// lost; each row still gets its own error (a constraint violation fails only
// its own statement, and any other failure makes every row of the group be
// retried on its own).
type sessionWriter struct {
	db       *DB
	requests chan *sessionRequest
	stop     chan struct{}
	stopped  chan struct{}
	once     sync.Once
	commits  atomic.Int64 // transactions that stored sessions, for tests
}

type sessionRequest struct {
	ctx  context.Context
	s    *posgate.Session
	done chan error
}

func newSessionWriter(db *DB) *sessionWriter {
	w := &sessionWriter{db: db, requests: make(chan *sessionRequest), stop: make(chan struct{}), stopped: make(chan struct{})}
	go w.run()
	return w
}

var errClosed = errors.New("sqlite: the store is closed")

// create hands s to the writer and waits for its commit.
func (w *sessionWriter) create(ctx context.Context, s *posgate.Session) error {
	r := &sessionRequest{ctx: ctx, s: s, done: make(chan error, 1)}
	select {
	case w.requests <- r:
	case <-ctx.Done():
		return fmt.Errorf("sqlite: create session: %w", ctx.Err())
	case <-w.stop:
		return errClosed
	}
	// Wait for the outcome even if ctx ends now: the row may be committing.
	return <-r.done
}

// close stops the writer once the group in progress is committed; later
// calls do nothing.
func (w *sessionWriter) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.stopped
}

func (w *sessionWriter) run() {
	defer close(w.stopped)
	batch := make([]*sessionRequest, 0, maxSessionBatch)
	for {
		select {
		case r := <-w.requests:
			batch = append(batch[:0], r)
		case <-w.stop:
			return
		}
		// Let the request goroutines that are runnable reach the queue
		// first: under load this makes groups larger at the cost of one
		// scheduler round; idle, it costs next to nothing.
		runtime.Gosched()
	collect:
		for len(batch) < maxSessionBatch {
			select {
			case r := <-w.requests:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		w.commit(batch)
		clear(batch)
	}
}

// commit stores a group in one transaction and answers every caller.
func (w *sessionWriter) commit(batch []*sessionRequest) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- fmt.Errorf("sqlite: create session: %w", err) // gone before its turn: not stored
		} else {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return
	}
	w.commits.Add(1)
	if len(live) == 1 {
		// Taken from the queue, the row is written whatever its caller does
		// now (and the driver then needs no goroutine watching the context).
		live[0].done <- w.db.insertSession(context.WithoutCancel(live[0].ctx), w.db.createSession, live[0].s)
		return
	}
	errs, err := w.commitGroup(live)
	if err != nil {
		// The transaction failed as a whole: store each row on its own so
		// that each caller gets its own answer.
		for _, r := range live {
			r.done <- w.db.insertSession(context.WithoutCancel(r.ctx), w.db.createSession, r.s)
		}
		return
	}
	for i, r := range live {
		r.done <- errs[i]
	}
}

// commitGroup inserts every row of live in one transaction. errs holds each
// row's own failure (a constraint violation, which SQLite confines to its
// statement); err is non-nil when the transaction itself failed, in which
// case nothing was stored.
func (w *sessionWriter) commitGroup(live []*sessionRequest) (errs []error, err error) {
	ctx := context.WithoutCancel(live[0].ctx) // one caller leaving must not abort the others' rows
	tx, err := w.db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	stmt := tx.StmtContext(ctx, w.db.createSession)
	errs = make([]error, len(live))
	for i, r := range live {
		if errs[i] = w.db.insertSession(ctx, stmt, r.s); errs[i] != nil && posgate.ErrorCode(errs[i]) == posgate.EINTERNAL {
			return nil, errs[i]
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return errs, nil
}

// insertSession runs the prepared INSERT of s.
func (db *DB) insertSession(ctx context.Context, stmt *sql.Stmt, s *posgate.Session) error {
	if _, err := stmt.ExecContext(ctx, s.ID, s.POSSystemID, s.CompanyID, s.LocationID, s.TerminalID,
		formatTime(s.CreatedAt), formatTime(s.ExpiresAt)); err != nil {
		return writeErr(err, "create session", storekit.AlreadyExists("session", s.ID), storekit.NotFound("terminal", s.TerminalID))
	}
	return nil
}

// FindSession returns session id, expired or not.
func (db *DB) FindSession(ctx context.Context, id string) (*posgate.Session, error) {
	s, err := scanRow(db.read.QueryRowContext(ctx, `SELECT session_id, pos_system_id, company_id, location_id, terminal_id, created_at, expires_at
		FROM sessions WHERE session_id = ?`, id), sessionDest)
	if err != nil {
		return nil, readErr(err, "find session", storekit.NotFound("session", id))
	}
	return s, nil
}

// DeleteExpiredSessions removes the sessions that expired before t, in
// batches of deleteBatch, and returns how many it removed.
func (db *DB) DeleteExpiredSessions(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	for {
		res, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE session_id IN
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
	if _, err := db.write.ExecContext(ctx, `INSERT INTO signing_keys (key_id, algorithm, private_key, created_at) VALUES (?, ?, ?, ?)`,
		k.ID, k.Algorithm, k.PrivateKey, formatTime(k.CreatedAt)); err != nil {
		return writeErr(err, "create signing key", storekit.AlreadyExists("signing key", k.ID), nil)
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
	res, err := db.write.ExecContext(ctx, `DELETE FROM signing_keys WHERE key_id = ?`, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete signing key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: delete signing key: %w", err)
	}
	if n == 0 {
		return storekit.NotFound("signing key", id)
	}
	return nil
}
