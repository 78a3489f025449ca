-- The catalogue (docs/api.md §17): a company's product categories, a tree,
-- and its products, imported by the POS. They replace catalogue_items, the
-- bare lists of ids an operator used to set: its ids become categories and
-- products with no other field.
--
-- No foreign key to companies, as for promotions: an import locks its
-- company (FOR UPDATE for categories, FOR KEY SHARE for products) for its
-- whole transaction, and companies are never deleted. parent_id is '' for a
-- root and is not a foreign key either: an import checks the whole tree
-- (parents exist, no cycle) before it writes. price is in minor units
-- (cents), NULL when the POS gave none.

ALTER TABLE companies ADD COLUMN products_import boolean NOT NULL DEFAULT true;

CREATE TABLE catalogue_categories (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    category_id   text COLLATE "C" NOT NULL,
    name          text NOT NULL,
    parent_id     text COLLATE "C" NOT NULL,
    catalog_id    text NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, category_id)
);

CREATE TABLE catalogue_products (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    product_id    text COLLATE "C" NOT NULL,
    name          text NOT NULL,
    category_id   text COLLATE "C" NOT NULL,
    category_name text NOT NULL,
    manufacturer  text NOT NULL,
    price         bigint,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, product_id)
);

-- What promotion evaluation reads of a company (its promotions and its
-- category tree) has a version, bumped in the transaction of every change
-- to them, so that an instance can tell whether its cached copy is current
-- by reading one row.
CREATE TABLE catalogue_versions (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    version       bigint NOT NULL,
    PRIMARY KEY (pos_system_id, company_id)
);

INSERT INTO catalogue_categories (pos_system_id, company_id, category_id, name, parent_id, catalog_id, created_at, updated_at)
    SELECT pos_system_id, company_id, item_id, '', '', '', date_trunc('microseconds', now()), date_trunc('microseconds', now())
    FROM catalogue_items WHERE kind = 'category';
INSERT INTO catalogue_products (pos_system_id, company_id, product_id, name, category_id, category_name, manufacturer, price, created_at, updated_at)
    SELECT pos_system_id, company_id, item_id, '', '', '', '', NULL, date_trunc('microseconds', now()), date_trunc('microseconds', now())
    FROM catalogue_items WHERE kind = 'product';
DROP TABLE catalogue_items;
