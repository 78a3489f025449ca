-- 002: loyalty users and coupons (docs/api.md §5, §6).
--
-- Matching columns hold folded copies computed by posgate (posgate.Fold,
-- FoldEmail, PhoneDigits), so that both stores match alike: *_norm are
-- case-folded, phone_digits are the digits of a phone.

-- loyalty_users has an INTEGER PRIMARY KEY (a stable rowid, which VACUUM
-- keeps) because the trigram index below refers to rows by rowid; the
-- user's own key is the UNIQUE constraint. Empty text fields are ''.
CREATE TABLE loyalty_users (
	user_key      INTEGER PRIMARY KEY,
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	first_name    TEXT NOT NULL,
	last_name     TEXT NOT NULL,
	gender        TEXT NOT NULL,
	phone         TEXT NOT NULL,
	email         TEXT NOT NULL,
	stamps        INTEGER NOT NULL CHECK (stamps BETWEEN 0 AND 2147483647),
	points        INTEGER NOT NULL CHECK (points BETWEEN 0 AND 2147483647),
	first_norm    TEXT NOT NULL,
	last_norm     TEXT NOT NULL,
	email_norm    TEXT NOT NULL,
	phone_digits  TEXT NOT NULL,
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL,
	UNIQUE (pos_system_id, company_id, user_id),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT;

-- Exact matches of a keyword search, already in result order, and the
-- owners of coupons searched by e-mail or phone.
CREATE INDEX loyalty_users_by_first ON loyalty_users (pos_system_id, company_id, first_norm, last_norm, user_id);
CREATE INDEX loyalty_users_by_last ON loyalty_users (pos_system_id, company_id, last_norm, first_norm, user_id);
CREATE INDEX loyalty_users_by_email ON loyalty_users (pos_system_id, company_id, email_norm);
CREATE INDEX loyalty_users_by_phone ON loyalty_users (pos_system_id, company_id, phone_digits);

-- Substring search (keyword of at least 3 characters): an FTS5 trigram
-- index over the folded columns. It stores only the index (external
-- content); the triggers keep it in step with the table. The text is folded
-- already, so the tokenizer compares it as it is. detail=column keeps which
-- column holds a trigram but not where: a search asks for rows holding all
-- of a keyword's trigrams and checks the substring in the row itself, which
-- over a million users is several times faster than the position lists a
-- phrase query walks.
CREATE VIRTUAL TABLE loyalty_users_fts USING fts5 (
	first_norm, last_norm, email_norm, phone_digits,
	content = 'loyalty_users', content_rowid = 'user_key',
	tokenize = 'trigram case_sensitive 1', detail = 'column'
);

CREATE TRIGGER loyalty_users_fts_insert AFTER INSERT ON loyalty_users BEGIN
	INSERT INTO loyalty_users_fts (rowid, first_norm, last_norm, email_norm, phone_digits)
	VALUES (new.user_key, new.first_norm, new.last_norm, new.email_norm, new.phone_digits);
END;

CREATE TRIGGER loyalty_users_fts_update AFTER UPDATE OF first_norm, last_norm, email_norm, phone_digits ON loyalty_users BEGIN
	INSERT INTO loyalty_users_fts (loyalty_users_fts, rowid, first_norm, last_norm, email_norm, phone_digits)
	VALUES ('delete', old.user_key, old.first_norm, old.last_norm, old.email_norm, old.phone_digits);
	INSERT INTO loyalty_users_fts (rowid, first_norm, last_norm, email_norm, phone_digits)
	VALUES (new.user_key, new.first_norm, new.last_norm, new.email_norm, new.phone_digits);
END;

CREATE TRIGGER loyalty_users_fts_delete AFTER DELETE ON loyalty_users BEGIN
	INSERT INTO loyalty_users_fts (loyalty_users_fts, rowid, first_norm, last_norm, email_norm, phone_digits)
	VALUES ('delete', old.user_key, old.first_norm, old.last_norm, old.email_norm, old.phone_digits);
END;

-- coupons: code_norm is the folded code, the key within the company.
-- Optional fields are NULL when absent (the interface shows them as null);
-- info is a JSON array. user_id, email and phone name the owner; their
-- folded copies are NULL when absent, so that the partial indexes skip the
-- many coupons that are owned through a loyalty user only. location_ids is
-- the sorted JSON array of the locations the coupon is usable at, NULL for
-- every location of the company; the store checks that each is a location
-- of the company (locations are never deleted).
CREATE TABLE coupons (
	pos_system_id   TEXT NOT NULL,
	company_id      TEXT NOT NULL,
	code_norm       TEXT NOT NULL,
	code            TEXT NOT NULL,
	reward_provider TEXT NOT NULL CHECK (reward_provider IN ('TwoReward', 'PJM', 'Dummy')),
	name            TEXT,
	title           TEXT,
	picture_url     TEXT,
	available_until TEXT,
	status          TEXT NOT NULL CHECK (status IN ('Issued', 'Redeemed', 'Cancelled')),
	info            TEXT,
	user_id         TEXT,
	email           TEXT,
	email_norm      TEXT,
	phone           TEXT,
	phone_digits    TEXT,
	location_ids    TEXT,
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, company_id, code_norm),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id),
	FOREIGN KEY (pos_system_id, company_id, user_id) REFERENCES loyalty_users (pos_system_id, company_id, user_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX coupons_by_user ON coupons (pos_system_id, company_id, user_id) WHERE user_id IS NOT NULL;
CREATE INDEX coupons_by_email ON coupons (pos_system_id, company_id, email_norm) WHERE email_norm IS NOT NULL;
CREATE INDEX coupons_by_phone ON coupons (pos_system_id, company_id, phone_digits) WHERE phone_digits IS NOT NULL;
