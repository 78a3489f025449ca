package posgate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"time"
)

// TransactionType is a transaction's kind (docs/api.md §13.1): the real
// service's Undefined and Sale, and posgate's Refund.
type TransactionType string

// Transaction types. Undefined is accounted as a sale.
const (
	TransactionUndefined TransactionType = "Undefined"
	TransactionSale      TransactionType = "Sale"
	TransactionRefund    TransactionType = "Refund"
)

// Valid reports whether t is a known type.
func (t TransactionType) Valid() bool {
	return t == TransactionUndefined || t == TransactionSale || t == TransactionRefund
}

// SignTransaction is the rule of a transaction's type and sign (docs/api.md
// §13.4): a transaction is a refund when its type is Refund or its amount is
// negative, and a refund is recorded with a negative amount, whatever sign
// it was sent with; any other keeps its type (Undefined when none) and its
// amount. The amount a refund gives back is the magnitude of its recorded
// amount (Amount.Abs).
func SignTransaction(typ TransactionType, amount Amount) (TransactionType, Amount) {
	switch {
	case typ == TransactionRefund || amount < 0:
		return TransactionRefund, -amount.Abs()
	case typ == "":
		return TransactionUndefined, amount
	}
	return typ, amount
}

// LoyaltyProgram is how a company's loyalty users earn (docs/api.md §13.2):
// points per currency unit of a sale (two decimals), stamps per sale of at
// least MinimumAmountForStamp, and whether an unknown customer is enrolled.
type LoyaltyProgram struct {
	POSSystemID           string     `json:"posSystemId"`
	CompanyID             string     `json:"posCompanyId"`
	PointsPerCurrencyUnit Amount     `json:"pointsPerCurrencyUnit"`
	StampsPerSale         int32      `json:"stampsPerSale"`
	MinimumAmountForStamp Amount     `json:"minimumAmountForStamp"`
	AutoEnroll            bool       `json:"autoEnroll"`
	UpdatedAt             *time.Time `json:"updatedAt"`
}

// Bounds of a loyalty program's fields (docs/api.md §13.2).
const (
	MaxPointsPerCurrencyUnit Amount = 1000 * 100
	MaxStampsPerSale                = 1000
)

// DefaultLoyaltyProgram is the program of a company whose operator set
// none: a point per currency unit, a stamp per sale, no enrolment.
func DefaultLoyaltyProgram(posSystemID, companyID string) *LoyaltyProgram {
	return &LoyaltyProgram{POSSystemID: posSystemID, CompanyID: companyID, PointsPerCurrencyUnit: 100, StampsPerSale: 1}
}

// ProgramInForce is the loyalty program that applies to a company, given
// what a read of its program answered: the operator's, or
// DefaultLoyaltyProgram when the operator set none (ENOTFOUND). Any other
// error is returned as it is.
func ProgramInForce(posSystemID, companyID string, p *LoyaltyProgram, err error) (*LoyaltyProgram, error) {
	if ErrorCode(err) == ENOTFOUND {
		return DefaultLoyaltyProgram(posSystemID, companyID), nil
	}
	return p, err
}

// Validate checks the fields an operator sets.
func (p *LoyaltyProgram) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", p.POSSystemID)
	checkKey(v, "posCompanyId", p.CompanyID)
	if p.PointsPerCurrencyUnit < 0 || p.PointsPerCurrencyUnit > MaxPointsPerCurrencyUnit {
		v.Add("pointsPerCurrencyUnit", fmt.Sprintf("The pointsPerCurrencyUnit field must be a number from 0 to %s.", MaxPointsPerCurrencyUnit))
	}
	if p.StampsPerSale < 0 || p.StampsPerSale > MaxStampsPerSale {
		v.Add("stampsPerSale", fmt.Sprintf("The stampsPerSale field must be an integer from 0 to %d.", MaxStampsPerSale))
	}
	if p.MinimumAmountForStamp < 0 || p.MinimumAmountForStamp > MaxAmount {
		v.Add("minimumAmountForStamp", fmt.Sprintf("The minimumAmountForStamp field must be a number from 0 to %s.", MaxAmount))
	}
	return v.Err()
}

