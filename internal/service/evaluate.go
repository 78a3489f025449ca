package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/posgate/posgate"
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
	Coupons       []CouponCheck              `json:"coupons"`
	Loyalty       *LoyaltyPreview            `json:"loyalty"`
}

// CouponCheck says whether a coupon of the basket could be redeemed.
type CouponCheck struct {
	Code         string  `json:"code"`
	Redeemable   bool    `json:"redeemable"`
	ErrorMessage *string `json:"errorMessage"`
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
	out := &Evaluation{PosStatus: posgate.PosAccepted, Promotions: []posgate.AppliedPromotion{}, Coupons: []CouponCheck{}}
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
	var customerID string
	if u != nil {
		customerID = u.ID
	}
	ev, err := s.evaluateBasket(ctx, loc, at, lines, customerID, req.CouponCodes)
	if err != nil {
		return nil, err
	}
	out.Promotions, out.Subtotal, out.TotalDiscount = ev.Promotions, ev.Subtotal, ev.TotalDiscount
	if u != nil {
		redeemer.AddUser(u)
		program, err := s.loyaltyProgram(ctx, posSystemID, loc.CompanyID)
		if err != nil {
			return nil, err
		}
		// What a sale of the basket's total after discounts would earn,
		// by the same rule as the sale (posgate.LoyaltyProgram.Earn).
		points, _ := program.Earn(ev.Subtotal - ev.TotalDiscount)
		out.Loyalty = &LoyaltyPreview{UserID: u.ID, Points: u.Points, Stamps: u.Stamps, PointsToEarn: int64(points)}
	}
	for _, code := range req.CouponCodes {
		check := CouponCheck{Code: *code}
		if msg, err := s.checkCoupon(ctx, loc, *code, at, redeemer); err != nil {
			return nil, err
		} else if msg != "" {
			check.ErrorMessage = &msg
		} else {
			check.Redeemable = true
		}
		out.Coupons = append(out.Coupons, check)
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
func (s *Service) checkCoupon(ctx context.Context, loc *posgate.Location, code string, at time.Time, redeemer *posgate.CouponRedeemer) (string, error) {
	c, err := s.store.FindCoupon(ctx, loc.POSSystemID, loc.CompanyID, code)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return fmt.Sprintf("The coupon '%s' does not exist.", code), nil
	} else if err != nil {
		return "", err
	}
	switch c.Redeemability(loc.ID, at, redeemer) {
	case posgate.CouponRedeemable:
		return "", nil
	case posgate.CouponAlreadyRedeemed:
		return "The coupon has already been redeemed.", nil
	case posgate.CouponHasExpired:
		return fmt.Sprintf("The coupon expired at %s.", c.AvailableUntil.UTC().Format(time.RFC3339)), nil
	case posgate.CouponNotUsableHere:
		return fmt.Sprintf("The coupon cannot be used at location '%s'.", loc.ID), nil
	case posgate.CouponNeedsCustomer:
		return "The coupon belongs to a loyalty customer; name the customer to use it.", nil
	case posgate.CouponOtherCustomer:
		return "The coupon belongs to another customer.", nil
	}
	return "The coupon has been cancelled.", nil
}

// evaluateBasket applies the promotions of the location's company that
// apply there at time at to the lines (posgate.PromotionIndex.EvaluateInput)
// for the customer (a loyalty user's id, "" for none) and the coupon codes,
// without the promotions whose budget is used up as the store counts it now
// (docs/api.md §9.7). It checks no access: its caller has.
func (s *Service) evaluateBasket(ctx context.Context, loc *posgate.Location, at time.Time, lines []posgate.BasketLine, customerID string, codes []*string) (*posgate.Evaluation, error) {
	snap, err := s.promotionSnapshot(ctx, loc.POSSystemID, loc.CompanyID)
	if err != nil {
		return nil, err
	}
	if err := s.completeLines(ctx, loc, snap.ix, lines); err != nil {
		return nil, err
	}
	unavailable, failed := s.budgetsUsedUp(ctx, loc, snap.budgets, customerID)
	coupons := make([]posgate.EvaluationCoupon, 0, len(codes))
	for _, c := range codes {
		coupons = append(coupons, posgate.EvaluationCoupon{Code: *c})
	}
	ev, err := snap.ix.EvaluateInput(posgate.EvaluationInput{LocationID: loc.ID, At: at, Lines: lines, Coupons: coupons,
		CustomerID: customerID, Unavailable: unavailable})
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
