package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/encode"
)

// The operator's loyalty-program and transaction use cases (docs/api.md
// §13.8), under a company p must reach.

// FindLoyaltyProgram returns a company's loyalty program: the operator's,
// or the defaults (updatedAt null) when none is set.
func (s *Service) FindLoyaltyProgram(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) (*posgate.LoyaltyProgram, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	return s.loyaltyProgram(ctx, posSystemID, companyID)
}

// loyaltyProgram is the company's loyalty program in force
// (posgate.ProgramInForce): the operator's, or the defaults.
func (s *Service) loyaltyProgram(ctx context.Context, posSystemID, companyID string) (*posgate.LoyaltyProgram, error) {
	lp, err := s.store.FindLoyaltyProgram(ctx, posSystemID, companyID)
	return posgate.ProgramInForce(posSystemID, companyID, lp, err)
}

// PutLoyaltyProgramRequest sets a company's loyalty program whole; a field
// left out takes its default (docs/api.md §13.2).
type PutLoyaltyProgramRequest struct {
	PointsPerCurrencyUnit *posgate.Amount `json:"pointsPerCurrencyUnit"`
	StampsPerSale         *int32          `json:"stampsPerSale"`
	MinimumAmountForStamp *posgate.Amount `json:"minimumAmountForStamp"`
	AutoEnroll            *bool           `json:"autoEnroll"`
}

func (q *PutLoyaltyProgramRequest) program(posSystemID, companyID string) *posgate.LoyaltyProgram {
	lp := posgate.DefaultLoyaltyProgram(posSystemID, companyID)
	if q.PointsPerCurrencyUnit != nil {
		lp.PointsPerCurrencyUnit = *q.PointsPerCurrencyUnit
	}
	if q.StampsPerSale != nil {
		lp.StampsPerSale = *q.StampsPerSale
	}
	if q.MinimumAmountForStamp != nil {
		lp.MinimumAmountForStamp = *q.MinimumAmountForStamp
	}
	if q.AutoEnroll != nil {
		lp.AutoEnroll = *q.AutoEnroll
	}
	return lp
}

// Validate checks the values as the domain does.
func (q *PutLoyaltyProgramRequest) Validate() error {
	return q.program("-", "-").Validate()
}

// PutLoyaltyProgram sets a company's loyalty program.
func (s *Service) PutLoyaltyProgram(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *PutLoyaltyProgramRequest) (*posgate.LoyaltyProgram, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	lp := req.program(posSystemID, companyID)
	err := s.audited(ctx, p, "loyalty-program.update", func(ctx context.Context, c *change) error {
		before, err := s.store.FindLoyaltyProgram(ctx, posSystemID, companyID)
		if err == nil {
			c.before = before
		} else if posgate.ErrorCode(err) != posgate.ENOTFOUND {
			return err
		}
		c.target, c.after = companyTarget("loyalty-program", companyID, posSystemID, companyID), lp
		return s.store.PutLoyaltyProgram(ctx, lp)
	})
	if err != nil {
		return nil, err
	}
	return lp, nil
}

// Paging of the operator's transaction list.
const (
	DefaultTransactionPageSize = 50
	MaxTransactionPageSize     = 500
)

// ListTransactionsRequest filters a company's transactions: by location,
// customer (loyalty user id) and UTC day (YYYY-MM-DD), a page at a time.
type ListTransactionsRequest struct {
	PosLocationID string
	UserID        string
	Day           string
	Page          *int
	PageSize      *int

	day time.Time
}

// Validate checks the paging and the day.
func (q *ListTransactionsRequest) Validate() error {
	v := posgate.ValidationError{}
	checkRange(v, "page", q.Page, 1, MaxCouponPage)
	checkRange(v, "pageSize", q.PageSize, 1, MaxTransactionPageSize)
	if q.Day != "" {
		d, err := time.Parse(time.DateOnly, q.Day)
		if err != nil {
			v.Add("day", "The day parameter must be a date (YYYY-MM-DD).")
		}
		q.day = d
	}
	return v.Err()
}

// TransactionPage is one page of a company's transactions.
type TransactionPage struct {
	Transactions []*posgate.Transaction `json:"transactions"`
	Page         PageModel              `json:"page"`
}

