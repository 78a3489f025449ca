package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/encode"
)

// The transaction use cases (docs/api.md §13): a sale or refund submitted
// after an interaction, the offline replay of many, and the coupon
// validated against a recorded transaction.

// Limits of a transaction request (docs/api.md §13.1).
const (
	// DefaultTransactionMaxAge is how old a transactionDate may be
	// (--transaction-max-age).
	DefaultTransactionMaxAge = 30 * 24 * time.Hour
	// TransactionFutureSkew is how far in the future a transactionDate may
	// be: tills' clocks drift.
	TransactionFutureSkew = 5 * time.Minute
	MaxCouponCodes        = 50
	MaxProducts           = 1000
	MaxContacts           = 20
	maxTransactionText    = 500
	maxQuantity           = 1_000_000
)

// TransactionRequest is the body of POST /pos/{posSystemId}/transaction: the
// real service's "Create POS Transaction", exactly its names, with
// posgate's originalTransactionId, couponCodes and a product's price
// (docs/api.md §13.1). Unknown properties are ignored.
type TransactionRequest struct {
	SessionID         *string              `json:"sessionId"`
	TransactionID     *string              `json:"transactionId"`
	TerminalID        *string              `json:"terminalId"`
	PosLocationID     *string              `json:"posLocationId"`
	Customer          *TransactionCustomer `json:"customer"`
	SalesPerson       *SalesPerson         `json:"salesPerson"`
	PurchaseName      *string              `json:"purchaseName"`
	PurchaseID        *string              `json:"purchaseId"`
	PurchaseQuantity  *string              `json:"purchaseQuantity"`
	PurchasePrice     *string              `json:"purchasePrice"`
	TransactionType   *string              `json:"transactionType"`
	TransactionAmount *posgate.Amount      `json:"transactionAmount"`
	TransactionDate   *time.Time           `json:"transactionDate"`
	Products          []TransactionProduct `json:"products"`
	Loyalty           *LoyaltyCardRef      `json:"loyalty"`
	// posgate's additions.
	OriginalTransactionID *string  `json:"originalTransactionId"`
	CouponCodes           []string `json:"couponCodes"`
	// Offline names the offline kit a sale made offline redeemed its
	// coupons under (docs/api.md §24.5); left out of the canonical form
	// when absent.
	Offline *OfflineRef `json:"offline,omitempty"`
}

// OfflineRef is a sale's offline kit: the kit's jti.
type OfflineRef struct {
	KitID *string `json:"kitId"`
}

// TransactionCustomer is the customer of a transaction. contacts takes
// either shape: {"email","phone"} or the guide's {"type","value"}.
type TransactionCustomer struct {
	ID        *string              `json:"id"`
	FirstName *string              `json:"firstName"`
	LastName  *string              `json:"lastName"`
	BirthDate *time.Time           `json:"birthDate"`
	Contacts  []TransactionContact `json:"contacts"`
}

// TransactionContact is one contact of a customer, in either shape.
type TransactionContact struct {
	Email *string `json:"email"`
	Phone *string `json:"phone"`
	Type  *string `json:"type"`
	Value *string `json:"value"`
}

// SalesPerson is who made the sale; stored, otherwise unused.
type SalesPerson struct {
	ID        *string `json:"id"`
	FirstName *string `json:"firstName"`
	LastName  *string `json:"lastName"`
}

// TransactionProduct is one line of a transaction: stored, and, with an id
// and a price, matched against the company's promotions (the answer's
// promotions).
type TransactionProduct struct {
	ProductID       *string         `json:"productId"`
	ProductName     *string         `json:"productName"`
	Manufacturer    *string         `json:"manufacturer"`
	ProductCategory *string         `json:"productCategory"`
	Quantity        *float64        `json:"quantity"`
	Price           *posgate.Amount `json:"price"`
}

// LoyaltyCardRef is the loyalty card a customer presented.
type LoyaltyCardRef struct {
	CardNumber *string `json:"cardNumber"`
}

// isRefund reports whether the request is a refund (posgate.SignTransaction).
func (q *TransactionRequest) isRefund() bool {
	return q.kind() == posgate.TransactionRefund
}

