package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// ambient is the write transaction of Atomic, carried by the context of
// the writes that join it. It names its store, so that a context handed to
// another store does not lend it a foreign transaction.
type ambient struct {
	db *DB
	tx *sql.Tx
}

type ambientKey struct{}

// ambientTx returns the transaction of Atomic that ctx carries for db, or
// nil.
func (db *DB) ambientTx(ctx context.Context) *sql.Tx {
	if a, ok := ctx.Value(ambientKey{}).(*ambient); ok && a.db == db {
		return a.tx
	}
	return nil
}

// execer is what *sql.DB and *sql.Tx have in common, for the writes that
// run alone or inside Atomic's transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// w is where a write goes: Atomic's transaction when ctx carries one (the
// write connection is the only one, so a write beside it would wait for it
// forever), else the write pool.
func (db *DB) w(ctx context.Context) execer {
	if tx := db.ambientTx(ctx); tx != nil {
		return tx
	}
	return db.write
}

// Atomic implements posgate.AuditStore. The transaction takes the write
// lock as it begins (writeParams), so what fn reads through the read pool
// before it writes is the state its writes change: no other writer can
// commit in between.
func (db *DB) Atomic(ctx context.Context, fn func(ctx context.Context) error) error {
	if db.ambientTx(ctx) != nil {
		return fn(ctx)
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(context.WithValue(ctx, ambientKey{}, &ambient{db: db, tx: tx})); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	db.outbox.Committed() // the writes inside may have emitted events (docs/api.md §19)
	return nil
}

// AppendAudit implements posgate.AuditStore.
func (db *DB) AppendAudit(ctx context.Context, e *posgate.AuditEntry) error {
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO audit_log (`+storekit.AuditColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, storekit.AuditArgs(e, formatTime(e.Time))...); err != nil {
		return writeErr(err, "append audit entry", posgate.AlreadyExists("audit entry", e.ID), nil)
	}
	return nil
}

// ListAudit implements posgate.AuditStore.
func (db *DB) ListAudit(ctx context.Context, q posgate.AuditQuery) ([]*posgate.AuditEntry, error) {
	where, args := storekit.AuditWhere(q, func(n int) string { return "?" + strconv.Itoa(n) }, func(t time.Time) any { return formatTime(t) })
	rows, err := db.read.QueryContext(ctx, `SELECT seq, `+storekit.AuditColumns+` FROM audit_log`+where+
		` ORDER BY seq DESC LIMIT `+strconv.Itoa(max(q.Limit, 0)), args...)
	return scanAll(rows, err, "list audit entries", auditDest)
}

func auditDest(e *posgate.AuditEntry) []any {
	return []any{&e.Seq, &e.ID, timeColumn{&e.Time}, &e.Actor.Subject, &e.Actor.Kind, &e.Actor.ClientID, &e.Channel, &e.Action,
		&e.Target.Type, &e.Target.ID, &e.Target.POSSystemID, &e.Target.CompanyID, &e.Target.LocationID,
		(*rawJSON)(&e.Before), (*rawJSON)(&e.After), &e.TraceID, &e.UserAgent}
}

// rawJSON scans a nullable JSON text column; NULL is JSON null.
type rawJSON []byte

// Scan implements sql.Scanner.
func (r *rawJSON) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*r = rawJSON("null")
	case string:
		*r = rawJSON(v)
	case []byte:
		*r = append(rawJSON(nil), v...)
	default:
		return fmt.Errorf("JSON column holds %T", src)
	}
	return nil
}

// writeTx is a write transaction of its own, or Atomic's joined: a joined
// one commits or rolls back with Atomic, so its Commit and Rollback do
// nothing.
type writeTx struct {
	*sql.Tx
	joined bool
}

// Commit implements the transaction's end for a transaction of its own.
func (t writeTx) Commit() error {
	if t.joined {
		return nil
	}
	return t.Tx.Commit()
}

// Rollback implements the transaction's end for a transaction of its own.
func (t writeTx) Rollback() error {
	if t.joined {
		return nil
	}
	return t.Tx.Rollback()
}

// beginWrite starts a write transaction, or joins the one of Atomic that
// ctx carries.
func (db *DB) beginWrite(ctx context.Context) (writeTx, error) {
	if tx := db.ambientTx(ctx); tx != nil {
		return writeTx{Tx: tx, joined: true}, nil
	}
	tx, err := db.write.BeginTx(ctx, nil)
	return writeTx{Tx: tx}, err
}