// ListTransactions pages a company's transactions, newest first.
func (s *Service) ListTransactions(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *ListTransactionsRequest) (*TransactionPage, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	page, size := intOr(req.Page, 1), intOr(req.PageSize, DefaultTransactionPageSize)
	list, total, err := s.store.ListTransactions(ctx, posgate.TransactionQuery{POSSystemID: posSystemID, CompanyID: companyID,
		LocationID: req.PosLocationID, UserID: req.UserID, Day: req.day, Offset: (page - 1) * size, Limit: size})
	if err != nil {
		return nil, err
	}
	return &TransactionPage{Transactions: nonNil(list), Page: PageModel{Page: page, PageSize: size, Total: total}}, nil
}

// FindTransaction returns a company's transaction by the POS's id.
func (s *Service) FindTransaction(ctx context.Context, p *posgate.Principal, posSystemID, companyID, transactionID string) (*posgate.Transaction, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	return s.store.FindTransaction(ctx, posSystemID, companyID, transactionID)
}

// OperatorRefundRequest is an operator's refund of a sale: its own
// transaction id, the amount (default: what is left of the sale) and date
// (default: now).
type OperatorRefundRequest struct {
	TransactionID   *string         `json:"transactionId"`
	Amount          *posgate.Amount `json:"amount"`
	TransactionDate *time.Time      `json:"transactionDate"`
}

// Validate requires the refund's id and a positive amount when given.
func (q *OperatorRefundRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "transactionId", q.TransactionID)
	if q.TransactionID != nil && *q.TransactionID != "" && !posgate.ValidKey(*q.TransactionID) {
		v.Add("transactionId", fmt.Sprintf("The transactionId field must be 1-%d printable characters without '/', '\\', '?', '#', '%%' or surrounding spaces.", posgate.MaxKeyLen))
	}
	if q.Amount != nil && (*q.Amount <= 0 || *q.Amount > posgate.MaxAmount) {
		v.Add("amount", fmt.Sprintf("The amount field must be a number above 0 and at most %s.", posgate.MaxAmount))
	}
	return v.Err()
}

