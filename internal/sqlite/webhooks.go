package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Webhook endpoints and the outbox of their deliveries (docs/api.md §19).
// An event's rows are inserted in the write transaction of its change
// (emit); the sender's claims are leases in memory (leases) and its
// outcomes are written on the write connection: one instance sends.

const (
	endpointCols = `id, pos_system_id, company_id, url, event_types, enabled, disabled_reason, secret, previous_secret,
		previous_secret_until, created_at, updated_at`
	// insertOutboxSQL writes a delivery due at once, or waiting (no
	// next_attempt_at) behind an earlier Pending delivery of its endpoint
	// and user: only the head of each user's queue is due, so that the
	// claim never scans the events held back behind it.
	insertOutboxSQL = `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, user_id, payload, status, next_attempt_at,
		retry_from, created_at) VALUES (?1, ?2, ?3, ?4, ?5, 'Pending', CASE WHEN ?4 = '' OR NOT EXISTS (SELECT 1 FROM webhook_deliveries p
		WHERE p.endpoint_id = ?1 AND p.user_id = ?4 AND p.status = 'Pending') THEN ?6 END, ?6, ?6)`
	deliveryCols = `id, endpoint_id, event_id, event_type, user_id, status, attempts, next_attempt_at, last_attempt_at,
		last_status_code, last_error, last_response, created_at`
)

// nullTimeColumn scans a nullable stored time.
type nullTimeColumn struct{ t **time.Time }

// Scan implements sql.Scanner.
func (c nullTimeColumn) Scan(src any) error {
	if src == nil {
		*c.t = nil
		return nil
	}
	var t time.Time
	if err := (timeColumn{&t}).Scan(src); err != nil {
		return err
	}
	*c.t = &t
	return nil
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return formatTime(*t)
}

func endpointDest(e *posgate.WebhookEndpoint) []any {
	return []any{&e.ID, &e.POSSystemID, &e.CompanyID, &e.URL, jsonColumn[[]string]{&e.EventTypes}, &e.Enabled, &e.DisabledReason,
		&e.Secret, &e.PreviousSecret, nullTimeColumn{&e.PreviousSecretUntil}, timeColumn{&e.CreatedAt}, timeColumn{&e.UpdatedAt}}
}

func deliveryDest(d *posgate.WebhookDelivery) []any {
	return []any{&d.ID, &d.EndpointID, &d.EventID, &d.EventType, &d.UserID, &d.Status, &d.Attempts, nullTimeColumn{&d.NextAttemptAt},
		nullTimeColumn{&d.LastAttemptAt}, &d.LastStatusCode, &d.LastError, &d.LastResponse, timeColumn{&d.CreatedAt}}
}

