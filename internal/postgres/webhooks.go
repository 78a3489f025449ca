package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Webhook endpoints and the outbox of their deliveries (docs/api.md §19).
// An event's rows are inserted in the transaction of its change; instances
// sharing the database claim due deliveries with FOR UPDATE SKIP LOCKED and
// a lease, so that each attempt is sent by one of them.

const (
	endpointCols = `id, pos_system_id, company_id, url, event_types, enabled, disabled_reason, secret, previous_secret,
		previous_secret_until, created_at, updated_at`
	// insertOutboxSQL writes a delivery due at once, or waiting (no
	// next_attempt_at) behind an earlier Pending delivery of its endpoint
	// and user: only the head of each user's queue is due, so that the
	// claim never scans the events held back behind it. (Two transactions
	// writing a user's first events at once may both make theirs due; the
	// claim's own check keeps them in order.)
	//
	// The earlier delivery it finds is locked FOR SHARE until the commit:
	// the transaction that records that delivery's outcome (RecordDeliveries,
	// which updates it) waits for this one, and its promotion, a statement
	// later, sees this row and makes it due. Without the lock, a delivery
	// recorded between this statement and its commit promoted nothing, and
	// this row waited for the sweep of ReleaseWaiting (up to 5 s): the
	// seconds of delivery lag that several instances showed. When the
	// recording transaction came first, this statement waits for it and
	// sees the delivery no longer Pending.
	insertOutboxSQL = `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, user_id, payload, status, next_attempt_at,
		retry_from, created_at) VALUES ($1, $2, $3, $4, $5, 'Pending', CASE WHEN $4 = '' OR NOT EXISTS (SELECT 1 FROM webhook_deliveries p
		WHERE p.endpoint_id = $1 AND p.user_id = $4 AND p.status = 'Pending' FOR SHARE) THEN $6::timestamptz END, $6, $6)`
	deliveryCols = `id, endpoint_id, event_id, event_type, user_id, status, attempts, next_attempt_at, last_attempt_at,
		last_status_code, last_error, last_response, created_at`
)

func scanEndpoint(r pgx.Row) (*posgate.WebhookEndpoint, error) {
	e := &posgate.WebhookEndpoint{}
	err := r.Scan(&e.ID, &e.POSSystemID, &e.CompanyID, &e.URL, &e.EventTypes, &e.Enabled, &e.DisabledReason,
		&e.Secret, &e.PreviousSecret, &e.PreviousSecretUntil, &e.CreatedAt, &e.UpdatedAt)
	return e, err
}

func scanDelivery(r pgx.Row, extra ...any) (*posgate.WebhookDelivery, error) {
	d := &posgate.WebhookDelivery{}
	err := r.Scan(append([]any{&d.ID, &d.EndpointID, &d.EventID, &d.EventType, &d.UserID, &d.Status, &d.Attempts, &d.NextAttemptAt,
		&d.LastAttemptAt, &d.LastStatusCode, &d.LastError, &d.LastResponse, &d.CreatedAt}, extra...)...)
	return d, err
}

// loadEndpoints reads a company's enabled endpoints for the outbox.
func (db *DB) loadEndpoints(ctx context.Context, posSystemID, companyID string) ([]*posgate.WebhookEndpoint, error) {
	return loadEndpoints(ctx, db.q(ctx), posSystemID, companyID)
}