// kind is the request's transaction type (posgate.SignTransaction): Refund
// for a refund, else the type given (Undefined when none).
func (q *TransactionRequest) kind() posgate.TransactionType {
	kind, _ := q.signed()
	return kind
}

// signed is the request's type and its amount as recorded, negative for a
// refund (posgate.SignTransaction); the amount is 0 when none is given.
func (q *TransactionRequest) signed() (posgate.TransactionType, posgate.Amount) {
	var amount posgate.Amount
	if q.TransactionAmount != nil {
		amount = *q.TransactionAmount
	}
	return posgate.SignTransaction(posgate.TransactionType(value(q.TransactionType)), amount)
}

// Validate checks the request's fields; the transactionDate's window is
// checked against the clock by the use case (checkDate).
func (q *TransactionRequest) Validate() error {
	v := posgate.ValidationError{}
	q.validate(v)
	return v.Err()
}

func (q *TransactionRequest) validate(v posgate.ValidationError) {
	key := func(field string, s *string) {
		if s == nil || *s == "" {
			v.Add(field, "The "+field+" field is required.")
		} else if !posgate.ValidKey(*s) {
			v.Add(field, fmt.Sprintf("The %s field must be 1-%d printable characters without '/', '\\', '?', '#', '%%' or surrounding spaces.", field, posgate.MaxKeyLen))
		}
	}
	text := func(field string, s *string, maxLen int) {
		if s != nil && (len(*s) > maxLen || !utf8.ValidString(*s)) {
			v.Add(field, fmt.Sprintf("The %s field must be text of at most %d bytes.", field, maxLen))
		}
	}
	refund := q.isRefund()
	key("transactionId", q.TransactionID)
	required(v, "terminalId", q.TerminalID)
	required(v, "posLocationId", q.PosLocationID)
	if !refund || given(q.SessionID) {
		required(v, "sessionId", q.SessionID)
	}
	text("sessionId", q.SessionID, posgate.MaxKeyLen)
	if t := value(q.TransactionType); t != "" && !posgate.TransactionType(t).Valid() {
		v.Add("transactionType", "The transactionType field must be Undefined, Sale or Refund.")
	}
	switch {
	case q.TransactionAmount == nil:
		v.Add("transactionAmount", "The transactionAmount field is required.")
	case q.TransactionAmount.Abs() > posgate.MaxAmount:
		v.Add("transactionAmount", fmt.Sprintf("The transactionAmount field must be a number from -%s to %s.", posgate.MaxAmount, posgate.MaxAmount))
	case refund && *q.TransactionAmount == 0:
		v.Add("transactionAmount", "A refund's transactionAmount must not be 0.")
	}
	if q.TransactionDate == nil {
		v.Add("transactionDate", "The transactionDate field is required.")
	}
	if refund {
		if !given(q.OriginalTransactionID) {
			v.Add("originalTransactionId", "The originalTransactionId field is required for a refund.")
		}
		if len(q.CouponCodes) > 0 {
			v.Add("couponCodes", "A refund cannot redeem coupons.")
		}
	} else if given(q.OriginalTransactionID) {
		v.Add("originalTransactionId", "The originalTransactionId field is only for a refund (transactionType Refund or a negative transactionAmount).")
	}
	text("originalTransactionId", q.OriginalTransactionID, posgate.MaxKeyLen)
	if q.Offline != nil {
		key("offline.kitId", q.Offline.KitID)
	}
	if len(q.CouponCodes) > MaxCouponCodes {
		v.Add("couponCodes", fmt.Sprintf("A transaction may redeem at most %d coupons.", MaxCouponCodes))
	}
	for i, c := range q.CouponCodes {
		if c == "" || len(c) > posgate.MaxKeyLen || !utf8.ValidString(c) {
			v.Add(fmt.Sprintf("couponCodes[%d]", i), fmt.Sprintf("A coupon code must be 1-%d bytes of text.", posgate.MaxKeyLen))
		}
	}
	for _, f := range []struct {
		name string
		s    *string
	}{{"purchaseName", q.PurchaseName}, {"purchaseId", q.PurchaseID}, {"purchaseQuantity", q.PurchaseQuantity}, {"purchasePrice", q.PurchasePrice}} {
		text(f.name, f.s, maxTransactionText)
	}
	q.Customer.validate(v)
	if sp := q.SalesPerson; sp != nil {
		text("salesPerson.id", sp.ID, maxTransactionText)
		text("salesPerson.firstName", sp.FirstName, posgate.MaxTextLen)
		text("salesPerson.lastName", sp.LastName, posgate.MaxTextLen)
	}
	if q.Loyalty != nil {
		text("loyalty.cardNumber", q.Loyalty.CardNumber, posgate.MaxKeyLen)
	}
	if len(q.Products) > MaxProducts {
		v.Add("products", fmt.Sprintf("A transaction may have at most %d products.", MaxProducts))
	}
	for i, p := range q.Products {
		f := fmt.Sprintf("products[%d]", i)
		text(f+".productId", p.ProductID, maxTransactionText)
		text(f+".productName", p.ProductName, maxTransactionText)
		text(f+".manufacturer", p.Manufacturer, maxTransactionText)
		text(f+".productCategory", p.ProductCategory, maxTransactionText)
		if value(p.ProductID) == "" && value(p.ProductName) == "" {
			v.Add(f, "A product line needs a productId or a productName.")
		}
		switch {
		case p.Quantity != nil && (math.IsNaN(*p.Quantity) || math.Abs(*p.Quantity) > maxQuantity):
			v.Add(f+".quantity", fmt.Sprintf("The quantity field must be a number from -%d to %d.", maxQuantity, maxQuantity))
		case p.Quantity != nil && !refund && *p.Quantity <= 0:
			v.Add(f+".quantity", "A sale's quantity must be greater than 0 (a negative quantity is a refund's).")
		}
		switch {
		case p.Price != nil && *p.Price < 0:
			v.Add(f+".price", "The price field must not be negative (it is the price of one unit; a refund's lines say so by their quantity).")
		case p.Price != nil && *p.Price > posgate.MaxAmount:
			v.Add(f+".price", fmt.Sprintf("The price field must be a number from 0 to %s.", posgate.MaxAmount))
		}
	}
}

