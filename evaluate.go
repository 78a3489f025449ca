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
// list ordered by value (best first), so that a line finds its best
// promotion by looking at few of them. It is built once and read by many
// evaluations at once; it never changes.
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
// validity periods and first result, in the units evaluation computes in.
// It keeps no pointer to the Promotion, so that the rest of it (its product,
// category and location lists, its dates) is freed once the index is
// built: a company's index lives as long as it is evaluated, and each
// megabyte of live heap is three of resident memory at posgate's collector
// setting (docs/decisions.md).
type indexedPromotion struct {
	id, name   string
	value      float64 // the first result's, as imported
	validities []PromotionValidity
	typ        PromotionType
	percent    int64      // Percentage: value × 10^percentScale
	amount     MinorUnits // Amount: value off each unit
}

// valueLists are indexes of promotions, Percentage ones and Amount ones
// apart, each ordered by value from the largest, then by id.
type valueLists struct{ percent, amount []listEntry }

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

// listEntry is a promotion of a valueLists list and the position of the
// list's next entry of a lower value: entries of one value take the same
// off a line and the first that applies has the lowest id, so a scan skips
// the rest of them.
type listEntry struct{ promo, next int32 }

// Keys of PromotionIndex.byKey.
func productKey(id string) string  { return "p\x00" + id }
func categoryKey(id string) string { return "c\x00" + id }

