package service

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/encode"
)

// Promotion evaluation (docs/api.md §18): what a basket would get, nothing
// stored.

// DefaultPromotionCacheTTL is how long an instance evaluates with a
// company's promotions before it asks the store whether they changed
// (Config.PromotionCacheTTL).
const DefaultPromotionCacheTTL = time.Second

// maxCachedIndexes bounds the companies whose promotion indexes an instance
// keeps.
const maxCachedIndexes = 1000

// maxIndexedProducts is the largest catalogue whose products' categories a
// promotion index keeps (some 1.5 MB); beyond it, evaluation reads the
// basket's products from the store.
const maxIndexedProducts = 20_000

// EvaluateRequest is the evaluation's request (docs/api.md §18.1).
type EvaluateRequest struct {
	PosLocationID   *string           `json:"posLocationId"`
	TerminalID      *string           `json:"terminalId"`
	TransactionDate *time.Time        `json:"transactionDate"`
	Products        []EvaluateProduct `json:"products"`
	CouponCodes     []*string         `json:"couponCodes"`
	Loyalty         *EvaluateLoyalty  `json:"loyalty"`
	// Customer is the sale's customer (its contacts), found as a sale
	// finds it when no cardNumber is given.
	Customer *TransactionCustomer `json:"customer"`
}

// EvaluateProduct is a basket line: price and quantity are read exactly.
type EvaluateProduct struct {
	ProductID       *string         `json:"productId"`
	ProductCategory *string         `json:"productCategory"`
	Quantity        posgate.Decimal `json:"quantity"`
	Price           posgate.Decimal `json:"price"`
}

// EvaluateLoyalty names the customer: cardNumber is a loyalty user's id.
type EvaluateLoyalty struct {
	CardNumber *string `json:"cardNumber"`
}

// Validate checks the request and returns its lines, reporting every
// problem at once.
func (q *EvaluateRequest) Validate() ([]posgate.BasketLine, error) {
	v := posgate.ValidationError{}
	required(v, "posLocationId", q.PosLocationID)
	if len(q.Products) > posgate.MaxBasketLines {
		v.Add("products", "The products may hold at most 500 lines.")
	}
	if len(q.CouponCodes) > posgate.MaxBasketCoupons {
		v.Add("couponCodes", "The couponCodes may hold at most 50 codes.")
	}
	lines := make([]posgate.BasketLine, len(q.Products))
	for i, pr := range q.Products {
		// The path is built only for an error: a valid line allocates nothing.
		path := func() string { return "products[" + strconv.Itoa(i) + "]" }
		if !given(pr.ProductID) {
			required(v, path()+".productId", pr.ProductID)
		}
		l := &lines[i]
		if pr.ProductID != nil {
			l.ProductID = *pr.ProductID
		}
		if pr.ProductCategory != nil {
			l.Category = *pr.ProductCategory
		}
		l.Quantity = 1000
		if pr.Quantity != "" {
			n, exact, err := pr.Quantity.Scaled(posgate.QuantityScale)
			if err != nil || !exact || n <= 0 || n > posgate.MaxQuantity {
				v.Add(path()+".quantity", "The quantity must be a number greater than 0 and at most 1000000, with at most 3 decimals.")
			}
			l.Quantity = n
		}
		if pr.Price == "" {
			v.Add(path()+".price", "The price field is required.")
		} else if p, err := pr.Price.MinorUnits(); err != nil || p < 0 || p > posgate.MaxPrice {
			v.Add(path()+".price", "The price must be a number from 0 to 1000000000.00.")
		} else {
			l.UnitPrice = p
		}
	}
	for i, c := range q.CouponCodes {
		if c == nil || *c == "" {
			v.Add("couponCodes["+strconv.Itoa(i)+"]", "A coupon code must not be empty.")
		}
	}
	q.Customer.validate(v)
	return lines, v.Err()
}

// Evaluation is the evaluation's answer (docs/api.md §18.2).
type Evaluation struct {
	PosStatus     posgate.PosStatus          `json:"posStatus"`
	Promotions    []posgate.AppliedPromotion `json:"promotions"`
	Subtotal      posgate.MinorUnits         `json:"subtotal"`
	TotalDiscount posgate.MinorUnits         `json:"totalDiscount"`
	Total         posgate.MinorUnits         `json:"total"`
	Lines         EvaluationLines            `json:"lines"`
	Coupons       []CouponCheck              `json:"coupons"`
	Loyalty       *LoyaltyPreview            `json:"loyalty"`
}

