package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/posgate/posgate"
)

// loadReceiptPromotions gives the company a default receipt promotion and
// every other location one of its own, so that the receipt promotion takes
// both paths (the location's, the company's) and always answers Accepted.
func loadReceiptPromotions(ctx context.Context, e *env) error {
	d := e.Data
	if err := e.Store.PutReceiptPromotion(ctx, &posgate.ReceiptPromotion{POSSystemID: d.POSSystem, CompanyID: d.Company,
		PrimaryText: "Thank you for shopping with us", SecondaryText: "Scan for 10% off your next visit",
		TargetURL: "https://example.com/r/bench"}); err != nil {
		return fmt.Errorf("receipt promotion: %w", err)
	}
	for i, loc := range d.Locations {
		if i%2 == 1 {
			continue
		}
		if err := e.Store.PutReceiptPromotion(ctx, &posgate.ReceiptPromotion{POSSystemID: d.POSSystem, CompanyID: d.Company,
			LocationID: loc, PrimaryText: "Thank you for shopping at " + loc, SecondaryText: "Scan for a free coffee",
			TargetURL: "https://example.com/r/" + loc}); err != nil {
			return fmt.Errorf("receipt promotion of %s: %w", loc, err)
		}
	}
	return nil
}

// locationKeys are one-field tuples of the data set's locations.
func locationKeys(e *env) [][]string {
	keys := make([][]string, len(e.Data.Locations))
	for i, loc := range e.Data.Locations {
		keys[i] = []string{loc}
	}
	return keys
}

// Shape of the promotion import row: the 100,000 items, each with 3
// locations, 2 categories, 5 products, 2 validities (one recurring) and 1
// result, checked against a catalogue of 50 categories and 2,000 products,
// as bench/promotions does.
const (
	importItems      = 100_000
	importCategories = 50
	importProducts   = 2000
)

// loadCatalogue stores the catalogue the import's items are checked
// against, so that the warnings check runs as in production.
func loadCatalogue(ctx context.Context, e *env) error {
	c := &posgate.Catalogue{POSSystemID: e.Data.POSSystem, CompanyID: e.Data.Company}
	for i := range importCategories {
		c.CategoryIDs = append(c.CategoryIDs, fmt.Sprintf("CAT-%02d", i))
	}
	for i := range importProducts {
		c.ProductIDs = append(c.ProductIDs, fmt.Sprintf("SKU-%05d", i))
	}
	if err := e.Store.ReplaceCatalogue(ctx, c); err != nil {
		return fmt.Errorf("catalogue: %w", err)
	}
	return nil
}

// importBody is an import of n new promotions into the data set's company.
func importBody(d *dataset, n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 640)
	b.WriteString(`{"items":[`)
	locs := len(d.Locations)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"PROMO-%07d","name":"Promotion %d: 2 off any large coffee","useForAllCategories":false,"useForAllProducts":false,`+
			`"locationIds":[%q,%q,%q],"categoryIds":["CAT-%02d","CAT-%02d"],`+
			`"productIds":["SKU-%05d","SKU-%05d","SKU-%05d","SKU-%05d","SKU-%05d"],`+
			`"promotionValidities":[{"startDate":"2030-01-01T00:00:00Z","endDate":"2030-06-30T23:59:59Z"},`+
			`{"startDate":"2030-07-01T00:00:00Z","endDate":"2030-12-31T23:59:59Z","recurrence":{"daysOfWeek":["Saturday","Sunday"],`+
			`"startDate":"2030-07-06T08:00:00Z","endDate":"2030-07-06T20:00:00Z"}}],`+
			`"promotionResults":[{"promotionType":"Amount","value":2.5}]}`,
			i, i, d.Locations[i%locs], d.Locations[(i+1)%locs], d.Locations[(i+2)%locs],
			i%importCategories, (i+1)%importCategories,
			i%importProducts, (i+1)%importProducts, (i+2)%importProducts, (i+3)%importProducts, (i+4)%importProducts)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// runImport times one import of importItems new promotions, from the
// request's first byte to the answer's last, and checks that every item was
// created without an error or a warning. The row's req/s column holds
// items/s.
func runImport(ctx context.Context, e *env) (*result, error) {
	body := importBody(e.Data, importItems)
	url := fmt.Sprintf("%s/pos/%s/company/%s/import/promotions", e.BaseURL, e.Data.POSSystem, e.Data.Company)
	status, answer, elapsed, err := timedPost(ctx, e, url, body)
	if err != nil {
		return nil, err
	}
	r := &result{Connections: 1, Duration: elapsed, Requests: importItems, RPS: importItems / elapsed.Seconds(),
		P50: elapsed, P99: elapsed, Unit: "items/s"}
	var out struct {
		Data posgate.ImportResult `json:"data"`
	}
	if status != http.StatusOK {
		r.Status = 1
		r.Failed = append(r.Failed, fmt.Sprintf("status %d: %.200s", status, answer))
		return r, nil
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return nil, fmt.Errorf("import answer: %w", err)
	}
	res := out.Data
	r.Note = fmt.Sprintf("%d items (%.0f MB of JSON) in %s; %s, created %d, updated %d, %d errors, %d warnings",
		importItems, float64(len(body))/1e6, fmtDur(elapsed), res.Status, res.CreatedCount, res.UpdatedCount, len(res.Errors), len(res.Warnings))
	if res.CreatedCount != importItems || len(res.Errors) > 0 || len(res.Warnings) > 0 {
		r.Status = int64(importItems - res.CreatedCount)
		r.Failed = append(r.Failed, "not every item was created cleanly")
	}
	return r, nil
}