// loadEndpoints reads a company's enabled endpoints for the outbox.
func (db *DB) loadEndpoints(ctx context.Context, posSystemID, companyID string) ([]*posgate.WebhookEndpoint, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints
		WHERE pos_system_id = ? AND company_id = ? AND enabled = 1 ORDER BY id`, posSystemID, companyID)
	return scanAll(rows, err, "load webhook endpoints", endpointDest)
}

// emit writes ev's outbox rows with stmt (the prepared insert, bound to
// the caller's transaction) and reports whether there were any.
func (db *DB) emit(ctx context.Context, stmt *sql.Stmt, ev *posgate.Event) (bool, error) {
	rows, err := db.outbox.Rows(ctx, ev, nil)
	if err != nil || len(rows) == 0 {
		return false, err
	}
	for _, r := range rows {
		at := formatTime(r.CreatedAt)
		if _, err := stmt.ExecContext(ctx, r.EndpointID, r.EventID, r.EventType, r.UserID, r.Payload, at); err != nil {
			return false, fmt.Errorf("sqlite: emit %s: %w", ev.Type, err)
		}
	}
	db.outbox.MarkPending()
	return true, nil
}

// emitTx writes ev's outbox rows in tx.
func (db *DB) emitTx(ctx context.Context, tx *sql.Tx, ev *posgate.Event) error {
	_, err := db.emit(ctx, tx.StmtContext(ctx, db.insertOutbox), ev)
	return err
}

// ledgerOutbox holds a ledger's outbox rows until flushEvents writes them
// all in one statement: a group of sales (storekit.LedgerWriter) costs the
// writer one insert for all its events, not one per event and endpoint.
type ledgerOutbox struct {
	rows []storekit.OutboxRow
	mark int // len(rows) at the item's savepoint
}

// Emit implements posgate.LedgerTx: the rows wait in the ledger until
// flushEvents, before the commit.
func (l *ledger) Emit(ctx context.Context, ev *posgate.Event) error {
	rows, err := l.db.outbox.Rows(ctx, ev, nil)
	if err != nil {
		return err
	}
	l.outbox.rows = append(l.outbox.rows, rows...)
	return nil
}

// savepoint and rollback keep the rows of an item rolled back to its
// savepoint from being written.
func (o *ledgerOutbox) savepoint() { o.mark = len(o.rows) }
func (o *ledgerOutbox) rollback()  { o.rows = o.rows[:o.mark] }

// flushEvents writes the ledger's outbox rows; every transaction a ledger
// writes in calls it before its commit.
func (l *ledger) flushEvents(ctx context.Context) error {
	rows := l.outbox.rows
	l.outbox = ledgerOutbox{}
	if len(rows) == 0 {
		return nil
	}
	return l.db.insertRows(ctx, l.tx, rows)
}

// insertOutboxRowsSQL writes the rows of ?1 (a JSON array of outboxItem)
// in their order: the first row of an (endpoint, user) in it is due unless
// an earlier delivery of theirs is Pending, the later ones wait behind it
// (see insertOutboxSQL).
const insertOutboxRowsSQL = `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, user_id, payload, status, next_attempt_at,
	retry_from, created_at)
	SELECT r.value ->> 'e', r.value ->> 'i', r.value ->> 't', r.value ->> 'u', r.value ->> 'p', 'Pending',
		CASE WHEN r.value ->> 'u' = '' OR (r.value ->> 'f' AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p
			WHERE p.endpoint_id = r.value ->> 'e' AND p.user_id = r.value ->> 'u' AND p.status = 'Pending')) THEN r.value ->> 'a' END,
		r.value ->> 'a', r.value ->> 'a'
	FROM json_each(?1) r ORDER BY r.key`

// outboxItem is one row as insertOutboxRowsSQL reads it.
type outboxItem struct {
	Endpoint string `json:"e"`
	EventID  string `json:"i"`
	Type     string `json:"t"`
	User     string `json:"u"`
	Payload  string `json:"p"`
	At       string `json:"a"`
	First    bool   `json:"f"`
}

// insertRows writes outbox rows in tx with one statement.
func (db *DB) insertRows(ctx context.Context, tx *sql.Tx, rows []storekit.OutboxRow) error {
	items := make([]outboxItem, len(rows))
	seen := make(map[[2]string]bool, len(rows))
	for i, r := range rows {
		q := [2]string{r.EndpointID, r.UserID}
		items[i] = outboxItem{Endpoint: r.EndpointID, EventID: r.EventID, Type: r.EventType, User: r.UserID, Payload: r.Payload,
			At: formatTime(r.CreatedAt), First: !seen[q]}
		seen[q] = true
	}
	b, err := json.Marshal(items)
	if err != nil {
		return fmt.Errorf("sqlite: emit events: %w", err)
	}
	if _, err := tx.StmtContext(ctx, db.insertOutboxRows).ExecContext(ctx, string(b)); err != nil {
		return fmt.Errorf("sqlite: emit events: %w", err)
	}
	db.outbox.MarkPending()
	return nil
}

// NotifyWebhooks implements posgate.WebhookStore.
func (db *DB) NotifyWebhooks(f func()) { db.outbox.SetNotify(f) }

// HasEnabledWebhook implements posgate.WebhookStore.
func (db *DB) HasEnabledWebhook(ctx context.Context, posSystemID, companyID string) (bool, error) {
	return db.outbox.HasEnabled(ctx, posSystemID, companyID)
}

// CreateWebhookEndpoint implements posgate.WebhookStore.
func (db *DB) CreateWebhookEndpoint(ctx context.Context, e *posgate.WebhookEndpoint) error {
	defer db.outbox.Invalidate()
	now := db.timestamp()
	types, _ := json.Marshal(e.EventTypes)
	return db.inTx(ctx, "create webhook endpoint", func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM webhook_endpoints WHERE pos_system_id = ? AND company_id = ?`,
			e.POSSystemID, e.CompanyID).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: create webhook endpoint: %w", err)
		}
		if n >= posgate.MaxWebhookEndpoints {
			return posgate.Errorf(posgate.ECONFLICT, "Company '%s' has %d webhook endpoints already, the most it may have.", e.CompanyID, n)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+endpointCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.POSSystemID, e.CompanyID, e.URL, string(types), e.Enabled, e.DisabledReason, e.Secret, e.PreviousSecret,
			nullTime(e.PreviousSecretUntil), formatTime(now), formatTime(now))
		if err != nil {
			return writeErr(err, "create webhook endpoint", posgate.AlreadyExists("webhook endpoint", e.ID), posgate.NotFound("company", e.CompanyID))
		}
		e.CreatedAt, e.UpdatedAt = now, now
		return nil
	})
}

