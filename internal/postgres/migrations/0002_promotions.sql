-- Imported promotions (endpoint 7) and company catalogues.
--
-- A promotion is one row: its id lists are arrays, its validities and
-- results JSON in the shape of the import (interface.md §2.11; json, not
-- jsonb: nothing queries inside them, and an import of 100,000 promotions
-- should not convert them). An empty location_ids means every location of
-- the company. There is no foreign key to companies: an import locks its
-- company (FOR KEY SHARE) for its whole transaction, companies are never
-- deleted, and 100,000 foreign key checks cost the import a large share of
-- its time. valid_from and
-- valid_until bound all of its validity periods (NULL: open, or no periods),
-- so that "valid at" queries read only the promotions that can be valid and
-- check recurrences in Go.

CREATE TABLE promotions (
    pos_system_id          text COLLATE "C" NOT NULL,
    company_id             text COLLATE "C" NOT NULL,
    promotion_id           text COLLATE "C" NOT NULL,
    name                   text NOT NULL,
    use_for_all_categories boolean NOT NULL,
    use_for_all_products   boolean NOT NULL,
    location_ids           text[] COLLATE "C" NOT NULL,
    category_ids           text[] NOT NULL,
    product_ids            text[] NOT NULL,
    validities             json NOT NULL,
    results                json NOT NULL,
    valid_from             timestamptz,
    valid_until            timestamptz,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, promotion_id)
);

-- The promotions of a location: those naming it (location_ids @> ARRAY[id])
-- and those naming none.
CREATE INDEX promotions_locations ON promotions USING gin (location_ids);
CREATE INDEX promotions_everywhere ON promotions (pos_system_id, company_id, valid_until) WHERE cardinality(location_ids) = 0;

-- A company's catalogue: the category and product ids an import is checked
-- against (warnings for unknown ones).
CREATE TABLE catalogue_items (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('category', 'product')),
    item_id       text COLLATE "C" NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, kind, item_id),
    FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
);