// Earn returns the points and stamps a sale of amount earns:
// floor(amount × rate) points (at most 2³¹-1), and StampsPerSale stamps
// when the amount reaches MinimumAmountForStamp and is not zero.
func (p *LoyaltyProgram) Earn(amount Amount) (points, stamps int32) {
	if amount <= 0 {
		return 0, 0
	}
	pts := int64(amount) * int64(p.PointsPerCurrencyUnit) / 10_000 // both in hundredths
	points = int32(min(pts, math.MaxInt32))
	if amount >= p.MinimumAmountForStamp {
		stamps = p.StampsPerSale
	}
	return points, stamps
}

// ReversedPoints is how many of a sale's earned points a refund takes back
// when the sale's refunded total goes from before to after:
// round(earned × refunded / original) for the new total minus the same for
// the old one (halves round up). Computed on the totals, partial refunds
// never take back more than the sale earned and a full refund takes back
// exactly what it earned.
func ReversedPoints(earned int32, original, before, after Amount) int32 {
	if original <= 0 || earned <= 0 {
		return 0
	}
	share := func(refunded Amount) int64 {
		n := new(big.Int).Mul(big.NewInt(2*int64(earned)), big.NewInt(int64(refunded)))
		n.Add(n, big.NewInt(int64(original)))
		return n.Quo(n, big.NewInt(2*int64(original))).Int64()
	}
	return int32(share(after) - share(before))
}

// Transaction is a recorded sale or refund (docs/api.md §13), as operators
// read it. Request is the canonical form of the request that recorded it
// (every field the POS sent, the deprecated ones included) and Answer the
// data answered, which a repeated request gets again.
type Transaction struct {
	ID                    string          `json:"id"`
	POSSystemID           string          `json:"posSystemId"`
	CompanyID             string          `json:"posCompanyId"`
	LocationID            string          `json:"posLocationId"`
	TerminalID            string          `json:"terminalId"`
	TransactionID         string          `json:"transactionId"`
	SessionID             string          `json:"sessionId"`
	Type                  TransactionType `json:"transactionType"`
	Amount                Amount          `json:"transactionAmount"`
	RefundedAmount        Amount          `json:"refundedAmount"`
	Date                  time.Time       `json:"transactionDate"`
	OriginalID            string          `json:"originalId"`
	OriginalTransactionID string          `json:"originalTransactionId"`
	UserID                string          `json:"userId"`
	PointsEarned          int32           `json:"pointsEarned"`
	StampsEarned          int32           `json:"stampsEarned"`
	RedeemedCoupons       []string        `json:"redeemedCoupons"`
	RequestHash           string          `json:"-"`
	Request               json.RawMessage `json:"request"`
	Answer                json.RawMessage `json:"answer"`
	CreatedAt             time.Time       `json:"createdAt"`
}

// IsRefund reports whether t is a refund.
func (t *Transaction) IsRefund() bool { return t.Type == TransactionRefund }

// TransactionTaken is the ECONFLICT of a transaction id that is recorded
// already with other content (docs/api.md §13.1); errors.Is tells it from
// the other conflicts of a transaction.
func TransactionTaken(transactionID string) *Error {
	return Errorf(ECONFLICT, "Transaction '%s' is already recorded with other content.", transactionID)
}

// TransactionAnswer is the data of a transaction's answer (docs/api.md
// §13.1). posgate stores it whole, so that a repeated request gets exactly
// the first answer.
type TransactionAnswer struct {
	ID              *string             `json:"id"`
	TransactionID   string              `json:"transactionId"`
	SessionID       *string             `json:"sessionId"`
	TransactionType TransactionType     `json:"transactionType"`
	PosStatus       PosStatus           `json:"posStatus"`
	Loyalty         *TransactionLoyalty `json:"loyalty"`
	Coupons         []TransactionCoupon `json:"coupons"`
	// Promotions are the promotions the sale applied: its settlement's
	// evaluation (docs/api.md §13.9, §18); [] for a refund.
	Promotions  []AppliedPromotion `json:"promotions"`
	CfsTemplate CfsTemplate        `json:"cfsTemplate"`
	Receipt     TransactionReceipt `json:"receipt"`
	// Settlement is what posgate computed for the sale's priced lines and
	// how it compares with the POS's amount (docs/api.md §13.9); left out
	// for a refund and a sale without priced lines.
	Settlement *TransactionSettlement `json:"settlement,omitempty"`
}

// TransactionLoyalty is what a transaction did to its customer's balances.
type TransactionLoyalty struct {
	UserID       string `json:"userId"`
	PointsEarned int32  `json:"pointsEarned"`
	StampsEarned int32  `json:"stampsEarned"`
	Points       int32  `json:"points"`
	Stamps       int32  `json:"stamps"`
}