// loadEndpoints reads a company's enabled endpoints through q.
func loadEndpoints(ctx context.Context, q pgQuerier, posSystemID, companyID string) ([]*posgate.WebhookEndpoint, error) {
	rows, err := q.Query(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints
		WHERE pos_system_id = $1 AND company_id = $2 AND enabled ORDER BY id`, posSystemID, companyID)
	if err != nil {
		return nil, wrap(err, "load webhook endpoints")
	}
	eps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*posgate.WebhookEndpoint, error) { return scanEndpoint(r) })
	return eps, wrap(err, "load webhook endpoints")
}

// emitRows writes outbox rows with q (the caller's transaction).
func emitRows(ctx context.Context, q pgQuerier, rows []storekit.OutboxRow) error {
	for _, r := range rows {
		if _, err := q.Exec(ctx, insertOutboxSQL, r.EndpointID, r.EventID, r.EventType, r.UserID, r.Payload, r.CreatedAt); err != nil {
			return wrap(err, "emit "+r.EventType)
		}
	}
	return nil
}

// emitIn writes ev's outbox rows in the transaction q and reports whether
// there were any (the caller wakes the sender after its commit).
func (db *DB) emitIn(ctx context.Context, q pgQuerier, ev *posgate.Event) (bool, error) {
	rows, err := db.outbox.Rows(ctx, ev, func(ctx context.Context, posSystemID, companyID string) ([]*posgate.WebhookEndpoint, error) {
		return loadEndpoints(ctx, q, posSystemID, companyID)
	})
	if err != nil || len(rows) == 0 {
		return false, err
	}
	return true, emitRows(ctx, q, rows)
}

// Emit implements posgate.LedgerTx: the rows wait in the ledger until
// flush writes them all in one statement, which spares a sale a round trip
// per event.
func (l *ledger) Emit(ctx context.Context, ev *posgate.Event) error {
	rows, err := l.db.outbox.Rows(ctx, ev, func(ctx context.Context, posSystemID, companyID string) ([]*posgate.WebhookEndpoint, error) {
		return loadEndpoints(ctx, l.q(), posSystemID, companyID)
	})
	l.events = append(l.events, rows...)
	return err
}

// flushSQL writes a transaction's outbox rows in their order; the first
// row of an (endpoint, user) in it is due unless an earlier delivery of
// theirs is Pending, the later ones wait behind it (see insertOutboxSQL,
// and its lock).
const flushSQL = `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, user_id, payload, status, next_attempt_at, retry_from, created_at)
	SELECT u.e, u.id, u.t, u.usr, u.p, 'Pending', CASE WHEN u.usr = '' OR (u.f AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p
		WHERE p.endpoint_id = u.e AND p.user_id = u.usr AND p.status = 'Pending' FOR SHARE)) THEN u.at END, u.at, u.at
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::bool[]) WITH ORDINALITY AS u(e, id, t, usr, p, at, f, n)
	ORDER BY u.n`

// NotifyWebhooks implements posgate.WebhookStore.
func (db *DB) NotifyWebhooks(f func()) { db.outbox.SetNotify(f) }

// HasEnabledWebhook implements posgate.WebhookStore.
func (db *DB) HasEnabledWebhook(ctx context.Context, posSystemID, companyID string) (bool, error) {
	return db.outbox.HasEnabled(ctx, posSystemID, companyID)
}

// CreateWebhookEndpoint implements posgate.WebhookStore. The company's row
// is locked for the count, so that two creations cannot both pass it.
func (db *DB) CreateWebhookEndpoint(ctx context.Context, e *posgate.WebhookEndpoint) error {
	defer db.outbox.Invalidate()
	now := posgate.Timestamp(db.now())
	err := pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		var n int
		err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM webhook_endpoints w WHERE w.pos_system_id = c.pos_system_id
			AND w.company_id = c.company_id) FROM companies c WHERE c.pos_system_id = $1 AND c.company_id = $2 FOR UPDATE`,
			e.POSSystemID, e.CompanyID).Scan(&n)
		if err != nil {
			return readErr(err, "create webhook endpoint", posgate.NotFound("company", e.CompanyID))
		}
		if n >= posgate.MaxWebhookEndpoints {
			return posgate.Errorf(posgate.ECONFLICT, "Company '%s' has %d webhook endpoints already, the most it may have.", e.CompanyID, n)
		}
		_, err = tx.Exec(ctx, `INSERT INTO webhook_endpoints (`+endpointCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
			e.ID, e.POSSystemID, e.CompanyID, e.URL, e.EventTypes, e.Enabled, e.DisabledReason, e.Secret, e.PreviousSecret,
			e.PreviousSecretUntil, now)
		if err != nil {
			return writeErr(err, "create webhook endpoint", posgate.AlreadyExists("webhook endpoint", e.ID), posgate.NotFound("company", e.CompanyID))
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.CreatedAt, e.UpdatedAt = now, now
	return nil
}

