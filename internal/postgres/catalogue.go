package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

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
func bumpCatalogueVersion(ctx context.Context, tx pgx.Tx, posSystemID, companyID string) error {
	_, err := tx.Exec(ctx, `INSERT INTO catalogue_versions AS v (pos_system_id, company_id, version) VALUES ($1, $2, 1)
		ON CONFLICT (pos_system_id, company_id) DO UPDATE SET version = v.version + 1`, posSystemID, companyID)
	return err
}

// PromotionStamp returns the version of the company's promotions and
// categories.
func (db *DB) PromotionStamp(ctx context.Context, posSystemID, companyID string) (string, error) {
	var v int64
	err := db.q(ctx).QueryRow(ctx, `SELECT coalesce((SELECT version FROM catalogue_versions WHERE pos_system_id = $1 AND company_id = $2), 0)`,
		posSystemID, companyID).Scan(&v)
	if err != nil {
		return "", wrap(err, "promotion stamp")
	}
	return strconv.FormatInt(v, 10), nil
}

// lockCatalogue begins a catalogue write: the company must exist (it is
// locked FOR KEY SHARE, so that it cannot go away) and the company's
// catalogue writes run one at a time (a transaction-level advisory lock), so
// that an import's checks see the tree it writes into.
func lockCatalogue(ctx context.Context, tx pgx.Tx, posSystemID, companyID string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM companies WHERE pos_system_id = $1 AND company_id = $2 FOR KEY SHARE`, posSystemID, companyID).Scan(&one)
	if err != nil {
		return readErr(err, "find company", posgate.NotFound("company", companyID))
	}
	_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('posgate catalogue ' || $1 || '/' || $2, 0))`, posSystemID, companyID)
	return wrap(err, "lock catalogue")
}

// storedTree reads the company's categories as id → parent id.
func storedTree(ctx context.Context, tx pgx.Tx, posSystemID, companyID string) (map[string]string, error) {
	rows, err := tx.Query(ctx, `SELECT category_id, parent_id FROM catalogue_categories WHERE pos_system_id = $1 AND company_id = $2`, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var id, parent string
	_, err = pgx.ForEachRow(rows, []any{&id, &parent}, func() error {
		out[id] = parent
		return nil
	})
	return out, err
}

func textColumn(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if out == nil {
		out = []string{}
	}
	return out, err
}

// FindCatalogue returns the ids of a company's categories and products.
func (db *DB) FindCatalogue(ctx context.Context, posSystemID, companyID string) (*posgate.Catalogue, error) {
	c := &posgate.Catalogue{POSSystemID: posSystemID, CompanyID: companyID}
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		if err := companyExists(ctx, tx, posSystemID, companyID); err != nil {
			return err
		}
		var err error
		if c.CategoryIDs, err = textColumn(ctx, tx, `SELECT category_id FROM catalogue_categories WHERE pos_system_id = $1 AND company_id = $2 ORDER BY category_id`, posSystemID, companyID); err != nil {
			return err
		}
		c.ProductIDs, err = textColumn(ctx, tx, `SELECT product_id FROM catalogue_products WHERE pos_system_id = $1 AND company_id = $2 ORDER BY product_id`, posSystemID, companyID)
		return err
	})
	if err != nil {
		if posgate.ErrorCode(err) != posgate.EINTERNAL {
			return nil, err
		}
		return nil, wrap(err, "find catalogue")
	}
	return c, nil
}

// ReplaceCatalogue makes the company's categories and products exactly the
// ids of c, in one transaction.
func (db *DB) ReplaceCatalogue(ctx context.Context, c *posgate.Catalogue) error {
	err := pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		if err := lockCatalogue(ctx, tx, c.POSSystemID, c.CompanyID); err != nil {
			return err
		}
		stored, err := storedTree(ctx, tx, c.POSSystemID, c.CompanyID)
		if err != nil {
			return err
		}
		gone, added, err := posgate.CatalogueChange(stored, c)
		if err != nil {
			return err
		}
		products, err := textColumn(ctx, tx, `SELECT product_id FROM catalogue_products WHERE pos_system_id = $1 AND company_id = $2`, c.POSSystemID, c.CompanyID)
		if err != nil {
			return err
		}
		goneProducts, addedProducts := posgate.IDChange(products, c.ProductIDs)
		now := posgate.Timestamp(db.now())
		for _, q := range []struct {
			sql string
			ids []string
		}{
			{`DELETE FROM catalogue_categories WHERE pos_system_id = $1 AND company_id = $2 AND category_id = ANY($3)`, gone},
			{`DELETE FROM catalogue_products WHERE pos_system_id = $1 AND company_id = $2 AND product_id = ANY($3)`, goneProducts},
			{`INSERT INTO catalogue_categories (pos_system_id, company_id, category_id, name, parent_id, catalog_id, created_at, updated_at)
				SELECT $1, $2, unnest($3::text[]), '', '', '', $4, $4`, added},
			{`INSERT INTO catalogue_products (pos_system_id, company_id, product_id, name, category_id, category_name, manufacturer, price, created_at, updated_at)
				SELECT $1, $2, unnest($3::text[]), '', '', '', '', NULL, $4, $4`, addedProducts},
		} {
			if len(q.ids) == 0 {
				continue
			}
			args := []any{c.POSSystemID, c.CompanyID, q.ids}
			if strings.HasPrefix(q.sql, "INSERT") {
				args = append(args, now)
			}
			if _, err := tx.Exec(ctx, q.sql, args...); err != nil {
				return err
			}
		}
		return bumpCatalogueVersion(ctx, tx, c.POSSystemID, c.CompanyID)
	})
	if err != nil {
		if posgate.ErrorCode(err) != posgate.EINTERNAL {
			return err
		}
		return wrap(err, "replace catalogue")
	}
	return nil
}

