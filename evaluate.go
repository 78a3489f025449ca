package posgate

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Promotion evaluation (docs/api.md §18): which of a company's promotions a
// basket triggers, and what they take off. The rules live here, once, so
// that the evaluate endpoint and a sale (whose answer lists the promotions
// its products triggered) apply the same ones.

// Bounds of a basket line (docs/api.md §18.1).
const (
	// QuantityScale is the number of decimals a quantity may have: 1.5 kg
	// of cheese is a quantity; quantities are kept in thousandths.
	QuantityScale = 3
	// MaxQuantity is the largest quantity, in thousandths (1,000,000).
	MaxQuantity = 1_000_000_000
	// MaxBasketLines and MaxBasketCoupons bound one evaluation.
	MaxBasketLines   = 500
	MaxBasketCoupons = 50
)

// appliesPool recycles Evaluate's per-promotion marks (a byte per
// promotion of the company): an evaluation against 10,000 promotions would
// otherwise allocate 10 kB for them.
var appliesPool = sync.Pool{New: func() any { return new([]uint8) }}

// scratchPool recycles EvaluateInput's candidate lists.
var scratchPool = sync.Pool{New: func() any { return &evalScratch{} }}

// evalScratch is the memory EvaluateInput reuses: the lines' candidates.
type evalScratch struct {
	cands []candidate
	from  []int32
}

// percentScale is the number of decimals of a Percentage value that
// evaluation uses (12.3456 %); a value is rounded half to even to it.
const percentScale = 4

// BasketLine is a line of a basket to evaluate: a product, its category as
// the POS named it ("" if it did not), the product's category in the
// catalogue ("" if unknown), the quantity in thousandths and the unit price.
type BasketLine struct {
	ProductID       string
	Category        string
	CatalogCategory string
	Quantity        int64      // thousandths
	UnitPrice       MinorUnits // per whole unit
}

// Total is the line's amount: unit price × quantity, rounded half to even
// to the minor unit; false when it exceeds MaxPrice.
func (l *BasketLine) Total() (MinorUnits, bool) {
	v, ok := mulDivRound(int64(l.UnitPrice), l.Quantity, 1000)
	if !ok || MinorUnits(v) > MaxPrice {
		return 0, false
	}
	return MinorUnits(v), true
}

// PromotionIndex is a company's promotions and category tree arranged for
// evaluation: promotions by the product, the category or the "every
// product" that they name, and by the location they are limited to, each
// list in the order evaluation ranks them (see listOrder), so that a line
// finds its promotions by looking at few of them. It is built once and read
// by many evaluations at once; it never changes.
type PromotionIndex struct {
	promos  []indexedPromotion // ordered by id: a lower index is a lower id
	byKey   map[string]*keyLists
	all     keyLists
	parents map[string]string // category id → parent id ("" for a root)
	// products maps product ids to their category ids, when the company's
	// catalogue was small enough to keep (SetProductCategories); nil
	// otherwise.
	products map[string]string
	names    map[string]string // category name → id; "" when two share it
}

// indexedPromotion is what evaluation needs of a promotion: its id, name,
// validity periods, first result and conditions, in the units evaluation
// computes in. It keeps no pointer to the Promotion, so that the rest of it
// (its product, category and location lists, its dates) is freed once the
// index is built: a company's index lives as long as it is evaluated, and
// each megabyte of live heap is three of resident memory at posgate's
// collector setting (docs/decisions.md).
type indexedPromotion struct {
	id, name   string
	value      float64 // the first result's, as imported
	validities []PromotionValidity
	typ        PromotionType
	percent    int64      // Percentage, BuyXGetY: value × 10^percentScale
	amount     MinorUnits // Amount: value off each unit; FixedPrice: the unit price
	priority   int32
	stackable  bool
	coupon     bool       // requiresCoupon
	minQty     int64      // minQuantity, in thousandths
	minBasket  MinorUnits // minBasketAmount
	// BuyXGetY's units bought and discounted per application, its most
	// applications (0: no limit) and the products it discounts (nil: the
	// lines it targets).
	buy, get, maxApps int64
	getProducts       []string
}