// checkDate refuses a transactionDate more than TransactionFutureSkew
// ahead of now or older than maxAge.
func checkDate(v posgate.ValidationError, d time.Time, now time.Time, maxAge time.Duration) {
	switch {
	case d.After(now.Add(TransactionFutureSkew)):
		v.Add("transactionDate", "The transactionDate field must not be more than 5 minutes in the future.")
	case d.Before(now.Add(-maxAge)):
		v.Add("transactionDate", fmt.Sprintf("The transactionDate field must not be older than %s.", ageText(maxAge)))
	}
}

// ageText says a maximum age the way an integrator reads it: "30 days".
func ageText(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if days := d / (24 * time.Hour); days == 1 {
			return "1 day"
		} else {
			return fmt.Sprintf("%d days", days)
		}
	}
	return d.String()
}

// identifiers returns the customer's card number, first e-mail and first
// phone (contacts in either shape) and names.
func (q *TransactionRequest) identifiers() (card, email, phone, first, last string) {
	if q.Loyalty != nil {
		card = value(q.Loyalty.CardNumber)
	}
	c := q.Customer
	if c == nil {
		return card, "", "", "", ""
	}
	email, phone = c.contacts()
	return card, email, phone, value(c.FirstName), value(c.LastName)
}

// validate checks a customer's fields (none for a nil customer), in a
// transaction and in an evaluation.
func (c *TransactionCustomer) validate(v posgate.ValidationError) {
	if c == nil {
		return
	}
	text := func(field string, s *string, maxLen int) {
		if s != nil && (len(*s) > maxLen || !utf8.ValidString(*s)) {
			v.Add(field, fmt.Sprintf("The %s field must be text of at most %d bytes.", field, maxLen))
		}
	}
	text("customer.id", c.ID, maxTransactionText)
	text("customer.firstName", c.FirstName, posgate.MaxTextLen)
	text("customer.lastName", c.LastName, posgate.MaxTextLen)
	if len(c.Contacts) > MaxContacts {
		v.Add("customer.contacts", fmt.Sprintf("A customer may have at most %d contacts.", MaxContacts))
	}
	for i, ct := range c.Contacts {
		p := fmt.Sprintf("customer.contacts[%d]", i)
		text(p+".email", ct.Email, posgate.MaxEmailLen)
		text(p+".phone", ct.Phone, posgate.MaxEmailLen)
		text(p+".value", ct.Value, posgate.MaxEmailLen)
		if t := value(ct.Type); t != "" && t != "Email" && t != "Phone" {
			v.Add(p+".type", "The type field must be Email or Phone.")
		}
	}
}

