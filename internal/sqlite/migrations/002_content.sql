-- 002: customer-facing content (docs/api.md §7, §8): carousel slides and
-- settings, receipt promotions, daily impression counters, and the secrets
-- that sign the carousel and QR code URLs.

CREATE TABLE slides (
	pos_system_id    TEXT NOT NULL,
	company_id       TEXT NOT NULL,
	slide_id         TEXT NOT NULL,
	position         INTEGER NOT NULL CHECK (position BETWEEN 1 AND 10000),
	image_url        TEXT NOT NULL,
	title            TEXT NOT NULL,
	text             TEXT NOT NULL,
	duration_seconds INTEGER NOT NULL CHECK (duration_seconds BETWEEN 5 AND 15),
	created_at       TEXT NOT NULL,
	updated_at       TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, company_id, slide_id),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT, WITHOUT ROWID;

-- url_template is '' when the company uses posgate's own carousel page.
CREATE TABLE carousel_settings (
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	url_template  TEXT NOT NULL,
	updated_at    TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, company_id),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT, WITHOUT ROWID;

-- location_id is '' for the company default. A location's row is only
-- written when the location belongs to the company (checked by the INSERT;
-- locations are never deleted nor moved).
CREATE TABLE receipt_promotions (
	pos_system_id  TEXT NOT NULL,
	company_id     TEXT NOT NULL,
	location_id    TEXT NOT NULL,
	primary_text   TEXT NOT NULL,
	secondary_text TEXT NOT NULL,
	target_url     TEXT NOT NULL,
	created_at     TEXT NOT NULL,
	updated_at     TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, company_id, location_id),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT, WITHOUT ROWID;

-- One counter per slide, terminal and UTC day (day is 'YYYY-MM-DD'), so the
-- table grows with days × terminals × slides, not with every showing.
CREATE TABLE carousel_impressions (
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	day           TEXT NOT NULL,
	location_id   TEXT NOT NULL,
	terminal_id   TEXT NOT NULL,
	slide_id      TEXT NOT NULL,
	count         INTEGER NOT NULL,
	PRIMARY KEY (pos_system_id, company_id, day, location_id, terminal_id, slide_id),
	FOREIGN KEY (pos_system_id, location_id, terminal_id) REFERENCES terminals (pos_system_id, location_id, terminal_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE secrets (
	name       TEXT NOT NULL PRIMARY KEY,
	value      BLOB NOT NULL,
	created_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
