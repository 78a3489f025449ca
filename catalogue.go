package posgate

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CatalogueStore holds a company's catalogue: its product categories (a
// tree) and its products (docs/api.md §17). The catalogue is what the
// promotion import's warnings check (docs/api.md §9.3) and what promotion
// evaluation (docs/api.md §18) follows from a product to its categories.
//
// Semantics every implementation follows, beyond Store's conventions:
//   - Categories and products are keyed by (POS system, company, id) and
//     upserted whole by their imports; nothing is merged. A row that an
//     import leaves unchanged is not rewritten: its UpdatedAt stays.
//   - The stored categories never form a cycle and every stored parent id
//     names a stored category: ImportCategories hands its plan the stored
//     tree inside the import's write transaction, so two imports cannot
//     interleave their checks.
//   - Lists are ordered by id; times in UTC, truncated to microseconds.
type CatalogueStore interface {
	// FindCatalogue returns the ids of a company's categories and products
	// (ENOTFOUND only when the company does not exist).
	FindCatalogue(ctx context.Context, posSystemID, companyID string) (*Catalogue, error)
	// ReplaceCatalogue makes the company's categories and products exactly
	// the ids of c: ids it lacks are removed, new ones are added with no
	// other field, and those kept keep their fields (ENOTFOUND when the
	// company does not exist; ECONFLICT when a kept category's parent would
	// be removed).
	ReplaceCatalogue(ctx context.Context, c *Catalogue) error

	// ImportProducts upserts products of a company in one transaction and
	// reports how many were created and how many replaced a stored one
	// (ENOTFOUND when the company does not exist). The ids are distinct.
	ImportProducts(ctx context.Context, posSystemID, companyID string, products []*Product) (created, updated int, err error)
	// ImportCategories runs an import of categories in one write
	// transaction: it reads the company's stored tree (category id →
	// parent id), hands it to plan, and upserts the categories plan returns
	// (distinct ids; plan keeps the tree acyclic). An error of plan aborts
	// the import.
	ImportCategories(ctx context.Context, posSystemID, companyID string, plan func(stored map[string]string) ([]*Category, error)) (created, updated int, err error)

	// ListProducts and ListCategories return a page of the company's
	// products or categories ordered by id (limit <= 0: all), with how many
	// it has in all.
	ListProducts(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*Product, int, error)
	ListCategories(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*Category, int, error)
	// FindProducts returns the company's products among ids, in no
	// particular order; unknown ids are left out.
	FindProducts(ctx context.Context, posSystemID, companyID string, ids []string) ([]*Product, error)

	// PromotionStamp returns a short text that changes whenever the
	// company's promotions, categories or products change (an import that
	// writes any, a catalogue replacement), so that a cache of what
	// evaluation reads can be revalidated without reading it all.
	PromotionStamp(ctx context.Context, posSystemID, companyID string) (string, error)
}

// MaxCatalogueImportItems is the most items one products or categories
// import may hold, as for promotions (docs/api.md §17.1).
const MaxCatalogueImportItems = MaxPromotionImportItems

// MaxCatalogueTextLen is the longest name, category name or manufacturer of
// a catalogue entry, in bytes.
const MaxCatalogueTextLen = 500

// MaxPrice is the largest price, in minor units: 1,000,000,000.00, the
// bound of every amount posgate keeps.
const MaxPrice MinorUnits = 100_000_000_000

