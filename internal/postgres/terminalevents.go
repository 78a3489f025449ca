package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
)

// The terminal channel's log (docs/api.md §25). Appends take a
// transaction-scoped advisory lock, held to their commit: ids are then
// given in commit order, so a stream that has read id n never later finds
// a newly committed event below n.

// TerminalEventsChannel is the NOTIFY channel of the appends; the payload
// is "posSystemId/companyId".
const TerminalEventsChannel = "posgate_terminal_events"

// terminalEventLock is the advisory lock key of the appends.
const terminalEventLock = 0x706f73_74726d // "pos", "trm"

const terminalEventCols = `id, pos_system_id, company_id, location_id, terminal_id, user_id, event_type, data, created_at`

// AppendTerminalEvents implements posgate.TerminalEventStore.
func (db *DB) AppendTerminalEvents(ctx context.Context, evs []*posgate.TerminalEvent) error {
	if len(evs) == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(terminalEventLock)); err != nil {
			return err
		}
		notified := map[string]bool{}
		for _, e := range evs {
			err := tx.QueryRow(ctx, `INSERT INTO terminal_events (pos_system_id, company_id, location_id, terminal_id, user_id, event_type,
				data, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, e.POSSystemID, e.CompanyID, e.LocationID,
				e.TerminalID, e.UserID, e.Type, string(e.Data), posgate.Timestamp(e.Time)).Scan(&e.ID)
			if err != nil {
				return err
			}
			if key := e.POSSystemID + "/" + e.CompanyID; !notified[key] {
				notified[key] = true
				if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, TerminalEventsChannel, key); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return wrap(err, "append terminal events")
}

// TerminalEvents implements posgate.TerminalEventStore.
func (db *DB) TerminalEvents(ctx context.Context, posSystemID, companyID, locationID, terminalID string, after int64, limit int) ([]*posgate.TerminalEvent, error) {
	return db.terminalEvents(ctx, `SELECT `+terminalEventCols+` FROM terminal_events WHERE pos_system_id = $1 AND company_id = $2
		AND id > $3 AND location_id IN ('', $4) AND terminal_id IN ('', $5) ORDER BY id LIMIT $6`,
		posSystemID, companyID, after, locationID, terminalID, limit)
}

// TerminalEventsAfter implements posgate.TerminalEventStore.
func (db *DB) TerminalEventsAfter(ctx context.Context, after int64, limit int) ([]*posgate.TerminalEvent, error) {
	return db.terminalEvents(ctx, `SELECT `+terminalEventCols+` FROM terminal_events WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
}

func (db *DB) terminalEvents(ctx context.Context, query string, args ...any) ([]*posgate.TerminalEvent, error) {
	rows, err := db.q(ctx).Query(ctx, query, args...)
	if err != nil {
		return nil, wrap(err, "terminal events")
	}
	defer rows.Close()
	var out []*posgate.TerminalEvent
	for rows.Next() {
		e := &posgate.TerminalEvent{}
		var data string
		if err := rows.Scan(&e.ID, &e.POSSystemID, &e.CompanyID, &e.LocationID, &e.TerminalID, &e.UserID, &e.Type, &data, &e.Time); err != nil {
			return nil, wrap(err, "terminal events")
		}
		e.Data, e.Time = []byte(data), e.Time.UTC()
		out = append(out, e)
	}
	return out, wrap(rows.Err(), "terminal events")
}

// TerminalEventHorizon implements posgate.TerminalEventStore. The newest
// id given is the newest committed row's (the identity's sequence may be
// ahead of it by an append not yet committed, whose event a stream starting
// there would skip), or the newest deleted when the retention left none.
func (db *DB) TerminalEventHorizon(ctx context.Context) (last, deleted int64, err error) {
	err = db.q(ctx).QueryRow(ctx, `SELECT coalesce((SELECT max(id) FROM terminal_events), 0),
		coalesce((SELECT deleted_through FROM terminal_event_horizon WHERE k = 1), 0)`).Scan(&last, &deleted)
	return max(last, deleted), deleted, wrap(err, "terminal event horizon")
}

// DeleteTerminalEventsBefore implements posgate.TerminalEventStore.
func (db *DB) DeleteTerminalEventsBefore(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		var through *int64
		if err := tx.QueryRow(ctx, `SELECT max(id) FROM terminal_events WHERE created_at < $1`, t).Scan(&through); err != nil || through == nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM terminal_events WHERE id <= $1`, *through)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = tx.Exec(ctx, `INSERT INTO terminal_event_horizon (k, deleted_through) VALUES (1, $1)
			ON CONFLICT (k) DO UPDATE SET deleted_through = greatest(terminal_event_horizon.deleted_through, excluded.deleted_through)`, *through)
		return err
	})
	return n, wrap(err, "delete terminal events")
}

// SetTerminalCustomer implements posgate.TerminalEventStore.
func (db *DB) SetTerminalCustomer(ctx context.Context, c *posgate.TerminalCustomer) error {
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO terminal_customers (pos_system_id, location_id, terminal_id, session_id, user_id, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (pos_system_id, location_id, terminal_id) DO UPDATE SET session_id = excluded.session_id,
		user_id = excluded.user_id, expires_at = excluded.expires_at`, c.POSSystemID, c.LocationID, c.TerminalID, c.SessionID, c.UserID,
		posgate.Timestamp(c.ExpiresAt))
	return wrap(err, "set terminal customer")
}

// FindTerminalCustomer implements posgate.TerminalEventStore.
func (db *DB) FindTerminalCustomer(ctx context.Context, posSystemID, locationID, terminalID string) (*posgate.TerminalCustomer, error) {
	c := &posgate.TerminalCustomer{POSSystemID: posSystemID, LocationID: locationID, TerminalID: terminalID}
	err := db.q(ctx).QueryRow(ctx, `SELECT session_id, user_id, expires_at FROM terminal_customers
		WHERE pos_system_id = $1 AND location_id = $2 AND terminal_id = $3`, posSystemID, locationID, terminalID).Scan(&c.SessionID, &c.UserID,
		&c.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, posgate.NotFound("terminal customer", terminalID)
	}
	c.ExpiresAt = c.ExpiresAt.UTC()
	return c, wrap(err, "find terminal customer")
}

// ListenTerminalEvents calls wake with the payload of every notification
// of an append (any instance's) until ctx is done, on a connection of its
// own taken out of the pool; a lost connection is opened again after a
// second, and wake("") then says that notifications may have been missed.
// Behind a pooler in transaction mode notifications may not arrive: the
// caller polls the log as well (docs/decisions.md, "The terminal channel").
func (db *DB) ListenTerminalEvents(ctx context.Context, wake func(key string)) {
	for ctx.Err() == nil {
		db.listenOnce(ctx, wake)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			wake("")
		}
	}
}

func (db *DB) listenOnce(ctx context.Context, wake func(key string)) {
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return
	}
	conn := c.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+TerminalEventsChannel); err != nil {
		return
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		wake(n.Payload)
	}
}
