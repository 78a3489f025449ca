package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/service"
)

// The catalogue commands (docs/api.md §17): imports through a running
// posgate's POS API, as the promotion import, and the operator's lists.

// cmdImportProducts sends a JSON or CSV file of products to a running
// posgate (docs/api.md §17.1).
func cmdImportProducts(ctx context.Context, env *cli, args []string) error {
	return runImport(ctx, env, args, importKind{name: "products", noun: "product", route: "products",
		csv: flatCSV([]string{"productId", "productName", "productCategoryId", "productCategory", "manufacturer", "price"}, "price")})
}

// cmdImportCategories sends a JSON or CSV file of product categories to a
// running posgate (docs/api.md §17.2).
func cmdImportCategories(ctx context.Context, env *cli, args []string) error {
	return runImport(ctx, env, args, importKind{name: "productCategories", noun: "category", route: "productCategories",
		csv: flatCSV([]string{"posProductCategoryId", "name", "posProductParentCategoryId", "posCatalogId"}, "")})
}

// flatCSV returns a conversion of a CSV file whose header names some of
// columns (in any order; posgate's JSON names) into an import body, one
// item per row. An empty cell is an absent value; the number column, when
// set, must hold a JSON number (a price is written as in JSON: 2.50).
func flatCSV(columns []string, number string) func(r io.Reader, w io.Writer) ([]int, error) {
	return func(r io.Reader, w io.Writer) ([]int, error) {
		cr := csv.NewReader(r)
		cr.FieldsPerRecord = -1
		head, err := cr.Read()
		if err == io.EOF {
			return nil, errors.New("the file is empty: it needs a header row")
		} else if err != nil {
			return nil, err
		}
		if len(head) > 0 {
			head[0] = strings.TrimPrefix(head[0], "\ufeff")
		}
		for _, h := range head {
			if !slices.Contains(columns, h) {
				return nil, fmt.Errorf("line 1: unknown column %q (known: %s)", h, strings.Join(columns, ", "))
			}
		}
		bw := &errWriter{w: w}
		bw.write(`{"items":[`)
		var lines []int
		var bad badLines
	rows:
		for !bad.full() {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			} else if line, msg, ok := parseErrorLine(err); ok {
				bad.add(line, "%s", msg)
				continue
			} else if err != nil {
				return nil, err
			}
			line, _ := cr.FieldPos(0)
			if len(rec) != len(head) {
				bad.add(line, "%d cells, the header has %d", len(rec), len(head))
				continue
			}
			item := map[string]any{}
			for i, cell := range rec {
				switch {
				case cell == "":
				case head[i] == number:
					if v := jsontext.Value(cell); v.Kind() != '0' || !v.IsValid() {
						bad.add(line, "%s %q is not a number", number, cell)
						continue rows
					}
					item[head[i]] = json.RawMessage(cell)
				default:
					item[head[i]] = cell
				}
			}
			b, _ := json.Marshal(item)
			if len(lines) > 0 {
				bw.write(",")
			}
			bw.write(string(b))
			lines = append(lines, line)
		}
		if err := bad.err(); err != nil {
			return nil, err
		}
		bw.write("]}")
		return lines, bw.err
	}
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) write(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

// cmdProductsList lists a company's products from the store.
func cmdProductsList(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	return operatorCommand(ctx, env, "products list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
	}, func(a *client.Admin, _ []string) error {
		all, err := allPages(func(page, size int) ([]*posgate.Product, int, error) {
			got, err := answer[*service.ProductPage](a.ListProducts(ctx, *posID, *company, client.PageOptions{Page: page, PageSize: size}))
			if err != nil {
				return nil, 0, err
			}
			return got.Data, got.Page.Total, nil
		})
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "NAME", "CATEGORY", "MANUFACTURER", "PRICE", "UPDATED"}, all, func(p *posgate.Product) []string {
			price := "-"
			if p.Price != nil {
				price = p.Price.String()
			}
			return []string{p.ID, p.Name, p.CategoryID, p.Manufacturer, price, stamp(p.UpdatedAt)}
		})
	})
}

// cmdCategoriesList lists a company's product categories from the store.
func cmdCategoriesList(ctx context.Context, env *cli, args []string) error {
	var posID, company *string
	return operatorCommand(ctx, env, "categories list", args, 0, func(fs *flag.FlagSet) {
		posID = fs.String("pos", "", "POS system id (required)")
		company = fs.String("company", "", "company id (required)")
	}, func(a *client.Admin, _ []string) error {
		all, err := allPages(func(page, size int) ([]*posgate.Category, int, error) {
			got, err := answer[*service.CategoryPage](a.ListCategories(ctx, *posID, *company, client.PageOptions{Page: page, PageSize: size}))
			if err != nil {
				return nil, 0, err
			}
			return got.Data, got.Page.Total, nil
		})
		if err != nil {
			return err
		}
		return table(env, []string{"ID", "NAME", "PARENT", "CATALOG", "UPDATED"}, all, func(c *posgate.Category) []string {
			return []string{c.ID, c.Name, c.ParentID, c.CatalogID, stamp(c.UpdatedAt)}
		})
	})
}

// allPages reads a paged operator list whole, a page of the largest size at
// a time, for the CLI's list commands, which print everything: fetch
// answers a page's entries and the list's total.
func allPages[T any](fetch func(page, size int) ([]T, int, error)) ([]T, error) {
	var all []T
	for page := 1; ; page++ {
		got, total, err := fetch(page, service.MaxPromotionPageSize)
		if err != nil {
			return nil, err
		}
		all = append(all, got...)
		if len(got) == 0 || len(all) >= total {
			return all, nil
		}
	}
}