// ImportProducts COPYs the products into a staging table and upserts them
// from it, in one transaction; an unchanged product is not rewritten.
func (db *DB) ImportProducts(ctx context.Context, posSystemID, companyID string, products []*posgate.Product) (created, updated int, err error) {
	started := db.now()
	emitted := false
	err = pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		if err := lockCatalogue(ctx, tx, posSystemID, companyID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SET LOCAL jit = off; CREATE TEMP TABLE product_stage (
			product_id text COLLATE "C" NOT NULL, name text NOT NULL, category_id text COLLATE "C" NOT NULL,
			category_name text NOT NULL, manufacturer text NOT NULL, price bigint) ON COMMIT DROP`); err != nil {
			return err
		}
		i := 0
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"product_stage"}, []string{"product_id", "name", "category_id", "category_name", "manufacturer", "price"},
			pgx.CopyFromFunc(func() ([]any, error) {
				if i == len(products) {
					return nil, nil
				}
				p := products[i]
				i++
				var price *int64
				if p.Price != nil {
					v := int64(*p.Price)
					price = &v
				}
				return []any{p.ID, p.Name, p.CategoryID, p.CategoryName, p.Manufacturer, price}, nil
			})); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM product_stage s WHERE NOT EXISTS (SELECT 1 FROM catalogue_products p
			WHERE p.pos_system_id = $1 AND p.company_id = $2 AND p.product_id = s.product_id)`, posSystemID, companyID).Scan(&created); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO catalogue_products AS p (pos_system_id, company_id, product_id, name, category_id, category_name, manufacturer, price, created_at, updated_at)
			SELECT $1, $2, s.product_id, s.name, s.category_id, s.category_name, s.manufacturer, s.price, $3, $3 FROM product_stage s
			ON CONFLICT (pos_system_id, company_id, product_id) DO UPDATE SET name = excluded.name, category_id = excluded.category_id,
				category_name = excluded.category_name, manufacturer = excluded.manufacturer, price = excluded.price, updated_at = excluded.updated_at
			WHERE (p.name, p.category_id, p.category_name, p.manufacturer, p.price) IS DISTINCT FROM
				(excluded.name, excluded.category_id, excluded.category_name, excluded.manufacturer, excluded.price)`,
			posSystemID, companyID, posgate.Timestamp(db.now()))
		if err != nil {
			return err
		}
		if err := db.logImport(ctx, tx, posSystemID, companyID, posgate.ImportKindProducts, created, len(products)-created, started); err != nil {
			return err
		}
		if emitted, err = db.emitIn(ctx, tx, posgate.ImportEvent(posSystemID, companyID, "products", len(products), posgate.Timestamp(db.now()))); err != nil {
			return err
		}
		return bumpCatalogueVersion(ctx, tx, posSystemID, companyID)
	})
	if err != nil {
		if posgate.ErrorCode(err) != posgate.EINTERNAL {
			return 0, 0, err
		}
		return 0, 0, wrap(err, "import products")
	}
	if emitted {
		db.outbox.Notify()
	}
	return created, len(products) - created, nil
}

// ImportCategories reads the stored tree, lets plan check the import
// against it and upserts what plan returns, all in one transaction under
// the company's catalogue lock.
func (db *DB) ImportCategories(ctx context.Context, posSystemID, companyID string, plan func(stored map[string]string) ([]*posgate.Category, error)) (created, updated int, err error) {
	started := db.now()
	emitted := false
	err = pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		if err := lockCatalogue(ctx, tx, posSystemID, companyID); err != nil {
			return err
		}
		stored, err := storedTree(ctx, tx, posSystemID, companyID)
		if err != nil {
			return err
		}
		cats, err := plan(stored)
		if err != nil {
			return err
		}
		if len(cats) == 0 {
			return nil
		}
		n := len(cats)
		idsCol, names, parents, catalogs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		for i, c := range cats {
			idsCol[i], names[i], parents[i], catalogs[i] = c.ID, c.Name, c.ParentID, c.CatalogID
			if _, ok := stored[c.ID]; ok {
				updated++
			} else {
				created++
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO catalogue_categories AS c (pos_system_id, company_id, category_id, name, parent_id, catalog_id, created_at, updated_at)
			SELECT $1, $2, u.id, u.name, u.parent, u.catalog, $7, $7 FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS u(id, name, parent, catalog)
			ON CONFLICT (pos_system_id, company_id, category_id) DO UPDATE SET name = excluded.name, parent_id = excluded.parent_id,
				catalog_id = excluded.catalog_id, updated_at = excluded.updated_at
			WHERE (c.name, c.parent_id, c.catalog_id) IS DISTINCT FROM (excluded.name, excluded.parent_id, excluded.catalog_id)`,
			posSystemID, companyID, idsCol, names, parents, catalogs, posgate.Timestamp(db.now())); err != nil {
			return err
		}
		if err := db.logImport(ctx, tx, posSystemID, companyID, posgate.ImportKindCategories, created, updated, started); err != nil {
			return err
		}
		if emitted, err = db.emitIn(ctx, tx, posgate.ImportEvent(posSystemID, companyID, "productCategories", created+updated, posgate.Timestamp(db.now()))); err != nil {
			return err
		}
		return bumpCatalogueVersion(ctx, tx, posSystemID, companyID)
	})
	if err != nil {
		if posgate.ErrorCode(err) != posgate.EINTERNAL {
			return 0, 0, err
		}
		return 0, 0, wrap(err, "import categories")
	}
	if emitted {
		db.outbox.Notify()
	}
	return created, updated, nil
}