// scanned reports whether the promotion goes to the lists read whole
// (valueLists.other): those whose discount on a line does not follow from
// their value alone (a condition on the quantity, buy-X-get-Y) or that can
// apply beside others (stackable).
func (ip *indexedPromotion) scanned() bool {
	return ip.stackable || ip.minQty > 0 || ip.typ == PromotionBuyXGetY
}

// valueLists are indexes of promotions: Percentage, Amount and FixedPrice
// ones apart, each in listOrder, and the others (see scanned), by id.
type valueLists struct {
	percent, amount, fixed []listEntry
	other                  []int32
}

// listEntry is a promotion of an ordered list and the position of the end
// of its run: the entries of the same priority and value, which take the
// same off a line and rank by id, so that a scan can skip the rest of a
// run (see take).
type listEntry struct{ promo, next int32 }

// keyLists are the promotions that name one key (a product, a category, or
// every product): those valid everywhere and, by location, those limited
// to locations. An evaluation at a location reads only the promotions that
// can apply there: with most promotions limited to a few of many locations,
// a scan of all of them spent most of its time on promotions of other
// locations (the benchmark's evaluate row, docs/decisions.md).
type keyLists struct {
	everywhere valueLists
	at         map[string]*valueLists
}

// Keys of PromotionIndex.byKey.
func productKey(id string) string  { return "p\x00" + id }
func categoryKey(id string) string { return "c\x00" + id }

// indexPromotion converts a promotion for the index; false when it applies
// to nothing (no result, or a value that cannot be used).
func indexPromotion(p *Promotion) (indexedPromotion, bool) {
	if len(p.Results) == 0 {
		return indexedPromotion{}, false
	}
	r := p.Results[0]
	ip := indexedPromotion{id: p.ID, name: p.Name, value: r.Value, validities: p.Validities, typ: r.PromotionType,
		priority: int32(max(-MaxPromotionPriority, min(MaxPromotionPriority, p.Priority))), stackable: p.Stackable, coupon: p.RequiresCoupon}
	var ok bool
	if ip.minQty, ok = promoScaled(p.MinQuantity, QuantityScale, MaxQuantity); !ok {
		return ip, false
	}
	var minBasket int64
	if minBasket, ok = promoScaled(p.MinBasketAmount, 2, int64(MaxPrice)); !ok {
		return ip, false
	}
	ip.minBasket = MinorUnits(minBasket)
	text := Decimal(strconv.FormatFloat(r.Value, 'f', -1, 64))
	switch r.PromotionType {
	case PromotionPercentage, PromotionBuyXGetY:
		v, _, err := text.Scaled(percentScale)
		if err != nil || v <= 0 || v > 100*10_000 {
			return ip, false
		}
		ip.percent = v
		if r.PromotionType == PromotionBuyXGetY {
			if r.BuyQuantity < 1 || r.GetQuantity < 1 || r.BuyQuantity > MaxPromotionBuyQuantity || r.GetQuantity > MaxPromotionBuyQuantity || r.MaxApplications < 0 {
				return ip, false
			}
			ip.buy, ip.get, ip.maxApps = int64(r.BuyQuantity), int64(r.GetQuantity), int64(r.MaxApplications)
			if len(r.GetProductIDs) > 0 {
				ip.getProducts = slices.Clone(r.GetProductIDs)
			}
		}
	case PromotionAmount, PromotionFixedPrice:
		v, err := text.MinorUnits()
		if err != nil || v < 0 || v > MaxPrice || (v == 0 && r.PromotionType == PromotionAmount) {
			return ip, false
		}
		ip.amount = v
	default:
		return ip, false
	}
	return ip, true
}