// FindWebhookEndpoint implements posgate.WebhookStore.
func (db *DB) FindWebhookEndpoint(ctx context.Context, posSystemID, companyID, id string) (*posgate.WebhookEndpoint, error) {
	e, err := scanRow(db.read.QueryRowContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints
		WHERE pos_system_id = ? AND company_id = ? AND id = ?`, posSystemID, companyID, id), endpointDest)
	if err != nil {
		return nil, readErr(err, "find webhook endpoint", posgate.NotFound("webhook endpoint", id))
	}
	return e, nil
}

// ListWebhookEndpoints implements posgate.WebhookStore.
func (db *DB) ListWebhookEndpoints(ctx context.Context, posSystemID, companyID string) ([]*posgate.WebhookEndpoint, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints
		WHERE pos_system_id = ? AND company_id = ? ORDER BY id`, posSystemID, companyID)
	return scanAll(rows, err, "list webhook endpoints", endpointDest)
}

// UpdateWebhookEndpoint implements posgate.WebhookStore.
func (db *DB) UpdateWebhookEndpoint(ctx context.Context, e *posgate.WebhookEndpoint) error {
	defer db.outbox.Invalidate()
	now := db.timestamp()
	types, _ := json.Marshal(e.EventTypes)
	res, err := db.w(ctx).ExecContext(ctx, `UPDATE webhook_endpoints SET url = ?, event_types = ?, enabled = ?, disabled_reason = ?,
		secret = ?, previous_secret = ?, previous_secret_until = ?, updated_at = ? WHERE pos_system_id = ? AND company_id = ? AND id = ?`,
		e.URL, string(types), e.Enabled, e.DisabledReason, e.Secret, e.PreviousSecret, nullTime(e.PreviousSecretUntil), formatTime(now),
		e.POSSystemID, e.CompanyID, e.ID)
	if err := affectedOne(res, err, "update webhook endpoint", posgate.NotFound("webhook endpoint", e.ID)); err != nil {
		return err
	}
	e.UpdatedAt = now
	return nil
}