// RefundTransaction refunds (part of) a sale of a company p reaches, as
// the POS would (docs/api.md §13.8): at the sale's location and terminal,
// through the same ledger, idempotent by the refund's transactionId. It
// answers the refund's data.
func (s *Service) RefundTransaction(ctx context.Context, p *posgate.Principal, posSystemID, companyID, saleID string, req *OperatorRefundRequest) (*TransactionResult, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	sale, err := s.store.FindTransaction(ctx, posSystemID, companyID, saleID)
	if err != nil {
		return nil, err
	}
	// The same refund again is its first answer: the operator's request is
	// the content (its defaults, the rest of the sale and now, change).
	b, _ := encode.JSON(struct {
		Sale   string          `json:"sale"`
		Refund string          `json:"transactionId"`
		Amount *posgate.Amount `json:"amount"`
		Date   *time.Time      `json:"transactionDate"`
	}{saleID, *req.TransactionID, req.Amount, req.TransactionDate})
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	if prev, err := s.store.FindTransaction(ctx, posSystemID, companyID, *req.TransactionID); err == nil {
		if prev.RequestHash != hash {
			return nil, s.sandboxHint(posgate.TransactionTaken(*req.TransactionID), *req.TransactionID)
		}
		return &TransactionResult{Data: prev.Answer, Replayed: true}, nil
	} else if posgate.ErrorCode(err) != posgate.ENOTFOUND {
		return nil, err
	}
	if sale.IsRefund() {
		return nil, invalid("transactionId", fmt.Sprintf("Transaction '%s' is a refund; only a sale can be refunded.", saleID))
	}
	amount := sale.Amount - sale.RefundedAmount
	if req.Amount != nil {
		amount = *req.Amount
	}
	if amount <= 0 {
		return nil, posgate.Errorf(posgate.ECONFLICT, "Sale '%s' is refunded in full already.", saleID)
	}
	date := s.now()
	if req.TransactionDate != nil {
		date = *req.TransactionDate
	}
	refund, neg := posgate.SignTransaction(posgate.TransactionRefund, amount)
	kind := string(refund)
	pr := &TransactionRequest{TransactionID: req.TransactionID, TerminalID: &sale.TerminalID, PosLocationID: &sale.LocationID,
		TransactionType: &kind, TransactionAmount: &neg, TransactionDate: &date, OriginalTransactionID: &sale.TransactionID}
	v := posgate.ValidationError{}
	pr.validate(v)
	checkDate(v, date, s.now(), s.cfg.TransactionMaxAge)
	if err := v.Err(); err != nil {
		return nil, err
	}
	loc, err := s.store.FindLocation(ctx, posSystemID, sale.LocationID)
	if err != nil {
		return nil, err
	}
	// The answer is the POS's refund answer: the receipt promotion to print
	// and the carousel of the sale's terminal (none when it is no longer
	// registered).
	receipt, err := s.receiptFor(ctx, posSystemID, loc)
	if err != nil {
		return nil, err
	}
	var cfs string
	if term, err := s.store.FindTerminal(ctx, posSystemID, loc.ID, sale.TerminalID); err == nil {
		if cfs, err = s.carouselURLFor(ctx, posSystemID, loc, term); err != nil {
			return nil, err
		}
	} else if posgate.ErrorCode(err) != posgate.ENOTFOUND {
		return nil, err
	}
	request, _ := pr.canonical()
	in := &posgate.TransactionInput{Row: 1, ID: newTimeOrderedUUID(), POSSystemID: posSystemID, CompanyID: companyID, LocationID: sale.LocationID,
		TerminalID: sale.TerminalID, TransactionID: *req.TransactionID, Type: posgate.TransactionRefund, Amount: neg, Date: date,
		OriginalTransactionID: sale.TransactionID, RequestHash: hash, Request: request,
		Answer: posgate.TransactionAnswer{TransactionID: *req.TransactionID, TransactionType: posgate.TransactionRefund, PosStatus: posgate.PosAccepted,
			Coupons: []posgate.TransactionCoupon{}, Promotions: []posgate.AppliedPromotion{}, CfsTemplate: posgate.CfsTemplate{CfsCarouselURL: cfs},
			Receipt: posgate.TransactionReceipt{PrimaryText: receipt.PrimaryText, SecondaryText: receipt.SecondaryText,
				ImageURL: receipt.ImageURL, PosStatus: receipt.PosStatus}}}
	var o *posgate.TransactionOutcome
	err = s.audited(ctx, p, "transaction.refund", func(ctx context.Context, c *change) error {
		out, err := s.store.ApplyTransactions(ctx, []*posgate.TransactionInput{in})
		if err != nil {
			return err
		}
		if o = out[0]; o.Status == posgate.OutcomeRejected {
			return o.Err
		}
		// A duplicate changed nothing: another request recorded it first.
		c.skip = o.Status == posgate.OutcomeDuplicate
		c.target, c.before, c.after = locationTarget("transaction", *req.TransactionID, posSystemID, companyID, sale.LocationID), nil, o.Answer
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &TransactionResult{Data: o.Answer, Replayed: o.Status == posgate.OutcomeDuplicate}, nil
}

// RecentTransactionCount is how many of a loyalty user's latest
// transactions the operator's view of the user lists.
const RecentTransactionCount = 5

// TransactionSummary is a transaction as a loyalty user's view lists it.
type TransactionSummary struct {
	ID              string                  `json:"id"`
	TransactionID   string                  `json:"transactionId"`
	TransactionType posgate.TransactionType `json:"transactionType"`
	Amount          posgate.Amount          `json:"transactionAmount"`
	Date            time.Time               `json:"transactionDate"`
	PointsEarned    int32                   `json:"pointsEarned"`
	StampsEarned    int32                   `json:"stampsEarned"`
}

// LoyaltyUserView is a loyalty user as operators see it: its fields and
// its latest transactions (left out when it has none).
type LoyaltyUserView struct {
	*posgate.LoyaltyUser
	RecentTransactions []TransactionSummary `json:"recentTransactions,omitempty"`
}

// recentTransactions lists a user's latest transactions.
func (s *Service) recentTransactions(ctx context.Context, u *posgate.LoyaltyUser) ([]TransactionSummary, error) {
	list, _, err := s.store.ListTransactions(ctx, posgate.TransactionQuery{POSSystemID: u.POSSystemID, CompanyID: u.CompanyID,
		UserID: u.ID, Limit: RecentTransactionCount})
	if err != nil {
		return nil, err
	}
	out := make([]TransactionSummary, 0, len(list))
	for _, t := range list {
		out = append(out, TransactionSummary{ID: t.ID, TransactionID: t.TransactionID, TransactionType: t.Type, Amount: t.Amount,
			Date: t.Date, PointsEarned: t.PointsEarned, StampsEarned: t.StampsEarned})
	}
	return out, nil
}