// NewPromotionIndex arranges a company's promotions (ordered by id, as
// stores list them) and categories for evaluation. A promotion applies to a
// line through its first result (docs/decisions.md); one without a result,
// or whose value or conditions cannot be used, applies to nothing.
func NewPromotionIndex(promotions []*Promotion, categories []*Category) *PromotionIndex {
	ix := &PromotionIndex{byKey: map[string]*keyLists{}, parents: make(map[string]string, len(categories)), names: make(map[string]string, len(categories))}
	for _, c := range categories {
		ix.parents[c.ID] = c.ParentID
		if c.Name == "" {
			continue
		}
		if _, dup := ix.names[c.Name]; dup {
			ix.names[c.Name] = ""
		} else {
			ix.names[c.Name] = c.ID
		}
	}
	addTo := func(l *valueLists, i int32) {
		ip := &ix.promos[i]
		switch {
		case ip.scanned():
			l.other = append(l.other, i)
		case ip.typ == PromotionPercentage:
			l.percent = append(l.percent, listEntry{promo: i})
		case ip.typ == PromotionAmount:
			l.amount = append(l.amount, listEntry{promo: i})
		default:
			l.fixed = append(l.fixed, listEntry{promo: i})
		}
	}
	add := func(kl *keyLists, i int32, locs []string) {
		if len(locs) == 0 {
			addTo(&kl.everywhere, i)
			return
		}
		for n, loc := range locs {
			if slices.Contains(locs[:n], loc) {
				continue // listed twice
			}
			if kl.at == nil {
				kl.at = map[string]*valueLists{}
			}
			l := kl.at[loc]
			if l == nil {
				l = &valueLists{}
				kl.at[loc] = l
			}
			addTo(l, i)
		}
	}
	for _, p := range promotions {
		ip, ok := indexPromotion(p)
		if !ok {
			continue
		}
		i := int32(len(ix.promos))
		ix.promos = append(ix.promos, ip)
		if p.UseForAllProducts || p.UseForAllCategories {
			add(&ix.all, i, p.LocationIDs)
			continue
		}
		for _, id := range p.ProductIDs {
			add(ix.list(productKey(id)), i, p.LocationIDs)
		}
		for _, id := range p.CategoryIDs {
			add(ix.list(categoryKey(id)), i, p.LocationIDs)
		}
	}
	orderKey := func(kl *keyLists) {
		for _, l := range append([]*valueLists{&kl.everywhere}, slices.Collect(maps.Values(kl.at))...) {
			for _, list := range [][]listEntry{l.percent, l.amount, l.fixed} {
				slices.SortFunc(list, func(a, b listEntry) int { return ix.listOrder(a.promo, b.promo) })
				for j := len(list) - 1; j >= 0; j-- {
					list[j].next = int32(j + 1)
					a := &ix.promos[list[j].promo]
					if j+1 < len(list) {
						if b := &ix.promos[list[j+1].promo]; a.priority == b.priority && a.percent == b.percent && a.amount == b.amount {
							list[j].next = list[j+1].next
						}
					}
				}
			}
		}
	}
	for _, kl := range ix.byKey {
		orderKey(kl)
	}
	orderKey(&ix.all)
	return ix
}

// listOrder orders a list of promotions of one type as evaluation ranks
// them on any line: by priority (highest first), then by value (the one
// that takes the most first: the highest Percentage or Amount, the lowest
// FixedPrice), then by id.
func (ix *PromotionIndex) listOrder(a, b int32) int {
	pa, pb := &ix.promos[a], &ix.promos[b]
	byAmount := cmp.Compare(pb.amount, pa.amount)
	if pa.typ == PromotionFixedPrice {
		byAmount = -byAmount
	}
	return cmp.Or(cmp.Compare(pb.priority, pa.priority), cmp.Compare(pb.percent, pa.percent), byAmount, cmp.Compare(a, b))
}

func (ix *PromotionIndex) list(key string) *keyLists {
	l := ix.byKey[key]
	if l == nil {
		l = &keyLists{}
		ix.byKey[key] = l
	}
	return l
}

// SetProductCategories gives the index the catalogue's products, so that a
// line without a category gets its product's without a store read. It is
// called before the index is shared.
func (ix *PromotionIndex) SetProductCategories(ps []*Product) {
	ix.products = make(map[string]string, len(ps))
	for _, p := range ps {
		ix.products[p.ID] = p.CategoryID
	}
}

// ProductCategory returns the catalogue's category of a product and
// whether the index knows the catalogue's products at all.
func (ix *PromotionIndex) ProductCategory(productID string) (string, bool) {
	if ix.products == nil {
		return "", false
	}
	return ix.products[productID], true
}

// Len is how many promotions the index holds.
func (ix *PromotionIndex) Len() int { return len(ix.promos) }

