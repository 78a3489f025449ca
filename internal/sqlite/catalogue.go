package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/posgate/posgate"
)

// The catalogue (docs/api.md §17): categories and products of a company,
// and the version of what promotion evaluation reads.

const (
	categoryCols = `category_id, name, parent_id, catalog_id, created_at, updated_at`
	productCols  = `product_id, name, category_id, category_name, manufacturer, price, created_at, updated_at`
)

// bumpCatalogueVersion marks, in the transaction of a change, that the
// company's promotions or categories changed (posgate.CatalogueStore's
// PromotionStamp).
func bumpCatalogueVersion(ctx context.Context, tx execer, posSystemID, companyID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO catalogue_versions (pos_system_id, company_id, version) VALUES (?, ?, 1)
		ON CONFLICT (pos_system_id, company_id) DO UPDATE SET version = version + 1`, posSystemID, companyID)
	return err
}

// PromotionStamp returns the version of the company's promotions and
// categories.
func (db *DB) PromotionStamp(ctx context.Context, posSystemID, companyID string) (string, error) {
	var v int64
	err := db.read.QueryRowContext(ctx, `SELECT coalesce((SELECT version FROM catalogue_versions WHERE pos_system_id = ? AND company_id = ?), 0)`,
		posSystemID, companyID).Scan(&v)
	if err != nil {
		return "", fmt.Errorf("sqlite: promotion stamp: %w", err)
	}
	return strconv.FormatInt(v, 10), nil
}

// FindCatalogue returns the ids of a company's categories and products.
func (db *DB) FindCatalogue(ctx context.Context, posSystemID, companyID string) (*posgate.Catalogue, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: find catalogue: %w", err)
	}
	defer tx.Rollback()
	if err := companyExists(ctx, tx, posSystemID, companyID); err != nil {
		return nil, err
	}
	c := &posgate.Catalogue{POSSystemID: posSystemID, CompanyID: companyID}
	if c.CategoryIDs, err = ids(ctx, tx, `SELECT category_id FROM catalogue_categories WHERE pos_system_id = ? AND company_id = ? ORDER BY category_id`, posSystemID, companyID); err != nil {
		return nil, fmt.Errorf("sqlite: find catalogue: %w", err)
	}
	if c.ProductIDs, err = ids(ctx, tx, `SELECT product_id FROM catalogue_products WHERE pos_system_id = ? AND company_id = ? ORDER BY product_id`, posSystemID, companyID); err != nil {
		return nil, fmt.Errorf("sqlite: find catalogue: %w", err)
	}
	return c, nil
}

// ids reads one text column; never nil.
func ids(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// ReplaceCatalogue makes the company's categories and products exactly the
// ids of c, in one transaction.
func (db *DB) ReplaceCatalogue(ctx context.Context, c *posgate.Catalogue) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: replace catalogue: %w", err)
	}
	defer tx.Rollback()
	if err := companyExists(ctx, tx, c.POSSystemID, c.CompanyID); err != nil {
		return err
	}
	stored, err := storedTree(ctx, tx.Tx, c.POSSystemID, c.CompanyID)
	if err != nil {
		return fmt.Errorf("sqlite: replace catalogue: %w", err)
	}
	gone, added, err := posgate.CatalogueChange(stored, c)
	if err != nil {
		return err
	}
	products, err := ids(ctx, tx.Tx, `SELECT product_id FROM catalogue_products WHERE pos_system_id = ? AND company_id = ?`, c.POSSystemID, c.CompanyID)
	if err != nil {
		return fmt.Errorf("sqlite: replace catalogue: %w", err)
	}
	goneProducts, addedProducts := posgate.IDChange(products, c.ProductIDs)
	now := formatTime(db.now())
	for _, step := range []struct {
		head, row, tail string
		ids             []string
	}{
		{`DELETE FROM catalogue_categories WHERE pos_system_id = ? AND company_id = ? AND category_id IN (`, `?`, `)`, gone},
		{`DELETE FROM catalogue_products WHERE pos_system_id = ? AND company_id = ? AND product_id IN (`, `?`, `)`, goneProducts},
		{`INSERT INTO catalogue_categories (pos_system_id, company_id, category_id, name, parent_id, catalog_id, created_at, updated_at)
			SELECT ?, ?, column1, '', '', '', ?, ? FROM (VALUES `, `(?)`, `)`, added},
		{`INSERT INTO catalogue_products (pos_system_id, company_id, product_id, name, category_id, category_name, manufacturer, price, created_at, updated_at)
			SELECT ?, ?, column1, '', '', '', '', NULL, ?, ? FROM (VALUES `, `(?)`, `)`, addedProducts},
	} {
		insert := strings.HasPrefix(step.head, "INSERT")
		err := execBatches(ctx, tx.Tx, nil, step.head, step.row, step.tail, len(step.ids), func(dst []any, i int) []any {
			if len(dst) == 0 {
				dst = append(dst, c.POSSystemID, c.CompanyID)
				if insert {
					dst = append(dst, now, now)
				}
			}
			return append(dst, step.ids[i])
		})
		if err != nil {
			return fmt.Errorf("sqlite: replace catalogue: %w", err)
		}
	}
	if err := bumpCatalogueVersion(ctx, tx, c.POSSystemID, c.CompanyID); err != nil {
		return fmt.Errorf("sqlite: replace catalogue: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: replace catalogue: %w", err)
	}
	return nil
}

// storedTree reads the company's categories as id → parent id.
func storedTree(ctx context.Context, tx *sql.Tx, posSystemID, companyID string) (map[string]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT category_id, parent_id FROM catalogue_categories WHERE pos_system_id = ? AND company_id = ?`, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, parent string
		if err := rows.Scan(&id, &parent); err != nil {
			return nil, err
		}
		out[id] = parent
	}
	return out, rows.Err()
}

