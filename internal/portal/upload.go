package portal

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/importfile"
)

// The catalogue page's upload (docs/api.md §23): a JSON file of
// promotions, products or categories, in the items' shapes of the POS
// API's imports (§9.1, §17), an array of them or an import body. It goes
// through the same use cases as the POS API's imports (the company's
// switch, the item cap, the checks, the webhook event of what was stored),
// with the person's principal given the scope pos-integration, as a
// person's token may hold it (§21.1): an import is the POS's traffic, not
// an audited operator change (§22), whoever sends it. Unlike the API, the
// portal stores the file whole or not at all: an item that fails stores
// nothing, and the page lists every error (entity id, item number).

// uploadResult is what the page shows of an upload.
type uploadResult struct {
	Kind   string
	Stored bool
	Result *posgate.ImportResult
	// Lines are, for a CSV file, the line each item starts on.
	Lines []int
}

// Line is the CSV line of item number row (1-based); 0 for a JSON file.
func (u *uploadResult) Line(row int) int {
	if row < 1 || row > len(u.Lines) {
		return 0
	}
	return u.Lines[row-1]
}

// uploadKinds are the kinds a file may hold, as the import routes name
// them.
var uploadKinds = map[string]string{"promotions": "promotions", "products": "products", "productCategories": "categories"}

// importFile reads the uploaded file into the import of its kind.
func (p *Portal) importFile(q *request) error {
	f := q.r.PostForm
	pos, co, _ := strings.Cut(f.Get("company"), "/")
	kind := f.Get("kind")
	again := func(err error) error {
		q.r.URL.RawQuery = url.Values{"company": {pos + "/" + co}}.Encode()
		return p.formError(q, err, func(status int, v view) error { return p.renderCatalogue(q, status, v, nil) })
	}
	if _, ok := uploadKinds[kind]; !ok {
		return again(posgate.ValidationError{"kind": {"Choose promotions, products or productCategories."}}.Err())
	}
	upload, hdr, err := q.r.FormFile("file")
	if err != nil {
		return again(posgate.ValidationError{"file": {"Choose a JSON file (an array of items, docs/api.md §9.1, §17) or a CSV file (the columns of posgate import)."}}.Err())
	}
	defer upload.Close()
	var file io.Reader = upload
	var lines []int
	if strings.HasSuffix(strings.ToLower(hdr.Filename), ".csv") {
		// A CSV file is converted as posgate import converts it; a bad
		// line refuses the whole file, naming every bad line.
		conv := importfile.PromotionsCSV
		switch kind {
		case "products":
			conv = importfile.FlatCSV(importfile.ProductColumns, "price")
		case "productCategories":
			conv = importfile.FlatCSV(importfile.CategoryColumns, "")
		}
		var body bytes.Buffer
		if lines, err = conv(upload, &body); err != nil {
			if posgate.ErrorCode(err) == "" {
				err = posgate.ValidationError{"file": {err.Error()}}.Err()
			}
			return again(err)
		}
		file = &body
	}
	pr := q.person.Principal(ClientID, []string{posgate.ScopePOSIntegration}, p.cfg.Now().Add(principalTTL))
	var res *posgate.ImportResult
	var stored bool
	switch kind {
	case "promotions":
		res, stored, err = p.importPromotions(q.ctx, pr, pos, co, file)
	case "products":
		imp, e := p.svc.BeginProductImport(q.ctx, pr, pos, co)
		if err = e; err == nil {
			err = importfile.Stream(file, func(i int, it *importfile.ProductItem) error {
				if err := imp.Count(i + 1); err != nil {
					return err
				}
				imp.Add(i+1, it.Product())
				return nil
			})
			if err == nil {
				res, stored, err = imp.CommitWhole(q.ctx)
			}
		}
	case "productCategories":
		imp, e := p.svc.BeginCategoryImport(q.ctx, pr, pos, co)
		if err = e; err == nil {
			err = importfile.Stream(file, func(i int, it *importfile.CategoryItem) error {
				if err := imp.Count(i + 1); err != nil {
					return err
				}
				imp.Add(i+1, it.Category())
				return nil
			})
			if err == nil {
				res, stored, err = imp.CommitWhole(q.ctx)
			}
		}
	}
	if err != nil {
		return again(err)
	}
	up := &uploadResult{Kind: kind, Stored: stored, Result: res, Lines: lines}
	q.r.URL.RawQuery = url.Values{"company": {pos + "/" + co}}.Encode()
	if !stored {
		return p.renderCatalogue(q, http.StatusUnprocessableEntity, view{Error: fmt.Sprintf("The file was refused: %d items failed, nothing was stored. Fix them and upload the file again.", len(res.Errors))}, up)
	}
	return p.renderCatalogue(q, http.StatusOK, view{Notice: fmt.Sprintf("%s: %d created, %d updated.", uploadKinds[kind], res.CreatedCount, res.UpdatedCount)}, up)
}

// importPromotions reads a file of promotions into the company's import.
func (p *Portal) importPromotions(ctx context.Context, pr *posgate.Principal, pos, co string, file io.Reader) (*posgate.ImportResult, bool, error) {
	imp, err := p.svc.BeginPromotionImport(ctx, pr, pos, co)
	if err != nil {
		return nil, false, err
	}
	defer imp.Rollback()
	err = importfile.Stream(file, func(i int, it *importfile.PromotionItem) error {
		if err := imp.Count(i + 1); err != nil {
			return err
		}
		return imp.Add(ctx, i+1, it.Promotion(pos, co))
	})
	if err != nil {
		return nil, false, err
	}
	return imp.CommitWhole(ctx)
}