// LineCategory is the category a line is matched by: the one the POS named
// (a category id of the catalogue, else a category name of it, else the
// text as an id), or else the product's category in the catalogue.
func (ix *PromotionIndex) LineCategory(l *BasketLine) string {
	if l.Category == "" {
		return l.CatalogCategory
	}
	if _, ok := ix.parents[l.Category]; ok {
		return l.Category
	}
	if id := ix.names[l.Category]; id != "" {
		return id
	}
	return l.Category
}

// AppliedPromotion is a promotion that a basket triggered: what it took off
// in all, and the products of the lines it applied to.
type AppliedPromotion struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	PromotionType PromotionType `json:"promotionType"`
	Value         float64       `json:"value"`
	Discount      MinorUnits    `json:"discount"`
	ProductIDs    []string      `json:"productIds"`
}

// RejectionReason says why a promotion that targets a line did not apply to
// it (docs/api.md §18.2).
type RejectionReason string

// Rejection reasons, in the order evaluation tests them.
const (
	RejectCouponRequired  RejectionReason = "CouponRequired"        // requiresCoupon, and no presented coupon carries it
	RejectMinBasketAmount RejectionReason = "MinBasketAmountNotMet" // the basket's amount is below minBasketAmount
	RejectMinQuantity     RejectionReason = "MinQuantityNotMet"     // the quantity of its targeted lines is below minQuantity
	RejectBudgetExhausted RejectionReason = "BudgetExhausted"       // its budget is used up
	RejectLowerPriority   RejectionReason = "LowerPriority"         // a promotion of higher priority that it does not stack with applied
	RejectSmallerDiscount RejectionReason = "SmallerDiscount"       // one of the same priority that takes as much or more, and that it does not stack with, applied
	RejectNothingLeft     RejectionReason = "NothingLeft"           // the promotions applied before it left nothing for it to take
)

// MaxLineRejections is the most promotions a line's breakdown lists as not
// applied: the first ones in the order evaluation ranks them.
const MaxLineRejections = 3

// LinePromotion is a promotion applied to a line: what it took off the
// line, and the presented coupon that carries it ("" if none).
type LinePromotion struct {
	ID         string     `json:"id"`
	Discount   MinorUnits `json:"discount"`
	CouponCode string     `json:"couponCode,omitempty"`
}

// LineRejection is a promotion that targets a line but did not apply to it,
// and why; LostTo is the applied promotion that excluded it (for
// LowerPriority and SmallerDiscount).
type LineRejection struct {
	ID     string          `json:"id"`
	Reason RejectionReason `json:"reason"`
	LostTo string          `json:"lostTo,omitempty"`
}

// LineResult is what evaluation gave one line: its amount, the promotions
// applied to it in the order applied (PromotionID is the first, "" for
// none), their discount in all, and the first MaxLineRejections promotions
// that target it but did not apply.
type LineResult struct {
	Total       MinorUnits
	PromotionID string
	Discount    MinorUnits
	Applied     []LinePromotion
	NotApplied  []LineRejection
}

// CouponDiscount is what a presented coupon's promotion took off the
// basket (0 when it did not apply).
type CouponDiscount struct {
	Code        string
	PromotionID string
	Discount    MinorUnits
}

// Evaluation is the outcome of evaluating a basket.
type Evaluation struct {
	Promotions    []AppliedPromotion // ordered by id
	Lines         []LineResult       // one per line, in order
	Coupons       []CouponDiscount   // one per presented coupon, in order
	Subtotal      MinorUnits         // the lines' amounts
	TotalDiscount MinorUnits
	Total         MinorUnits // Subtotal - TotalDiscount
}

// EvaluationCoupon is a coupon presented with a basket, redeemable there
// (Coupon.Redeemability), and the promotion it carries ("" for none).
type EvaluationCoupon struct {
	Code        string
	PromotionID string
}

// EvaluationInput is a basket to evaluate: at a location of the company
// ("" for any; tests only), at a time, its lines, the presented redeemable
// coupons, the customer ("" for none) and which promotions are unavailable
// (their budget used up; nil: none).
type EvaluationInput struct {
	LocationID  string
	At          time.Time
	Lines       []BasketLine
	Coupons     []EvaluationCoupon
	CustomerID  string
	Unavailable func(promotionID string) bool
}