// Category is a product category of a company (docs/api.md §17.2).
// ParentID "" makes it a root of the tree.
type Category struct {
	POSSystemID string    `json:"posSystemId"`
	CompanyID   string    `json:"posCompanyId"`
	ID          string    `json:"posProductCategoryId"`
	Name        string    `json:"name"`
	ParentID    string    `json:"posProductParentCategoryId"`
	CatalogID   string    `json:"posCatalogId"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Product is a product of a company (docs/api.md §17.1). CategoryID names
// its category (which need not be in the catalogue: that is a warning);
// Price is its unit price, nil when the POS gave none.
type Product struct {
	POSSystemID  string      `json:"posSystemId"`
	CompanyID    string      `json:"posCompanyId"`
	ID           string      `json:"productId"`
	Name         string      `json:"productName"`
	CategoryID   string      `json:"productCategoryId"`
	CategoryName string      `json:"productCategory"`
	Manufacturer string      `json:"manufacturer"`
	Price        *MinorUnits `json:"price"`
	CreatedAt    time.Time   `json:"createdAt"`
	UpdatedAt    time.Time   `json:"updatedAt"`
}

// MinorUnits is the catalogue's and the promotion evaluation's name for an
// Amount: money as a whole number of the currency's minor units (cents),
// never floating point, written in JSON as a number with two decimals. One
// type, so that a price, a discount and a sale's amount add up without
// conversions.
type MinorUnits = Amount

// Decimal is a number as a request wrote it (JSON number text), kept as
// text so that money and quantities are read exactly, never rounded through
// float64. "" is an absent number (null, or missing).
type Decimal string

// UnmarshalJSON takes a JSON number as it is written; null is absent.
// Anything else is refused, so that the body decoder reports the property
// as "must be a number".
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*d = ""
		return nil
	}
	if _, _, err := scaleDecimal(s, 0); err != nil {
		return fmt.Errorf("not a number")
	}
	*d = Decimal(s)
	return nil
}

// DecimalNumber marks Decimal as a number for the body decoder's schema
// (internal/codec), which reads XML text as a JSON number for it.
func (Decimal) DecimalNumber() {}

// Scaled returns the number times 10^scale, rounded half to even, and
// whether no rounding was needed; an error when the text is not a number or
// the result does not fit in 63 bits.
func (d Decimal) Scaled(scale int) (v int64, exact bool, err error) {
	return scaleDecimal(string(d), scale)
}

// MinorUnits returns the number as money: rounded half to even to two
// decimals.
func (d Decimal) MinorUnits() (MinorUnits, error) {
	v, _, err := scaleDecimal(string(d), 2)
	return MinorUnits(v), err
}

// errDecimal is what scaleDecimal reports for text that is not a number or
// whose value is out of range.
var errDecimal = fmt.Errorf("not a decimal number within range")

// scaleDecimal returns the JSON number s times 10^scale, rounded half to
// even, computed on its digits (exactly), and whether it was exact.
func scaleDecimal(s string, scale int) (int64, bool, error) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 400 || e < -400 {
			return 0, false, errDecimal
		}
		mant, exp = s[:i], e
	}
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if intPart == "" || (hasDot && frac == "") || !allDigits(intPart) || !allDigits(frac) {
		return 0, false, errDecimal
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	shift := exp - len(frac) + scale
	if digits == "" {
		return 0, true, nil
	}
	var n uint64
	exact := true
	if shift >= 0 {
		if len(digits)+shift > 18 {
			return 0, false, errDecimal
		}
		n, _ = strconv.ParseUint(digits, 10, 64)
		for range shift {
			n *= 10
		}
	} else {
		k := -shift
		keep, drop := "", digits
		if k < len(digits) {
			keep, drop = digits[:len(digits)-k], digits[len(digits)-k:]
		} else {
			drop = strings.Repeat("0", k-len(digits)) + digits
		}
		if len(keep) > 18 {
			return 0, false, errDecimal
		}
		if keep != "" {
			n, _ = strconv.ParseUint(keep, 10, 64)
		}
		rest := strings.TrimRight(drop[1:], "0")
		exact = drop[0] == '0' && rest == ""
		switch {
		case drop[0] > '5', drop[0] == '5' && rest != "", drop[0] == '5' && n%2 == 1:
			n++
		}
	}
	v := int64(n)
	if neg {
		v = -v
	}
	return v, exact, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// mulDivRound returns a×b/d rounded half to even, for a, b >= 0 and d > 0,
// and false when the result does not fit in 63 bits.
func mulDivRound(a, b, d int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(d) {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, uint64(d))
	if twice := 2 * r; twice > uint64(d) || (twice == uint64(d) && q%2 == 1) { // r < d < 2^63: no overflow
		q++
	}
	if q > 1<<63-1 {
		return 0, false
	}
	return int64(q), true
}

// ProductChecker applies the item checks of docs/api.md §17.1 to the items
// of one products import, in order, and collects the result's errors and
// warnings. It holds the company's category ids, so that checking an item
// costs no store access.
type ProductChecker struct {
	companyID  string
	categories map[string]bool
	rows       map[string]int
	accepted   []*Product
	warning    string
	errors     []ImportError
	warnings   []ImportWarning
}

// NewProductChecker returns a checker for a products import into a company
// whose catalogue holds these category ids.
func NewProductChecker(companyID string, categoryIDs []string) *ProductChecker {
	c := &ProductChecker{companyID: companyID, categories: promoSet(categoryIDs), rows: make(map[string]int, 1024)}
	c.warning = fmt.Sprintf("The product's category is not in the catalogue of company '%s'; the product is imported anyway.", companyID)
	return c
}

// ProductItem is an item of a products import as the request wrote it;
// Price is kept as written so that it is read exactly.
type ProductItem struct {
	ProductID         string
	ProductName       string
	ProductCategoryID string
	ProductCategory   string
	Manufacturer      string
	Price             Decimal
}

// Check checks item number row (1-based) and, when it passes, keeps it as
// a product to store; it records the item's errors or warning. Only the
// first item with a given id can be stored.
func (c *ProductChecker) Check(row int, posSystemID string, it *ProductItem) bool {
	n := len(c.errors)
	fail := func(msg, details string) {
		c.errors = append(c.errors, ImportError{EntityID: it.ProductID, RowNumber: row, ErrorMessage: msg, ErrorDetails: details})
	}
	checkImportID(fail, c.rows, row, "productId", it.ProductID)
	for _, f := range []struct{ name, v string }{{"productName", it.ProductName}, {"productCategory", it.ProductCategory}, {"manufacturer", it.Manufacturer}} {
		if len(f.v) > MaxCatalogueTextLen {
			fail(fmt.Sprintf("The %s field must be at most %d bytes.", f.name, MaxCatalogueTextLen), fmt.Sprintf("%s: %d bytes", f.name, len(f.v)))
		}
	}
	if it.ProductCategoryID != "" && !ValidKey(it.ProductCategoryID) {
		fail(KeyMessage("productCategoryId"), "productCategoryId: "+promoQuote(it.ProductCategoryID))
	}
	var price *MinorUnits
	if it.Price != "" {
		p, err := it.Price.MinorUnits()
		switch {
		case p < 0 || (err != nil && strings.HasPrefix(string(it.Price), "-")):
			fail("The price must not be negative.", "price: "+string(it.Price))
		case err != nil || p > MaxPrice:
			fail(fmt.Sprintf("The price must be at most %s.", MaxPrice), "price: "+string(it.Price))
		default:
			price = &p
		}
	}
	if len(c.errors) > n {
		return false
	}
	if it.ProductCategoryID != "" && !c.categories[it.ProductCategoryID] {
		c.warnings = append(c.warnings, ImportWarning{EntityID: it.ProductID, RowNumber: row, Message: c.warning,
			Details: "productCategoryId: " + promoQuote(it.ProductCategoryID)})
	}
	c.accepted = append(c.accepted, &Product{POSSystemID: posSystemID, CompanyID: c.companyID, ID: it.ProductID, Name: it.ProductName,
		CategoryID: it.ProductCategoryID, CategoryName: it.ProductCategory, Manufacturer: it.Manufacturer, Price: price})
	return true
}

// Accepted returns the products that passed, in request order.
func (c *ProductChecker) Accepted() []*Product { return c.accepted }

// Result returns the import result for the counts the store reported.
func (c *ProductChecker) Result(created, updated int) *ImportResult {
	return importResult(c.errors, c.warnings, created, updated)
}

// checkImportID checks a required item id: given, a valid identifier
// (docs/api.md §1.4), and not given by an earlier item (rows records the
// first row of each id).
func checkImportID(fail func(msg, details string), rows map[string]int, row int, field, id string) {
	switch {
	case id == "":
		fail(fmt.Sprintf("The %s field is required.", field), field+": missing or empty")
	case !ValidKey(id):
		fail(KeyMessage(field), field+": "+promoQuote(id))
	default:
		if first, ok := rows[id]; ok {
			fail(fmt.Sprintf("The %s '%s' is given more than once in this request; only its first item (row %d) is imported.", field, id, first),
				fmt.Sprintf("%s: %s also on row %d", field, promoQuote(id), first))
		} else {
			rows[id] = row
		}
	}
}

// importResult builds an import result (docs/api.md §9.4) from its errors,
// warnings and counts.
func importResult(errs []ImportError, warns []ImportWarning, created, updated int) *ImportResult {
	r := &ImportResult{CreatedCount: created, UpdatedCount: updated, Errors: errs, Warnings: warns}
	if r.Errors == nil {
		r.Errors = []ImportError{}
	}
	if r.Warnings == nil {
		r.Warnings = []ImportWarning{}
	}
	switch {
	case len(errs) == 0:
		r.Status = ImportCompleted
	case created+updated > 0:
		r.Status = ImportCompletedWithErrors
	default:
		r.Status = ImportFailed
	}
	return r
}

// CategoryItem is an item of a categories import as the request wrote it.
type CategoryItem struct {
	Name                       string
	PosProductParentCategoryID string
	PosProductCategoryID       string
	PosCatalogID               string
}

// CategoryChecker applies the item checks of docs/api.md §17.2 to a
// categories import. The checks of an item alone run as items arrive
// (Check); those that need the whole tree (the parent exists, no cycle)
// run in Plan, which the store calls with its stored tree inside the
// import's transaction.
type CategoryChecker struct {
	posSystemID, companyID string
	rows                   map[string]int
	items                  []categoryRow // items that passed Check, in order
	failedRows             map[string]int
	errors                 []ImportError
	accepted               int
}

type categoryRow struct {
	row int
	c   *Category
}

// NewCategoryChecker returns a checker for a categories import into a
// company.
func NewCategoryChecker(posSystemID, companyID string) *CategoryChecker {
	return &CategoryChecker{posSystemID: posSystemID, companyID: companyID, rows: make(map[string]int, 1024), failedRows: map[string]int{}}
}

// Check runs the checks of item number row (1-based) that need nothing
// else: the ids and the lengths. An item that passes waits for Plan.
func (c *CategoryChecker) Check(row int, it *CategoryItem) {
	n := len(c.errors)
	fail := func(msg, details string) {
		c.errors = append(c.errors, ImportError{EntityID: it.PosProductCategoryID, RowNumber: row, ErrorMessage: msg, ErrorDetails: details})
	}
	_, repeated := c.rows[it.PosProductCategoryID]
	checkImportID(fail, c.rows, row, "posProductCategoryId", it.PosProductCategoryID)
	switch {
	case it.Name == "":
		fail("The name field is required.", "name: missing or empty")
	case len(it.Name) > MaxCatalogueTextLen:
		fail(fmt.Sprintf("The name field must be at most %d bytes.", MaxCatalogueTextLen), fmt.Sprintf("name: %d bytes", len(it.Name)))
	}
	if p := it.PosProductParentCategoryID; p != "" && !ValidKey(p) {
		fail(KeyMessage("posProductParentCategoryId"), "posProductParentCategoryId: "+promoQuote(p))
	} else if p != "" && p == it.PosProductCategoryID {
		fail("A category cannot be its own parent.", "posProductParentCategoryId: "+promoQuote(p))
	}
	if len(it.PosCatalogID) > MaxKeyLen {
		fail(fmt.Sprintf("The posCatalogId field must be at most %d bytes.", MaxKeyLen), fmt.Sprintf("posCatalogId: %d bytes", len(it.PosCatalogID)))
	}
	if len(c.errors) > n {
		if !repeated && ValidKey(it.PosProductCategoryID) {
			c.failedRows[it.PosProductCategoryID] = row
		}
		return
	}
	c.items = append(c.items, categoryRow{row, &Category{POSSystemID: c.posSystemID, CompanyID: c.companyID, ID: it.PosProductCategoryID,
		Name: it.Name, ParentID: it.PosProductParentCategoryID, CatalogID: it.PosCatalogID}})
}

// Plan runs the checks that need the whole tree, against the stored tree
// (category id → parent id): every item's parent must be a category of the
// request or of the store, and following parents from it must reach a root
// without coming back (across the request and the store alike). It returns
// the categories to store. An item whose parent chain fails is an error;
// an item that is not stored leaves the stored category of its id (if any)
// as it was, and no stored category becomes an orphan or part of a cycle.
func (c *CategoryChecker) Plan(stored map[string]string) ([]*Category, error) {
	// The tree as it would be: the stored one with the checked items'
	// parents.
	parent := make(map[string]string, len(stored)+len(c.items))
	for id, p := range stored {
		parent[id] = p
	}
	rowOf := make(map[string]int, len(c.items))
	for _, it := range c.items {
		parent[it.c.ID] = it.c.ParentID
		rowOf[it.c.ID] = it.row
	}
	// state per id: 0 unvisited, 1 on the current path, 2 reaches a root,
	// 3 fails. reason holds the failing ids' error.
	state := make(map[string]uint8, len(parent))
	type failure struct{ msg, details string }
	reason := map[string]failure{}
	var path []string
	walk := func(start string) {
		path = path[:0]
		for id := start; ; {
			st := state[id]
			if st == 2 || st == 3 {
				break
			}
			if st == 1 { // a cycle: the ids from id's place on the path on
				i := len(path) - 1
				for path[i] != id {
					i--
				}
				quoted := make([]string, 0, len(path)-i+1)
				for _, x := range append(path[i:len(path):len(path)], id) {
					quoted = append(quoted, promoQuote(x))
				}
				for _, x := range path[i:] {
					state[x] = 3
					reason[x] = failure{"The parent categories form a cycle: a category cannot be its own ancestor.",
						"posProductParentCategoryId: " + strings.Join(quoted, " > ")}
				}
				break
			}
			p, known := parent[id]
			if !known { // a missing parent; the walk starts at known ids
				break
			}
			state[id] = 1
			path = append(path, id)
			if p == "" {
				state[id] = 2
				break
			}
			id = p
		}
		// Unwind: each id still on the path takes its parent's outcome.
		for i := len(path) - 1; i >= 0; i-- {
			x := path[i]
			if state[x] != 1 {
				continue
			}
			p := parent[x]
			switch {
			case !isKnown(parent, p):
				state[x] = 3
				details := "posProductParentCategoryId: " + promoQuote(p)
				if r, ok := c.failedRows[p]; ok {
					details += fmt.Sprintf(" (row %d, which has errors)", r)
				}
				reason[x] = failure{fmt.Sprintf("The parent category '%s' is neither in this request nor in the catalogue of company '%s'.", p, c.companyID), details}
			case state[p] == 2:
				state[x] = 2
			default:
				state[x] = 3
				reason[x] = failure{fmt.Sprintf("The parent category '%s' cannot be stored, so neither can this one.", p),
					"posProductParentCategoryId: " + promoQuote(p) + " (" + reason[p].msg + ")"}
			}
		}
	}
	out := make([]*Category, 0, len(c.items))
	for _, it := range c.items {
		if state[it.c.ID] == 0 {
			walk(it.c.ID)
		}
		if state[it.c.ID] == 2 {
			out = append(out, it.c)
			continue
		}
		r := reason[it.c.ID]
		c.errors = append(c.errors, ImportError{EntityID: it.c.ID, RowNumber: it.row, ErrorMessage: r.msg, ErrorDetails: r.details})
	}
	// Errors in row order, as the other imports report them.
	slices.SortStableFunc(c.errors, func(a, b ImportError) int { return a.RowNumber - b.RowNumber })
	c.accepted = len(out)
	return out, nil
}

func isKnown(parent map[string]string, id string) bool {
	_, ok := parent[id]
	return ok
}

// Pending is how many items passed the checks of the items alone.
func (c *CategoryChecker) Pending() int { return len(c.items) }

// Result returns the import result for the counts the store reported.
func (c *CategoryChecker) Result(created, updated int) *ImportResult {
	return importResult(c.errors, nil, created, updated)
}

// IDChange compares a stored set of ids with the wanted one: the ids to
// remove and those to add.
func IDChange(stored, want []string) (gone, added []string) {
	w := promoSet(want)
	s := promoSet(stored)
	for _, id := range stored {
		if !w[id] {
			gone = append(gone, id)
		}
	}
	for _, id := range want {
		if !s[id] {
			added = append(added, id)
			s[id] = true
		}
	}
	return gone, added
}

// CatalogueChange is IDChange for the categories of a catalogue
// replacement against the stored tree (id → parent id); a kept category
// whose parent would be removed is ECONFLICT, since the tree would lose a
// node in its middle.
func CatalogueChange(stored map[string]string, c *Catalogue) (gone, added []string, err error) {
	ids := make([]string, 0, len(stored))
	for id := range stored {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	gone, added = IDChange(ids, c.CategoryIDs)
	removed := promoSet(gone)
	for _, id := range ids {
		if p := stored[id]; p != "" && !removed[id] && removed[p] {
			return nil, nil, Errorf(ECONFLICT, "Category '%s' has the parent '%s', which the catalogue would no longer hold; list '%s' too, or re-import the categories.", id, p, p)
		}
	}
	return gone, added, nil
}