// contacts are the customer's first e-mail and first phone (either shape
// of contact); none for a nil customer.
func (c *TransactionCustomer) contacts() (email, phone string) {
	if c == nil {
		return "", ""
	}
	for _, ct := range c.Contacts {
		e, p := value(ct.Email), value(ct.Phone)
		switch value(ct.Type) {
		case "Email":
			e = value(ct.Value)
		case "Phone":
			p = value(ct.Value)
		}
		if email == "" && posgate.FoldEmail(e) != "" {
			email = e
		}
		if phone == "" && posgate.PhoneDigits(p) != "" {
			phone = p
		}
	}
	return email, phone
}

// canonical returns the request's content in one form: a null, an empty
// string and an absent optional string are alike, as are an empty and an
// absent list, and amounts and times are written one way (two decimals,
// UTC RFC 3339). Its SHA-256 is the "same content" of idempotency
// (docs/api.md §13.7): the same request sent as JSON or XML, with its
// properties in any order, has one canonical form.
func (q *TransactionRequest) canonical() ([]byte, string) {
	c := *q
	norm := func(s *string) *string {
		if s == nil || *s == "" {
			return nil
		}
		return s
	}
	for _, p := range []**string{&c.SessionID, &c.PurchaseName, &c.PurchaseID, &c.PurchaseQuantity, &c.PurchasePrice, &c.TransactionType, &c.OriginalTransactionID} {
		*p = norm(*p)
	}
	if len(c.Products) == 0 {
		c.Products = nil
	}
	if len(c.CouponCodes) == 0 {
		c.CouponCodes = nil
	}
	if c.TransactionDate != nil {
		d := posgate.Timestamp(*c.TransactionDate)
		c.TransactionDate = &d
	}
	if c.Customer != nil {
		cust := *c.Customer
		if len(cust.Contacts) == 0 {
			cust.Contacts = nil
		}
		c.Customer = &cust
	}
	b, _ := encode.JSON(&c) // only strings, numbers and times: cannot fail
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// TransactionResult is the answer of a submitted transaction: its data
// (stored, so that a repeated request gets exactly the first answer) and
// whether this is such a repetition (Idempotent-Replayed).
type TransactionResult struct {
	Data     json.RawMessage
	Replayed bool
}

// RecordTransaction records a sale or refund (docs/api.md §13.1). A place
// that is disabled or has transactions switched off answers posStatus
// Disabled and records nothing. The same transactionId again with the same
// content answers the first answer (Replayed); with other content, or a
// session already linked to another transaction, or a refund beyond its
// sale, ECONFLICT.
func (s *Service) RecordTransaction(ctx context.Context, p *posgate.Principal, posSystemID string, req *TransactionRequest) (*TransactionResult, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	in, disabled, check, err := s.prepareTransaction(ctx, p, posSystemID, req, 1, false)
	if err != nil {
		return nil, err
	}
	if disabled != nil {
		b, err := encode.JSON(disabled)
		return &TransactionResult{Data: b}, err
	}
	o, err := posgate.ApplyCheckingSession(ctx, s.store, in, check)
	if err != nil {
		return nil, err
	}
	switch o.Status {
	case posgate.OutcomeRejected:
		return nil, s.sandboxHint(o.Err, in.TransactionID)
	default:
		return &TransactionResult{Data: o.Answer, Replayed: o.Status == posgate.OutcomeDuplicate}, nil
	}
}

// disabledAnswer is the answer for a place that records no transaction.
func disabledAnswer(req *TransactionRequest) *posgate.TransactionAnswer {
	var session *string
	if given(req.SessionID) {
		session = req.SessionID
	}
	return &posgate.TransactionAnswer{TransactionID: value(req.TransactionID), SessionID: session, TransactionType: req.kind(),
		PosStatus: posgate.PosDisabled, Coupons: []posgate.TransactionCoupon{}, Promotions: []posgate.AppliedPromotion{},
		Receipt: posgate.TransactionReceipt{PosStatus: posgate.PosDisabled}}
}

// prepareTransaction validates a request and resolves its place and
// session into the store's input; for a disabled place it returns the
// Disabled answer instead. In a batch (docs/api.md §13.6) the session is
// optional and its expiry is not checked: offline sales arrive late.
// A single transaction's session is checked by the store, in the
// transaction that records it (posgate.ApplyCheckingSession), with the
// check returned: nothing between here and there can refuse the request
// but the store's own failures, so the refusals come in the same order.
// An offline sale's session is checked here, before its offline claim.
func (s *Service) prepareTransaction(ctx context.Context, p *posgate.Principal, posSystemID string, req *TransactionRequest, row int, batch bool) (*posgate.TransactionInput, *posgate.TransactionAnswer, posgate.SessionCheck, error) {
	v := posgate.ValidationError{}
	req.validate(v)
	if batch && !given(req.SessionID) {
		delete(v, "sessionId")
	}
	now := s.now()
	if req.TransactionDate != nil {
		checkDate(v, *req.TransactionDate, now, s.cfg.TransactionMaxAge)
	}
	if err := v.Err(); err != nil {
		return nil, nil, nil, err
	}
	loc, term, status, err := s.posTerminal(ctx, p, posSystemID, *req.PosLocationID, *req.TerminalID, posgate.FeatureTransactions)
	if err != nil {
		return nil, nil, nil, err
	}
	if status != posgate.PosAccepted {
		return nil, disabledAnswer(req), nil, nil
	}
	sessionID := value(req.SessionID)
	var check posgate.SessionCheck
	if sessionID != "" {
		check = sessionRule(posSystemID, sessionID, loc, term, now, batch)
		if batch || req.Offline != nil {
			if err := check(s.store.FindSession(ctx, sessionID)); err != nil {
				return nil, nil, nil, err
			}
			check = nil
		}
	}
	cfs, err := s.carouselURLFor(ctx, posSystemID, loc, term)
	if err != nil {
		return nil, nil, nil, err
	}
	receipt, err := s.receiptFor(ctx, posSystemID, loc)
	if err != nil {
		return nil, nil, nil, err
	}
	var settle *posgate.SaleSettlement
	if req.kind() != posgate.TransactionRefund {
		if settle, err = s.saleSettlement(ctx, loc, *req.TransactionDate, req.Products); err != nil {
			return nil, nil, nil, err
		}
	}
	request, hash := req.canonical()
	card, email, phone, first, last := req.identifiers()
	var session *string
	if sessionID != "" {
		session = &sessionID
	}
	kind, amount := req.signed()
	in := &posgate.TransactionInput{
		Row: row, ID: newTimeOrderedUUID(), POSSystemID: posSystemID, CompanyID: loc.CompanyID, LocationID: loc.ID, TerminalID: term.ID,
		TransactionID: *req.TransactionID, SessionID: sessionID, Type: kind, Amount: amount, Date: *req.TransactionDate,
		OriginalTransactionID: value(req.OriginalTransactionID),
		CardNumber:            card, Email: email, Phone: phone, FirstName: first, LastName: last, EnrollID: "u-" + randomID(),
		CouponCodes: req.CouponCodes, CouponsEnabled: loc.Company.Features.Coupons, RequestHash: hash, Request: request, Settle: settle,
		Answer: posgate.TransactionAnswer{TransactionID: *req.TransactionID, SessionID: session, TransactionType: kind,
			PosStatus: posgate.PosAccepted, Coupons: []posgate.TransactionCoupon{}, Promotions: []posgate.AppliedPromotion{}, CfsTemplate: posgate.CfsTemplate{CfsCarouselURL: cfs},
			Receipt: posgate.TransactionReceipt{PrimaryText: receipt.PrimaryText, SecondaryText: receipt.SecondaryText,
				ImageURL: receipt.ImageURL, PosStatus: receipt.PosStatus}},
	}
	if req.Offline != nil {
		if in.Offline, err = s.offlineClaim(ctx, in, value(req.Offline.KitID)); err != nil {
			return nil, nil, nil, err
		}
	}
	return in, nil, check, nil
}

// sessionRule is the check of a transaction's session (the read's sess and
// err): found in the POS system, unexpired at now (not in a batch: offline
// sales arrive late), and started at the transaction's terminal.
func sessionRule(posSystemID, sessionID string, loc *posgate.Location, term *posgate.Terminal, now time.Time, batch bool) posgate.SessionCheck {
	return func(sess *posgate.Session, err error) error {
		unknown := posgate.ErrorCode(err) == posgate.ENOTFOUND || (err == nil && sess.POSSystemID != posSystemID)
		if err != nil && !unknown {
			return err
		}
		if unknown || (!batch && !now.Before(sess.ExpiresAt)) {
			return posgate.Errorf(posgate.ENOTFOUND, "Session '%s' is unknown or has expired.", sessionID)
		}
		if sess.LocationID != loc.ID || sess.TerminalID != term.ID {
			return invalid("sessionId", fmt.Sprintf("Session '%s' was started at terminal '%s' of location '%s', not at this transaction's terminal.",
				sessionID, sess.TerminalID, sess.LocationID))
		}
		return nil
	}
}

// MaxTransactionBatch is how many transactions one offline replay may
// carry (docs/api.md §13.6).
const MaxTransactionBatch = 1000

// TransactionBatchRequest is the offline replay's body.
type TransactionBatchRequest struct {
	Items []TransactionRequest `json:"items"`
}

// Validate refuses more than MaxTransactionBatch items (ETOOLARGE); each
// item is checked on its own, as part of the result.
func (q *TransactionBatchRequest) Validate() error {
	if len(q.Items) > MaxTransactionBatch {
		return posgate.Errorf(posgate.ETOOLARGE, "The batch holds more than %d transactions; send at most %d per request.", MaxTransactionBatch, MaxTransactionBatch)
	}
	return nil
}

// BatchItemResult is the fate of one item of an offline replay.
type BatchItemResult struct {
	TransactionID string          `json:"transactionId"`
	RowNumber     int             `json:"rowNumber"`
	Status        string          `json:"status"`
	Data          json.RawMessage `json:"data"`
}

// TransactionBatchResult is the offline replay's answer: the import
// result of docs/api.md §9.4 with duplicateCount and one result per item.
type TransactionBatchResult struct {
	Status         posgate.ImportStatus  `json:"status"`
	CreatedCount   int                   `json:"createdCount"`
	DuplicateCount int                   `json:"duplicateCount"`
	Errors         []posgate.ImportError `json:"errors"`
	Results        []BatchItemResult     `json:"results"`
}

// RecordTransactionBatch replays transactions recorded offline (docs/api.md
// §13.6): each item is checked as a single transaction would be (its
// session optional and allowed to have expired) and the valid ones are
// applied in transactionDate order in one database transaction, all or
// none. An item that fails is Rejected with its reasons in errors; an item
// recorded before is a Duplicate with its first answer (or Rejected when
// its content differs).
func (s *Service) RecordTransactionBatch(ctx context.Context, p *posgate.Principal, posSystemID string, req *TransactionBatchRequest) (*TransactionBatchResult, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	out := &TransactionBatchResult{Errors: []posgate.ImportError{}, Results: make([]BatchItemResult, len(req.Items))}
	inputs := make([]*posgate.TransactionInput, 0, len(req.Items))
	for i := range req.Items {
		it := &req.Items[i]
		row := i + 1
		out.Results[i] = BatchItemResult{TransactionID: value(it.TransactionID), RowNumber: row, Data: json.RawMessage("null")}
		in, disabled, _, err := s.prepareTransaction(ctx, p, posSystemID, it, row, true)
		switch {
		case posgate.ErrorCode(err) == posgate.EINTERNAL || posgate.ErrorCode(err) == posgate.EUNAUTHORIZED || posgate.ErrorCode(err) == posgate.EFORBIDDEN:
			return nil, err
		case err != nil:
			inputs = append(inputs, &posgate.TransactionInput{Row: row, Reject: err})
		case disabled != nil:
			b, _ := encode.JSON(disabled)
			out.Results[i].Data = b
			inputs = append(inputs, &posgate.TransactionInput{Row: row, Reject: posgate.Errorf(posgate.EINVALID,
				"The place is disabled or has transactions switched off (posStatus Disabled): nothing is recorded.")})
		default:
			inputs = append(inputs, in)
		}
	}
	outcomes, err := s.store.ApplyTransactions(ctx, inputs)
	if err != nil {
		return nil, err
	}
	for _, o := range outcomes {
		r := &out.Results[o.Row-1]
		r.Status = o.Status
		switch o.Status {
		case posgate.OutcomeCreated:
			out.CreatedCount++
			r.Data = o.Answer
		case posgate.OutcomeDuplicate:
			out.DuplicateCount++
			r.Data = o.Answer
		default:
			out.Errors = append(out.Errors, itemErrors(r.TransactionID, o.Row, s.sandboxHint(o.Err, r.TransactionID))...)
		}
	}
	switch {
	case len(out.Errors) == 0:
		out.Status = posgate.ImportCompleted
	case out.CreatedCount+out.DuplicateCount > 0:
		out.Status = posgate.ImportCompletedWithErrors
	default:
		out.Status = posgate.ImportFailed
	}
	return out, nil
}

// itemErrors lists the reasons of a rejected item as import errors: one
// per field message (errorDetails the field), else one with the error's
// message (errorDetails its kind).
func itemErrors(entityID string, row int, err error) []posgate.ImportError {
	var e *posgate.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return []posgate.ImportError{{EntityID: entityID, RowNumber: row, ErrorMessage: posgate.ErrorMessage(err), ErrorDetails: posgate.ErrorCode(err)}}
	}
	var out []posgate.ImportError
	for _, f := range sortedKeys(e.Fields) {
		for _, m := range e.Fields[f] {
			out = append(out, posgate.ImportError{EntityID: entityID, RowNumber: row, ErrorMessage: m, ErrorDetails: f})
		}
	}
	return out
}

