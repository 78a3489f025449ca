-- The catalogue (docs/api.md §17): a company's product categories, a tree,
-- and its products, imported by the POS. They replace catalogue_items, the
-- bare lists of ids an operator used to set: its ids become categories and
-- products with no other field.
--
-- No foreign key to companies, as for promotions: an import checks its
-- company in its write transaction, companies are never deleted, and the
-- check per row would cost an import of 100,000 products a share of its
-- time. parent_id is '' for a root and is not a foreign key either: an
-- import checks the whole tree (parents exist, no cycle) before it writes.
-- price is in minor units (cents), NULL when the POS gave none.

ALTER TABLE companies ADD COLUMN products_import INTEGER NOT NULL DEFAULT 1 CHECK (products_import IN (0, 1));

CREATE TABLE catalogue_categories (
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	category_id   TEXT NOT NULL,
	name          TEXT NOT NULL,
	parent_id     TEXT NOT NULL,
	catalog_id    TEXT NOT NULL,
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, company_id, category_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE catalogue_products (
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	product_id    TEXT NOT NULL,
	name          TEXT NOT NULL,
	category_id   TEXT NOT NULL,
	category_name TEXT NOT NULL,
	manufacturer  TEXT NOT NULL,
	price         INTEGER,
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, company_id, product_id)
) STRICT, WITHOUT ROWID;

-- What promotion evaluation reads of a company (its promotions and its
-- category tree) has a version, bumped in the transaction of every change
-- to them, so that an instance can tell whether its cached copy is current
-- by reading one row.
CREATE TABLE catalogue_versions (
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	version       INTEGER NOT NULL,
	PRIMARY KEY (pos_system_id, company_id)
) STRICT, WITHOUT ROWID;

INSERT INTO catalogue_categories (pos_system_id, company_id, category_id, name, parent_id, catalog_id, created_at, updated_at)
	SELECT pos_system_id, company_id, item_id, '', '', '', strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z', strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z'
	FROM catalogue_items WHERE kind = 'category';
INSERT INTO catalogue_products (pos_system_id, company_id, product_id, name, category_id, category_name, manufacturer, price, created_at, updated_at)
	SELECT pos_system_id, company_id, item_id, '', '', '', '', NULL, strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z', strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z'
	FROM catalogue_items WHERE kind = 'product';
DROP TABLE catalogue_items;