// DeleteWebhookEndpoint implements posgate.WebhookStore.
func (db *DB) DeleteWebhookEndpoint(ctx context.Context, posSystemID, companyID, id string) error {
	defer db.outbox.Invalidate()
	res, err := db.w(ctx).ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE pos_system_id = ? AND company_id = ? AND id = ?`,
		posSystemID, companyID, id)
	return affectedOne(res, err, "delete webhook endpoint", posgate.NotFound("webhook endpoint", id))
}

// affectedOne turns a write that touched no row into missing.
func affectedOne(res sql.Result, err error, op string, missing *posgate.Error) error {
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if n == 0 {
		return missing
	}
	return nil
}

// EmitTestEvent implements posgate.WebhookStore.
func (db *DB) EmitTestEvent(ctx context.Context, e *posgate.WebhookEndpoint, ev *posgate.Event) (string, error) {
	r, err := storekit.EventRow(ev)
	if err != nil {
		return "", err
	}
	at := formatTime(r.CreatedAt)
	if _, err := db.w(ctx).ExecContext(ctx, insertOutboxSQL, e.ID, r.EventID, r.EventType, r.UserID, r.Payload, at); err != nil {
		return "", writeErr(err, "emit test event", nil, posgate.NotFound("webhook endpoint", e.ID))
	}
	db.outbox.Notify()
	return r.EventID, nil
}

// claimSQL reads due deliveries: Pending, due, of an enabled endpoint, not
// among the leased ids (?3, a JSON array), and the oldest Pending one of
// its (endpoint, user), so that a user's events go out in order.
const claimSQL = `SELECT d.id, d.endpoint_id, d.event_id, d.event_type, d.payload, d.attempts, d.retry_from
	FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
	WHERE d.status = 'Pending' AND d.next_attempt_at <= ?1 AND e.enabled = 1
		AND d.id NOT IN (SELECT value FROM json_each(?3))
		AND (d.user_id = '' OR NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
			AND p.user_id = d.user_id AND p.status = 'Pending' AND p.id < d.id))
	ORDER BY d.next_attempt_at, d.id LIMIT ?2 + 0`

// leases holds the sender's claims in memory: SQLite's store is one
// instance's (docs/api.md §19.4), so a claim needs no write, and the
// single writer, which the sales' group commits need, is spared a
// transaction per claim (docs/decisions.md, "SQLite's leases in memory").
// A crash forgets them, which only makes the deliveries in flight due again
// at once: at least once still holds. mu is held by a claim from its read
// to its leases and by a recording from its checks to its commit, so that
// a claim never reads as Pending a delivery whose outcome is committed
// but whose lease is not yet gone.
type leases struct {
	mu sync.Mutex
	m  map[int64]leaseHold
}

// leaseHold is one claimed delivery's holder and expiry.
type leaseHold struct {
	owner string
	until time.Time
}

// maxLeases is the size beyond which a claim forgets expired leases. The
// sender records or reclaims what it claims, so only deliveries deleted
// while claimed (their endpoint deleted) would linger.
const maxLeases = 4096

// ClaimDeliveries implements posgate.WebhookStore.
func (db *DB) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*posgate.DeliveryTask, error) {
	l := &db.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[int64]leaseHold{}
	}
	held := make([]int64, 0, len(l.m))
	for id, ls := range l.m {
		if ls.until.After(now) {
			held = append(held, id)
		} else if len(l.m) > maxLeases {
			delete(l.m, id)
		}
	}
	ids, _ := json.Marshal(held)
	rows, err := db.read.QueryContext(ctx, claimSQL, formatTime(now), limit, string(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim webhook deliveries: %w", err)
	}
	var tasks []*posgate.DeliveryTask
	endpoints := map[string]*posgate.WebhookEndpoint{}
	for rows.Next() {
		t := &posgate.DeliveryTask{Endpoint: &posgate.WebhookEndpoint{}}
		var payload string
		if err := rows.Scan(&t.ID, &t.Endpoint.ID, &t.EventID, &t.EventType, &payload, &t.Attempts, timeColumn{&t.RetryFrom}); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: claim webhook deliveries: %w", err)
		}
		t.Payload = []byte(payload)
		endpoints[t.Endpoint.ID] = nil
		tasks = append(tasks, t)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("sqlite: claim webhook deliveries: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: claim webhook deliveries: %w", err)
	}
	for id := range endpoints {
		// A second read, not the first one's snapshot: an endpoint deleted
		// in between took its deliveries with it, which are dropped.
		e, err := scanRow(db.read.QueryRowContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE id = ?`, id), endpointDest)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("sqlite: claim webhook deliveries: %w", err)
		}
		endpoints[id] = e
	}
	until := now.Add(lease)
	claimed := tasks[:0]
	for _, t := range tasks {
		if t.Endpoint = endpoints[t.Endpoint.ID]; t.Endpoint != nil {
			l.m[t.ID] = leaseHold{owner: owner, until: until}
			claimed = append(claimed, t)
		}
	}
	return claimed, nil
}

const (
	// recordDeliveriesSQL stores a batch of outcomes (?1, a JSON array of
	// recordedOutcome; their leases checked in memory before) in one
	// statement.
	recordDeliveriesSQL = `UPDATE webhook_deliveries SET status = r.value ->> 's', attempts = attempts + 1,
		next_attempt_at = r.value ->> 'n', lease_owner = NULL, lease_until = NULL, last_attempt_at = r.value ->> 'a',
		last_status_code = r.value ->> 'c', last_error = r.value ->> 'e', last_response = r.value ->> 'r'
		FROM json_each(?1) r WHERE webhook_deliveries.id = r.value ->> 'i' AND webhook_deliveries.status = 'Pending'
		RETURNING id, endpoint_id, user_id, status`
	// releaseNextSQL makes the next waiting delivery of each (endpoint,
	// user) of ?1 (a JSON array of {"e", "u"}) due at ?2 once the one
	// before it ended.
	releaseNextSQL = `UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id IN (SELECT (SELECT min(p.id)
		FROM webhook_deliveries p WHERE p.endpoint_id = k.value ->> 'e' AND p.user_id = k.value ->> 'u' AND p.status = 'Pending')
		FROM json_each(?1) k) AND next_attempt_at IS NULL`
)

