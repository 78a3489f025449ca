package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/posgate/posgate"
)

// The ledger's round trips. A sale took a dozen, one per statement (BEGIN,
// the insert, the program, the customer, the coupon, the redemption, the
// balance, the answer, the outbox, COMMIT), and with PostgreSQL on the same
// two cores each cost posgate and the server more than the statement
// itself (a write to the socket and a read of the answer on each side).
// These things cut them to two, the session's read included, with the
// same statements in the same order, so that every rule decides as before:
//   - a sale's session is read in the first round trip, after BEGIN, and
//     the service's rule for it (ApplyCheckingSession's check) decides
//     before anything the sale wrote is read, a refusal rolling it back;
//   - the ledger's own transaction is not a pgx.Tx: its BEGIN waits in
//     pending and goes with the first statement, its COMMIT with the last
//     ones (send);
//   - a statement whose outcome the ledger need not wait for (the sale's
//     answer, FinishTransaction) waits in pending for the next one;
//   - a sale's claim of its keys (InsertTransaction) carries the reads
//     the sale will make next (its company's program, its card's
//     customer, its coupons): ReadAhead names the sale, and the reads'
//     rows wait in read for the calls that ask for them. They run after
//     the claim, in the same transaction, as they did one by one; a read
//     that finds nothing is answered so too;
//   - those reads lock the coupons and the customer (FOR UPDATE), so the
//     ledger decides the redemption and the balance on the rows it holds,
//     as the statements would, and the statements wait in pending for
//     the commit, each required to change the row it decided on.

