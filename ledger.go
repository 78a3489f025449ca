package posgate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// LedgerTx is a store's write transaction as the ledger sees it: the few
// reads and conditional writes that recording a sale or refund needs. Both
// stores implement it over one database transaction, and ApplyLedger runs
// the rules on it, so that a sale, a refund and a batch take one code path
// and both stores apply the same rules. Every conditional write decides in
// the database (a unique key, an UPDATE's WHERE) or under a lock that keeps
// every other writer out until the transaction ends (SQLite's one writer),
// never by a read in Go that a concurrent transaction could overtake, so
// that concurrent requests cannot both win.
type LedgerTx interface {
	// Now is the store's clock (coupon expiry, redemption times).
	Now() time.Time
	// Savepoint, RollbackToSavepoint and ReleaseSavepoint bracket one
	// item, so that a rejected item leaves no trace in its batch.
	Savepoint(ctx context.Context) error
	RollbackToSavepoint(ctx context.Context) error
	ReleaseSavepoint(ctx context.Context) error

	// LoyaltyProgram returns the company's program or, when none is set,
	// DefaultLoyaltyProgram.
	LoyaltyProgram(ctx context.Context, posSystemID, companyID string) (*LoyaltyProgram, error)
	// InsertTransaction claims t's keys, its company's transaction id and
	// its session, unless one is taken: inserted is false then, and
	// nothing is written. Once claimed, no other transaction can take the
	// keys, and FindTransaction finds t. The store may write the row
	// here (with an empty answer) or only in FinishTransaction, as both
	// do (one row write per sale instead of an insert and an update):
	// SQLite's one writer's lock holds the keys; PostgreSQL's claim is
	// optimistic, a taken key failing the final insert, and applies the
	// items again with the row inserted first.
	InsertTransaction(ctx context.Context, t *Transaction) (inserted bool, err error)
	// FinishTransaction stores the claimed t with its user, points,
	// stamps, original and answer. The ledger calls it last for t, after
	// every balance and coupon change of the item.
	FinishTransaction(ctx context.Context, t *Transaction) error
	FindTransaction(ctx context.Context, posSystemID, companyID, transactionID string) (*Transaction, error)
	FindTransactionBySession(ctx context.Context, sessionID string) (*Transaction, error)
	// AddRefund adds amount to a sale's refunded amount unless the total
	// would exceed the sale's amount; it returns the refunded amount after
	// (ok) or as it stands (not ok).
	AddRefund(ctx context.Context, saleID string, amount Amount) (refunded Amount, ok bool, err error)

	FindUser(ctx context.Context, posSystemID, companyID, userID string) (*LoyaltyUser, error)
	// UserIDsByEmail and UserIDsByPhone return up to two ids of users with
	// that folded e-mail or those phone digits (two: ambiguous).
	UserIDsByEmail(ctx context.Context, posSystemID, companyID, emailNorm string) ([]string, error)
	UserIDsByPhone(ctx context.Context, posSystemID, companyID, digits string) ([]string, error)
	// EnrollUser inserts u unless its id is taken (created false).
	EnrollUser(ctx context.Context, u *LoyaltyUser) (created bool, err error)
	// AddBalance adds points (the result kept within int32) and stamps (the
	// result at least 0) to a user's balances and returns them, with the
	// user's balance sequence number, which it increments.
	AddBalance(ctx context.Context, posSystemID, companyID, userID string, points, stamps int32) (newPoints, newStamps int32, seq int64, err error)

	FindCoupon(ctx context.Context, posSystemID, companyID, code string) (*Coupon, error)
	// RedeemCoupon moves an Issued coupon unexpired at now to Redeemed and
	// records that transaction id redeemed it; false when it was not
	// Issued and unexpired (another redemption won).
	RedeemCoupon(ctx context.Context, c *Coupon, transactionID string, now time.Time) (bool, error)
	// Redemption returns the transaction whose redemption of a coupon
	// stands (ENOTFOUND when none).
	Redemption(ctx context.Context, posSystemID, companyID, code string) (*CouponRedemption, error)
	// RestoreCoupons gives the coupons a sale redeemed back (Issued) when
	// they are still Redeemed and unexpired at now.
	RestoreCoupons(ctx context.Context, posSystemID, companyID, saleID string, now time.Time) error

	// CountPromotionUse adds one to the counter of u's promotion for user
	// ("": in all) unless it has reached budget (0: none), and reports
	// whether it did; the counter decides in the database, and stays
	// locked until the sale commits. UncountPromotionUse takes one back.
	// LinkPromotionUse records that sale u.SaleID counted the redemption,
	// for RestorePromotionBudgets. consumeBudget (settle.go) is the rule
	// over them.
	CountPromotionUse(ctx context.Context, u *BudgetUse, user string, budget int64) (bool, error)
	UncountPromotionUse(ctx context.Context, u *BudgetUse, user string) error
	LinkPromotionUse(ctx context.Context, u *BudgetUse) error
	// ReleasePromotionBudget undoes a consumeBudget of the same item (a
	// settlement that no longer applies the promotion).
	ReleasePromotionBudget(ctx context.Context, u *BudgetUse) error
	// RestorePromotionBudgets gives back every redemption a sale counted
	// (its whole refund), once.
	RestorePromotionBudgets(ctx context.Context, posSystemID, companyID, saleID string) error

	// Encode renders an answer as the API writes it (the adapters'
	// encoder, internal/codec/encode): the ledger stores each
	// transaction's answer, to answer a repeated request with the same
	// bytes.
	Encode(v any) ([]byte, error)

	// Emit writes ev to the outbox of every endpoint subscribed to it, in
	// this transaction (docs/api.md §19): a rolled-back item emits nothing.
	Emit(ctx context.Context, ev *Event) error

	// RecordOfflineRedemption records r, a coupon a sale redeemed offline
	// under an allowance (docs/api.md §24.5), unless the allowance has
	// r.Limit redemptions recorded already or r.Code's is one of them:
	// false then, and nothing is written. Unique keys decide.
	RecordOfflineRedemption(ctx context.Context, r *OfflineRedemption) (bool, error)
}

