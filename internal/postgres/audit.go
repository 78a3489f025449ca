package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// ambient is the transaction of Atomic, carried by the context of the
// statements that join it. It names its store, so that a context handed to
// another store does not lend it a foreign transaction.
type ambient struct {
	db *DB
	tx pgx.Tx
}

type ambientKey struct{}

// querier is what the pool and a transaction have in common. Begin on a
// transaction starts a savepoint, so a write that needs a transaction of
// its own (pgx.BeginFunc) nests inside Atomic's.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Begin(ctx context.Context) (pgx.Tx, error)
}

// q is where a statement goes: Atomic's transaction when ctx carries one,
// so that the reads of a change see its state and its writes commit with
// its audit entry, else the pool.
func (db *DB) q(ctx context.Context) querier {
	if a, ok := ctx.Value(ambientKey{}).(*ambient); ok && a.db == db {
		return a.tx
	}
	return db.pool
}

// snapshot runs the reads of fn in one read-only snapshot; inside Atomic,
// in Atomic's transaction (a savepoint), so that they need no second
// connection and see its writes.
func (db *DB) snapshot(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if a, ok := ctx.Value(ambientKey{}).(*ambient); ok && a.db == db {
		return pgx.BeginFunc(ctx, a.tx, fn)
	}
	return pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// Atomic implements posgate.AuditStore.
func (db *DB) Atomic(ctx context.Context, fn func(ctx context.Context) error) error {
	if a, ok := ctx.Value(ambientKey{}).(*ambient); ok && a.db == db {
		return fn(ctx)
	}
	var fnErr error
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		fnErr = fn(context.WithValue(ctx, ambientKey{}, &ambient{db: db, tx: tx}))
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return wrap(err, "commit")
	}
	db.outbox.Notify() // the writes inside may have emitted events (docs/api.md §19)
	return nil
}

// AppendAudit implements posgate.AuditStore.
func (db *DB) AppendAudit(ctx context.Context, e *posgate.AuditEntry) error {
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO audit_log (`+storekit.AuditColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`, storekit.AuditArgs(e, posgate.Timestamp(e.Time))...)
	if err != nil {
		return writeErr(err, "append audit entry", posgate.AlreadyExists("audit entry", e.ID), nil)
	}
	return nil
}

// ListAudit implements posgate.AuditStore.
func (db *DB) ListAudit(ctx context.Context, q posgate.AuditQuery) ([]*posgate.AuditEntry, error) {
	where, args := storekit.AuditWhere(q, func(n int) string { return "$" + strconv.Itoa(n) }, func(t time.Time) any { return t })
	return collect(ctx, db, "list audit entries", scanAudit, `SELECT seq, `+storekit.AuditColumns+` FROM audit_log`+where+
		` ORDER BY seq DESC LIMIT `+strconv.Itoa(max(q.Limit, 0)), args...)
}

func scanAudit(row pgx.Row) (*posgate.AuditEntry, error) {
	e := &posgate.AuditEntry{}
	var before, after *string
	var channel string
	if err := row.Scan(&e.Seq, &e.ID, &e.Time, &e.Actor.Subject, &e.Actor.Kind, &e.Actor.ClientID, &channel, &e.Action,
		&e.Target.Type, &e.Target.ID, &e.Target.POSSystemID, &e.Target.CompanyID, &e.Target.LocationID, &before, &after, &e.TraceID, &e.UserAgent); err != nil {
		return nil, err
	}
	e.Channel = posgate.AuditChannel(channel)
	e.Before, e.After = rawJSON(before), rawJSON(after)
	return e, nil
}

// rawJSON is a nullable JSON column's value; NULL is JSON null.
func rawJSON(s *string) []byte {
	if s == nil {
		return []byte("null")
	}
	return []byte(*s)
}