// recordedOutcome is one outcome as recordDeliveriesSQL reads it.
type recordedOutcome struct {
	ID       int64   `json:"i"`
	Status   string  `json:"s"`
	Next     *string `json:"n"`
	At       string  `json:"a"`
	Code     int     `json:"c"`
	Error    string  `json:"e"`
	Response string  `json:"r"`
}

// queueKey is one (endpoint, user) queue as releaseNextSQL reads it.
type queueKey struct {
	Endpoint string `json:"e"`
	User     string `json:"u"`
}

// RecordDelivery implements posgate.WebhookStore.
func (db *DB) RecordDelivery(ctx context.Context, owner string, r *posgate.DeliveryResult) (bool, error) {
	n, err := db.RecordDeliveries(ctx, owner, []*posgate.DeliveryResult{r})
	return n == 1, err
}

// RecordDeliveries implements posgate.WebhookStore: one write transaction
// of two statements for a batch of outcomes (more when one disables its
// endpoint), whatever its size, so that the sender costs the single writer
// little beside the sales. An outcome is stored while owner holds its
// lease, expired or not, as long as no other claim took it over.
func (db *DB) RecordDeliveries(ctx context.Context, owner string, rs []*posgate.DeliveryResult) (int, error) {
	l := &db.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	held := make([]*posgate.DeliveryResult, 0, len(rs))
	outcomes := make([]recordedOutcome, 0, len(rs))
	var releaseAt time.Time
	for _, r := range rs {
		if ls, ok := l.m[r.ID]; !ok || ls.owner != owner {
			continue
		}
		held = append(held, r)
		o := recordedOutcome{ID: r.ID, Status: r.Status, At: formatTime(r.At), Code: r.StatusCode, Error: r.Error, Response: r.Response}
		if r.Status == posgate.DeliveryPending {
			next := formatTime(r.NextAttemptAt)
			o.Next = &next
		}
		outcomes = append(outcomes, o)
		if r.At.After(releaseAt) {
			releaseAt = r.At
		}
	}
	if len(held) == 0 {
		return 0, nil
	}
	batch, err := json.Marshal(outcomes)
	if err != nil {
		return 0, fmt.Errorf("sqlite: record webhook deliveries: %w", err)
	}
	n, disabled := 0, false
	err = db.inTx(ctx, "record webhook deliveries", func(tx *sql.Tx) error {
		n = 0
		rows, err := tx.QueryContext(ctx, recordDeliveriesSQL, string(batch))
		if err != nil {
			return fmt.Errorf("sqlite: record webhook deliveries: %w", err)
		}
		var queues []queueKey
		var ids []int64
		for rows.Next() {
			var id int64
			var k queueKey
			var status string
			if err := rows.Scan(&id, &k.Endpoint, &k.User, &status); err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: record webhook deliveries: %w", err)
			}
			n++
			if status != posgate.DeliveryPending && k.User != "" {
				// The next event of the user becomes due.
				queues = append(queues, k)
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("sqlite: record webhook deliveries: %w", err)
		}
		if len(queues) > 0 {
			keys, _ := json.Marshal(queues)
			if _, err := tx.ExecContext(ctx, releaseNextSQL, string(keys), formatTime(releaseAt)); err != nil {
				return fmt.Errorf("sqlite: record webhook deliveries: %w", err)
			}
		}
		return db.disableGone(ctx, tx, held, ids, &disabled)
	})
	if disabled {
		db.outbox.Invalidate()
	}
	if err != nil {
		return 0, err
	}
	for _, r := range held {
		delete(l.m, r.ID)
	}
	return n, nil
}