// Evaluate evaluates lines at a location and a time, without coupons,
// customer or budgets (EvaluateInput).
func (ix *PromotionIndex) Evaluate(locationID string, at time.Time, lines []BasketLine) (*Evaluation, error) {
	return ix.EvaluateInput(EvaluationInput{LocationID: locationID, At: at, Lines: lines})
}

// candidate is a promotion that targets a line: the discount it would take
// off the line's whole amount, and why it cannot apply ("" if it can).
type candidate struct {
	promo  int32
	disc   MinorUnits
	reject RejectionReason
}

// scannedHit is a line that a scanned promotion (indexedPromotion.scanned)
// targets.
type scannedHit struct{ promo, line int32 }

// EvaluateInput applies the promotions of the company that apply at a
// location at a time to a basket. This is the one statement of the rules
// (docs/api.md §18.2); the evaluate endpoint and the sale both call it.
//
//  1. A line's amount is unit price × quantity, rounded half to even to the
//     minor unit (EINVALID when it exceeds MaxPrice).
//  2. A promotion targets a line when it applies at the location at the
//     time (Promotion.AppliesAt) and names the line's product, its category
//     or one of that category's ancestors, or every product. It applies
//     through its first result. A BuyXGetY result with getProductIds
//     targets, for its discount, the lines of those products instead.
//  3. Its conditions are the basket's: minQuantity against the quantity of
//     the lines it names, minBasketAmount against the basket's amount before
//     any discount, requiresCoupon against the presented coupons; and
//     Unavailable (its budget).
//  4. A line ranks the promotions that target it by priority (highest
//     first), then by the discount each would take off the line's whole
//     amount (largest first), then by id. In that order each applies to
//     the line if its conditions are met and either nothing applied to the
//     line yet, or it and every promotion applied to the line are
//     stackable. A promotion that is not stackable is exclusive on its
//     lines: it applies alone.
//  5. Each applies to what the promotions applied before it on the line
//     left (sequential stacking), never below 0: a Percentage takes value %
//     of it; an Amount value off each unit (pro rata for fractions); a
//     FixedPrice makes the unit price value (nothing when it is not lower);
//     a BuyXGetY takes value % off its discounted units' share of it.
//  6. BuyXGetY: every whole unit of the lines it names counts; with
//     getProductIds, each buyQuantity units of the named lines other than
//     those products, and getQuantity units of those products, make one
//     application; without, each buyQuantity + getQuantity units of the
//     named lines make one. At most maxApplications (0: no limit). Its
//     discounted units are the applications × getQuantity cheapest units
//     of the lines it discounts (ties: the earlier line).
//
// Every discount rounds half to even to the minor unit. A promotion that
// would take nothing off a line's whole amount does not count as targeting
// it.
func (ix *PromotionIndex) EvaluateInput(in EvaluationInput) (*Evaluation, error) {
	lines := in.Lines
	ev := &Evaluation{Promotions: []AppliedPromotion{}, Coupons: []CouponDiscount{}, Lines: make([]LineResult, len(lines))}
	for n := range lines {
		total, fits := lines[n].Total()
		if !fits {
			return nil, Errorf(EINVALID, "Line %d: the price times the quantity must be at most %s.", n+1, MaxPrice)
		}
		ev.Lines[n].Total = total
		ev.Subtotal += total
	}
	// applies memoises ValidAt per promotion: 0 unknown, 1 yes, 2 no. The
	// location needs no test: the lists read (keyLists) hold only the
	// promotions that apply at it.
	buf := appliesPool.Get().(*[]uint8)
	if cap(*buf) < len(ix.promos) {
		*buf = make([]uint8, len(ix.promos))
	}
	applies := (*buf)[:len(ix.promos)]
	defer func() {
		clear(applies)
		appliesPool.Put(buf)
	}()
	ok := func(i int32) bool {
		if applies[i] == 0 {
			applies[i] = 2
			if validAt(ix.promos[i].validities, in.At) {
				applies[i] = 1
			}
		}
		return applies[i] == 1
	}
	var coupons map[string]string // promotion id → the first coupon carrying it
	for _, c := range in.Coupons {
		if c.PromotionID == "" {
			continue
		}
		if coupons == nil {
			coupons = map[string]string{}
		}
		if _, dup := coupons[c.PromotionID]; !dup {
			coupons[c.PromotionID] = c.Code
		}
	}
	var unavailable map[int32]bool
	// reject is why promotion i cannot apply; shortQty says that the lines
	// it names fall short of its minQuantity (known only once every line
	// has been read: see scannedCandidates).
	reject := func(i int32, shortQty bool) RejectionReason {
		ip := &ix.promos[i]
		switch {
		case ip.coupon && coupons[ip.id] == "":
			return RejectCouponRequired
		case ev.Subtotal < ip.minBasket:
			return RejectMinBasketAmount
		case shortQty:
			return RejectMinQuantity
		case in.Unavailable != nil:
			u, known := unavailable[i]
			if !known {
				if unavailable == nil {
					unavailable = map[int32]bool{}
				}
				u = in.Unavailable(ip.id)
				unavailable[i] = u
			}
			if u {
				return RejectBudgetExhausted
			}
		}
		return ""
	}

	// Each line's candidates from the ordered lists (cs[from[n]:from[n+1]]),
	// and the lines the scanned promotions target.
	sc := scratchPool.Get().(*evalScratch)
	defer func() {
		sc.cands, sc.from = sc.cands[:0], sc.from[:0]
		scratchPool.Put(sc)
	}()
	cs, from := sc.cands[:0], append(sc.from[:0], 0)
	var hits []scannedHit
	for n := range lines {
		l, total := &lines[n], ev.Lines[n].Total
		scan := func(vl *valueLists) {
			if vl == nil {
				return
			}
			for _, i := range vl.other {
				if ok(i) {
					hits = append(hits, scannedHit{i, int32(n)})
				}
			}
			if total == 0 {
				return
			}
			for _, list := range [3][]listEntry{vl.percent, vl.amount, vl.fixed} {
				cs = ix.take(cs, list, l, total, ok, reject)
			}
		}
		consider := func(kl *keyLists) {
			if kl == nil {
				return
			}
			scan(&kl.everywhere)
			if in.LocationID != "" {
				scan(kl.at[in.LocationID])
				return
			}
			// At no location, every promotion applies: a promotion of
			// several locations is in several lists (duplicates are
			// dropped below). Only tests evaluate at none.
			for _, vl := range kl.at {
				scan(vl)
			}
		}
		consider(ix.byKey[productKey(l.ProductID)])
		cat := ix.LineCategory(l)
		for depth := 0; cat != "" && depth <= len(ix.parents); depth++ {
			consider(ix.byKey[categoryKey(cat)])
			cat = ix.parents[cat]
		}
		consider(&ix.all)
		from = append(from, int32(len(cs)))
	}
	sc.cands, sc.from = cs, from
	var extra [][]candidate // the scanned promotions' candidates, by line
	if len(hits) > 0 {
		extra = make([][]candidate, len(lines))
		ix.scannedCandidates(extra, hits, lines, ev, reject)
	}

	// Each line applies its candidates in rank order.
	applied := map[int32]*AppliedPromotion{}
	appliedTo := make([]LinePromotion, len(lines))
	rejected := make([]LineRejection, len(lines)*MaxLineRejections)
	for n := range lines {
		cs := cs[from[n]:from[n+1]:from[n+1]]
		if extra != nil && len(extra[n]) > 0 {
			cs = append(cs, extra[n]...)
		}
		slices.SortFunc(cs, func(a, b candidate) int {
			return cmp.Or(cmp.Compare(ix.promos[b.promo].priority, ix.promos[a.promo].priority), cmp.Compare(b.disc, a.disc), cmp.Compare(a.promo, b.promo))
		})
		res := &ev.Lines[n]
		res.Applied, res.NotApplied = appliedTo[n:n:n+1], rejected[n*MaxLineRejections:n*MaxLineRejections:(n+1)*MaxLineRejections]
		left := res.Total
		var first int32 = -1
		allStackable := true
		for k, c := range cs {
			if k > 0 && cs[k-1].promo == c.promo {
				continue // found through two of the line's keys
			}
			ip := &ix.promos[c.promo]
			rej := LineRejection{ID: ip.id, Reason: c.reject}
			if rej.Reason == "" && first >= 0 && !(ip.stackable && allStackable) {
				rej.Reason, rej.LostTo = RejectSmallerDiscount, ix.promos[first].id
				if ix.promos[first].priority > ip.priority {
					rej.Reason = RejectLowerPriority
				}
			}
			var d MinorUnits
			if rej.Reason == "" {
				if d = ix.discountOf(c.promo, &lines[n], res.Total, left, c.disc); d == 0 {
					rej.Reason = RejectNothingLeft
				}
			}
			if rej.Reason != "" {
				if len(res.NotApplied) < MaxLineRejections {
					res.NotApplied = append(res.NotApplied, rej)
				}
				continue
			}
			if first < 0 {
				first, res.PromotionID = c.promo, ip.id
			}
			allStackable = allStackable && ip.stackable
			left -= d
			res.Discount += d
			res.Applied = append(res.Applied, LinePromotion{ID: ip.id, Discount: d, CouponCode: coupons[ip.id]})
			a := applied[c.promo]
			if a == nil {
				a = &AppliedPromotion{ID: ip.id, Name: ip.name, PromotionType: ip.typ, Value: ip.value, ProductIDs: []string{}}
				applied[c.promo] = a
			}
			a.Discount += d
			if !slices.Contains(a.ProductIDs, lines[n].ProductID) {
				a.ProductIDs = append(a.ProductIDs, lines[n].ProductID)
			}
		}
		ev.TotalDiscount += res.Discount
	}
	keys := slices.Sorted(maps.Keys(applied))
	for _, i := range keys {
		ev.Promotions = append(ev.Promotions, *applied[i])
	}
	for _, c := range in.Coupons {
		cd := CouponDiscount{Code: c.Code, PromotionID: c.PromotionID}
		if c.PromotionID != "" && coupons[c.PromotionID] == c.Code {
			for _, a := range ev.Promotions {
				if a.ID == c.PromotionID {
					cd.Discount = a.Discount
				}
			}
		}
		ev.Coupons = append(ev.Coupons, cd)
	}
	ev.Total = ev.Subtotal - ev.TotalDiscount
	return ev, nil
}

