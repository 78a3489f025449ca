package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/posgate/posgate"
)

// The terminal channel's log (docs/api.md §25). One writer: ids are given
// in commit order by construction.

// AppendTerminalEvents implements posgate.TerminalEventStore.
func (db *DB) AppendTerminalEvents(ctx context.Context, evs []*posgate.TerminalEvent) error {
	if len(evs) == 0 {
		return nil
	}
	return db.inTx(ctx, "append terminal events", func(tx *sql.Tx) error {
		for _, e := range evs {
			err := tx.QueryRowContext(ctx, `INSERT INTO terminal_events (pos_system_id, company_id, location_id, terminal_id, user_id,
				event_type, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, e.POSSystemID, e.CompanyID, e.LocationID,
				e.TerminalID, e.UserID, e.Type, string(e.Data), formatTime(e.Time)).Scan(&e.ID)
			if err != nil {
				return fmt.Errorf("sqlite: append terminal event: %w", err)
			}
		}
		return nil
	})
}

const terminalEventCols = `id, pos_system_id, company_id, location_id, terminal_id, user_id, event_type, data, created_at`

// TerminalEvents implements posgate.TerminalEventStore.
func (db *DB) TerminalEvents(ctx context.Context, posSystemID, companyID, locationID, terminalID string, after int64, limit int) ([]*posgate.TerminalEvent, error) {
	return db.terminalEvents(ctx, `SELECT `+terminalEventCols+` FROM terminal_events WHERE pos_system_id = ? AND company_id = ? AND id > ?
		AND location_id IN ('', ?) AND terminal_id IN ('', ?) ORDER BY id LIMIT ? + 0`, posSystemID, companyID, after, locationID, terminalID, limit)
}

// TerminalEventsAfter implements posgate.TerminalEventStore.
func (db *DB) TerminalEventsAfter(ctx context.Context, after int64, limit int) ([]*posgate.TerminalEvent, error) {
	return db.terminalEvents(ctx, `SELECT `+terminalEventCols+` FROM terminal_events WHERE id > ? ORDER BY id LIMIT ? + 0`, after, limit)
}

func (db *DB) terminalEvents(ctx context.Context, query string, args ...any) ([]*posgate.TerminalEvent, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: terminal events: %w", err)
	}
	defer rows.Close()
	var out []*posgate.TerminalEvent
	for rows.Next() {
		e := &posgate.TerminalEvent{}
		var data string
		if err := rows.Scan(&e.ID, &e.POSSystemID, &e.CompanyID, &e.LocationID, &e.TerminalID, &e.UserID, &e.Type, &data,
			timeColumn{&e.Time}); err != nil {
			return nil, fmt.Errorf("sqlite: terminal events: %w", err)
		}
		e.Data = []byte(data)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: terminal events: %w", err)
	}
	return out, nil
}

// TerminalEventHorizon implements posgate.TerminalEventStore. The newest
// id given is AUTOINCREMENT's, which outlives the rows.
func (db *DB) TerminalEventHorizon(ctx context.Context) (last, deleted int64, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'terminal_events'), 0),
		coalesce((SELECT deleted_through FROM terminal_event_horizon WHERE k = 1), 0)`).Scan(&last, &deleted)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: terminal event horizon: %w", err)
	}
	return last, deleted, nil
}

// DeleteTerminalEventsBefore implements posgate.TerminalEventStore.
func (db *DB) DeleteTerminalEventsBefore(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := db.inTx(ctx, "delete terminal events", func(tx *sql.Tx) error {
		var through sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM terminal_events WHERE created_at < ?`, formatTime(t)).Scan(&through); err != nil {
			return fmt.Errorf("sqlite: delete terminal events: %w", err)
		}
		if !through.Valid {
			return nil
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM terminal_events WHERE id <= ?`, through.Int64)
		if err != nil {
			return fmt.Errorf("sqlite: delete terminal events: %w", err)
		}
		n, _ = res.RowsAffected()
		_, err = tx.ExecContext(ctx, `INSERT INTO terminal_event_horizon (k, deleted_through) VALUES (1, ?)
			ON CONFLICT (k) DO UPDATE SET deleted_through = max(deleted_through, excluded.deleted_through)`, through.Int64)
		if err != nil {
			return fmt.Errorf("sqlite: delete terminal events: %w", err)
		}
		return nil
	})
	return n, err
}

// SetTerminalCustomer implements posgate.TerminalEventStore.
func (db *DB) SetTerminalCustomer(ctx context.Context, c *posgate.TerminalCustomer) error {
	_, err := db.w(ctx).ExecContext(ctx, `INSERT INTO terminal_customers (pos_system_id, location_id, terminal_id, session_id, user_id, expires_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (pos_system_id, location_id, terminal_id) DO UPDATE SET session_id = excluded.session_id,
		user_id = excluded.user_id, expires_at = excluded.expires_at`, c.POSSystemID, c.LocationID, c.TerminalID, c.SessionID, c.UserID,
		formatTime(c.ExpiresAt))
	if err != nil {
		return fmt.Errorf("sqlite: set terminal customer: %w", err)
	}
	return nil
}

// FindTerminalCustomer implements posgate.TerminalEventStore.
func (db *DB) FindTerminalCustomer(ctx context.Context, posSystemID, locationID, terminalID string) (*posgate.TerminalCustomer, error) {
	c := &posgate.TerminalCustomer{POSSystemID: posSystemID, LocationID: locationID, TerminalID: terminalID}
	err := db.read.QueryRowContext(ctx, `SELECT session_id, user_id, expires_at FROM terminal_customers
		WHERE pos_system_id = ? AND location_id = ? AND terminal_id = ?`, posSystemID, locationID, terminalID).Scan(&c.SessionID, &c.UserID,
		timeColumn{&c.ExpiresAt})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, posgate.NotFound("terminal customer", terminalID)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: find terminal customer: %w", err)
	}
	return c, nil
}