// disableGone disables the endpoints of the recorded outcomes (ids) that
// answered 410 Gone.
func (db *DB) disableGone(ctx context.Context, tx *sql.Tx, held []*posgate.DeliveryResult, ids []int64, disabled *bool) error {
	if !slices.ContainsFunc(held, func(r *posgate.DeliveryResult) bool { return r.DisableEndpoint }) {
		return nil
	}
	recorded := make(map[int64]bool, len(ids))
	for _, id := range ids {
		recorded[id] = true
	}
	for _, r := range held {
		if !r.DisableEndpoint || !recorded[r.ID] {
			continue
		}
		*disabled = true
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, updated_at = ?
			WHERE id = (SELECT endpoint_id FROM webhook_deliveries WHERE id = ?)`, disabledBy410, formatTime(r.At), r.ID); err != nil {
			return fmt.Errorf("sqlite: record webhook delivery: %w", err)
		}
	}
	return nil
}

// ReleaseWaiting implements posgate.WebhookStore.
func (db *DB) ReleaseWaiting(ctx context.Context, now time.Time) (int, error) {
	res, err := db.w(ctx).ExecContext(ctx, `UPDATE webhook_deliveries SET next_attempt_at = ?1 WHERE status = 'Pending'
		AND next_attempt_at IS NULL AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = webhook_deliveries.endpoint_id
			AND p.user_id = webhook_deliveries.user_id AND p.status = 'Pending' AND p.id < webhook_deliveries.id)`, formatTime(now))
	if err != nil {
		return 0, fmt.Errorf("sqlite: release waiting webhook deliveries: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// disabledBy410 is the reason an endpoint that answered 410 Gone carries.
const disabledBy410 = "The endpoint answered 410 Gone."

// ListWebhookDeliveries implements posgate.WebhookStore.
func (db *DB) ListWebhookDeliveries(ctx context.Context, q posgate.WebhookDeliveryQuery) ([]*posgate.WebhookDelivery, int, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+deliveryCols+`, COUNT(*) OVER () FROM webhook_deliveries
		WHERE endpoint_id = ?1 AND (?2 = '' OR status = ?2) ORDER BY id DESC LIMIT ?3 + 0 OFFSET ?4 + 0`,
		q.EndpointID, q.Status, q.Limit, q.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite: list webhook deliveries: %w", err)
	}
	defer rows.Close()
	var out []*posgate.WebhookDelivery
	total := 0
	for rows.Next() {
		d := &posgate.WebhookDelivery{}
		if err := rows.Scan(append(deliveryDest(d), &total)...); err != nil {
			return nil, 0, fmt.Errorf("sqlite: list webhook deliveries: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("sqlite: list webhook deliveries: %w", err)
	}
	if len(out) == 0 && q.Offset > 0 {
		if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ?1 AND (?2 = '' OR status = ?2)`,
			q.EndpointID, q.Status).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("sqlite: count webhook deliveries: %w", err)
		}
	}
	return out, total, nil
}

// RedeliverWebhooks implements posgate.WebhookStore.
func (db *DB) RedeliverWebhooks(ctx context.Context, posSystemID, companyID, endpointID string, id int64, now time.Time) (int, error) {
	at := formatTime(now)
	res, err := db.w(ctx).ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'Pending', attempts = 0, next_attempt_at = ?1,
		retry_from = ?1, lease_owner = NULL, lease_until = NULL
		WHERE status = 'Dead' AND endpoint_id = ?2 AND (?3 = 0 OR id = ?3)
		AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = ?2 AND e.pos_system_id = ?4 AND e.company_id = ?5)`,
		at, endpointID, id, posSystemID, companyID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: redeliver webhooks: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: redeliver webhooks: %w", err)
	}
	if n > 0 {
		db.outbox.Notify()
	}
	return int(n), nil
}

// SweepWebhookDeliveries implements posgate.WebhookStore.
func (db *DB) SweepWebhookDeliveries(ctx context.Context, deliveredBefore, deadBefore time.Time, batch int) (int64, error) {
	latest := formatTime(storekit.Later(deliveredBefore, deadBefore))
	var cursor, total int64
	for {
		// The batch is the next batch rows by id; ids follow creation,
		// so once a batch begins after both limits, no later row is old
		// enough either.
		var hi sql.NullInt64
		var first sql.NullString
		if err := db.read.QueryRowContext(ctx, `SELECT max(id), min(created_at) FROM (SELECT id, created_at FROM webhook_deliveries
			WHERE id > ? ORDER BY id LIMIT ? + 0)`, cursor, batch).Scan(&hi, &first); err != nil {
			return total, fmt.Errorf("sqlite: sweep webhook deliveries: %w", err)
		}
		if !hi.Valid || first.String >= latest {
			return total, nil
		}
		res, err := db.w(ctx).ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE id > ?1 AND id <= ?2
			AND ((status = 'Delivered' AND last_attempt_at < ?3) OR (status = 'Dead' AND last_attempt_at < ?4))`,
			cursor, hi.Int64, formatTime(deliveredBefore), formatTime(deadBefore))
		if err != nil {
			return total, fmt.Errorf("sqlite: sweep webhook deliveries: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
		cursor = hi.Int64
	}
}

// WebhookBacklog implements posgate.WebhookStore.
func (db *DB) WebhookBacklog(ctx context.Context) (int64, error) {
	var n int64
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = 'Pending'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: webhook backlog: %w", err)
	}
	return n, nil
}