// TransactionCoupon is the fate of one coupon code of a sale.
type TransactionCoupon struct {
	Code         string       `json:"code"`
	Status       CouponStatus `json:"status"`
	ErrorMessage *string      `json:"errorMessage"`
	// promotionID is the promotion a redeemed coupon carries (not
	// answered): the sale's settlement evaluates it (docs/api.md §18.3).
	promotionID string
}

// CouponRejected is the status of a coupon that a transaction could not
// redeem (it is not one of the coupon's own statuses).
const CouponRejected CouponStatus = "Rejected"

// CfsTemplate carries the customer-facing screen's carousel URL.
type CfsTemplate struct {
	CfsCarouselURL string `json:"cfsCarouselUrl"`
}

// TransactionReceipt is the receipt promotion of the location with the
// loyalty line to print.
type TransactionReceipt struct {
	PrimaryText   string    `json:"primaryText"`
	SecondaryText string    `json:"secondaryText"`
	ImageURL      string    `json:"imageUrl"`
	PosStatus     PosStatus `json:"posStatus"`
	LoyaltyText   string    `json:"loyaltyText"`
}

// LoyaltyText is the receipt's loyalty line: "+12 points, balance 132".
func LoyaltyText(l *TransactionLoyalty) string {
	if l == nil {
		return ""
	}
	unit := "points"
	if l.PointsEarned == 1 || l.PointsEarned == -1 {
		unit = "point"
	}
	return fmt.Sprintf("%+d %s, balance %d", l.PointsEarned, unit, l.Points)
}

// TransactionInput is one transaction for Store.ApplyTransactions: the
// request, checked and normalised by the service, with the parts of its
// answer that need no database transaction (carousel URL, receipt).
type TransactionInput struct {
	// Row is the 1-based position in a batch (1 for a single request);
	// ties of Date apply in Row order.
	Row int
	// ID is the posgate id the transaction gets if it is recorded.
	ID            string
	POSSystemID   string
	CompanyID     string
	LocationID    string
	TerminalID    string
	TransactionID string
	SessionID     string
	// Type is Sale, Undefined or Refund; Amount is negative for a refund.
	Type                  TransactionType
	Amount                Amount
	Date                  time.Time
	OriginalTransactionID string
	// The customer: a card number (a loyalty user id), else the first
	// e-mail, else the first phone; names for an enrolment.
	CardNumber, Email, Phone, FirstName, LastName string
	// EnrollID is the id of a user enrolled without a card number.
	EnrollID       string
	CouponCodes    []string
	CouponsEnabled bool
	// RequestHash identifies the request's content (idempotency) and
	// Request is its canonical form, stored.
	RequestHash string
	Request     json.RawMessage
	// Answer holds the answer's parts known beforehand.
	Answer TransactionAnswer
	// Settle, for a sale with priced lines, evaluates its promotions in
	// the ledger (docs/api.md §13.9); nil for none.
	Settle *SaleSettlement
	// Reject, when set, is why the item is refused before the store sees
	// it (a batch item that failed validation).
	Reject error
	// Offline, when set, is the offline allowance the sale redeemed its
	// coupons under (docs/api.md §24.5), checked by the service.
	Offline *OfflineClaim
}

// Outcome statuses of an applied transaction (docs/api.md §13.6).
const (
	OutcomeCreated   = "Created"
	OutcomeDuplicate = "Duplicate"
	OutcomeRejected  = "Rejected"
)

// TransactionOutcome is what became of one TransactionInput: Created with
// its answer, Duplicate with the first answer of the same request, or
// Rejected with Err (an *Error whose code says why: ECONFLICT, ENOTFOUND,
// EINVALID).
type TransactionOutcome struct {
	Row    int
	Status string
	Answer json.RawMessage
	Err    error
}

// TransactionQuery selects a company's transactions for operators, newest
// first by transaction date.
type TransactionQuery struct {
	POSSystemID, CompanyID string
	// LocationID and UserID, when not empty, keep that location's or that
	// loyalty user's transactions; Day, when not zero, those dated on that
	// UTC day.
	LocationID, UserID string
	Day                time.Time
	Offset, Limit      int
}