// EvaluationLine is one line's breakdown: its amount, the promotions
// applied to it in the order applied, and the first ones that target it but
// did not apply, with why (posgate.PromotionIndex.EvaluateInput).
type EvaluationLine struct {
	ProductID  string             `json:"productId"`
	Subtotal   posgate.MinorUnits `json:"subtotal"`
	Discount   posgate.MinorUnits `json:"discount"`
	Total      posgate.MinorUnits `json:"total"`
	Promotions []LinePromotion    `json:"promotions"`
	NotApplied []LineRejection    `json:"notApplied"`
}

// LinePromotion is a promotion applied to a line.
type LinePromotion struct {
	ID         string             `json:"id"`
	Discount   posgate.MinorUnits `json:"discount"`
	CouponCode *string            `json:"couponCode"`
}

// LineRejection is a promotion that targets a line but did not apply.
type LineRejection struct {
	ID     string                  `json:"id"`
	Reason posgate.RejectionReason `json:"reason"`
	LostTo *string                 `json:"lostTo"`
}

// CouponCheck says whether a coupon of the basket could be redeemed, and
// what the promotion it carries (null: none) takes off the basket.
type CouponCheck struct {
	Code         string             `json:"code"`
	Redeemable   bool               `json:"redeemable"`
	ErrorMessage *string            `json:"errorMessage"`
	PromotionID  *string            `json:"promotionId"`
	Discount     posgate.MinorUnits `json:"discount"`
}

// EvaluationLines are an evaluation's lines. They write their JSON
// themselves: a 20-line basket's breakdown holds some 200 values, which
// encoding/json's reflection (and its check of each amount's MarshalJSON)
// made the largest cost of the evaluate endpoint.
type EvaluationLines []EvaluationLine