// take appends to cs the candidates of one ordered list (valueLists'
// percent, amount or fixed) for line l of amount total: only the first of
// them, as few as can matter. Each that can apply excludes those after it
// on the line (none of these is stackable), so the list is read until one
// that can apply has been taken and 1 + MaxLineRejections in all (what a
// line's breakdown can show), and then on while the next ranks the same
// (same priority and discount: the id decides). Of a run (listEntry), the
// entries past the first 1 + MaxLineRejections taken rank after them, so
// they are skipped once one that can apply has been taken.
func (ix *PromotionIndex) take(cs []candidate, list []listEntry, l *BasketLine, total MinorUnits, ok func(int32) bool, reject func(int32, bool) RejectionReason) []candidate {
	taken, usable := 0, false
	var last candidate
	for start := 0; start < len(list); {
		end, inRun := int(list[start].next), 0
		for pos := start; pos < end; pos++ {
			i := list[pos].promo
			if !ok(i) {
				continue
			}
			d := ix.discountOf(i, l, total, total, 0)
			if d == 0 {
				break // so does the rest of the run
			}
			if usable && taken > MaxLineRejections && (ix.promos[i].priority != ix.promos[last.promo].priority || d != last.disc) {
				return cs
			}
			last = candidate{promo: i, disc: d, reject: reject(i, false)}
			cs = append(cs, last)
			taken++
			inRun++
			usable = usable || last.reject == ""
			if usable && inRun > MaxLineRejections {
				break
			}
		}
		start = end
	}
	return cs
}

