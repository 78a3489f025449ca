-- Imported promotions (docs/api.md §9) and company catalogues.
--
-- A promotion keeps in columns only what queries filter on; the rest of it
-- (name, switches, id lists, validities, results) is data, a compact binary
-- record (internal/promorecord, the SQLite store's too), so that an import
-- of 100,000 promotions writes one small row each. location_ids repeats the
-- record's location list for the index; empty, it means every location of
-- the company. valid_from and valid_until bound all of a promotion's
-- validity periods (NULL: open, or no periods), so that "valid at" queries
-- read only the promotions that can be valid and check recurrences in Go.
-- There is no foreign key to companies: an import locks its company (FOR
-- KEY SHARE) for its whole transaction, companies are never deleted, and
-- 100,000 foreign key checks cost an import a large share of its time.

CREATE TABLE promotions (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    promotion_id  text COLLATE "C" NOT NULL,
    location_ids  text[] COLLATE "C" NOT NULL,
    valid_from    timestamptz,
    valid_until   timestamptz,
    data          bytea NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
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