// DayBounds returns the instants Day's transactions are dated from
// (included) and to (excluded): its UTC day; ok is false when Day is zero.
func (q TransactionQuery) DayBounds() (from, to time.Time, ok bool) {
	if q.Day.IsZero() {
		return time.Time{}, time.Time{}, false
	}
	from = q.Day.UTC().Truncate(24 * time.Hour)
	return from, from.Add(24 * time.Hour), true
}

// CouponRedemption names the transaction that redeemed a coupon.
type CouponRedemption struct {
	ID            string    `json:"id"`
	TransactionID string    `json:"transactionId"`
	RedeemedAt    time.Time `json:"redeemedAt"`
}

// TransactionStore holds loyalty programs and transactions (docs/api.md
// §13).
type TransactionStore interface {
	// FindLoyaltyProgram returns a company's program; ENOTFOUND when the
	// operator set none (DefaultLoyaltyProgram applies).
	FindLoyaltyProgram(ctx context.Context, posSystemID, companyID string) (*LoyaltyProgram, error)
	// PutLoyaltyProgram sets a company's program (Validate it first) and
	// its UpdatedAt.
	PutLoyaltyProgram(ctx context.Context, p *LoyaltyProgram) error
	// ApplyTransactions records items in one database transaction, each
	// through ApplyTransaction, in Date order (ties by Row), and returns
	// their outcomes in the order of items. Rejected items leave no trace;
	// the others are committed together or, on any error, not at all.
	ApplyTransactions(ctx context.Context, items []*TransactionInput) ([]*TransactionOutcome, error)
	// FindTransaction returns the company's transaction with the POS's
	// transaction id.
	FindTransaction(ctx context.Context, posSystemID, companyID, transactionID string) (*Transaction, error)
	// FindTransactionBySession returns the transaction a session is linked
	// to.
	FindTransactionBySession(ctx context.Context, sessionID string) (*Transaction, error)
	// ListTransactions returns one page of q's transactions and their total.
	ListTransactions(ctx context.Context, q TransactionQuery) ([]*Transaction, int, error)
	// FindCouponRedemption returns the transaction whose redemption of the
	// coupon stands (ENOTFOUND when none: not redeemed, redeemed by an
	// operator, or given back by a refund).
	FindCouponRedemption(ctx context.Context, posSystemID, companyID, code string) (*CouponRedemption, error)
	// RedeemCouponForTransaction redeems a coupon for a recorded
	// transaction (the validation by transaction, docs/api.md §13.5) with
	// the checks of a sale's coupons; owner, when not nil, must be the
	// coupon's owner. It answers the coupon's fate, Redeemed also when
	// that transaction redeemed it before, with the time it did.
	RedeemCouponForTransaction(ctx context.Context, t *Transaction, code string, owner *CouponOwner, locationID string) (*TransactionCoupon, time.Time, error)
}

// SessionCheck is the rule a transaction's session must pass (the
// service's): s is the session read, err the read's error (ENOTFOUND for
// none). A non-nil result refuses the transaction; nothing is recorded.
type SessionCheck func(s *Session, err error) error

// SessionReadingApplier is a store that reads a transaction's session in
// the transaction that records it, with its first statements, instead of
// in a read of its own before (PostgreSQL's: one round trip fewer per
// sale). It applies in as ApplyTransactions applies one item, after check
// has accepted the session in.SessionID; check's error is returned as it
// is, and nothing is recorded. The wrappers of a store (its cache, its
// metrics) forward it through ApplyCheckingSession.
type SessionReadingApplier interface {
	ApplyCheckingSession(ctx context.Context, in *TransactionInput, check SessionCheck) (*TransactionOutcome, error)
}

// ApplyCheckingSession records in on st once check has accepted its
// session: in st's transaction when st is a SessionReadingApplier, else
// read first with FindSession, as the same rule. A nil check (no session
// to check) records in as it is.
func ApplyCheckingSession(ctx context.Context, st Store, in *TransactionInput, check SessionCheck) (*TransactionOutcome, error) {
	if check != nil {
		if a, ok := st.(SessionReadingApplier); ok {
			return a.ApplyCheckingSession(ctx, in, check)
		}
		if err := check(st.FindSession(ctx, in.SessionID)); err != nil {
			return nil, err
		}
	}
	out, err := st.ApplyTransactions(ctx, []*TransactionInput{in})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// CouponOwner is who claims a coupon in a validation by transaction.
type CouponOwner struct {
	FirstName, LastName, Email, Phone string
}
