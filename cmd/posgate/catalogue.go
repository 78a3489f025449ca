package main

import (
	"context"
	"flag"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/importfile"
	"github.com/posgate/posgate/internal/service"
)

// The catalogue commands (docs/api.md §17): imports through a running
// posgate's POS API, as the promotion import, and the operator's lists.

// cmdImportProducts sends a JSON or CSV file of products to a running
// posgate (docs/api.md §17.1).
func cmdImportProducts(ctx context.Context, env *cli, args []string) error {
	return runImport(ctx, env, args, importKind{name: "products", noun: "product", route: "products",
		csv: importfile.FlatCSV(importfile.ProductColumns, "price")})
}

// cmdImportCategories sends a JSON or CSV file of product categories to a
// running posgate (docs/api.md §17.2).
func cmdImportCategories(ctx context.Context, env *cli, args []string) error {
	return runImport(ctx, env, args, importKind{name: "productCategories", noun: "category", route: "productCategories",
		csv: importfile.FlatCSV(importfile.CategoryColumns, "")})
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
