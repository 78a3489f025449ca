package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/encode"
	"github.com/posgate/posgate/internal/storekit"
)

// Loyalty programs and transactions (docs/api.md §13). The rules live in
// posgate.ApplyLedger; this file gives it PostgreSQL's primitives (ledger).
// Every decision between concurrent requests is the database's: the
// transaction's unique keys (INSERT … ON CONFLICT DO NOTHING waits for a
// concurrent insert of the same key to commit or roll back), UPDATEs whose
// WHERE re-checks the row they lock (a coupon still Issued, a refund still
// within its sale), and rows a sale read ahead FOR UPDATE, on which the
// ledger decides that sale's redemption and balance (see ledgerpipe.go).

const (
	transactionCols = `t.id, t.pos_system_id, t.company_id, t.location_id, t.terminal_id, t.transaction_id, coalesce(t.session_id, ''),
		t.transaction_type, t.amount, t.refunded, t.transaction_date, coalesce(t.original_id, ''), coalesce(t.original_transaction_id, ''),
		coalesce(t.user_id, ''), t.points_earned, t.stamps_earned, t.request_hash, t.request, t.answer, t.created_at,
		ARRAY(SELECT tc.code FROM transaction_coupons tc WHERE tc.txn_id = t.id AND tc.restored_at IS NULL ORDER BY tc.code_norm)`
	findTransactionSQL      = `SELECT ` + transactionCols + ` FROM transactions t WHERE t.pos_system_id = $1 AND t.company_id = $2 AND t.transaction_id = $3`
	transactionBySessionSQL = `SELECT ` + transactionCols + ` FROM transactions t WHERE t.session_id = $1`
	redemptionSQL           = `SELECT t.id, t.transaction_id, tc.redeemed_at FROM transaction_coupons tc JOIN transactions t ON t.id = tc.txn_id
		WHERE tc.pos_system_id = $1 AND tc.company_id = $2 AND tc.code_norm = $3 AND tc.restored_at IS NULL ORDER BY tc.redeemed_at DESC LIMIT 1`
)

// pgQuerier is what a pool and a transaction have in common.
type pgQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func scanTransaction(r pgx.Row, extra ...any) (*posgate.Transaction, error) {
	t := &posgate.Transaction{}
	var request, answer string
	var coupons []string
	if err := r.Scan(append([]any{&t.ID, &t.POSSystemID, &t.CompanyID, &t.LocationID, &t.TerminalID, &t.TransactionID, &t.SessionID,
		&t.Type, &t.Amount, &t.RefundedAmount, &t.Date, &t.OriginalID, &t.OriginalTransactionID,
		&t.UserID, &t.PointsEarned, &t.StampsEarned, &t.RequestHash, &request, &answer, &t.CreatedAt, &coupons}, extra...)...); err != nil {
		return nil, err
	}
	t.Request, t.Answer = json.RawMessage(request), json.RawMessage(answer)
	if len(coupons) > 0 {
		t.RedeemedCoupons = coupons
	}
	return t, nil
}

// FindLoyaltyProgram returns the company's program, ENOTFOUND when none is
// set.
func (db *DB) FindLoyaltyProgram(ctx context.Context, posSystemID, companyID string) (*posgate.LoyaltyProgram, error) {
	return findProgram(ctx, db.q(ctx), posSystemID, companyID)
}

// findProgramSQL reads a company's loyalty program ($1, $2).
const findProgramSQL = `SELECT points_per_unit, stamps_per_sale, minimum_for_stamp, auto_enroll, updated_at FROM loyalty_programs
		WHERE pos_system_id = $1 AND company_id = $2`

func findProgram(ctx context.Context, q pgQuerier, posSystemID, companyID string) (*posgate.LoyaltyProgram, error) {
	return scanProgram(q.QueryRow(ctx, findProgramSQL, posSystemID, companyID), posSystemID, companyID)
}

// scanProgram reads the row of findProgramSQL.
func scanProgram(r pgx.Row, posSystemID, companyID string) (*posgate.LoyaltyProgram, error) {
	p := &posgate.LoyaltyProgram{POSSystemID: posSystemID, CompanyID: companyID}
	var at time.Time
	err := r.Scan(&p.PointsPerCurrencyUnit, &p.StampsPerSale, &p.MinimumAmountForStamp, &p.AutoEnroll, &at)
	if err != nil {
		return nil, readErr(err, "find loyalty program", posgate.NotFound("loyalty program of company", companyID))
	}
	p.UpdatedAt = &at
	return p, nil
}