func scanCategory(posSystemID, companyID string) func(pgx.Row) (*posgate.Category, error) {
	return func(r pgx.Row) (*posgate.Category, error) {
		c := &posgate.Category{POSSystemID: posSystemID, CompanyID: companyID}
		return c, r.Scan(&c.ID, &c.Name, &c.ParentID, &c.CatalogID, &c.CreatedAt, &c.UpdatedAt)
	}
}

func scanProduct(posSystemID, companyID string) func(pgx.Row) (*posgate.Product, error) {
	return func(r pgx.Row) (*posgate.Product, error) {
		p := &posgate.Product{POSSystemID: posSystemID, CompanyID: companyID}
		var price *int64
		if err := r.Scan(&p.ID, &p.Name, &p.CategoryID, &p.CategoryName, &p.Manufacturer, &price, &p.CreatedAt, &p.UpdatedAt); err != nil {
			return nil, err
		}
		if price != nil {
			v := posgate.MinorUnits(*price)
			p.Price = &v
		}
		return p, nil
	}
}

// listPage reads a page of a company's rows of table, ordered by key, and
// the count, from one snapshot.
func listPage[T any](ctx context.Context, db *DB, what, table, cols, key, posSystemID, companyID string, offset, limit int, scan func(pgx.Row) (*T, error)) ([]*T, int, error) {
	var out []*T
	var total int
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE pos_system_id = $1 AND company_id = $2`, posSystemID, companyID).Scan(&total); err != nil {
			return err
		}
		var lim *int
		if limit > 0 {
			lim = &limit
		}
		rows, err := tx.Query(ctx, `SELECT `+cols+` FROM `+table+` WHERE pos_system_id = $1 AND company_id = $2 ORDER BY `+key+` LIMIT $3 OFFSET $4`,
			posSystemID, companyID, lim, max(offset, 0))
		if err != nil {
			return err
		}
		out, err = pgx.AppendRows(out, rows, func(r pgx.CollectableRow) (*T, error) { return scan(r) })
		return err
	})
	if err != nil {
		return nil, 0, wrap(err, "list "+what)
	}
	if out == nil {
		out = []*T{}
	}
	return out, total, nil
}

// ListCategories returns a page of a company's categories by id and how
// many it has.
func (db *DB) ListCategories(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*posgate.Category, int, error) {
	return listPage(ctx, db, "categories", "catalogue_categories", categoryCols, "category_id", posSystemID, companyID, offset, limit, scanCategory(posSystemID, companyID))
}

// ListProducts returns a page of a company's products by id and how many it
// has.
func (db *DB) ListProducts(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*posgate.Product, int, error) {
	return listPage(ctx, db, "products", "catalogue_products", productCols, "product_id", posSystemID, companyID, offset, limit, scanProduct(posSystemID, companyID))
}

// FindProducts returns the company's products among ids.
func (db *DB) FindProducts(ctx context.Context, posSystemID, companyID string, ids []string) ([]*posgate.Product, error) {
	if len(ids) == 0 {
		return []*posgate.Product{}, nil
	}
	out, err := collect(ctx, db, "find products", scanProduct(posSystemID, companyID), `SELECT `+productCols+` FROM catalogue_products
		WHERE pos_system_id = $1 AND company_id = $2 AND product_id = ANY($3)`, posSystemID, companyID, ids)
	if out == nil && err == nil {
		out = []*posgate.Product{}
	}
	return out, err
}