// ImportProducts upserts products in one transaction; an unchanged product
// is not rewritten.
func (db *DB) ImportProducts(ctx context.Context, posSystemID, companyID string, products []*posgate.Product) (created, updated int, err error) {
	started := db.now()
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: import products: %w", err)
	}
	defer tx.Rollback()
	if err := companyExists(ctx, tx, posSystemID, companyID); err != nil {
		return 0, 0, err
	}
	existing, err := ids(ctx, tx.Tx, `SELECT product_id FROM catalogue_products WHERE pos_system_id = ? AND company_id = ?`, posSystemID, companyID)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: import products: %w", err)
	}
	known := make(map[string]struct{}, len(existing))
	for _, id := range existing {
		known[id] = struct{}{}
	}
	for _, p := range products {
		if _, ok := known[p.ID]; ok {
			updated++
		} else {
			created++
		}
	}
	now := formatTime(db.now())
	err = execBatches(ctx, tx.Tx, nil, `INSERT INTO catalogue_products (pos_system_id, company_id, product_id, name, category_id, category_name, manufacturer, price, created_at, updated_at)
		SELECT ?, ?, column1, column2, column3, column4, column5, column6, ?, ? FROM (VALUES `, `(?, ?, ?, ?, ?, ?)`,
		`) WHERE true ON CONFLICT (pos_system_id, company_id, product_id) DO UPDATE SET name = excluded.name, category_id = excluded.category_id,
			category_name = excluded.category_name, manufacturer = excluded.manufacturer, price = excluded.price, updated_at = excluded.updated_at
		WHERE name <> excluded.name OR category_id <> excluded.category_id OR category_name <> excluded.category_name
			OR manufacturer <> excluded.manufacturer OR price IS NOT excluded.price`,
		len(products), func(dst []any, i int) []any {
			if len(dst) == 0 {
				dst = append(dst, posSystemID, companyID, now, now)
			}
			p := products[i]
			var price any
			if p.Price != nil {
				price = int64(*p.Price)
			}
			return append(dst, p.ID, p.Name, p.CategoryID, p.CategoryName, p.Manufacturer, price)
		})
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: import products: %w", err)
	}
	if err := bumpCatalogueVersion(ctx, tx, posSystemID, companyID); err != nil {
		return 0, 0, fmt.Errorf("sqlite: import products: %w", err)
	}
	if err := db.logImport(ctx, tx.Tx, posSystemID, companyID, posgate.ImportKindProducts, created, updated, started); err != nil {
		return 0, 0, err
	}
	if err := db.emitTx(ctx, tx.Tx, posgate.ImportEvent(posSystemID, companyID, "products", created+updated, db.timestamp())); err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("sqlite: import products: %w", err)
	}
	db.outbox.Committed()
	return created, updated, nil
}