// FindWebhookEndpoint implements posgate.WebhookStore.
func (db *DB) FindWebhookEndpoint(ctx context.Context, posSystemID, companyID, id string) (*posgate.WebhookEndpoint, error) {
	e, err := scanEndpoint(db.q(ctx).QueryRow(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints
		WHERE pos_system_id = $1 AND company_id = $2 AND id = $3`, posSystemID, companyID, id))
	if err != nil {
		return nil, readErr(err, "find webhook endpoint", posgate.NotFound("webhook endpoint", id))
	}
	return e, nil
}

// ListWebhookEndpoints implements posgate.WebhookStore.
func (db *DB) ListWebhookEndpoints(ctx context.Context, posSystemID, companyID string) ([]*posgate.WebhookEndpoint, error) {
	return collect(ctx, db, "list webhook endpoints", scanEndpoint, `SELECT `+endpointCols+` FROM webhook_endpoints
		WHERE pos_system_id = $1 AND company_id = $2 ORDER BY id`, posSystemID, companyID)
}

// UpdateWebhookEndpoint implements posgate.WebhookStore.
func (db *DB) UpdateWebhookEndpoint(ctx context.Context, e *posgate.WebhookEndpoint) error {
	defer db.outbox.Invalidate()
	now := posgate.Timestamp(db.now())
	tag, err := db.q(ctx).Exec(ctx, `UPDATE webhook_endpoints SET url = $1, event_types = $2, enabled = $3, disabled_reason = $4,
		secret = $5, previous_secret = $6, previous_secret_until = $7, updated_at = $8 WHERE pos_system_id = $9 AND company_id = $10 AND id = $11`,
		e.URL, e.EventTypes, e.Enabled, e.DisabledReason, e.Secret, e.PreviousSecret, e.PreviousSecretUntil, now, e.POSSystemID, e.CompanyID, e.ID)
	if err != nil {
		return wrap(err, "update webhook endpoint")
	}
	if tag.RowsAffected() == 0 {
		return posgate.NotFound("webhook endpoint", e.ID)
	}
	e.UpdatedAt = now
	return nil
}

// DeleteWebhookEndpoint implements posgate.WebhookStore.
func (db *DB) DeleteWebhookEndpoint(ctx context.Context, posSystemID, companyID, id string) error {
	defer db.outbox.Invalidate()
	tag, err := db.q(ctx).Exec(ctx, `DELETE FROM webhook_endpoints WHERE pos_system_id = $1 AND company_id = $2 AND id = $3`,
		posSystemID, companyID, id)
	if err != nil {
		return wrap(err, "delete webhook endpoint")
	}
	if tag.RowsAffected() == 0 {
		return posgate.NotFound("webhook endpoint", id)
	}
	return nil
}

// EmitTestEvent implements posgate.WebhookStore.
func (db *DB) EmitTestEvent(ctx context.Context, e *posgate.WebhookEndpoint, ev *posgate.Event) (string, error) {
	r, err := storekit.EventRow(ev)
	if err != nil {
		return "", err
	}
	r.EndpointID = e.ID
	if err := emitRows(ctx, db.q(ctx), []storekit.OutboxRow{r}); err != nil {
		return "", writeErr(errors.Unwrap(err), "emit test event", nil, posgate.NotFound("webhook endpoint", e.ID))
	}
	db.outbox.Notify()
	return r.EventID, nil
}

// claimSQL leases due deliveries: Pending, due, not under a live lease, of
// an enabled endpoint, and the oldest Pending one of its (endpoint, user),
// so that a user's events go out in order. SKIP LOCKED lets instances claim
// at once without waiting on each other's rows; the lease (committed with
// the claim) keeps them from sending a row another has claimed.
const claimSQL = `UPDATE webhook_deliveries w SET lease_owner = $1, lease_until = $2
	FROM (SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
		WHERE d.status = 'Pending' AND d.next_attempt_at <= $3 AND (d.lease_until IS NULL OR d.lease_until <= $3) AND e.enabled
		AND (d.user_id = '' OR NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
			AND p.user_id = d.user_id AND p.status = 'Pending' AND p.id < d.id))
		ORDER BY d.next_attempt_at, d.id LIMIT $4 FOR UPDATE OF d SKIP LOCKED) c
	WHERE w.id = c.id
	RETURNING w.id, w.endpoint_id, w.event_id, w.event_type, w.payload, w.attempts, w.retry_from`

// ClaimDeliveries implements posgate.WebhookStore.
func (db *DB) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*posgate.DeliveryTask, error) {
	var tasks []*posgate.DeliveryTask
	err := pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, claimSQL, owner, now.Add(lease), now, limit)
		if err != nil {
			return err
		}
		tasks, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*posgate.DeliveryTask, error) {
			t := &posgate.DeliveryTask{Endpoint: &posgate.WebhookEndpoint{}}
			var payload string
			err := r.Scan(&t.ID, &t.Endpoint.ID, &t.EventID, &t.EventType, &payload, &t.Attempts, &t.RetryFrom)
			t.Payload = []byte(payload)
			return t, err
		})
		if err != nil {
			return err
		}
		endpoints := map[string]*posgate.WebhookEndpoint{}
		for _, t := range tasks {
			e, ok := endpoints[t.Endpoint.ID]
			if !ok {
				if e, err = scanEndpoint(tx.QueryRow(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE id = $1`, t.Endpoint.ID)); err != nil {
					return err
				}
				endpoints[e.ID] = e
			}
			t.Endpoint = e
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "claim webhook deliveries")
	}
	return tasks, nil
}

