-- 002: imported promotions (docs/api.md §9) and company catalogues.
--
-- A promotion keeps in columns only what queries filter on; the rest of it
-- is data, a compact binary record (internal/promorecord), so that an import
-- of 100,000 promotions writes one small row each. A promotion that names
-- no location applies at every location of its company (all_locations).
-- valid_from and valid_until bound all of a promotion's validity periods
-- (NULL: open, or no periods), so that "valid at" queries read only the
-- promotions that can be valid and check recurrences in Go. Unlike the
-- other times they are INTEGER Unix microseconds: they are only compared,
-- never shown, and an import writes two per promotion.
-- There is no foreign key to companies: an import checks its company in
-- the same write transaction, companies are never deleted, and the check
-- per row would cost every import of 100,000 promotions.

CREATE TABLE promotions (
	id            INTEGER PRIMARY KEY, -- the rowid, assigned by the import; promotion_locations refers to it
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	promotion_id  TEXT NOT NULL,
	all_locations INTEGER NOT NULL CHECK (all_locations IN (0, 1)),
	valid_from    INTEGER,
	valid_until   INTEGER,
	data          BLOB NOT NULL,
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL,
	UNIQUE (pos_system_id, company_id, promotion_id)
) STRICT;

CREATE INDEX promotions_everywhere ON promotions (pos_system_id, company_id, valid_until) WHERE all_locations = 1;

-- promotion_places numbers the locations that promotions name, so that
-- promotion_locations, the index of the promotions of each location, is two
-- integers per row: an import writes one such row per promotion and
-- location. Location ids are unique within a POS system, so (pos_system_id,
-- location_id) names one location of one company.
CREATE TABLE promotion_places (
	id            INTEGER PRIMARY KEY,
	pos_system_id TEXT NOT NULL,
	location_id   TEXT NOT NULL,
	UNIQUE (pos_system_id, location_id)
) STRICT;

CREATE TABLE promotion_locations (
	place     INTEGER NOT NULL, -- promotion_places.id
	promotion INTEGER NOT NULL, -- promotions.id
	PRIMARY KEY (place, promotion)
) STRICT, WITHOUT ROWID;

-- A company's catalogue: the category and product ids an import is checked
-- against (warnings for unknown ones).
CREATE TABLE catalogue_items (
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	kind          TEXT NOT NULL CHECK (kind IN ('category', 'product')),
	item_id       TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, company_id, kind, item_id),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT, WITHOUT ROWID;