// ImportCategories reads the stored tree, lets plan check the import
// against it and upserts what plan returns, all in one write transaction.
func (db *DB) ImportCategories(ctx context.Context, posSystemID, companyID string, plan func(stored map[string]string) ([]*posgate.Category, error)) (created, updated int, err error) {
	started := db.now()
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: import categories: %w", err)
	}
	defer tx.Rollback()
	if err := companyExists(ctx, tx, posSystemID, companyID); err != nil {
		return 0, 0, err
	}
	stored, err := storedTree(ctx, tx.Tx, posSystemID, companyID)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: import categories: %w", err)
	}
	cats, err := plan(stored)
	if err != nil {
		return 0, 0, err
	}
	for _, c := range cats {
		if _, ok := stored[c.ID]; ok {
			updated++
		} else {
			created++
		}
	}
	now := formatTime(db.now())
	err = execBatches(ctx, tx.Tx, nil, `INSERT INTO catalogue_categories (pos_system_id, company_id, category_id, name, parent_id, catalog_id, created_at, updated_at)
		SELECT ?, ?, column1, column2, column3, column4, ?, ? FROM (VALUES `, `(?, ?, ?, ?)`,
		`) WHERE true ON CONFLICT (pos_system_id, company_id, category_id) DO UPDATE SET name = excluded.name, parent_id = excluded.parent_id,
			catalog_id = excluded.catalog_id, updated_at = excluded.updated_at
		WHERE name <> excluded.name OR parent_id <> excluded.parent_id OR catalog_id <> excluded.catalog_id`,
		len(cats), func(dst []any, i int) []any {
			if len(dst) == 0 {
				dst = append(dst, posSystemID, companyID, now, now)
			}
			c := cats[i]
			return append(dst, c.ID, c.Name, c.ParentID, c.CatalogID)
		})
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: import categories: %w", err)
	}
	if len(cats) > 0 {
		if err := bumpCatalogueVersion(ctx, tx, posSystemID, companyID); err != nil {
			return 0, 0, fmt.Errorf("sqlite: import categories: %w", err)
		}
	}
	if err := db.logImport(ctx, tx.Tx, posSystemID, companyID, posgate.ImportKindCategories, created, updated, started); err != nil {
		return 0, 0, err
	}
	if err := db.emitTx(ctx, tx.Tx, posgate.ImportEvent(posSystemID, companyID, "productCategories", created+updated, db.timestamp())); err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("sqlite: import categories: %w", err)
	}
	db.outbox.Committed()
	return created, updated, nil
}

func categoryDest(posSystemID, companyID string) func(c *posgate.Category) []any {
	return func(c *posgate.Category) []any {
		c.POSSystemID, c.CompanyID = posSystemID, companyID
		return []any{&c.ID, &c.Name, &c.ParentID, &c.CatalogID, timeColumn{&c.CreatedAt}, timeColumn{&c.UpdatedAt}}
	}
}

// priceColumn scans a nullable price.
type priceColumn struct{ p **posgate.MinorUnits }

// Scan implements sql.Scanner.
func (c priceColumn) Scan(src any) error {
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*c.p = nil
	if n.Valid {
		v := posgate.MinorUnits(n.Int64)
		*c.p = &v
	}
	return nil
}

func productDest(posSystemID, companyID string) func(p *posgate.Product) []any {
	return func(p *posgate.Product) []any {
		p.POSSystemID, p.CompanyID = posSystemID, companyID
		return []any{&p.ID, &p.Name, &p.CategoryID, &p.CategoryName, &p.Manufacturer, priceColumn{&p.Price}, timeColumn{&p.CreatedAt}, timeColumn{&p.UpdatedAt}}
	}
}

// ListCategories returns a page of a company's categories by id and how
// many it has.
func (db *DB) ListCategories(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*posgate.Category, int, error) {
	return listPage(ctx, db, "categories", `catalogue_categories`, categoryCols, `category_id`, posSystemID, companyID, offset, limit, categoryDest(posSystemID, companyID))
}

// ListProducts returns a page of a company's products by id and how many it
// has.
func (db *DB) ListProducts(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*posgate.Product, int, error) {
	return listPage(ctx, db, "products", `catalogue_products`, productCols, `product_id`, posSystemID, companyID, offset, limit, productDest(posSystemID, companyID))
}

// listPage reads a page of a company's rows of table, ordered by key, and
// the count, in one read transaction.
func listPage[T any](ctx context.Context, db *DB, what, table, cols, key, posSystemID, companyID string, offset, limit int, dest func(*T) []any) ([]*T, int, error) {
	if limit <= 0 {
		limit = -1
	}
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite: list %s: %w", what, err)
	}
	defer tx.Rollback()
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE pos_system_id = ? AND company_id = ?`, posSystemID, companyID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlite: list %s: %w", what, err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+cols+` FROM `+table+` WHERE pos_system_id = ? AND company_id = ? ORDER BY `+key+` LIMIT ? + 0 OFFSET ? + 0`,
		posSystemID, companyID, limit, max(offset, 0))
	out, err := scanAll(rows, err, "list "+what, dest)
	if err != nil {
		return nil, 0, err
	}
	if out == nil {
		out = []*T{}
	}
	return out, total, nil
}

// findProductsSQL reads the products whose ids are in the JSON array ?3:
// one prepared statement for any number of ids.
const findProductsSQL = `SELECT ` + productCols + ` FROM catalogue_products
	WHERE pos_system_id = ?1 AND company_id = ?2 AND product_id IN (SELECT value FROM json_each(?3))`

// FindProducts returns the company's products among ids.
func (db *DB) FindProducts(ctx context.Context, posSystemID, companyID string, ids []string) ([]*posgate.Product, error) {
	if len(ids) == 0 {
		return []*posgate.Product{}, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("sqlite: find products: %w", err)
	}
	rows, err := db.promo.findProducts.QueryContext(ctx, posSystemID, companyID, string(list))
	out, err := scanAll(rows, err, "find products", productDest(posSystemID, companyID))
	if out == nil && err == nil {
		out = []*posgate.Product{}
	}
	return out, err
}