// NewPromotionIndex arranges a company's promotions (ordered by id, as
// stores list them) and categories for evaluation. A promotion applies to a
// line through its first result (docs/decisions.md); one without a result,
// or whose value cannot be used, applies to nothing.
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
		if ix.promos[i].typ == PromotionPercentage {
			l.percent = append(l.percent, listEntry{promo: i})
		} else {
			l.amount = append(l.amount, listEntry{promo: i})
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
		if len(p.Results) == 0 {
			continue
		}
		r := p.Results[0]
		ip := indexedPromotion{id: p.ID, name: p.Name, value: r.Value, validities: p.Validities, typ: r.PromotionType}
		text := Decimal(strconv.FormatFloat(r.Value, 'f', -1, 64))
		switch r.PromotionType {
		case PromotionPercentage:
			v, _, err := text.Scaled(percentScale)
			if err != nil || v <= 0 || v > 100*10_000 {
				continue
			}
			ip.percent = v
		case PromotionAmount:
			v, err := text.MinorUnits()
			if err != nil || v <= 0 || v > MaxPrice {
				continue
			}
			ip.amount = v
		default:
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
	order := func(l []listEntry) {
		slices.SortFunc(l, func(a, b listEntry) int {
			pa, pb := &ix.promos[a.promo], &ix.promos[b.promo]
			return cmp.Or(cmp.Compare(pb.percent, pa.percent), cmp.Compare(pb.amount, pa.amount), cmp.Compare(a.promo, b.promo))
		})
		for j := len(l) - 1; j >= 0; j-- {
			l[j].next = int32(j + 1)
			if j+1 < len(l) && ix.promos[l[j].promo].percent == ix.promos[l[j+1].promo].percent && ix.promos[l[j].promo].amount == ix.promos[l[j+1].promo].amount {
				l[j].next = l[j+1].next
			}
		}
	}
	orderKey := func(kl *keyLists) {
		for _, l := range append([]*valueLists{&kl.everywhere}, slices.Collect(maps.Values(kl.at))...) {
			order(l.percent)
			order(l.amount)
		}
	}
	for _, kl := range ix.byKey {
		orderKey(kl)
	}
	orderKey(&ix.all)
	return ix
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
// in all, and the products of the lines it was the best promotion of.
type AppliedPromotion struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	PromotionType PromotionType `json:"promotionType"`
	Value         float64       `json:"value"`
	Discount      MinorUnits    `json:"discount"`
	ProductIDs    []string      `json:"productIds"`
}

// LineResult is what evaluation gave one line: its amount, its best
// promotion ("" for none) and that promotion's discount on it.
type LineResult struct {
	Total       MinorUnits
	PromotionID string
	Discount    MinorUnits
}

// Evaluation is the outcome of evaluating a basket.
type Evaluation struct {
	Promotions    []AppliedPromotion // ordered by id
	Lines         []LineResult       // one per line, in order
	Subtotal      MinorUnits         // the lines' amounts
	TotalDiscount MinorUnits
}

// Evaluate applies the promotions that apply at a location of the company
// at a time to a basket (docs/api.md §18.2): each line gets the single
// promotion that takes the most off it (ties: the lower id), if any takes
// anything. A Percentage takes value % of the line's amount, an Amount
// value off each unit (pro rata for fractions of a unit), never more than
// the line's amount; both round half to even to the minor unit. A line
// whose amount exceeds MaxPrice is an EINVALID error.
func (ix *PromotionIndex) Evaluate(locationID string, at time.Time, lines []BasketLine) (*Evaluation, error) {
	ev := &Evaluation{Promotions: []AppliedPromotion{}, Lines: make([]LineResult, len(lines))}
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
			if validAt(ix.promos[i].validities, at) {
				applies[i] = 1
			}
		}
		return applies[i] == 1
	}
	applied := map[int32]*AppliedPromotion{}
	for n := range lines {
		l := &lines[n]
		total, fits := l.Total()
		if !fits {
			return nil, Errorf(EINVALID, "Line %d: the price times the quantity must be at most %s.", n+1, MaxPrice)
		}
		ev.Subtotal += total
		res := &ev.Lines[n]
		res.Total = total
		best, bestDisc := int32(-1), MinorUnits(0)
		scan := func(vl *valueLists) {
			if vl == nil {
				return
			}
			for _, list := range [2][]listEntry{vl.percent, vl.amount} {
				top := MinorUnits(-1)
				for pos := 0; pos < len(list); {
					i := list[pos].promo
					if !ok(i) {
						pos++
						continue
					}
					d := ix.discount(i, l, total)
					if d == 0 || (top >= 0 && d < top) {
						break // the list is ordered by value: no later one takes more
					}
					top = d
					if d > bestDisc || (d == bestDisc && i < best) {
						best, bestDisc = i, d
					}
					// Lower values may still tie (a cut Amount, rounding).
					pos = int(list[pos].next)
				}
			}
		}
		consider := func(kl *keyLists) {
			if kl == nil {
				return
			}
			scan(&kl.everywhere)
			if locationID != "" {
				scan(kl.at[locationID])
				return
			}
			// At no location, every promotion applies: a promotion of
			// several locations is in several lists, which a scan may
			// meet twice without harm. Only tests evaluate at none.
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
		if best < 0 {
			continue
		}
		ip := &ix.promos[best]
		res.PromotionID, res.Discount = ip.id, bestDisc
		ev.TotalDiscount += bestDisc
		a := applied[best]
		if a == nil {
			a = &AppliedPromotion{ID: ip.id, Name: ip.name, PromotionType: ip.typ, Value: ip.value, ProductIDs: []string{}}
			applied[best] = a
		}
		a.Discount += bestDisc
		if !slices.Contains(a.ProductIDs, l.ProductID) {
			a.ProductIDs = append(a.ProductIDs, l.ProductID)
		}
	}
	keys := make([]int32, 0, len(applied))
	for i := range applied {
		keys = append(keys, i)
	}
	slices.Sort(keys)
	for _, i := range keys {
		ev.Promotions = append(ev.Promotions, *applied[i])
	}
	return ev, nil
}

// discount is what promotion i takes off line l, whose amount is total.
func (ix *PromotionIndex) discount(i int32, l *BasketLine, total MinorUnits) MinorUnits {
	ip := &ix.promos[i]
	if ip.typ == PromotionPercentage {
		d, _ := mulDivRound(int64(total), ip.percent, 100*10_000) // ≤ total: never overflows
		return MinorUnits(d)
	}
	d, fits := mulDivRound(int64(ip.amount), l.Quantity, 1000)
	if !fits || MinorUnits(d) > total {
		return total
	}
	return MinorUnits(d)
}

// String renders an evaluation's figures for logs and tests.
func (ev *Evaluation) String() string {
	return fmt.Sprintf("subtotal %s, discount %s, %d promotions", ev.Subtotal, ev.TotalDiscount, len(ev.Promotions))
}