// MarshalJSON writes the lines as encoding/json would (without HTML
// escaping, as posgate's answers are written).
func (ls EvaluationLines) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 320*len(ls)+2)
	b = append(b, '[')
	for i := range ls {
		l := &ls[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"productId":`...)
		b = appendJSONString(b, l.ProductID)
		b = append(append(b, `,"subtotal":`...), l.Subtotal.String()...)
		b = append(append(b, `,"discount":`...), l.Discount.String()...)
		b = append(append(b, `,"total":`...), l.Total.String()...)
		b = append(b, `,"promotions":[`...)
		for k, p := range l.Promotions {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, `{"id":`...), p.ID)
			b = append(append(b, `,"discount":`...), p.Discount.String()...)
			b = appendJSONOptString(append(b, `,"couponCode":`...), p.CouponCode)
			b = append(b, '}')
		}
		b = append(b, `],"notApplied":[`...)
		for k, r := range l.NotApplied {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, `{"id":`...), r.ID)
			b = appendJSONString(append(b, `,"reason":`...), string(r.Reason))
			b = appendJSONOptString(append(b, `,"lostTo":`...), r.LostTo)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, ']'), nil
}

// appendJSONOptString appends s as JSON, null when it is nil.
func appendJSONOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it without HTML escaping: quotes, backslashes and control
// characters, U+2028 and U+2029, and invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(append(b, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}

// AppendJSON appends the evaluation as encoding/json writes it (without
// HTML escaping), but for its lines, which it appends as they write
// themselves: encoding/json would check every byte of them again (see
// EvaluationLines).
func (ev *Evaluation) AppendJSON(dst []byte) ([]byte, error) {
	rest := *ev
	rest.Lines = EvaluationLines{}
	var buf bytes.Buffer
	b, err := encode.JSONInto(&buf, &rest)
	if err != nil {
		return nil, err
	}
	// The lines come after the total: the first `,"lines":[]` outside a
	// string is theirs, and none can be inside one (its quotes would be
	// escaped there).
	const empty = `,"lines":[]`
	at := bytes.Index(b, []byte(empty))
	if at < 0 {
		return nil, fmt.Errorf("evaluation answer without lines: %s", b)
	}
	lines, err := ev.Lines.MarshalJSON()
	if err != nil {
		return nil, err
	}
	dst = append(dst, b[:at+len(empty)-2]...)
	dst = append(dst, lines...)
	return append(dst, b[at+len(empty):]...), nil
}

// evaluationLines renders an evaluation's lines.
func evaluationLines(lines []posgate.BasketLine, ev *posgate.Evaluation) EvaluationLines {
	out := make(EvaluationLines, len(ev.Lines))
	for n, l := range ev.Lines {
		o := &out[n]
		*o = EvaluationLine{ProductID: lines[n].ProductID, Subtotal: l.Total, Discount: l.Discount, Total: l.Total - l.Discount,
			Promotions: make([]LinePromotion, len(l.Applied)), NotApplied: make([]LineRejection, len(l.NotApplied))}
		for k, a := range l.Applied {
			o.Promotions[k] = LinePromotion{ID: a.ID, Discount: a.Discount}
			if a.CouponCode != "" {
				o.Promotions[k].CouponCode = &l.Applied[k].CouponCode
			}
		}
		for k, r := range l.NotApplied {
			o.NotApplied[k] = LineRejection{ID: r.ID, Reason: r.Reason}
			if r.LostTo != "" {
				o.NotApplied[k].LostTo = &l.NotApplied[k].LostTo
			}
		}
	}
	return out
}

// LoyaltyPreview is the customer's balance and what the basket would earn.
type LoyaltyPreview struct {
	UserID       string `json:"userId"`
	Points       int32  `json:"points"`
	Stamps       int32  `json:"stamps"`
	PointsToEarn int64  `json:"pointsToEarn"`
}

// EvaluatePromotions evaluates a basket at a location (docs/api.md §18):
// the promotions its lines trigger, the coupons it could redeem and the
// customer's balance; nothing is stored. A disabled company, location or
// terminal answers Disabled with nothing else.
func (s *Service) EvaluatePromotions(ctx context.Context, p *posgate.Principal, posSystemID string, req *EvaluateRequest) (*Evaluation, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	lines, err := req.Validate()
	if err != nil {
		return nil, err
	}
	loc, err := s.posLocation(ctx, p, posSystemID, *req.PosLocationID)
	if err != nil {
		return nil, err
	}
	out := &Evaluation{PosStatus: posgate.PosAccepted, Promotions: []posgate.AppliedPromotion{}, Lines: EvaluationLines{}, Coupons: []CouponCheck{}}
	var term *posgate.Terminal
	if req.TerminalID != nil && *req.TerminalID != "" {
		term, err = s.store.FindTerminal(ctx, posSystemID, loc.ID, *req.TerminalID)
		if posgate.ErrorCode(err) == posgate.ENOTFOUND {
			return nil, posgate.Errorf(posgate.ENOTFOUND, "Terminal '%s' is not registered at location '%s'.", *req.TerminalID, loc.ID)
		} else if err != nil {
			return nil, err
		}
	}
	if out.PosStatus = activeStatus(loc, term); out.PosStatus != posgate.PosAccepted {
		return out, nil
	}
	at := s.now()
	if req.TransactionDate != nil {
		at = req.TransactionDate.UTC()
	}
	// The customer and the coupons' redeemer, found as a sale finds them
	// (posgate.MatchCustomer, posgate.CouponRedeemer), without enrolling.
	var card string
	if req.Loyalty != nil {
		card = value(req.Loyalty.CardNumber)
	}
	email, phone := req.Customer.contacts()
	m, err := posgate.MatchCustomer(ctx, storeCustomers{s.store}, posSystemID, loc.CompanyID, card, email, phone)
	if err != nil {
		return nil, err
	}
	redeemer := &posgate.CouponRedeemer{}
	redeemer.Add(email, phone)
	u := m.User
	if u == nil && m.ID != "" {
		if u, err = s.store.FindLoyaltyUser(ctx, posSystemID, loc.CompanyID, m.ID); posgate.ErrorCode(err) == posgate.ENOTFOUND {
			u = nil // deleted since the match: no one
		} else if err != nil {
			return nil, err
		}
	}
	if u != nil {
		redeemer.AddUser(u)
	}
	in := posgate.EvaluationInput{LocationID: loc.ID, At: at, Lines: lines}
	if u != nil {
		in.CustomerID = u.ID
	}
	for _, code := range req.CouponCodes {
		check := CouponCheck{Code: *code}
		c, msg, err := s.checkCoupon(ctx, loc, *code, at, redeemer)
		if err != nil {
			return nil, err
		} else if msg != "" {
			check.ErrorMessage = &msg
		} else {
			check.Redeemable = true
			in.Coupons = append(in.Coupons, posgate.EvaluationCoupon{Code: c.Code, PromotionID: c.PromotionID})
		}
		out.Coupons = append(out.Coupons, check)
	}
	ev, err := s.evaluateInput(ctx, loc, in)
	if err != nil {
		return nil, err
	}
	out.Promotions, out.Subtotal, out.TotalDiscount, out.Total = ev.Promotions, ev.Subtotal, ev.TotalDiscount, ev.Total
	out.Lines = evaluationLines(lines, ev)
	k := 0
	for i := range out.Coupons {
		if !out.Coupons[i].Redeemable {
			continue
		}
		if cd := ev.Coupons[k]; cd.PromotionID != "" {
			out.Coupons[i].PromotionID, out.Coupons[i].Discount = &ev.Coupons[k].PromotionID, cd.Discount
		}
		k++
	}
	if u != nil {
		program, err := s.loyaltyProgram(ctx, posSystemID, loc.CompanyID)
		if err != nil {
			return nil, err
		}
		// What a sale of the basket's total after discounts would earn,
		// by the same rule as the sale (posgate.LoyaltyProgram.Earn).
		points, _ := program.Earn(ev.Subtotal - ev.TotalDiscount)
		out.Loyalty = &LoyaltyPreview{UserID: u.ID, Points: u.Points, Stamps: u.Stamps, PointsToEarn: int64(points)}
	}
	return out, nil
}

// storeCustomers is the store as a posgate.CustomerFinder.
type storeCustomers struct{ posgate.Store }

func (s storeCustomers) FindUser(ctx context.Context, posSystemID, companyID, userID string) (*posgate.LoyaltyUser, error) {
	return s.FindLoyaltyUser(ctx, posSystemID, companyID, userID)
}

// checkCoupon says why the coupon code (any case) of the location's
// company could not be redeemed at the location at time at by redeemer,
// "" when it could: the rule of a sale (posgate.Coupon.Redeemability), in
// the preview's words (docs/api.md §18.3).
func (s *Service) checkCoupon(ctx context.Context, loc *posgate.Location, code string, at time.Time, redeemer *posgate.CouponRedeemer) (*posgate.Coupon, string, error) {
	c, err := s.store.FindCoupon(ctx, loc.POSSystemID, loc.CompanyID, code)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, fmt.Sprintf("The coupon '%s' does not exist.", code), nil
	} else if err != nil {
		return nil, "", err
	}
	return c, posgate.CouponPreviewMessage(c.Redeemability(loc.ID, at, redeemer), c, loc.ID), nil
}

// evaluateBasket applies the promotions of the location's company that
// evaluateInput applies the promotions of the location's company that
// apply there at in.At, read in the location's time zone, to in.Lines
// (posgate.PromotionIndex.EvaluateInput) with the input's coupons, for
// in.CustomerID, without the promotions whose budget is used up as the
// store counts it now (docs/api.md §9.7), completing each line's category
// from the catalogue where the POS named none. It checks no access: its
// caller has.
func (s *Service) evaluateInput(ctx context.Context, loc *posgate.Location, in posgate.EvaluationInput) (*posgate.Evaluation, error) {
	snap, err := s.promotionSnapshot(ctx, loc.POSSystemID, loc.CompanyID)
	if err != nil {
		return nil, err
	}
	if err := s.completeLines(ctx, loc, snap.ix, in.Lines); err != nil {
		return nil, err
	}
	unavailable, failed := s.budgetsUsedUp(ctx, loc, snap.budgets, in.CustomerID)
	in.LocationID, in.At, in.Unavailable = loc.ID, in.At.In(loc.Zone()), unavailable
	ev, err := snap.ix.EvaluateInput(in)
	if err == nil {
		err = failed()
	}
	return ev, err
}

// completeLines gives each line without a category its product's category
// in the catalogue.
func (s *Service) completeLines(ctx context.Context, loc *posgate.Location, ix *posgate.PromotionIndex, lines []posgate.BasketLine) error {
	var missing []string
	for i := range lines {
		if lines[i].Category == "" && lines[i].CatalogCategory == "" {
			if cat, known := ix.ProductCategory(lines[i].ProductID); known {
				lines[i].CatalogCategory = cat
			} else {
				missing = append(missing, lines[i].ProductID)
			}
		}
	}
	if len(missing) > 0 {
		ps, err := s.store.FindProducts(ctx, loc.POSSystemID, loc.CompanyID, missing)
		if err != nil {
			return err
		}
		category := make(map[string]string, len(ps))
		for _, p := range ps {
			category[p.ID] = p.CategoryID
		}
		for i := range lines {
			if lines[i].Category == "" && lines[i].CatalogCategory == "" {
				lines[i].CatalogCategory = category[lines[i].ProductID]
			}
		}
	}
	return nil
}

// indexCache keeps each company's promotion index for evaluation: built
// from the store once, used by every evaluation, and after
// Config.PromotionCacheTTL revalidated by one read of the company's
// PromotionStamp (rebuilt only when that changed). Meanwhile other
// evaluations keep using the index they have: only the first one after the
// TTL waits for the store. A change made through this instance (an import,
// a catalogue replacement) drops the company's index at once.
type indexCache struct {
	ttl     time.Duration // < 0: no cache
	mu      sync.Mutex
	entries map[[2]string]*indexEntry
}

type indexEntry struct {
	build      sync.Mutex // held while the first index is built
	snap       atomic.Pointer[indexSnapshot]
	refreshing atomic.Bool
}

type indexSnapshot struct {
	ix *posgate.PromotionIndex
	// budgets are the budgets of the promotions that have one
	// (docs/api.md §9.7), nil when none has.
	budgets map[string]posgate.PromotionBudget
	stamp   string
	checked time.Time
}

func newIndexCache(ttl time.Duration) *indexCache {
	if ttl == 0 {
		ttl = DefaultPromotionCacheTTL
	}
	return &indexCache{ttl: ttl, entries: map[[2]string]*indexEntry{}}
}

// invalidate drops a company's index.
func (c *indexCache) invalidate(posSystemID, companyID string) {
	c.mu.Lock()
	delete(c.entries, [2]string{posSystemID, companyID})
	c.mu.Unlock()
}

// entry returns the company's entry, made if needed.
func (c *indexCache) entry(key [2]string) *indexEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		if len(c.entries) >= maxCachedIndexes {
			// Drop one at random: cheap, and a company that is evaluated
			// often is back after one build.
			n := rand.IntN(len(c.entries))
			for k := range c.entries {
				if n == 0 {
					delete(c.entries, k)
					break
				}
				n--
			}
		}
		e = &indexEntry{}
		c.entries[key] = e
	}
	return e
}

// promotionIndex returns the company's promotion index (see indexCache).
func (s *Service) promotionIndex(ctx context.Context, posSystemID, companyID string) (*posgate.PromotionIndex, error) {
	snap, err := s.promotionSnapshot(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	return snap.ix, nil
}

// promotionSnapshot returns the company's promotion index and budgets (see
// indexCache).
func (s *Service) promotionSnapshot(ctx context.Context, posSystemID, companyID string) (*indexSnapshot, error) {
	c := s.indexes
	if c.ttl < 0 {
		return s.buildIndex(ctx, posSystemID, companyID)
	}
	e := c.entry([2]string{posSystemID, companyID})
	now := time.Now()
	snap := e.snap.Load()
	if snap == nil {
		e.build.Lock()
		defer e.build.Unlock()
		if snap = e.snap.Load(); snap != nil {
			return snap, nil
		}
		snap, err := s.buildIndex(ctx, posSystemID, companyID)
		if err != nil {
			return nil, err
		}
		e.snap.Store(snap)
		return snap, nil
	}
	if now.Sub(snap.checked) < c.ttl || !e.refreshing.CompareAndSwap(false, true) {
		return snap, nil
	}
	defer e.refreshing.Store(false)
	stamp, err := s.store.PromotionStamp(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	if stamp == snap.stamp {
		fresh := &indexSnapshot{ix: snap.ix, budgets: snap.budgets, stamp: stamp, checked: time.Now()}
		e.snap.Store(fresh)
		return fresh, nil
	}
	fresh, err := s.buildIndex(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	e.snap.Store(fresh)
	return fresh, nil
}

// buildIndex reads the company's promotions and categories and indexes
// them. The stamp is read first: a change that lands meanwhile makes the
// next revalidation build again, never keeps an index older than its stamp.
func (s *Service) buildIndex(ctx context.Context, posSystemID, companyID string) (*indexSnapshot, error) {
	stamp, err := s.store.PromotionStamp(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	promos, _, err := s.store.ListPromotions(ctx, posSystemID, companyID, 0, 0)
	if err != nil {
		return nil, err
	}
	cats, _, err := s.store.ListCategories(ctx, posSystemID, companyID, 0, 0)
	if err != nil {
		return nil, err
	}
	ix := posgate.NewPromotionIndex(promos, cats)
	// A small catalogue's products come along, so that lines without a
	// category cost no store read; a large one is read per evaluation.
	products, total, err := s.store.ListProducts(ctx, posSystemID, companyID, 0, maxIndexedProducts)
	if err != nil {
		return nil, err
	}
	if total <= maxIndexedProducts {
		ix.SetProductCategories(products)
	}
	return &indexSnapshot{ix: ix, budgets: promotionBudgets(promos), stamp: stamp, checked: time.Now()}, nil
}