// scannedCandidates adds the candidates of the scanned promotions
// (indexedPromotion.scanned), whose targeted lines hits lists: their
// minQuantity is the sum of those lines' quantities, and a BuyXGetY's
// discount on a line depends on the whole basket.
func (ix *PromotionIndex) scannedCandidates(cands [][]candidate, hits []scannedHit, lines []BasketLine, ev *Evaluation, reject func(int32, bool) RejectionReason) {
	slices.SortFunc(hits, func(a, b scannedHit) int { return cmp.Or(cmp.Compare(a.promo, b.promo), cmp.Compare(a.line, b.line)) })
	hits = slices.Compact(hits) // a line may name a promotion through two keys
	for start := 0; start < len(hits); {
		end := start + 1
		for end < len(hits) && hits[end].promo == hits[start].promo {
			end++
		}
		i, named := hits[start].promo, hits[start:end]
		start = end
		ip := &ix.promos[i]
		var qty int64
		for _, h := range named {
			qty += lines[h.line].Quantity
		}
		rej := reject(i, qty < ip.minQty)
		if ip.typ != PromotionBuyXGetY {
			for _, h := range named {
				if d := ix.discountOf(i, &lines[h.line], ev.Lines[h.line].Total, ev.Lines[h.line].Total, 0); d > 0 {
					cands[h.line] = append(cands[h.line], candidate{promo: i, disc: d, reject: rej})
				}
			}
			continue
		}
		for n, units := range ix.buyXGetY(ip, named, lines) {
			if units == 0 {
				continue
			}
			d, _ := mulDivRound(int64(lines[n].UnitPrice)*units, ip.percent, 100*10_000)
			if d = min(d, int64(ev.Lines[n].Total)); d > 0 {
				cands[n] = append(cands[n], candidate{promo: i, disc: MinorUnits(d), reject: rej})
			}
		}
	}
}