// RecordDelivery implements posgate.WebhookStore.
func (db *DB) RecordDelivery(ctx context.Context, owner string, r *posgate.DeliveryResult) (bool, error) {
	n, err := db.RecordDeliveries(ctx, owner, []*posgate.DeliveryResult{r})
	return n == 1, err
}

// recordSQL stores a batch of outcomes in one statement: each row only
// while owner ($9) holds its lease and it is Pending.
const recordSQL = `UPDATE webhook_deliveries d SET status = r.status, attempts = d.attempts + 1, next_attempt_at = r.next,
		lease_owner = NULL, lease_until = NULL, last_attempt_at = r.at, last_status_code = r.code, last_error = r.err, last_response = r.resp
	FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::integer[], $6::text[], $7::text[], $8::boolean[])
		AS r(id, status, next, at, code, err, resp, disable)
	WHERE d.id = r.id AND d.lease_owner = $9 AND d.status = 'Pending'
	RETURNING d.endpoint_id, d.user_id, d.status, r.at, r.disable`

// promoteSQL makes the next delivery of each (endpoint, user) whose head
// ended due (see insertOutboxSQL).
const promoteSQL = `UPDATE webhook_deliveries w SET next_attempt_at = k.at
	FROM (SELECT k.at, (SELECT min(p.id) FROM webhook_deliveries p WHERE p.endpoint_id = k.e AND p.user_id = k.u AND p.status = 'Pending') AS next
		FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS k(e, u, at)) k
	WHERE w.id = k.next AND w.next_attempt_at IS NULL`

// RecordDeliveries implements posgate.WebhookStore: one transaction of two
// statements for a batch of outcomes (three when one disables its
// endpoint), whatever its size.
func (db *DB) RecordDeliveries(ctx context.Context, owner string, rs []*posgate.DeliveryResult) (int, error) {
	n, disabled := 0, false
	k := len(rs)
	ids, statuses, nexts, ats := make([]int64, k), make([]string, k), make([]*time.Time, k), make([]time.Time, k)
	codes, errs, resps, disable := make([]int32, k), make([]string, k), make([]string, k), make([]bool, k)
	for i, r := range rs {
		ids[i], statuses[i], ats[i], codes[i], errs[i], resps[i], disable[i] = r.ID, r.Status, r.At, int32(r.StatusCode), r.Error, r.Response, r.DisableEndpoint
		if r.Status == posgate.DeliveryPending {
			nexts[i] = &r.NextAttemptAt
		}
	}
	// A sale's transaction holds the deliveries its rows wait behind FOR
	// SHARE (see insertOutboxSQL): should the two deadlock, PostgreSQL
	// aborts one, and this one runs again, since outcomes not recorded
	// would be sent again once their lease ran out.
	var err error
	for attempt := 0; ; attempt++ {
		err = pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
			n = 0
			rows, err := tx.Query(ctx, recordSQL, ids, statuses, nexts, ats, codes, errs, resps, disable, owner)
			if err != nil {
				return err
			}
			var pe, pu, gone []string
			var pat []time.Time
			var goneAt []time.Time
			for rows.Next() {
				var endpoint, user, status string
				var at time.Time
				var dis bool
				if err := rows.Scan(&endpoint, &user, &status, &at, &dis); err != nil {
					rows.Close()
					return err
				}
				n++
				if status != posgate.DeliveryPending && user != "" {
					pe, pu, pat = append(pe, endpoint), append(pu, user), append(pat, at)
				}
				if dis {
					gone, goneAt = append(gone, endpoint), append(goneAt, at)
				}
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if len(pe) > 0 {
				if _, err := tx.Exec(ctx, promoteSQL, pe, pu, pat); err != nil {
					return err
				}
			}
			for i, endpoint := range gone {
				disabled = true
				if _, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $1, updated_at = $2 WHERE id = $3`,
					disabledBy410, goneAt[i], endpoint); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil || !retryable(err) || attempt == 4 {
			break
		}
	}
	if disabled {
		db.outbox.Invalidate()
	}
	if err != nil {
		return 0, wrap(err, "record webhook deliveries")
	}
	return n, nil
}

// ReleaseWaiting implements posgate.WebhookStore.
func (db *DB) ReleaseWaiting(ctx context.Context, now time.Time) (int, error) {
	tag, err := db.q(ctx).Exec(ctx, `UPDATE webhook_deliveries d SET next_attempt_at = $1 WHERE d.status = 'Pending'
		AND d.next_attempt_at IS NULL AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
			AND p.user_id = d.user_id AND p.status = 'Pending' AND p.id < d.id)`, now)
	if err != nil {
		return 0, wrap(err, "release waiting webhook deliveries")
	}
	return int(tag.RowsAffected()), nil
}

// disabledBy410 is the reason an endpoint that answered 410 Gone carries.
const disabledBy410 = "The endpoint answered 410 Gone."

// ListWebhookDeliveries implements posgate.WebhookStore.
func (db *DB) ListWebhookDeliveries(ctx context.Context, q posgate.WebhookDeliveryQuery) ([]*posgate.WebhookDelivery, int, error) {
	rows, err := db.q(ctx).Query(ctx, `SELECT `+deliveryCols+`, COUNT(*) OVER () FROM webhook_deliveries
		WHERE endpoint_id = $1 AND ($2 = '' OR status = $2) ORDER BY id DESC LIMIT $3 OFFSET $4`,
		q.EndpointID, q.Status, q.Limit, q.Offset)
	if err != nil {
		return nil, 0, wrap(err, "list webhook deliveries")
	}
	total := 0
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*posgate.WebhookDelivery, error) { return scanDelivery(r, &total) })
	if err != nil {
		return nil, 0, wrap(err, "list webhook deliveries")
	}
	if len(out) == 0 && q.Offset > 0 {
		if err := db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND ($2 = '' OR status = $2)`,
			q.EndpointID, q.Status).Scan(&total); err != nil {
			return nil, 0, wrap(err, "count webhook deliveries")
		}
	}
	return out, total, nil
}

