package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// sessionBatchTimeout bounds one INSERT of the session writer, so that a
// database that stops answering fails the waiting requests instead of
// holding them.
const sessionBatchTimeout = 30 * time.Second

const (
	insertSessionSQL = `INSERT INTO sessions (id, pos_system_id, company_id, location_id, terminal_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	insertSessionsSQL = `INSERT INTO sessions (id, pos_system_id, company_id, location_id, terminal_id, created_at, expires_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[])`
)

// newSessionWriter starts the store's session writer (see
// storekit.SessionWriter): a group of sessions is one INSERT, a single
// statement and transaction, which spares the database a statement and a
// commit per session, the largest part of its work for startInteraction.
func newSessionWriter(db *DB) *storekit.SessionWriter {
	return storekit.NewSessionWriter(sessionInserter{db}, storekit.SessionWriterConfig{Store: "postgres"})
}

// sessionInserter writes the session writer's sessions through the pool.
type sessionInserter struct{ db *DB }

// InsertSessions implements storekit.SessionInserter: every row of group in
// one statement, or none of them. A row that violates a constraint fails
// the statement; the writer then stores each row on its own.
func (si sessionInserter) InsertSessions(ctx context.Context, group []*storekit.SessionRequest) ([]error, error) {
	ctx, cancel := context.WithTimeout(ctx, sessionBatchTimeout)
	defer cancel()
	n := len(group)
	ids, pos, companies, locations, terminals := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	created, expires := make([]time.Time, n), make([]time.Time, n)
	for i, r := range group {
		s := r.Session
		ids[i], pos[i], companies[i], locations[i], terminals[i] = s.ID, s.POSSystemID, s.CompanyID, s.LocationID, s.TerminalID
		created[i], expires[i] = s.CreatedAt, s.ExpiresAt
	}
	events, err := si.db.sessionEvents(ctx, group)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		_, err = si.db.pool.Exec(ctx, insertSessionsSQL, ids, pos, companies, locations, terminals, created, expires)
		return nil, err
	}
	err = pgx.BeginFunc(ctx, si.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertSessionsSQL, ids, pos, companies, locations, terminals, created, expires); err != nil {
			return err
		}
		return emitRows(ctx, tx, events)
	})
	if err == nil {
		si.db.outbox.Notify()
	}
	return nil, err
}

// sessionEvents returns the outbox rows of the sessions' interaction.started
// events.
func (db *DB) sessionEvents(ctx context.Context, group []*storekit.SessionRequest) ([]storekit.OutboxRow, error) {
	var out []storekit.OutboxRow
	for _, r := range group {
		rows, err := db.outbox.Rows(ctx, posgate.SessionEvent(r.Session), nil)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// InsertSession implements storekit.SessionInserter.
func (si sessionInserter) InsertSession(ctx context.Context, s *posgate.Session) error {
	ctx, cancel := context.WithTimeout(ctx, sessionBatchTimeout)
	defer cancel()
	events, err := si.db.outbox.Rows(ctx, posgate.SessionEvent(s), nil)
	if err != nil {
		return err
	}
	if len(events) == 0 {
		_, err = si.db.pool.Exec(ctx, insertSessionSQL, s.ID, s.POSSystemID, s.CompanyID, s.LocationID, s.TerminalID, s.CreatedAt, s.ExpiresAt)
	} else {
		err = pgx.BeginFunc(ctx, si.db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, insertSessionSQL, s.ID, s.POSSystemID, s.CompanyID, s.LocationID, s.TerminalID, s.CreatedAt, s.ExpiresAt); err != nil {
				return err
			}
			return emitRows(ctx, tx, events)
		})
		if err == nil {
			si.db.outbox.Notify()
		}
	}
	if err != nil {
		return writeErr(err, "create session", posgate.AlreadyExists("session", s.ID), posgate.NotFound("terminal", s.TerminalID))
	}
	return nil
}

// SessionsPerHour implements posgate.Store.
func (db *DB) SessionsPerHour(ctx context.Context, posSystemID, companyID string, from, to time.Time) (map[time.Time]int, error) {
	rows, err := db.q(ctx).Query(ctx, `SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC'), count(*) FROM sessions
		WHERE pos_system_id = $1 AND company_id = $2 AND created_at >= $3 AND created_at < $4 GROUP BY 1`,
		posSystemID, companyID, posgate.Timestamp(from), posgate.Timestamp(to))
	if err != nil {
		return nil, wrap(err, "sessions per hour")
	}
	defer rows.Close()
	out := map[time.Time]int{}
	for rows.Next() {
		var hour time.Time
		var n int64
		if err := rows.Scan(&hour, &n); err != nil {
			return nil, wrap(err, "sessions per hour")
		}
		out[time.Date(hour.Year(), hour.Month(), hour.Day(), hour.Hour(), 0, 0, 0, time.UTC)] = int(n)
	}
	return out, wrap(rows.Err(), "sessions per hour")
}
