package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// maxSessionBatch bounds the sessions one INSERT stores.
const maxSessionBatch = 256

// sessionBatchTimeout bounds one group's INSERT, so that a database that
// stops answering fails the waiting requests instead of holding them.
const sessionBatchTimeout = 30 * time.Second

const (
	insertSessionSQL = `INSERT INTO sessions (id, pos_system_id, company_id, location_id, terminal_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	insertSessionsSQL = `INSERT INTO sessions (id, pos_system_id, company_id, location_id, terminal_id, created_at, expires_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[])`
)

// sessionWriter inserts startInteraction's sessions in groups: while one
// INSERT is on its way, the sessions that arrive meanwhile wait and go into
// the next one, as a single statement and transaction. This spares the
// database a statement and a commit per session, the largest part of its
// work for startInteraction. No delay is added: a lone session is inserted
// at once. A caller learns of success only after the statement holding its
// row has committed, so no answered session can be lost. When a group fails
// (one row violating a constraint fails the statement), every row of it is
// inserted on its own, so that each caller gets its own answer.
type sessionWriter struct {
	db       *DB
	requests chan *sessionRequest
	stop     chan struct{}
	stopped  chan struct{}
	once     sync.Once
	groups   atomic.Int64 // multi-row INSERTs that committed, for tests
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

var errClosed = errors.New("postgres: the store is closed")

// create hands s to the writer and waits for the outcome.
func (w *sessionWriter) create(ctx context.Context, s *posgate.Session) error {
	r := &sessionRequest{ctx: ctx, s: s, done: make(chan error, 1)}
	select {
	case w.requests <- r:
	case <-ctx.Done():
		return wrap(ctx.Err(), "create session")
	case <-w.stop:
		return errClosed
	}
	return <-r.done // even if ctx ends now: the row may be committing
}

// close stops the writer once the group in progress is stored.
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
	collect:
		for len(batch) < maxSessionBatch {
			select {
			case r := <-w.requests:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		w.store(batch)
		clear(batch)
	}
}

// store inserts a group and answers every caller.
func (w *sessionWriter) store(batch []*sessionRequest) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- wrap(err, "create session") // gone before its turn: not stored
		} else {
			live = append(live, r)
		}
	}
	if len(live) > 1 {
		if err := w.insertGroup(live); err == nil {
			w.groups.Add(1)
			for _, r := range live {
				r.done <- nil
			}
			return
		}
	}
	for _, r := range live {
		r.done <- w.insertOne(r.ctx, r.s)
	}
}

// insertGroup stores every row of live in one statement, or none of them.
func (w *sessionWriter) insertGroup(live []*sessionRequest) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(live[0].ctx), sessionBatchTimeout)
	defer cancel()
	n := len(live)
	ids, pos, companies, locations, terminals := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	created, expires := make([]time.Time, n), make([]time.Time, n)
	for i, r := range live {
		s := r.s
		ids[i], pos[i], companies[i], locations[i], terminals[i] = s.ID, s.POSSystemID, s.CompanyID, s.LocationID, s.TerminalID
		created[i], expires[i] = s.CreatedAt, s.ExpiresAt
	}
	_, err := w.db.pool.Exec(ctx, insertSessionsSQL, ids, pos, companies, locations, terminals, created, expires)
	return err
}

// insertOne stores one session with its own error.
func (w *sessionWriter) insertOne(ctx context.Context, s *posgate.Session) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sessionBatchTimeout)
	defer cancel()
	_, err := w.db.pool.Exec(ctx, insertSessionSQL, s.ID, s.POSSystemID, s.CompanyID, s.LocationID, s.TerminalID, s.CreatedAt, s.ExpiresAt)
	if err != nil {
		return writeErr(err, "create session", storekit.AlreadyExists("session", s.ID), storekit.NotFound("terminal", s.TerminalID))
	}
	return nil
}
