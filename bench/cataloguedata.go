package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/benchkeys"
)

// The catalogue rows: promotion evaluation of a 20-line basket against
// 10,000 promotions of a company (docs/api.md §18), and one import of
// 100,000 products (docs/api.md §17.1). Each uses a company of its own, so
// that the promotion import row's catalogue and promotions do not meet them.

// The evaluation row's data set is benchkeys' (benchkeys.EvalPromotion).
const (
	evalCompany = "bench-eval"
	evalAt      = "2030-07-06T09:00:00Z" // a Saturday morning
)

// loadEvaluation creates the evaluation row's company, locations,
// catalogue and promotions through the store, with posgate's own checks.
func loadEvaluation(ctx context.Context, e *env) error {
	st, pos := e.Store, e.Data.POSSystem
	if err := st.CreateCompany(ctx, &posgate.Company{POSSystemID: pos, ID: evalCompany, Name: "Evaluation company",
		Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()}); err != nil {
		return fmt.Errorf("evaluation: %w", err)
	}
	var locs []string
	for i := range benchkeys.EvalLocations {
		locs = append(locs, benchkeys.EvalLocation(i))
		if err := st.CreateLocation(ctx, &posgate.Location{POSSystemID: pos, ID: benchkeys.EvalLocation(i), CompanyID: evalCompany,
			Name: "Evaluation store", Status: posgate.StatusActive}); err != nil {
			return fmt.Errorf("evaluation: %w", err)
		}
	}
	cc := posgate.NewCategoryChecker(pos, evalCompany)
	row := 0
	for top := range 10 {
		row++
		cc.Check(row, &posgate.CategoryItem{PosProductCategoryID: fmt.Sprintf("CAT-%d", top), Name: fmt.Sprintf("Top %d", top)})
		for child := range 5 {
			row++
			cc.Check(row, &posgate.CategoryItem{PosProductCategoryID: fmt.Sprintf("CAT-%d-%d", top, child), Name: fmt.Sprintf("Child %d.%d", top, child),
				PosProductParentCategoryID: fmt.Sprintf("CAT-%d", top)})
		}
	}
	if _, _, err := st.ImportCategories(ctx, pos, evalCompany, cc.Plan); err != nil {
		return fmt.Errorf("evaluation categories: %w", err)
	}
	pc := posgate.NewProductChecker(evalCompany, nil)
	for a := range benchkeys.EvalFamilies {
		for k := range benchkeys.EvalLines {
			pc.Check(a*benchkeys.EvalLines+k+1, pos, &posgate.ProductItem{ProductID: fmt.Sprintf("P-%d-%02d", a, k), ProductName: "Product",
				ProductCategoryID: fmt.Sprintf("CAT-%d-%d", a%10, k%5), Price: posgate.Decimal(fmt.Sprintf("%d.%02d", 1+k%9, (a*7+k)%100))})
		}
	}
	if _, _, err := st.ImportProducts(ctx, pos, evalCompany, pc.Accepted()); err != nil {
		return fmt.Errorf("evaluation products: %w", err)
	}
	checker := posgate.NewPromotionChecker(evalCompany, locs, nil)
	imp, err := st.BeginPromotionImport(ctx, pos, evalCompany)
	if err != nil {
		return err
	}
	defer imp.Rollback()
	for i := range benchkeys.EvalPromotions {
		p := benchkeys.EvalPromotion(i)
		if !checker.Check(i+1, p) {
			return fmt.Errorf("evaluation promotion %s fails the checks: %+v", p.ID, checker.Result(0, 0).Errors)
		}
		if err := imp.Add(ctx, p); err != nil {
			return err
		}
	}
	if _, _, err := imp.Commit(ctx); err != nil {
		return fmt.Errorf("evaluation promotions: %w", err)
	}
	for a := range benchkeys.EvalFamilies {
		e.Keys["evaluate"] = append(e.Keys["evaluate"], []string{strconv.Itoa(a), strconv.Itoa(a % 10), benchkeys.EvalLocation(a)})
	}
	return nil
}