// ValidateByTransactionRequest is the body of POST
// /pos/{posSystemId}/coupon/validate/byTransaction (docs/api.md §13.5):
// the real service's names, with posgate's code (its campaignId is read as
// a code when code is absent).
type ValidateByTransactionRequest struct {
	SessionID     *string     `json:"sessionId"`
	TransactionID *string     `json:"transactionId"`
	Code          *string     `json:"code"`
	CampaignID    *string     `json:"campaignId"`
	CouponUser    *CouponUser `json:"couponUser"`
}

// CouponUser is who claims the coupon; when given it must be its owner.
type CouponUser struct {
	FirstName *string `json:"firstName"`
	LastName  *string `json:"lastName"`
	Gender    *string `json:"gender"`
	Phone     *string `json:"phone"`
	Email     *string `json:"email"`
}

// code is the coupon code: code, else campaignId.
func (q *ValidateByTransactionRequest) code() string {
	if given(q.Code) {
		return *q.Code
	}
	return value(q.CampaignID)
}

// Validate requires the session, the transaction and a code.
func (q *ValidateByTransactionRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "sessionId", q.SessionID)
	required(v, "transactionId", q.TransactionID)
	if q.code() == "" {
		v.Add("code", "The code field (or campaignId) is required.")
	} else if len(q.code()) > posgate.MaxKeyLen {
		v.Add("code", fmt.Sprintf("A coupon code must be 1-%d bytes of text.", posgate.MaxKeyLen))
	}
	return v.Err()
}