// buyXGetY returns, per line, the units a BuyXGetY promotion discounts
// (rule 6 of EvaluateInput), given the lines it names.
func (ix *PromotionIndex) buyXGetY(ip *indexedPromotion, named []scannedHit, lines []BasketLine) []int64 {
	units := func(n int32) int64 { return lines[n].Quantity / 1000 }
	var gets []int32
	var sets int64
	if ip.getProducts == nil {
		var all int64
		for _, h := range named {
			all += units(h.line)
			gets = append(gets, h.line)
		}
		sets = all / (ip.buy + ip.get)
	} else {
		var bought, got int64
		for n := range lines {
			if slices.Contains(ip.getProducts, lines[n].ProductID) {
				got += units(int32(n))
				gets = append(gets, int32(n))
			} else if slices.ContainsFunc(named, func(h scannedHit) bool { return h.line == int32(n) }) {
				bought += units(int32(n))
			}
		}
		sets = min(bought/ip.buy, got/ip.get)
	}
	if ip.maxApps > 0 {
		sets = min(sets, ip.maxApps)
	}
	free := sets * ip.get
	slices.SortStableFunc(gets, func(a, b int32) int {
		return cmp.Or(cmp.Compare(lines[a].UnitPrice, lines[b].UnitPrice), cmp.Compare(a, b))
	})
	out := make([]int64, len(lines))
	for _, n := range gets {
		u := min(free, units(n))
		out[n] = u
		free -= u
	}
	return out
}

// discountOf is what promotion i takes off line l, of amount total, when
// the promotions applied before it left left of it (rule 5 of
// EvaluateInput); whole is a BuyXGetY's discount on the whole amount.
func (ix *PromotionIndex) discountOf(i int32, l *BasketLine, total, left, whole MinorUnits) MinorUnits {
	ip := &ix.promos[i]
	var d int64
	switch ip.typ {
	case PromotionPercentage:
		d, _ = mulDivRound(int64(left), ip.percent, 100*10_000) // ≤ left: never overflows
	case PromotionAmount:
		var fits bool
		if d, fits = mulDivRound(int64(ip.amount), l.Quantity, 1000); !fits {
			d = int64(left)
		}
	case PromotionFixedPrice:
		price, fits := mulDivRound(int64(ip.amount), l.Quantity, 1000)
		if fits && price < int64(left) {
			d = int64(left) - price
		}
	case PromotionBuyXGetY:
		d = int64(whole)
		if left < total {
			d, _ = mulDivRound(int64(whole), int64(left), int64(total))
		}
	}
	return MinorUnits(min(d, int64(left)))
}

// String renders an evaluation's figures for logs and tests.
func (ev *Evaluation) String() string {
	return fmt.Sprintf("subtotal %s, discount %s, %d promotions", ev.Subtotal, ev.TotalDiscount, len(ev.Promotions))
}
