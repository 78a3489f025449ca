-- Loyalty programs and transactions (docs/api.md §13).

-- A refund may take back points already spent, so a points balance may go
-- below 0 (docs/api.md §13.4). A CHECK cannot be altered in SQLite, but a
-- column holding only its own CHECK can be dropped: the balance moves to a
-- new column with the wider CHECK (the FTS triggers do not name it).
ALTER TABLE loyalty_users ADD COLUMN points_signed INTEGER NOT NULL DEFAULT 0
	CHECK (points_signed BETWEEN -2147483648 AND 2147483647);
UPDATE loyalty_users SET points_signed = points;
ALTER TABLE loyalty_users DROP COLUMN points;
ALTER TABLE loyalty_users RENAME COLUMN points_signed TO points;

-- A company's loyalty program; none means posgate's defaults. Rates and
-- amounts are hundredths (posgate.Amount).
CREATE TABLE loyalty_programs (
	pos_system_id     TEXT NOT NULL,
	company_id        TEXT NOT NULL,
	points_per_unit   INTEGER NOT NULL,
	stamps_per_sale   INTEGER NOT NULL,
	minimum_for_stamp INTEGER NOT NULL,
	auto_enroll       INTEGER NOT NULL,
	updated_at        TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, company_id),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT, WITHOUT ROWID;

-- Transactions: id is posgate's UUID; (company, transaction_id) is the
-- POS's key and decides idempotency, and a session links to at most one
-- transaction (the unique index decides both under concurrency). amount and
-- refunded are hundredths, amount negative for a refund; original_id is a
-- refund's sale. request is the canonical request (request_hash its
-- SHA-256) and answer the data answered. session_id has no foreign key:
-- expired sessions are swept.
CREATE TABLE transactions (
	id               TEXT PRIMARY KEY,
	pos_system_id    TEXT NOT NULL,
	company_id       TEXT NOT NULL,
	location_id      TEXT NOT NULL,
	terminal_id      TEXT NOT NULL,
	transaction_id   TEXT NOT NULL,
	session_id       TEXT,
	transaction_type TEXT NOT NULL CHECK (transaction_type IN ('Undefined', 'Sale', 'Refund')),
	amount           INTEGER NOT NULL,
	refunded         INTEGER NOT NULL DEFAULT 0 CHECK (refunded >= 0),
	transaction_date TEXT NOT NULL,
	original_id      TEXT REFERENCES transactions (id),
	original_transaction_id TEXT,
	user_id          TEXT,
	points_earned    INTEGER NOT NULL DEFAULT 0,
	stamps_earned    INTEGER NOT NULL DEFAULT 0,
	request_hash     TEXT NOT NULL,
	request          TEXT NOT NULL,
	answer           TEXT NOT NULL,
	created_at       TEXT NOT NULL,
	UNIQUE (pos_system_id, company_id, transaction_id),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT;

CREATE UNIQUE INDEX transactions_by_session ON transactions (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX transactions_by_date ON transactions (pos_system_id, company_id, transaction_date);
CREATE INDEX transactions_by_user ON transactions (pos_system_id, company_id, user_id, transaction_date) WHERE user_id IS NOT NULL;
CREATE INDEX transactions_by_location ON transactions (pos_system_id, company_id, location_id, transaction_date);

-- The coupons a transaction redeemed; restored_at is set when a refund of
-- the whole sale gave the coupon back.
CREATE TABLE transaction_coupons (
	pos_system_id  TEXT NOT NULL,
	company_id     TEXT NOT NULL,
	code_norm      TEXT NOT NULL,
	txn_id         TEXT NOT NULL REFERENCES transactions (id),
	code           TEXT NOT NULL,
	redeemed_at    TEXT NOT NULL,
	restored_at    TEXT,
	PRIMARY KEY (pos_system_id, company_id, code_norm, txn_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX transaction_coupons_by_transaction ON transaction_coupons (txn_id);