// PutLoyaltyProgram sets the company's program.
func (db *DB) PutLoyaltyProgram(ctx context.Context, p *posgate.LoyaltyProgram) error {
	now := posgate.Timestamp(db.now())
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO loyalty_programs (pos_system_id, company_id, points_per_unit, stamps_per_sale,
		minimum_for_stamp, auto_enroll, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (pos_system_id, company_id) DO UPDATE SET points_per_unit = excluded.points_per_unit,
		stamps_per_sale = excluded.stamps_per_sale, minimum_for_stamp = excluded.minimum_for_stamp,
		auto_enroll = excluded.auto_enroll, updated_at = excluded.updated_at`,
		p.POSSystemID, p.CompanyID, int64(p.PointsPerCurrencyUnit), p.StampsPerSale, int64(p.MinimumAmountForStamp), p.AutoEnroll, now)
	if err != nil {
		return writeErr(err, "put loyalty program", nil, posgate.NotFound("company", p.CompanyID))
	}
	p.UpdatedAt = &now
	return nil
}

// retryable reports whether err is a deadlock or serialization failure,
// which a batch touching several users and coupons can meet beside
// another: the whole apply is then run again.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// inLedger runs fn in one transaction over a ledger, again (up to five
// times) when PostgreSQL breaks a deadlock by aborting it. Outside Atomic
// the transaction is the ledger's own on a connection of the pool, whose
// BEGIN and COMMIT travel with its first and last statements (see
// ledgerpipe.go); inside Atomic it is a savepoint of Atomic's.
func (db *DB) inLedger(ctx context.Context, op string, fn func(l *ledger) error) error {
	pessimistic := false
	for attempt := 0; ; attempt++ {
		var l *ledger
		var err error
		apply := func(l *ledger) error {
			l.pessimistic = pessimistic
			return fn(l)
		}
		if outer, ok := db.q(ctx).(pgx.Tx); !ok {
			l, err = db.pipelined(ctx, apply)
		} else {
			err = pgx.BeginFunc(ctx, outer, func(tx pgx.Tx) error {
				l = &ledger{db: db, tx: tx}
				if err := apply(l); err != nil {
					return err
				}
				return l.send(ctx, false)
			})
		}
		if err == nil && l.emitted {
			db.outbox.Notify()
		}
		if !pessimistic && keyTaken(err) {
			// An optimistic claim met a taken key (see InsertTransaction):
			// nothing was written; apply the items again, pessimistically.
			pessimistic = true
			continue
		}
		if err == nil || !retryable(err) || attempt == 4 {
			if err != nil && posgate.ErrorCode(err) == posgate.EINTERNAL {
				return fmt.Errorf("postgres: %s: %w", op, err)
			}
			return err
		}
	}
}

// errRejectedAlone rolls back the transaction of a lone item that was
// rejected (see ledger.alone).
var errRejectedAlone = errors.New("the lone item was rejected")

// ApplyTransactions records items in one transaction through
// posgate.ApplyLedger. A lone item (a sale or refund) takes no savepoint: a
// rejection rolls its whole transaction back instead, which leaves the same
// nothing and spares two of a sale's dozen round trips.
func (db *DB) ApplyTransactions(ctx context.Context, items []*posgate.TransactionInput) ([]*posgate.TransactionOutcome, error) {
	return db.applyTransactions(ctx, items, nil)
}

// ApplyCheckingSession implements posgate.SessionReadingApplier: the
// session is read in the round trip of the sale's first statements (its
// claim and its reads ahead, ledgerpipe.go) instead of in one of its own,
// and check refuses the sale there, the transaction rolled back.
func (db *DB) ApplyCheckingSession(ctx context.Context, in *posgate.TransactionInput, check posgate.SessionCheck) (*posgate.TransactionOutcome, error) {
	out, err := db.applyTransactions(ctx, []*posgate.TransactionInput{in}, check)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// applyTransactions is ApplyTransactions, the lone item's session checked
// by check first when it is not nil.
func (db *DB) applyTransactions(ctx context.Context, items []*posgate.TransactionInput, check posgate.SessionCheck) ([]*posgate.TransactionOutcome, error) {
	var out []*posgate.TransactionOutcome
	err := db.inLedger(ctx, "apply transactions", func(l *ledger) error {
		l.alone = len(items) == 1
		if check != nil {
			l.check, l.checkSession = check, items[0].SessionID
		}
		var err error
		out, err = posgate.ApplyLedger(ctx, l, items)
		if err == nil && l.alone && out[0].Status == posgate.OutcomeRejected {
			return errRejectedAlone
		}
		return err
	})
	if err != nil && !errors.Is(err, errRejectedAlone) {
		return nil, err
	}
	return out, nil
}

// RedeemCouponForTransaction redeems a coupon for a recorded transaction in
// a transaction of its own.
func (db *DB) RedeemCouponForTransaction(ctx context.Context, t *posgate.Transaction, code string, owner *posgate.CouponOwner, locationID string) (*posgate.TransactionCoupon, time.Time, error) {
	var res posgate.TransactionCoupon
	var at time.Time
	err := db.inLedger(ctx, "redeem coupon for transaction", func(l *ledger) error {
		var err error
		res, at, err = posgate.RedeemForTransaction(ctx, l, t, code, owner, locationID)
		return err
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return &res, at, nil
}

// FindTransaction returns a company's transaction by the POS's id.
func (db *DB) FindTransaction(ctx context.Context, posSystemID, companyID, transactionID string) (*posgate.Transaction, error) {
	return findTransaction(ctx, db.q(ctx), posSystemID, companyID, transactionID)
}

func findTransaction(ctx context.Context, q pgQuerier, posSystemID, companyID, transactionID string) (*posgate.Transaction, error) {
	t, err := scanTransaction(q.QueryRow(ctx, findTransactionSQL, posSystemID, companyID, transactionID))
	if err != nil {
		return nil, readErr(err, "find transaction", posgate.NotFound("transaction", transactionID))
	}
	return t, nil
}

// FindTransactionBySession returns the transaction a session is linked to.
func (db *DB) FindTransactionBySession(ctx context.Context, sessionID string) (*posgate.Transaction, error) {
	return findBySession(ctx, db.q(ctx), sessionID)
}

func findBySession(ctx context.Context, q pgQuerier, sessionID string) (*posgate.Transaction, error) {
	t, err := scanTransaction(q.QueryRow(ctx, transactionBySessionSQL, sessionID))
	if err != nil {
		return nil, readErr(err, "find transaction by session", posgate.NotFound("transaction of session", sessionID))
	}
	return t, nil
}

// transactionListFilter is the transaction list's FROM and WHERE, with
// only the filters q gives, and its arguments. A condition that tests whether a filter is given (its parameter empty,
// or the column equal to it) keeps a generic plan from the index of that
// filter; with the filters spelled out, a customer's list reads
// transactions_by_user, a location's transactions_by_location and a day's
// transactions_by_date (TestTransactionListIndexes).
func transactionListFilter(q posgate.TransactionQuery) (string, []any) {
	args := []any{q.POSSystemID, q.CompanyID}
	w := ` FROM transactions t WHERE t.pos_system_id = $1 AND t.company_id = $2`
	add := func(cond string, vs ...any) {
		for _, v := range vs {
			args = append(args, v)
			cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(args)), 1)
		}
		w += " AND " + cond
	}
	if q.LocationID != "" {
		add("t.location_id = ?", q.LocationID)
	}
	if q.UserID != "" {
		add("t.user_id = ?", q.UserID)
	}
	if from, to, ok := q.DayBounds(); ok {
		add("t.transaction_date >= ? AND t.transaction_date < ?", from, to)
	}
	return w, args
}

// transactionPageSQL is the transaction list's page for a filter of
// transactionListFilter with n arguments, newest first, with the total;
// the limit and the offset follow them.
func transactionPageSQL(filter string, n int) string {
	return fmt.Sprintf(`SELECT %s, count(*) OVER ()%s ORDER BY t.transaction_date DESC, t.id LIMIT $%d OFFSET $%d`,
		transactionCols, filter, n+1, n+2)
}

// ListTransactions pages a company's transactions, newest first.
func (db *DB) ListTransactions(ctx context.Context, q posgate.TransactionQuery) ([]*posgate.Transaction, int, error) {
	filter, args := transactionListFilter(q)
	rows, err := db.q(ctx).Query(ctx, transactionPageSQL(filter, len(args)), append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, wrap(err, "list transactions")
	}
	defer rows.Close()
	var out []*posgate.Transaction
	total := 0
	for rows.Next() {
		var n int64
		t, err := scanTransaction(rows, &n)
		if err != nil {
			return nil, 0, wrap(err, "list transactions")
		}
		out, total = append(out, t), int(n)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, wrap(err, "list transactions")
	}
	if len(out) == 0 && q.Offset > 0 {
		if err := db.q(ctx).QueryRow(ctx, `SELECT count(*)`+filter, args...).Scan(&total); err != nil {
			return nil, 0, wrap(err, "count transactions")
		}
	}
	return out, total, nil
}

// FindCouponRedemption returns the transaction whose redemption of a
// coupon stands.
func (db *DB) FindCouponRedemption(ctx context.Context, posSystemID, companyID, code string) (*posgate.CouponRedemption, error) {
	return findRedemption(ctx, db.q(ctx), posSystemID, companyID, code)
}

func findRedemption(ctx context.Context, q pgQuerier, posSystemID, companyID, code string) (*posgate.CouponRedemption, error) {
	r := &posgate.CouponRedemption{}
	err := q.QueryRow(ctx, redemptionSQL, posSystemID, companyID, posgate.Fold(code)).Scan(&r.ID, &r.TransactionID, &r.RedeemedAt)
	if err != nil {
		return nil, readErr(err, "find coupon redemption", posgate.NotFound("redemption of coupon", code))
	}
	return r, nil
}

// ledger is posgate.LedgerTx over one PostgreSQL transaction. Its
// statements go through q (ledgerpipe.go), which sends the statements
// waiting in pending with the next one, in one round trip.
type ledger struct {
	db *DB
	// tx is the connection the transaction runs on: a connection of the
	// pool (the ledger's own transaction) or Atomic's transaction.
	tx batcher
	// pending are statements whose outcome the ledger does not wait for
	// (the BEGIN of its own transaction, a sale's FinishTransaction): they
	// go with the next statement, and an error of theirs fails it.
	pending []pendingStmt
	// ahead is the sale whose reads InsertTransaction does in its round
	// trip (ReadAhead), and read holds what they found.
	ahead *posgate.TransactionInput
	read  readAhead
	// locked are rows of the item's reads ahead that the item has asked
	// for, locked since: the coupons, and the customer with its
	// balance_seq. The ledger decides their writes.
	lockedCoupons []*posgate.Coupon
	lockedUser    *posgate.LoyaltyUser
	lockedSeq     int64
	// alone makes the savepoints no-ops: the transaction holds one item,
	// and ApplyTransactions rolls it back as a whole when the item is
	// rejected.
	alone bool
	// emitted records that the transaction wrote outbox rows: its commit
	// wakes the sender.
	emitted bool
	// events are the outbox rows emitted so far, written in one statement
	// before the commit (flush); mark is their count at the item's
	// savepoint, for a rejected item's to be dropped with it.
	events []storekit.OutboxRow
	mark   int
	// claimed is the transaction InsertTransaction claimed and did not
	// write yet; afterInsert are the statements that wait for its row
	// (its coupons' links), sent after FinishTransaction's insert. written
	// is the id of a claimed transaction written before its end
	// (writeClaimed), which FinishTransaction updates.
	claimed     *posgate.Transaction
	afterInsert []pendingStmt
	written     string
	// pessimistic makes InsertTransaction insert the row first, taken
	// keys answered as duplicates (see InsertTransaction).
	pessimistic bool
	// check, when set, is the rule the session checkSession must pass
	// before the first InsertTransaction claims anything: the session is
	// read in the claim's round trip (ApplyCheckingSession).
	check        posgate.SessionCheck
	checkSession string
}

// checkSessionRead runs the ledger's session check, once, on the read's
// row and error.
func (l *ledger) checkSessionRead(s *posgate.Session, err error) error {
	check := l.check
	l.check = nil
	return check(s, err)
}

func (l *ledger) Now() time.Time { return posgate.Timestamp(l.db.now()) }

// Encode implements posgate.LedgerTx with the encoder of the answers.
func (l *ledger) Encode(v any) ([]byte, error) { return encode.JSON(v) }

func (l *ledger) exec(ctx context.Context, op, sql string, args ...any) (int64, error) {
	tag, err := l.q().Exec(ctx, sql, args...)
	if err != nil {
		return 0, wrap(err, op)
	}
	return tag.RowsAffected(), nil
}

// Savepoint and ReleaseSavepoint wait in pending for the item's next
// statement (a batch's item costs no round trip of its own for them);
// RollbackToSavepoint is sent at once.
func (l *ledger) Savepoint(ctx context.Context) error {
	l.mark = len(l.events)
	l.claimed, l.afterInsert, l.written = nil, nil, ""
	if !l.alone {
		l.defer_("savepoint", `SAVEPOINT ledger_item`)
	}
	return nil
}

func (l *ledger) RollbackToSavepoint(ctx context.Context) error {
	l.events = l.events[:l.mark]
	l.claimed, l.afterInsert, l.written = nil, nil, ""
	l.unlock()
	if l.alone {
		return nil
	}
	if _, err := l.exec(ctx, "rollback to savepoint", `ROLLBACK TO SAVEPOINT ledger_item`); err != nil {
		return err
	}
	return l.ReleaseSavepoint(ctx)
}

func (l *ledger) ReleaseSavepoint(ctx context.Context) error {
	if !l.alone {
		l.defer_("release savepoint", `RELEASE SAVEPOINT ledger_item`)
	}
	return nil
}

func (l *ledger) LoyaltyProgram(ctx context.Context, posSystemID, companyID string) (*posgate.LoyaltyProgram, error) {
	var p *posgate.LoyaltyProgram
	var err error
	if r := &l.read; r.program && r.pos == posSystemID && r.company == companyID {
		r.program = false
		p, err = r.programRes, r.programErr
	} else {
		p, err = findProgram(ctx, l.q(), posSystemID, companyID)
	}
	return posgate.ProgramInForce(posSystemID, companyID, p, err)
}

// InsertTransaction claims t's keys without writing its row, and
// FinishTransaction inserts the row whole, with its answer, at the end:
// one row write per sale. Inserting the row first (ON CONFLICT DO NOTHING)
// and updating it with its answer at the end wrote every sale's row twice,
// a non-HOT update that added a tuple and an entry in each of the table's
// six indexes. The claim is optimistic: nothing is read or written for it,
// and a key that turns out to be taken fails the final insert with a
// unique violation, which rolls the whole transaction back (every write
// of the item waits in pending until then); inLedger then applies the
// items again pessimistically (l.pessimistic), each row inserted first,
// where a taken key is answered as a duplicate.
func (l *ledger) InsertTransaction(ctx context.Context, t *posgate.Transaction) (bool, error) {
	it := l.ahead
	l.ahead, l.read = nil, readAhead{}
	l.unlock()
	l.claimed, l.afterInsert, l.written = nil, nil, ""
	var inserted bool
	var err error
	if l.check != nil && (it == nil || it.ID != t.ID) {
		if err := l.checkSessionRead(scanSession(l.q().QueryRow(ctx, findSessionSQL, l.checkSession), l.checkSession)); err != nil {
			return false, err
		}
	}
	if it != nil && it.ID == t.ID {
		inserted, err = l.insertReadingAhead(ctx, it, t)
	} else if l.pessimistic {
		var n int64
		n, err = l.exec(ctx, "insert transaction", insertFirstSQL, insertFirstArgs(t)...)
		inserted = n == 1
	} else {
		inserted = true
	}
	if err != nil || !inserted {
		return false, err
	}
	if l.pessimistic {
		l.written = t.ID
	} else {
		l.claimed = t
	}
	return true, nil
}

const (
	// insertTransactionSQL inserts a claimed transaction whole; a taken key
	// fails it (see InsertTransaction).
	insertTransactionSQL = `INSERT INTO transactions (id, pos_system_id, company_id, location_id, terminal_id,
		transaction_id, session_id, transaction_type, amount, transaction_date, original_transaction_id, request_hash, request, answer, created_at,
		user_id, points_earned, stamps_earned, original_id)
		VALUES ($1, $2, $3, $4, $5, $6, nullif($7, ''), $8, $9, $10, nullif($11, ''), $12, $13, $14, $15, nullif($16, ''), $17, $18, nullif($19, ''))`
	// insertFirstSQL inserts a transaction with an empty answer unless its
	// keys are taken (the pessimistic claim).
	insertFirstSQL = `INSERT INTO transactions (id, pos_system_id, company_id, location_id, terminal_id,
		transaction_id, session_id, transaction_type, amount, transaction_date, original_transaction_id, request_hash, request, answer, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, nullif($7, ''), $8, $9, $10, nullif($11, ''), $12, $13, $14, $15) ON CONFLICT DO NOTHING`
)

// insertFirstArgs are insertFirstSQL's arguments for t.
func insertFirstArgs(t *posgate.Transaction) []any {
	return []any{t.ID, t.POSSystemID, t.CompanyID, t.LocationID, t.TerminalID, t.TransactionID, t.SessionID, string(t.Type), int64(t.Amount),
		t.Date, t.OriginalTransactionID, t.RequestHash, string(t.Request), string(t.Answer), t.CreatedAt}
}

// keyTaken reports whether err is the unique violation of a transaction's
// keys that an optimistic claim meets at its insert.
func keyTaken(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.TableName == "transactions"
}

// insertArgs are insertTransactionSQL's arguments for t.
func insertArgs(t *posgate.Transaction) []any {
	return []any{t.ID, t.POSSystemID, t.CompanyID, t.LocationID, t.TerminalID, t.TransactionID, t.SessionID, string(t.Type), int64(t.Amount),
		t.Date, t.OriginalTransactionID, t.RequestHash, string(t.Request), string(t.Answer), t.CreatedAt,
		t.UserID, t.PointsEarned, t.StampsEarned, t.OriginalID}
}

// writeClaimed inserts the claimed transaction as it stands, for a
// statement that needs its row before FinishTransaction (a coupon's link
// to it when the coupon was not read ahead); FinishTransaction then
// updates it.
func (l *ledger) writeClaimed(ctx context.Context) error {
	t := l.claimed
	if t == nil {
		return nil
	}
	l.claimed = nil
	l.deferChanging("insert transaction", 1, insertTransactionSQL, insertArgs(t)...)
	l.pending = append(l.pending, l.afterInsert...)
	l.afterInsert = nil
	l.written = t.ID
	return nil
}

// FinishTransaction inserts the claimed transaction whole, then the
// statements that waited for its row (its coupons' links); they wait in
// pending for the ledger's next statement (at the latest its commit):
// nothing the item does after it reads the row.
func (l *ledger) FinishTransaction(ctx context.Context, t *posgate.Transaction) error {
	if l.claimed != nil && l.claimed.ID == t.ID {
		l.claimed = nil
		l.deferChanging("insert transaction", 1, insertTransactionSQL, insertArgs(t)...)
		l.pending = append(l.pending, l.afterInsert...)
		l.afterInsert = nil
		return nil
	}
	if l.written != t.ID {
		return fmt.Errorf("postgres: finish transaction %s: not claimed by InsertTransaction", t.ID)
	}
	l.written = ""
	l.deferChanging("finish transaction", 1, `UPDATE transactions SET user_id = nullif($1, ''), points_earned = $2, stamps_earned = $3,
		original_id = nullif($4, ''), answer = $5 WHERE id = $6`,
		t.UserID, t.PointsEarned, t.StampsEarned, t.OriginalID, string(t.Answer), t.ID)
	return nil
}

// FindTransaction finds the claimed transaction too, as if its row were
// in (a refund naming itself).
func (l *ledger) FindTransaction(ctx context.Context, posSystemID, companyID, transactionID string) (*posgate.Transaction, error) {
	if c := l.claimed; c != nil && c.POSSystemID == posSystemID && c.CompanyID == companyID && c.TransactionID == transactionID {
		t := *c
		return &t, nil
	}
	return findTransaction(ctx, l.q(), posSystemID, companyID, transactionID)
}

func (l *ledger) FindTransactionBySession(ctx context.Context, sessionID string) (*posgate.Transaction, error) {
	if c := l.claimed; c != nil && sessionID != "" && c.SessionID == sessionID {
		t := *c
		return &t, nil
	}
	return findBySession(ctx, l.q(), sessionID)
}

func (l *ledger) AddRefund(ctx context.Context, saleID string, amount posgate.Amount) (posgate.Amount, bool, error) {
	var refunded int64
	err := l.q().QueryRow(ctx, `UPDATE transactions SET refunded = refunded + $1 WHERE id = $2 AND refunded + $1 <= amount RETURNING refunded`,
		int64(amount), saleID).Scan(&refunded)
	if err == nil {
		return posgate.Amount(refunded), true, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, wrap(err, "add refund")
	}
	if err := l.q().QueryRow(ctx, `SELECT refunded FROM transactions WHERE id = $1`, saleID).Scan(&refunded); err != nil {
		return 0, false, wrap(err, "add refund")
	}
	return posgate.Amount(refunded), false, nil
}

func (l *ledger) FindUser(ctx context.Context, posSystemID, companyID, userID string) (*posgate.LoyaltyUser, error) {
	var u *posgate.LoyaltyUser
	var err error
	if r := &l.read; r.user && r.pos == posSystemID && r.company == companyID && r.userID == userID {
		r.user = false
		u, err = r.userRes, r.userErr
		if err == nil {
			l.lockedUser, l.lockedSeq = u, r.userSeq
		}
	} else {
		u, err = scanUser(l.q().QueryRow(ctx, findUserSQL, posSystemID, companyID, userID))
	}
	if err != nil {
		return nil, readErr(err, "find loyalty user", posgate.NotFound("loyalty user", userID))
	}
	return u, nil
}

func (l *ledger) userIDs(ctx context.Context, sql string, args ...any) ([]string, error) {
	return collectIDs(l.q().Query(ctx, sql, args...))
}

// collectIDs reads the ids a customer match's query answered.
func collectIDs(rows pgx.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, wrap(err, "match customer")
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, wrap(err, "match customer")
}

// The ids of up to two users of a company with a folded e-mail, or with
// phone digits (MatchCustomer).
const (
	usersByEmailSQL = `SELECT user_id FROM loyalty_users WHERE pos_system_id = $1 AND company_id = $2 AND email_norm = $3 LIMIT 2`
	usersByPhoneSQL = `SELECT user_id FROM loyalty_users WHERE pos_system_id = $1 AND company_id = $2 AND phone_digits = $3 LIMIT 2`
)

func (l *ledger) UserIDsByEmail(ctx context.Context, posSystemID, companyID, emailNorm string) ([]string, error) {
	return l.userIDs(ctx, usersByEmailSQL, posSystemID, companyID, emailNorm)
}

func (l *ledger) UserIDsByPhone(ctx context.Context, posSystemID, companyID, digits string) ([]string, error) {
	return l.userIDs(ctx, usersByPhoneSQL, posSystemID, companyID, digits)
}

// UserIDsByEmail returns up to two ids of users with the folded e-mail.
func (db *DB) UserIDsByEmail(ctx context.Context, posSystemID, companyID, emailNorm string) ([]string, error) {
	return db.userIDs(ctx, usersByEmailSQL, posSystemID, companyID, emailNorm)
}

// UserIDsByPhone returns up to two ids of users with the phone digits.
func (db *DB) UserIDsByPhone(ctx context.Context, posSystemID, companyID, digits string) ([]string, error) {
	return db.userIDs(ctx, usersByPhoneSQL, posSystemID, companyID, digits)
}

func (db *DB) userIDs(ctx context.Context, sql string, args ...any) ([]string, error) {
	return collectIDs(db.q(ctx).Query(ctx, sql, args...))
}

func (l *ledger) EnrollUser(ctx context.Context, u *posgate.LoyaltyUser) (bool, error) {
	now := l.Now()
	keys := u.Keys()
	n, err := l.exec(ctx, "enroll loyalty user", `INSERT INTO loyalty_users (pos_system_id, company_id, user_id, first_name, last_name, gender,
		phone, email, stamps, points, first_norm, last_norm, email_norm, phone_digits, created_at, updated_at, search_terms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, 0, $9, $10, $11, $12, $13, $13, $14) ON CONFLICT DO NOTHING`,
		u.POSSystemID, u.CompanyID, u.ID, u.FirstName, u.LastName, u.Gender, u.Phone, u.Email, keys.First, keys.Last, keys.Email, keys.Digits, now,
		searchTerms(u))
	if n == 1 {
		u.CreatedAt, u.UpdatedAt = now, now
	}
	return n == 1, err
}

func (l *ledger) AddBalance(ctx context.Context, posSystemID, companyID, userID string, points, stamps int32) (int32, int32, int64, error) {
	if u := l.lockedUser; u != nil && u.POSSystemID == posSystemID && u.CompanyID == companyID && u.ID == userID {
		// Decided by the ledger: the same arithmetic as the statement below, on
		// the row as this transaction locked it.
		p := int32(min(max(int64(u.Points)+int64(points), math.MinInt32), math.MaxInt32))
		s := int32(min(max(int64(u.Stamps)+int64(stamps), 0), math.MaxInt32))
		seq := l.lockedSeq + 1
		l.lockedUser = nil
		l.deferChanging("add to balance", 1, `UPDATE loyalty_users SET points = $1, stamps = $2, updated_at = $3, balance_seq = $4
			WHERE pos_system_id = $5 AND company_id = $6 AND user_id = $7 AND balance_seq = $8`,
			p, s, l.Now(), seq, posSystemID, companyID, userID, seq-1)
		return p, s, seq, nil
	}
	var p, s int32
	var seq int64
	err := l.q().QueryRow(ctx, `UPDATE loyalty_users SET points = greatest(least(points::bigint + $1, 2147483647), -2147483648)::integer,
		stamps = greatest(least(stamps::bigint + $2, 2147483647), 0)::integer, updated_at = $3, balance_seq = balance_seq + 1
		WHERE pos_system_id = $4 AND company_id = $5 AND user_id = $6 RETURNING points, stamps, balance_seq`,
		int64(points), int64(stamps), l.Now(), posSystemID, companyID, userID).Scan(&p, &s, &seq)
	if err != nil {
		return 0, 0, 0, readErr(err, "add to balance", posgate.NotFound("loyalty user", userID))
	}
	return p, s, seq, nil
}

func (l *ledger) FindCoupon(ctx context.Context, posSystemID, companyID, code string) (*posgate.Coupon, error) {
	var c *posgate.Coupon
	var err error
	if r, ok := l.read.coupon(posSystemID, companyID, posgate.Fold(code)); ok {
		c, err = r.c, r.err
		if err == nil {
			l.lockedCoupons = append(l.lockedCoupons, c)
		}
	} else {
		c, err = scanCoupon(l.q().QueryRow(ctx, findCouponSQL, posSystemID, companyID, posgate.Fold(code)))
	}
	if err != nil {
		return nil, readErr(err, "find coupon", posgate.NotFound("coupon", code))
	}
	return c, nil
}

func (l *ledger) RedeemCoupon(ctx context.Context, c *posgate.Coupon, transactionID string, now time.Time) (bool, error) {
	args := []any{now, c.POSSystemID, c.CompanyID, posgate.Fold(c.Code), transactionID, c.Code}
	if i := slices.Index(l.lockedCoupons, c); i >= 0 {
		// Decided by the ledger: the statement's WHERE, on the row as this
		// transaction locked it.
		l.lockedCoupons = slices.Delete(l.lockedCoupons, i, i+1)
		if c.Status != posgate.CouponIssued || (c.AvailableUntil != nil && c.AvailableUntil.Before(now)) {
			return false, nil
		}
		if c := l.claimed; c != nil && c.ID == transactionID {
			// The link references the row FinishTransaction inserts.
			l.afterInsert = append(l.afterInsert, pendingStmt{op: "redeem coupon", sql: redeemCouponSQL, args: args, want: 1})
			return true, nil
		}
		l.deferChanging("redeem coupon", 1, redeemCouponSQL, args...)
		return true, nil
	}
	if c := l.claimed; c != nil && c.ID == transactionID {
		if err := l.writeClaimed(ctx); err != nil {
			return false, err
		}
	}
	n, err := l.exec(ctx, "redeem coupon", redeemCouponSQL, args...)
	return err == nil && n == 1, err
}

// redeemCouponSQL redeems a coupon that is Issued and unexpired at $1 in
// one statement, one round trip: the link is inserted only when the
// UPDATE redeemed the coupon.
const redeemCouponSQL = `WITH redeemed AS (UPDATE coupons SET status = 'Redeemed', updated_at = $1
		WHERE pos_system_id = $2 AND company_id = $3 AND code_norm = $4 AND status = 'Issued' AND (available_until IS NULL OR available_until >= $1)
		RETURNING 1)
		INSERT INTO transaction_coupons (pos_system_id, company_id, code_norm, txn_id, code, redeemed_at)
		SELECT $2, $3, $4, $5, $6, $1 FROM redeemed ON CONFLICT (pos_system_id, company_id, code_norm, txn_id)
		DO UPDATE SET redeemed_at = excluded.redeemed_at, restored_at = NULL`

// unlock forgets the rows the item locked: a new item, or the item rolled
// back to its savepoint (which releases them).
func (l *ledger) unlock() {
	l.lockedCoupons, l.lockedUser = l.lockedCoupons[:0], nil
}

func (l *ledger) Redemption(ctx context.Context, posSystemID, companyID, code string) (*posgate.CouponRedemption, error) {
	return findRedemption(ctx, l.q(), posSystemID, companyID, code)
}

func (l *ledger) RestoreCoupons(ctx context.Context, posSystemID, companyID, saleID string, now time.Time) error {
	if _, err := l.exec(ctx, "restore coupons", `UPDATE coupons SET status = 'Issued', updated_at = $1
		WHERE pos_system_id = $2 AND company_id = $3 AND status = 'Redeemed' AND (available_until IS NULL OR available_until >= $1)
		AND code_norm IN (SELECT code_norm FROM transaction_coupons WHERE txn_id = $4 AND restored_at IS NULL)`,
		now, posSystemID, companyID, saleID); err != nil {
		return err
	}
	_, err := l.exec(ctx, "restore coupons", `UPDATE transaction_coupons tc SET restored_at = $1 WHERE tc.txn_id = $2 AND tc.restored_at IS NULL
		AND EXISTS (SELECT FROM coupons c WHERE c.pos_system_id = tc.pos_system_id AND c.company_id = tc.company_id
			AND c.code_norm = tc.code_norm AND c.status = 'Issued')`, now, saleID)
	return err
}

var _ posgate.LedgerTx = (*ledger)(nil)

// The budgets' counters (docs/api.md §9.7): $5 is the budget, 0 for none;
// a counter at its budget is left as it is and returns no row. The upsert
// locks the counter's row until the sale commits: a concurrent sale of the
// promotion, on this instance or another, waits for it and then sees its
// count.
const (
	countUseSQL = `INSERT INTO promotion_usage (pos_system_id, company_id, promotion_id, user_id, used) VALUES ($1, $2, $3, $4, 1)
		ON CONFLICT (pos_system_id, company_id, promotion_id, user_id) DO UPDATE SET used = promotion_usage.used + 1
		WHERE $5::bigint = 0 OR promotion_usage.used < $5::bigint RETURNING used`
	uncountUseSQL = `UPDATE promotion_usage SET used = used - 1
		WHERE pos_system_id = $1 AND company_id = $2 AND promotion_id = $3 AND user_id = $4`
)

func (l *ledger) UncountPromotionUse(ctx context.Context, u *posgate.BudgetUse, user string) error {
	_, err := l.exec(ctx, "consume promotion budget", uncountUseSQL, u.POSSystemID, u.CompanyID, u.PromotionID, user)
	return err
}

func (l *ledger) LinkPromotionUse(ctx context.Context, u *posgate.BudgetUse) error {
	_, err := l.exec(ctx, "consume promotion budget", `INSERT INTO transaction_promotions (txn_id, promotion_id, pos_system_id, company_id, user_id)
		VALUES ($1, $2, $3, $4, $5)`, u.SaleID, u.PromotionID, u.POSSystemID, u.CompanyID, u.UserID)
	return err
}

// CountPromotionUse adds one to the promotion's counter for user ("": in
// all) unless it has reached budget (0: none).
func (l *ledger) CountPromotionUse(ctx context.Context, u *posgate.BudgetUse, user string, budget int64) (bool, error) {
	var used int64
	err := l.q().QueryRow(ctx, countUseSQL, u.POSSystemID, u.CompanyID, u.PromotionID, user, budget).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, wrap(err, "consume promotion budget")
	}
	return true, nil
}

func (l *ledger) ReleasePromotionBudget(ctx context.Context, u *posgate.BudgetUse) error {
	if _, err := l.exec(ctx, "release promotion budget", `WITH gone AS (DELETE FROM transaction_promotions WHERE txn_id = $5 AND promotion_id = $3 RETURNING 1)
		UPDATE promotion_usage SET used = used - 1 WHERE pos_system_id = $1 AND company_id = $2 AND promotion_id = $3 AND user_id IN ('', $4)
		AND EXISTS (SELECT FROM gone)`, u.POSSystemID, u.CompanyID, u.PromotionID, u.UserID, u.SaleID); err != nil {
		return err
	}
	return nil
}

func (l *ledger) RestorePromotionBudgets(ctx context.Context, posSystemID, companyID, saleID string) error {
	_, err := l.exec(ctx, "restore promotion budgets", `WITH gone AS (DELETE FROM transaction_promotions WHERE txn_id = $1
			RETURNING pos_system_id, company_id, promotion_id, user_id)
		UPDATE promotion_usage u SET used = u.used - 1 FROM (
			SELECT pos_system_id, company_id, promotion_id, '' AS user_id FROM gone
			UNION ALL SELECT pos_system_id, company_id, promotion_id, user_id FROM gone WHERE user_id <> '') g
		WHERE u.pos_system_id = g.pos_system_id AND u.company_id = g.company_id AND u.promotion_id = g.promotion_id AND u.user_id = g.user_id`,
		saleID)
	return err
}

// PromotionUsage implements posgate.PromotionUsageReader.
func (db *DB) PromotionUsage(ctx context.Context, posSystemID, companyID, userID string, promotionIDs []string) (map[string]posgate.PromotionUsage, error) {
	out := map[string]posgate.PromotionUsage{}
	if len(promotionIDs) == 0 {
		return out, nil
	}
	rows, err := db.q(ctx).Query(ctx, `SELECT promotion_id, user_id, used FROM promotion_usage
		WHERE pos_system_id = $1 AND company_id = $2 AND promotion_id = ANY($3) AND user_id IN ('', $4)`,
		posSystemID, companyID, promotionIDs, userID)
	if err != nil {
		return nil, wrap(err, "promotion usage")
	}
	defer rows.Close()
	for rows.Next() {
		var id, user string
		var used int64
		if err := rows.Scan(&id, &user, &used); err != nil {
			return nil, wrap(err, "promotion usage")
		}
		u := out[id]
		if user == "" {
			u.Used = used
		} else {
			u.CustomerUsed = used
		}
		out[id] = u
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err, "promotion usage")
	}
	return out, nil
}