// LedgerReadAhead is a LedgerTx that can do a sale's reads (its company's
// program, its card's customer, its coupons) in the round trip of its
// InsertTransaction, which PostgreSQL's does: applyOne names the item
// before it inserts it. The reads still come after the insert, as one by
// one, and each answers the first call that asks for it.
type LedgerReadAhead interface {
	ReadAhead(it *TransactionInput)
}

// LedgerFolding is a LedgerTx that folds a sale's reads into its writes,
// as SQLite's does: the coupon redeemed by one conditional UPDATE whose
// WHERE holds the cases of Coupon.Redeemability that need nothing of the
// customer but the matched user's id, and the customer found by adding
// the sale's points to their balance. The ledger reads a coupon only when
// ClaimCoupon refuses it, and Redeemability then decides and explains, so
// the database only ever says yes to a coupon the rule would redeem
// (internal/sqlite's TestClaimCouponAgreesWithRedeemability checks every
// case against the rule).
type LedgerFolding interface {
	// ClaimCoupon redeems coupon code for transaction id when it is
	// Issued, unexpired at now, usable at locationID and held either by
	// user userID or by nobody (no user, e-mail or phone), and returns
	// its code as stored and its promotion. ok is false, and nothing is
	// written, for any other coupon, one that does not exist included.
	ClaimCoupon(ctx context.Context, posSystemID, companyID, code, locationID, userID, id string, now time.Time) (claimed, promotionID string, ok bool, err error)
	// FindUserAddingBalance is FindUser that adds points and stamps to the
	// user it finds as AddBalance does, in the same statement; the user
	// holds its id, e-mail, phone and balances after, and seq the balance
	// sequence number. ENOTFOUND (nothing written) when there is no such
	// user.
	FindUserAddingBalance(ctx context.Context, posSystemID, companyID, userID string, points, stamps int32) (u *LoyaltyUser, seq int64, err error)
}