// CouponValidation is the data of a validation by transaction.
type CouponValidation struct {
	ExternalSessionID string               `json:"externalSessionId"`
	Status            posgate.CouponStatus `json:"status"`
	ValidationDate    time.Time            `json:"validationDate"`
	ErrorMessage      *string              `json:"errorMessage"`
	// PromotionID is the promotion the coupon carries (null: none), and
	// Discount what it takes off the transaction's priced lines
	// (docs/api.md §13.5, §18.3).
	PromotionID *string            `json:"promotionId"`
	Discount    posgate.MinorUnits `json:"discount"`
}

// CouponValidationResult is the validation's answer: posStatus beside data,
// as the real service has it.
type CouponValidationResult struct {
	PosStatus posgate.PosStatus `json:"posStatus"`
	Data      CouponValidation  `json:"data"`
}

// ValidateCouponByTransaction redeems a coupon for a recorded transaction
// of a session (docs/api.md §13.5): the session must be the POS system's
// and linked to that transaction (404 otherwise); the coupon is checked as
// a sale's coupons are, its owner being the claimed couponUser when given,
// else the transaction's customer. Repeating it answers the same: a
// coupon this transaction redeemed is Redeemed with the time it was.
func (s *Service) ValidateCouponByTransaction(ctx context.Context, p *posgate.Principal, posSystemID string, req *ValidateByTransactionRequest) (*CouponValidationResult, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	sessionID := *req.SessionID
	sess, err := s.store.FindSession(ctx, sessionID)
	if err == nil && (sess.POSSystemID != posSystemID || !p.CanSeeLocation(posSystemID, sess.CompanyID, sess.LocationID)) {
		err = posgate.ErrNotFound
	}
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, posgate.Errorf(posgate.ENOTFOUND, "Session '%s' is unknown or has expired.", sessionID)
	} else if err != nil {
		return nil, err
	}
	t, err := s.store.FindTransactionBySession(ctx, sessionID)
	if err == nil && t.TransactionID != *req.TransactionID {
		err = posgate.ErrNotFound
	}
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, posgate.Errorf(posgate.ENOTFOUND, "Transaction '%s' is not recorded for session '%s'.", *req.TransactionID, sessionID)
	} else if err != nil {
		return nil, err
	}
	loc, term, status, err := s.posTerminal(ctx, p, posSystemID, t.LocationID, t.TerminalID, posgate.FeatureTransactions)
	if err != nil {
		return nil, err
	}
	out := &CouponValidationResult{PosStatus: status, Data: CouponValidation{ExternalSessionID: sessionID, ValidationDate: s.now()}}
	if status == posgate.PosAccepted && !loc.Company.Features.Coupons {
		status = posgate.PosDisabled
	}
	if status != posgate.PosAccepted {
		msg := "The place is disabled, or transactions or coupons are switched off for its company."
		out.PosStatus, out.Data.Status, out.Data.ErrorMessage = posgate.PosDisabled, posgate.CouponRejected, &msg
		return out, nil
	}
	var owner *posgate.CouponOwner
	if u := req.CouponUser; u != nil {
		owner = &posgate.CouponOwner{FirstName: value(u.FirstName), LastName: value(u.LastName), Email: value(u.Email), Phone: value(u.Phone)}
	}
	res, at, err := s.store.RedeemCouponForTransaction(ctx, t, req.code(), owner, term.LocationID)
	if err != nil {
		return nil, err
	}
	out.Data.Status, out.Data.ErrorMessage, out.Data.ValidationDate = res.Status, res.ErrorMessage, at
	if out.Data.PromotionID, out.Data.Discount, err = s.couponValue(ctx, loc, t, req.code(), res.Status); err != nil {
		return nil, err
	}
	return out, nil
}

// sortedKeys returns m's keys in order, so that errors list alike every
// time.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// newTimeOrderedUUID returns the id of a new session or transaction: a
// time-ordered UUID (version 7, 74 random bits), so that the stores' indexes
// on it (the sessions' and transactions' keys, transaction_coupons by
// transaction) take each new row at their end rather than on a random page.
// A random (version 4) id cost the SQLite writer two more pages to read and
// write back per sale, and a page per session of a group commit
// (docs/decisions.md, "Transactions").
func newTimeOrderedUUID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}