// batcher is where the ledger's statements go: a connection of the pool,
// on which the ledger runs its own transaction, or Atomic's transaction.
type batcher interface {
	pgQuerier
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// pendingStmt is a statement waiting in a ledger for the next one.
type pendingStmt struct {
	op, sql string
	args    []any
	// want is the number of rows the statement must change, or -1 for
	// any: a write the ledger decided on rows it had locked must change
	// exactly them, or the transaction fails.
	want int64
}

// maxReadAheadCoupons bounds the coupons a sale's insert reads ahead; any
// further ones are read when the ledger asks for them.
const maxReadAheadCoupons = 8

// readAhead holds the rows an insert read for its sale, each taken by the
// first call that asks for it (a later call reads again).
type readAhead struct {
	pos, company string

	program    bool
	programRes *posgate.LoyaltyProgram
	programErr error

	user    bool
	userID  string
	userRes *posgate.LoyaltyUser
	userSeq int64 // its balance_seq
	userErr error

	coupons []couponRead
}

// couponRead is a coupon read ahead, by its folded code.
type couponRead struct {
	code string
	c    *posgate.Coupon
	err  error
	used bool
}

// coupon takes the coupon read ahead for code (folded), if any.
func (r *readAhead) coupon(posSystemID, companyID, code string) (*couponRead, bool) {
	if r.pos != posSystemID || r.company != companyID {
		return nil, false
	}
	for i := range r.coupons {
		if c := &r.coupons[i]; !c.used && c.code == code {
			c.used = true
			return c, true
		}
	}
	return nil, false
}

// ReadAhead implements posgate.LedgerReadAhead: the next InsertTransaction
// of it (a sale) reads what the sale needs in its round trip.
func (l *ledger) ReadAhead(it *posgate.TransactionInput) {
	l.ahead, l.read = nil, readAhead{}
	if it.Type != posgate.TransactionRefund {
		l.ahead = it
	}
}

// Reads ahead lock the rows they read (FOR UPDATE) until the transaction
// ends, so that the sale's writes to them can be decided by the ledger and
// wait in pending instead of costing a round trip each.
// Coupons are locked before the customer, in the order in which a sale
// writes them (posgate's sale redeems, then adds to the balance), so that
// two sales lock in the same order.
var (
	lockCouponSQL = findCouponSQL + ` FOR UPDATE`
	lockUserSQL   = `SELECT ` + userCols + `, u.balance_seq FROM loyalty_users u
		WHERE u.pos_system_id = $1 AND u.company_id = $2 AND u.user_id = $3 FOR UPDATE`
)

// insertReadingAhead claims the transaction t of it (InsertTransaction:
// pessimistically, by inserting it) and reads its program, its coupons and
// its card's customer after it, in one round trip with the statements
// pending.
func (l *ledger) insertReadingAhead(ctx context.Context, it *posgate.TransactionInput, t *posgate.Transaction) (bool, error) {
	b := &pgx.Batch{}
	l.queuePending(b)
	checking := l.check != nil
	if checking {
		b.Queue(findSessionSQL, l.checkSession)
	}
	if l.pessimistic {
		b.Queue(insertFirstSQL, insertFirstArgs(t)...)
	}
	b.Queue(findProgramSQL, it.POSSystemID, it.CompanyID)
	var codes []string
	for _, code := range it.CouponCodes {
		if len(codes) == maxReadAheadCoupons {
			break
		}
		codes = append(codes, posgate.Fold(code))
		b.Queue(lockCouponSQL, it.POSSystemID, it.CompanyID, codes[len(codes)-1])
	}
	if it.CardNumber != "" {
		b.Queue(lockUserSQL, it.POSSystemID, it.CompanyID, it.CardNumber)
	}
	br := l.tx.SendBatch(ctx, b)
	err := l.readPending(br)
	if err == nil && checking {
		// The session's rule refuses the sale before anything it wrote is
		// read: the transaction is rolled back.
		err = l.checkSessionRead(scanSession(br.QueryRow(), l.checkSession))
	}
	taken := false
	if err == nil && l.pessimistic {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err != nil {
			err = wrap(err, "insert transaction")
		}
		taken = tag.RowsAffected() != 1
	}
	r := readAhead{pos: it.POSSystemID, company: it.CompanyID}
	if err == nil {
		r.program = true
		r.programRes, r.programErr = scanProgram(br.QueryRow(), it.POSSystemID, it.CompanyID)
		for _, code := range codes {
			c, err := scanCoupon(br.QueryRow())
			r.coupons = append(r.coupons, couponRead{code: code, c: c, err: err})
		}
		if it.CardNumber != "" {
			r.user, r.userID = true, it.CardNumber
			u := &posgate.LoyaltyUser{}
			r.userErr = br.QueryRow().Scan(append(userDest(u), &r.userSeq)...)
			r.userRes = u
		}
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		err = wrap(cerr, "insert transaction")
	}
	if err != nil {
		return false, err
	}
	// A read that failed other than by finding nothing is not kept: the
	// call that asks for it reads again and meets the error itself.
	if r.programErr != nil && posgate.ErrorCode(r.programErr) != posgate.ENOTFOUND {
		r.program = false
	}
	if r.userErr != nil && !errors.Is(r.userErr, pgx.ErrNoRows) {
		r.user = false
	}
	for i := range r.coupons {
		if c := &r.coupons[i]; c.err != nil && !errors.Is(c.err, pgx.ErrNoRows) {
			c.used = true
		}
	}
	if !taken {
		l.read = r
	}
	return !taken, nil
}

// defer_ adds a statement to pending.
func (l *ledger) defer_(op, sql string, args ...any) {
	l.pending = append(l.pending, pendingStmt{op: op, sql: sql, args: args, want: -1})
}

// deferChanging adds a statement to pending that must change want rows.
func (l *ledger) deferChanging(op string, want int64, sql string, args ...any) {
	l.pending = append(l.pending, pendingStmt{op: op, sql: sql, args: args, want: want})
}

// queuePending moves the pending statements to b.
func (l *ledger) queuePending(b *pgx.Batch) {
	for _, p := range l.pending {
		b.Queue(p.sql, p.args...)
	}
}

// readPending reads the results of the pending statements queued first in
// br's batch; the first error is the result.
func (l *ledger) readPending(br pgx.BatchResults) error {
	pending := l.pending
	l.pending = nil
	var first error
	for _, p := range pending {
		tag, err := br.Exec()
		if err != nil && first == nil {
			first = wrap(err, p.op)
		} else if err == nil && p.want >= 0 && tag.RowsAffected() != p.want && first == nil {
			first = fmt.Errorf("postgres: %s: changed %d rows of the %d it had locked", p.op, tag.RowsAffected(), p.want)
		}
	}
	return first
}

// q returns where the ledger's statements go: through the pending ones
// when there are some.
func (l *ledger) q() pgQuerier { return ledgerQ{l} }

// ledgerQ is a ledger's pgQuerier.
type ledgerQ struct{ l *ledger }

func (q ledgerQ) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	l := q.l
	if len(l.pending) == 0 {
		return l.tx.Exec(ctx, sql, args...)
	}
	br, err := l.behindPending(ctx, sql, args)
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (q ledgerQ) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	l := q.l
	if len(l.pending) == 0 {
		return l.tx.QueryRow(ctx, sql, args...)
	}
	br, err := l.behindPending(ctx, sql, args)
	return &batchRow{br: br, err: err}
}