// evaluateBody is the row's basket template: 20 lines of family $1, every
// other one naming its category (as a POS that sends it would), the others
// taking it from the catalogue; quantities 1 to 3.
func evaluateBody() string {
	var b strings.Builder
	b.WriteString(`{"posLocationId":"$3","transactionDate":"` + evalAt + `","products":[`)
	for k := range benchkeys.EvalLines {
		if k > 0 {
			b.WriteByte(',')
		}
		cat := ""
		if k%2 == 0 {
			cat = fmt.Sprintf(`,"productCategory":"CAT-$2-%d"`, k%5)
		}
		fmt.Fprintf(&b, `{"productId":"P-$1-%02d"%s,"quantity":%d,"price":%d.25}`, k, cat, 1+k%3, 1+k%9)
	}
	b.WriteString(`]}`)
	return b.String()
}

// verifyEvaluation wants Accepted and some promotions applied.
func verifyEvaluation(body []byte) error {
	if err := verifyAccepted(body); err != nil {
		return err
	}
	return verifyNonEmpty("promotions")(body)
}

// Shape of the products import row: 100,000 new products of a company of
// their own, in 50 known categories.
const (
	productImportCompany = "bench-products"
	productImportItems   = 100_000
)

// loadProductCompany creates the products import row's company and its
// categories.
func loadProductCompany(ctx context.Context, e *env) error {
	pos := e.Data.POSSystem
	if err := e.Store.CreateCompany(ctx, &posgate.Company{POSSystemID: pos, ID: productImportCompany, Name: "Products company",
		Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()}); err != nil {
		return fmt.Errorf("products: %w", err)
	}
	cc := posgate.NewCategoryChecker(pos, productImportCompany)
	for i := range 50 {
		cc.Check(i+1, &posgate.CategoryItem{PosProductCategoryID: fmt.Sprintf("CAT-%02d", i), Name: "Category"})
	}
	_, _, err := e.Store.ImportCategories(ctx, pos, productImportCompany, cc.Plan)
	return err
}

// runProductImport times one import of 100,000 new products, from the
// request's first byte to the answer's last, and checks that every item was
// created without an error or a warning.
func runProductImport(ctx context.Context, e *env) (*result, error) {
	var body bytes.Buffer
	body.WriteString(`{"items":[`)
	for i := range productImportItems {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"productId":"PRD-%07d","productName":"Product %d, 330 ml","productCategoryId":"CAT-%02d","productCategory":"Category %d",`+
			`"manufacturer":"Manufacturer %d","price":%d.%02d}`, i, i, i%50, i%50, i%200, i%100, i%100)
	}
	body.WriteString(`]}`)
	url := fmt.Sprintf("%s/pos/%s/company/%s/import/products", e.BaseURL, e.Data.POSSystem, productImportCompany)
	status, answer, elapsed, err := timedPost(ctx, e, url, body.Bytes())
	if err != nil {
		return nil, err
	}
	r := &result{Connections: 1, Duration: elapsed, Requests: productImportItems, RPS: productImportItems / elapsed.Seconds(),
		P50: elapsed, P99: elapsed, Unit: "items/s"}
	if status != http.StatusOK {
		r.Status = 1
		r.Failed = append(r.Failed, fmt.Sprintf("status %d: %.200s", status, answer))
		return r, nil
	}
	var out struct {
		Data posgate.ImportResult `json:"data"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return nil, fmt.Errorf("import answer: %w", err)
	}
	res := out.Data
	r.Note = fmt.Sprintf("%d products (%.0f MB of JSON) in %s; %s, created %d, updated %d, %d errors, %d warnings",
		productImportItems, float64(body.Len())/1e6, fmtDur(elapsed), res.Status, res.CreatedCount, res.UpdatedCount, len(res.Errors), len(res.Warnings))
	if res.CreatedCount != productImportItems || len(res.Errors) > 0 || len(res.Warnings) > 0 {
		r.Status = int64(productImportItems - res.CreatedCount)
		r.Failed = append(r.Failed, "not every product was created cleanly")
	}
	return r, nil
}