// LedgerOptimisticClaim is a LedgerTx that can claim a sale's keys without
// looking for them, as SQLite's does: after ClaimOptimistically(t),
// FinishTransaction inserts t only when its keys are free (a conflict
// clause) and returns ErrTransactionTaken, writing nothing, when one is
// taken. The ledger then rolls the item back and claims it again with
// InsertTransaction, which answers it as a taken key. A sale whose keys
// are free, nearly every one, thus takes no statement to look for them. A
// sale refused (its settlement's EINVALID) is refused for that whether or
// not its key is taken, as PostgreSQL's optimistic claim answers it too.
type LedgerOptimisticClaim interface {
	ClaimOptimistically(t *Transaction)
}

// ErrTransactionTaken is FinishTransaction's answer, after
// ClaimOptimistically, when the transaction's id or session is taken.
var ErrTransactionTaken = errors.New("ledger: transaction id or session taken")

// ApplyLedger applies items on tx in Date order (ties by Row), each inside
// a savepoint: a rejected item is rolled back to it. It returns the
// outcomes in the order of items; an error (the store's) means that tx
// must be rolled back as a whole. Stores call it inside their write
// transaction (docs/api.md §13, docs/decisions.md "Transactions").
func ApplyLedger(ctx context.Context, tx LedgerTx, items []*TransactionInput) ([]*TransactionOutcome, error) {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := items[a].Date.Compare(items[b].Date); c != 0 {
			return c
		}
		return cmp.Compare(items[a].Row, items[b].Row)
	})
	out := make([]*TransactionOutcome, len(items))
	for _, i := range order {
		it := items[i]
		if it.Reject != nil {
			out[i] = &TransactionOutcome{Row: it.Row, Status: OutcomeRejected, Err: it.Reject}
			continue
		}
		if err := tx.Savepoint(ctx); err != nil {
			return nil, err
		}
		o, err := applyOne(ctx, tx, it)
		if err != nil {
			return nil, err
		}
		if o.Status == OutcomeRejected {
			err = tx.RollbackToSavepoint(ctx)
		} else {
			err = tx.ReleaseSavepoint(ctx)
		}
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// rejected is the outcome of an item refused for err.
func rejected(it *TransactionInput, err error) *TransactionOutcome {
	return &TransactionOutcome{Row: it.Row, Status: OutcomeRejected, Err: err}
}

// applyOne records one transaction. A refusal is a Rejected outcome; only
// the store's own failures are errors.
func applyOne(ctx context.Context, tx LedgerTx, it *TransactionInput) (*TransactionOutcome, error) {
	t := &Transaction{
		ID: it.ID, POSSystemID: it.POSSystemID, CompanyID: it.CompanyID, LocationID: it.LocationID, TerminalID: it.TerminalID,
		TransactionID: it.TransactionID, SessionID: it.SessionID, Type: it.Type, Amount: it.Amount, Date: Timestamp(it.Date),
		OriginalTransactionID: it.OriginalTransactionID, RequestHash: it.RequestHash, Request: it.Request,
		Answer: json.RawMessage("{}"), CreatedAt: Timestamp(tx.Now()),
	}
	if ra, ok := tx.(LedgerReadAhead); ok {
		ra.ReadAhead(it)
	}
	oc, optimistic := tx.(LedgerOptimisticClaim)
	optimistic = optimistic && it.Type != TransactionRefund // a refund's refusals read its own key
	if optimistic {
		oc.ClaimOptimistically(t)
	} else if inserted, err := tx.InsertTransaction(ctx, t); err != nil {
		return nil, err
	} else if !inserted {
		return duplicate(ctx, tx, it)
	}
	answer := it.Answer
	answer.ID = &t.ID
	answer.Coupons = []TransactionCoupon{}
	if answer.Promotions == nil {
		answer.Promotions = []AppliedPromotion{}
	}
	if it.Type == TransactionRefund {
		if o, err := refund(ctx, tx, it, t, &answer); o != nil || err != nil {
			return o, err
		}
	} else if err := sale(ctx, tx, it, t, &answer); ErrorCode(err) == EINVALID {
		return rejected(it, err), nil // a line the evaluation refuses (its amount beyond MaxPrice)
	} else if err != nil {
		return nil, err
	}
	answer.Receipt.LoyaltyText = LoyaltyText(answer.Loyalty)
	b, err := tx.Encode(answer)
	if err != nil {
		return nil, fmt.Errorf("ledger: answer: %w", err)
	}
	t.Answer = b
	if err := tx.FinishTransaction(ctx, t); optimistic && errors.Is(err, ErrTransactionTaken) {
		return claimAgain(ctx, tx, it, t)
	} else if err != nil {
		return nil, err
	}
	if err := tx.Emit(ctx, transactionEvent(it, t, &answer, tx.Now())); err != nil {
		return nil, err
	}
	return &TransactionOutcome{Row: it.Row, Status: OutcomeCreated, Answer: b}, nil
}

// claimAgain undoes an item claimed optimistically (LedgerOptimisticClaim)
// whose key FinishTransaction found taken, and answers it as a taken key
// (duplicate) after InsertTransaction confirms it.
func claimAgain(ctx context.Context, tx LedgerTx, it *TransactionInput, t *Transaction) (*TransactionOutcome, error) {
	if err := tx.RollbackToSavepoint(ctx); err != nil {
		return nil, err
	}
	if err := tx.Savepoint(ctx); err != nil {
		return nil, err
	}
	inserted, err := tx.InsertTransaction(ctx, t)
	switch {
	case err != nil:
		return nil, err
	case !inserted:
		return duplicate(ctx, tx, it)
	}
	return nil, fmt.Errorf("ledger: transaction %s: its key was taken, then free", t.ID)
}

// duplicate answers an item whose transaction id or session is taken: the
// first answer again when the content is the same, else a conflict.
func duplicate(ctx context.Context, tx LedgerTx, it *TransactionInput) (*TransactionOutcome, error) {
	prev, err := tx.FindTransaction(ctx, it.POSSystemID, it.CompanyID, it.TransactionID)
	switch {
	case err == nil && prev.RequestHash == it.RequestHash:
		return &TransactionOutcome{Row: it.Row, Status: OutcomeDuplicate, Answer: prev.Answer}, nil
	case err == nil:
		return rejected(it, TransactionTaken(it.TransactionID)), nil
	case ErrorCode(err) != ENOTFOUND:
		return nil, err
	}
	prev, err = tx.FindTransactionBySession(ctx, it.SessionID)
	if err != nil {
		return nil, err
	}
	return rejected(it, Errorf(ECONFLICT, "Session '%s' is already linked to transaction '%s'.", it.SessionID, prev.TransactionID)), nil
}

// sale matches the customer, redeems the coupons and adds the points and
// stamps the program gives.
func sale(ctx context.Context, tx LedgerTx, it *TransactionInput, t *Transaction, answer *TransactionAnswer) error {
	program, err := tx.LoyaltyProgram(ctx, it.POSSystemID, it.CompanyID)
	if err != nil {
		return err
	}
	points, stamps := program.Earn(it.Amount)
	user, u, earned, err := matchCustomer(ctx, tx, it, program, points, stamps)
	if err != nil {
		return err
	}
	var redeemer *CouponRedeemer // built for the first coupon a fast path does not redeem
	redeemerOf := func() (*CouponRedeemer, error) {
		if redeemer != nil {
			return redeemer, nil
		}
		r, err := couponRedeemer(ctx, tx, it.POSSystemID, it.CompanyID, user, u, it.Email, it.Phone)
		redeemer = r
		return r, err
	}
	seen := map[string]bool{}
	var evCoupons []EvaluationCoupon // the redeemed coupons, for the settlement
	for _, code := range it.CouponCodes {
		var res TransactionCoupon
		conflict := false
		if seen[Fold(code)] {
			res = couponRejected(code, "Coupon '%s' is given more than once in this transaction.", code)
		} else if !it.CouponsEnabled {
			res = couponRejected(code, "Coupons are switched off for this company.")
		} else if res, err = redeem(ctx, tx, it.POSSystemID, it.CompanyID, it.LocationID, code, user, redeemerOf, t.ID); err != nil {
			return err
		} else if res, conflict, err = honourOffline(ctx, tx, it, code, res, user); err != nil {
			return err
		}
		seen[Fold(code)] = true
		if res.Status == CouponRedeemed && !conflict {
			t.RedeemedCoupons = append(t.RedeemedCoupons, res.Code)
			evCoupons = append(evCoupons, EvaluationCoupon{Code: res.Code, PromotionID: res.promotionID})
			if err := tx.Emit(ctx, couponRedeemedEvent(it.POSSystemID, it.CompanyID, it.LocationID, it.TransactionID, res.Code, user, tx.Now())); err != nil {
				return err
			}
		}
		answer.Coupons = append(answer.Coupons, res)
	}
	if it.Settle != nil {
		ev, err := settlePromotions(ctx, tx, it, user, evCoupons)
		if err != nil {
			return err
		}
		answer.Promotions, answer.Settlement = ev.Promotions, settlementOf(ev, it.Amount)
	}
	if user == "" {
		return nil
	}
	bp, bs, seq := earned.points, earned.stamps, earned.seq
	if !earned.added {
		if bp, bs, seq, err = tx.AddBalance(ctx, it.POSSystemID, it.CompanyID, user, points, stamps); err != nil {
			return err
		}
	}
	if err := tx.Emit(ctx, balanceEvent(it, user, bp, bs, points, stamps, seq, tx.Now())); err != nil {
		return err
	}
	t.UserID, t.PointsEarned, t.StampsEarned = user, points, stamps
	answer.Loyalty = &TransactionLoyalty{UserID: user, PointsEarned: points, StampsEarned: stamps, Points: bp, Stamps: bs}
	return nil
}

// earning is the balance a sale's customer match added the sale's points
// and stamps to (LedgerFolding), when it did.
type earning struct {
	added          bool
	points, stamps int32
	seq            int64
}

// earningFinder is the CustomerFinder of a sale on a LedgerFolding: its
// FindUser (the match by card number) adds the sale's points and stamps to
// the user it finds, so that the match and the balance take one statement.
type earningFinder struct {
	LedgerTx
	fold           LedgerFolding
	points, stamps int32
	earned         earning
}

func (f *earningFinder) FindUser(ctx context.Context, posSystemID, companyID, userID string) (*LoyaltyUser, error) {
	u, seq, err := f.fold.FindUserAddingBalance(ctx, posSystemID, companyID, userID, f.points, f.stamps)
	if err == nil {
		f.earned = earning{added: true, points: u.Points, stamps: u.Stamps, seq: seq}
	}
	return u, err
}

// matchCustomer finds the sale's loyalty user (posgate.MatchCustomer) or,
// when nobody has the card, e-mail or phone given and the program enrols
// an unknown customer, enrols them. It returns the user's id ("" for none),
// the user when it read or made it, and, on a LedgerFolding, the balance
// when the match added the sale's points and stamps to it.
func matchCustomer(ctx context.Context, tx LedgerTx, it *TransactionInput, program *LoyaltyProgram, points, stamps int32) (string, *LoyaltyUser, earning, error) {
	var f CustomerFinder = tx
	var ef *earningFinder
	if fold, ok := tx.(LedgerFolding); ok {
		ef = &earningFinder{LedgerTx: tx, fold: fold, points: points, stamps: stamps}
		f = ef
	}
	m, err := MatchCustomer(ctx, f, it.POSSystemID, it.CompanyID, it.CardNumber, it.Email, it.Phone)
	var earned earning
	if ef != nil {
		earned = ef.earned
	}
	if err != nil || !m.Enrollable || !program.AutoEnroll {
		return m.ID, m.User, earned, err
	}
	u := &LoyaltyUser{POSSystemID: it.POSSystemID, CompanyID: it.CompanyID, LoyaltyCard: LoyaltyCard{
		ID: cmp.Or(it.CardNumber, it.EnrollID), FirstName: it.FirstName, LastName: it.LastName, Email: it.Email, Phone: it.Phone}}
	if u.Validate() != nil {
		return "", nil, earning{}, nil // a customer whose details cannot make a user earns nothing
	}
	if _, err := tx.EnrollUser(ctx, u); err != nil {
		return "", nil, earning{}, err
	}
	return u.ID, u, earning{}, nil
}

// couponRedeemer is who redeems coupons in a sale or a validation
// (posgate.CouponRedeemer): the user (u when read already, "" for none),
// known by the e-mail and phone given and by the user's own.
func couponRedeemer(ctx context.Context, tx LedgerTx, posSystemID, companyID, user string, u *LoyaltyUser, email, phone string) (*CouponRedeemer, error) {
	r := &CouponRedeemer{UserID: user}
	r.Add(email, phone)
	if user == "" {
		return r, nil
	}
	if u == nil {
		var err error
		if u, err = tx.FindUser(ctx, posSystemID, companyID, user); ErrorCode(err) == ENOTFOUND {
			return r, nil // a transaction's user deleted since: known by its id alone
		} else if err != nil {
			return nil, err
		}
	}
	r.AddUser(u)
	return r, nil
}

func couponRejected(code, format string, args ...any) TransactionCoupon {
	msg := fmt.Sprintf(format, args...)
	return TransactionCoupon{Code: code, Status: CouponRejected, ErrorMessage: &msg}
}

// redeem redeems one coupon code for transaction id at a location, for
// the customer whose matched user is user ("" for none) and whose
// redeemer (posgate.Coupon.Redeemability) redeemerOf gives, and says why
// not otherwise; each reason has its own message (docs/api.md §13.4). On a
// LedgerFolding the database redeems the coupons the rule needs only user
// for (ClaimCoupon); any other is read, and the rule decides.
func redeem(ctx context.Context, tx LedgerTx, posSystemID, companyID, locationID, code, user string, redeemerOf func() (*CouponRedeemer, error), id string) (TransactionCoupon, error) {
	now := tx.Now()
	if fold, ok := tx.(LedgerFolding); ok {
		claimed, promotionID, ok, err := fold.ClaimCoupon(ctx, posSystemID, companyID, code, locationID, user, id, now)
		if err != nil {
			return TransactionCoupon{}, err
		} else if ok {
			return TransactionCoupon{Code: claimed, Status: CouponRedeemed, promotionID: promotionID}, nil
		}
	}
	c, err := tx.FindCoupon(ctx, posSystemID, companyID, code)
	if ErrorCode(err) == ENOTFOUND {
		return couponRejected(code, "Coupon '%s' does not exist.", code), nil
	} else if err != nil {
		return TransactionCoupon{}, err
	}
	redeemer, err := redeemerOf()
	if err != nil {
		return TransactionCoupon{}, err
	}
	if res, ok := couponRefusal(c, locationID, redeemer, now); !ok {
		return res, nil
	}
	ok, err := tx.RedeemCoupon(ctx, c, id, now)
	if err != nil {
		return TransactionCoupon{}, err
	}
	if !ok { // another transaction redeemed (or an operator changed) it meanwhile
		if c, err = tx.FindCoupon(ctx, posSystemID, companyID, code); err != nil {
			return TransactionCoupon{}, err
		}
		res, _ := couponRefusal(c, locationID, redeemer, now)
		if res.Status != CouponRejected {
			res = couponRejected(c.Code, "Coupon '%s' has already been redeemed.", c.Code)
		}
		return res, nil
	}
	return TransactionCoupon{Code: c.Code, Status: CouponRedeemed, promotionID: c.PromotionID}, nil
}

// couponRefusal is a sale's answer for c (posgate.Coupon.Redeemability) at
// a location for redeemer: Rejected with the reason, or ok.
func couponRefusal(c *Coupon, locationID string, redeemer *CouponRedeemer, now time.Time) (TransactionCoupon, bool) {
	switch c.Redeemability(locationID, now, redeemer) {
	case CouponRedeemable:
		return TransactionCoupon{Code: c.Code, Status: CouponRedeemed}, true
	case CouponAlreadyRedeemed:
		return couponRejected(c.Code, "Coupon '%s' has already been redeemed.", c.Code), false
	case CouponHasExpired:
		return couponRejected(c.Code, "Coupon '%s' expired at %s.", c.Code, c.AvailableUntil.UTC().Format(time.RFC3339)), false
	case CouponNotUsableHere:
		return couponRejected(c.Code, "Coupon '%s' cannot be used at location '%s'.", c.Code, locationID), false
	case CouponNeedsCustomer:
		return couponRejected(c.Code, "Coupon '%s' belongs to a loyalty customer; identify the customer to redeem it.", c.Code), false
	case CouponOtherCustomer:
		return couponRejected(c.Code, "Coupon '%s' belongs to another customer.", c.Code), false
	}
	return couponRejected(c.Code, "Coupon '%s' has been cancelled.", c.Code), false
}

// refund adds the refund to its sale (never beyond it), takes back the
// points that part of the sale earned and, when the whole sale is
// refunded, its stamps and coupons. A non-nil outcome is a refusal.
func refund(ctx context.Context, tx LedgerTx, it *TransactionInput, t *Transaction, answer *TransactionAnswer) (*TransactionOutcome, error) {
	orig, err := tx.FindTransaction(ctx, it.POSSystemID, it.CompanyID, it.OriginalTransactionID)
	if ErrorCode(err) == ENOTFOUND {
		return rejected(it, Errorf(ENOTFOUND, "Transaction '%s' is not recorded.", it.OriginalTransactionID)), nil
	} else if err != nil {
		return nil, err
	}
	if orig.IsRefund() {
		return rejected(it, Errorf(EINVALID, "Transaction '%s' is a refund; a refund's originalTransactionId names a sale.", orig.TransactionID)), nil
	}
	amount := it.Amount.Abs()
	after, ok, err := tx.AddRefund(ctx, orig.ID, amount)
	if err != nil {
		return nil, err
	}
	if !ok {
		return rejected(it, Errorf(ECONFLICT, "Refunding %s would exceed sale '%s': %s of its %s are refunded already.",
			amount, orig.TransactionID, after, orig.Amount)), nil
	}
	t.OriginalID, t.UserID = orig.ID, orig.UserID
	whole := after == orig.Amount
	if orig.UserID != "" {
		points := ReversedPoints(orig.PointsEarned, orig.Amount, after-amount, after)
		stamps := int32(0)
		if whole {
			stamps = orig.StampsEarned
		}
		bp, bs, seq, err := tx.AddBalance(ctx, it.POSSystemID, it.CompanyID, orig.UserID, -points, -stamps)
		if err != nil {
			return nil, err
		}
		if err := tx.Emit(ctx, balanceEvent(it, orig.UserID, bp, bs, -points, -stamps, seq, tx.Now())); err != nil {
			return nil, err
		}
		t.PointsEarned, t.StampsEarned = -points, -stamps
		answer.Loyalty = &TransactionLoyalty{UserID: orig.UserID, PointsEarned: -points, StampsEarned: -stamps, Points: bp, Stamps: bs}
	}
	if whole {
		if err := tx.RestoreCoupons(ctx, it.POSSystemID, it.CompanyID, orig.ID, tx.Now()); err != nil {
			return nil, err
		}
		if err := tx.RestorePromotionBudgets(ctx, it.POSSystemID, it.CompanyID, orig.ID); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// RedeemForTransaction is the ledger's rule for a coupon validated by
// transaction (docs/api.md §13.5): the checks of a sale's coupons, the
// owner being the claimed one when given (it must be the coupon's owner),
// else the transaction's customer; a coupon that this transaction redeemed
// before is Redeemed again, with the time it was. It returns the coupon's
// fate and the time of the validation.
func RedeemForTransaction(ctx context.Context, tx LedgerTx, t *Transaction, code string, owner *CouponOwner, locationID string) (TransactionCoupon, time.Time, error) {
	now := Timestamp(tx.Now())
	c, err := tx.FindCoupon(ctx, t.POSSystemID, t.CompanyID, code)
	if ErrorCode(err) == ENOTFOUND {
		return couponRejected(code, "Coupon '%s' does not exist.", code), now, nil
	} else if err != nil {
		return TransactionCoupon{}, now, err
	}
	if c.Status == CouponRedeemed {
		r, err := tx.Redemption(ctx, t.POSSystemID, t.CompanyID, c.Code)
		if err != nil && ErrorCode(err) != ENOTFOUND {
			return TransactionCoupon{}, now, err
		}
		if err == nil && r.ID == t.ID {
			return TransactionCoupon{Code: c.Code, Status: CouponRedeemed}, r.RedeemedAt, nil
		}
	}
	user := t.UserID
	var u *LoyaltyUser
	if owner != nil && c.UserID != "" {
		u, err = tx.FindUser(ctx, t.POSSystemID, t.CompanyID, c.UserID)
		if err != nil && ErrorCode(err) != ENOTFOUND {
			return TransactionCoupon{}, now, err
		}
		if err != nil || !ownerMatches(u, owner) {
			return couponRejected(c.Code, "Coupon '%s' belongs to another customer.", c.Code), now, nil
		}
		user = c.UserID
	}
	var claimed CouponOwner
	if owner != nil {
		claimed = *owner
	}
	redeemer, err := couponRedeemer(ctx, tx, t.POSSystemID, t.CompanyID, user, u, claimed.Email, claimed.Phone)
	if err != nil {
		return TransactionCoupon{}, now, err
	}
	res, err := redeem(ctx, tx, t.POSSystemID, t.CompanyID, locationID, code, redeemer.UserID,
		func() (*CouponRedeemer, error) { return redeemer, nil }, t.ID)
	if err == nil && res.Status == CouponRedeemed {
		err = tx.Emit(ctx, couponRedeemedEvent(t.POSSystemID, t.CompanyID, locationID, t.TransactionID, res.Code, user, now))
	}
	return res, now, err
}

// transactionEvent is the event of a recorded sale or refund.
func transactionEvent(it *TransactionInput, t *Transaction, answer *TransactionAnswer, now time.Time) *Event {
	typ := EventTransactionRecorded
	if it.Type == TransactionRefund {
		typ = EventTransactionRefunded
	}
	return &Event{Type: typ, POSSystemID: t.POSSystemID, CompanyID: t.CompanyID, UserID: t.UserID, Time: now,
		Data: TransactionEventData{ID: t.ID, TransactionID: t.TransactionID, POSSystemID: t.POSSystemID, CompanyID: t.CompanyID,
			LocationID: t.LocationID, TerminalID: t.TerminalID, SessionID: t.SessionID, TransactionType: t.Type,
			TransactionAmount: t.Amount, TransactionDate: t.Date.UTC(), OriginalTransactionID: t.OriginalTransactionID,
			Loyalty: answer.Loyalty, Coupons: answer.Coupons, Settlement: answer.Settlement}}
}

// couponRedeemedEvent is the event of a coupon redeemed by a transaction.
func couponRedeemedEvent(posSystemID, companyID, locationID, transactionID, code, user string, now time.Time) *Event {
	return &Event{Type: EventCouponRedeemed, POSSystemID: posSystemID, CompanyID: companyID, UserID: user, Time: now,
		Data: CouponEventData{Code: code, POSSystemID: posSystemID, CompanyID: companyID, LocationID: locationID,
			TransactionID: transactionID, UserID: user, At: now.UTC()}}
}

// balanceEvent is the event of a balance change by a transaction.
func balanceEvent(it *TransactionInput, user string, points, stamps, dp, ds int32, seq int64, now time.Time) *Event {
	return &Event{Type: EventLoyaltyBalanceChanged, POSSystemID: it.POSSystemID, CompanyID: it.CompanyID, UserID: user, Time: now,
		Data: BalanceEventData{POSSystemID: it.POSSystemID, CompanyID: it.CompanyID, UserID: user, Points: points, Stamps: stamps,
			PointsDelta: dp, StampsDelta: ds, Sequence: seq, TransactionID: it.TransactionID}}
}

// ownerMatches reports whether a claimed owner is u: every name, e-mail and
// phone the claim gives equals u's (names and e-mails without regard to
// case, phones on their digits).
func ownerMatches(u *LoyaltyUser, o *CouponOwner) bool {
	return (o.FirstName == "" || Fold(o.FirstName) == Fold(u.FirstName)) &&
		(o.LastName == "" || Fold(o.LastName) == Fold(u.LastName)) &&
		(o.Email == "" || FoldEmail(o.Email) == FoldEmail(u.Email)) &&
		(o.Phone == "" || PhoneDigits(o.Phone) == PhoneDigits(u.Phone))
}