// behindPending sends the pending statements and then sql in one round
// trip, and reads the pending ones' results: sql's is next in br, which
// the caller closes.
func (l *ledger) behindPending(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	l.queuePending(b)
	b.Queue(sql, args...)
	br := l.tx.SendBatch(ctx, b)
	return br, l.readPending(br)
}

// Query sends the pending statements first, in a round trip of their own
// (the ledger's multi-row reads are off a sale's common path).
func (q ledgerQ) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := q.l.send(ctx, false); err != nil {
		return nil, err
	}
	return q.l.tx.Query(ctx, sql, args...)
}

// batchRow is the row of a batch's last statement, behind the pending ones.
type batchRow struct {
	br  pgx.BatchResults
	err error // the pending statements'
}

func (r *batchRow) Scan(dest ...any) error {
	err := r.err
	if err == nil {
		err = r.br.QueryRow().Scan(dest...)
	}
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// send sends what waits in the ledger: the pending statements and the
// outbox rows, and its COMMIT when commit is set, in one round trip.
func (l *ledger) send(ctx context.Context, commit bool) error {
	b := &pgx.Batch{}
	l.queuePending(b)
	events := len(l.events)
	if events > 0 {
		eps, ids, types, users, payloads := make([]string, events), make([]string, events), make([]string, events), make([]string, events), make([]string, events)
		at, first := make([]time.Time, events), make([]bool, events)
		seen := map[[2]string]bool{}
		for i, r := range l.events {
			eps[i], ids[i], types[i], users[i], payloads[i], at[i] = r.EndpointID, r.EventID, r.EventType, r.UserID, r.Payload, r.CreatedAt
			key := [2]string{r.EndpointID, r.UserID}
			first[i] = !seen[key]
			seen[key] = true
		}
		b.Queue(flushSQL, eps, ids, types, users, payloads, at, first)
	}
	if commit {
		b.Queue("COMMIT")
	}
	if b.Len() == 0 {
		return nil
	}
	br := l.tx.SendBatch(ctx, b)
	err := l.readPending(br)
	if err == nil && events > 0 {
		if _, err = br.Exec(); err != nil {
			err = wrap(err, "emit events")
		}
	}
	if err == nil && commit {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err != nil {
			err = wrap(err, "commit")
		} else if tag.String() == "ROLLBACK" {
			err = wrap(pgx.ErrTxCommitRollback, "commit")
		}
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		err = wrap(cerr, "commit")
	}
	if err == nil && events > 0 {
		l.events, l.mark = nil, 0
		l.emitted = true
	}
	return err
}

// pipelined runs fn over a ledger whose transaction is its own, on a
// connection of the pool: BEGIN goes with its first statement and COMMIT
// with its last ones; any error rolls it back.
func (db *DB) pipelined(ctx context.Context, fn func(l *ledger) error) (*ledger, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, wrap(err, "acquire connection")
	}
	defer conn.Release()
	l := &ledger{db: db, tx: conn}
	l.defer_("begin", "BEGIN")
	err = fn(l)
	if err == nil {
		err = l.send(ctx, true)
	}
	if err != nil {
		// The transaction may be open (a rule's error), aborted (a
		// statement's) or gone (COMMIT answered ROLLBACK): ROLLBACK ends
		// it in each case. A connection it fails on is closed, so that
		// the pool never hands out one inside a transaction.
		if _, rerr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
		return l, err
	}
	return l, nil
}

var _ posgate.LedgerReadAhead = (*ledger)(nil)