// RedeliverWebhooks implements posgate.WebhookStore.
func (db *DB) RedeliverWebhooks(ctx context.Context, posSystemID, companyID, endpointID string, id int64, now time.Time) (int, error) {
	tag, err := db.q(ctx).Exec(ctx, `UPDATE webhook_deliveries SET status = 'Pending', attempts = 0, next_attempt_at = $1,
		retry_from = $1, lease_owner = NULL, lease_until = NULL
		WHERE status = 'Dead' AND endpoint_id = $2 AND ($3 = 0 OR id = $3)
		AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = $2 AND e.pos_system_id = $4 AND e.company_id = $5)`,
		now, endpointID, id, posSystemID, companyID)
	if err != nil {
		return 0, wrap(err, "redeliver webhooks")
	}
	if tag.RowsAffected() > 0 {
		db.outbox.Notify()
	}
	return int(tag.RowsAffected()), nil
}

// SweepWebhookDeliveries implements posgate.WebhookStore.
func (db *DB) SweepWebhookDeliveries(ctx context.Context, deliveredBefore, deadBefore time.Time, batch int) (int64, error) {
	latest := storekit.Later(deliveredBefore, deadBefore)
	var cursor, total int64
	for {
		// The batch is the next batch rows by id; ids follow creation,
		// so once a batch begins after both limits, no later row is old
		// enough either.
		var hi *int64
		var first *time.Time
		if err := db.q(ctx).QueryRow(ctx, `SELECT max(id), min(created_at) FROM (SELECT id, created_at FROM webhook_deliveries
			WHERE id > $1 ORDER BY id LIMIT $2) b`, cursor, batch).Scan(&hi, &first); err != nil {
			return total, wrap(err, "sweep webhook deliveries")
		}
		if hi == nil || !first.Before(latest) {
			return total, nil
		}
		tag, err := db.q(ctx).Exec(ctx, `DELETE FROM webhook_deliveries WHERE id > $1 AND id <= $2
			AND ((status = 'Delivered' AND last_attempt_at < $3) OR (status = 'Dead' AND last_attempt_at < $4))`,
			cursor, *hi, deliveredBefore, deadBefore)
		if err != nil {
			return total, wrap(err, "sweep webhook deliveries")
		}
		total += tag.RowsAffected()
		cursor = *hi
	}
}

// WebhookBacklog implements posgate.WebhookStore.
func (db *DB) WebhookBacklog(ctx context.Context) (int64, error) {
	var n int64
	if err := db.q(ctx).QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = 'Pending'`).Scan(&n); err != nil {
		return 0, wrap(err, "webhook backlog")
	}
	return n, nil
}
