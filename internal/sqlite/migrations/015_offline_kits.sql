-- The offline allowances of the offline kits issued (docs/api.md §24.4):
-- which coupons (by the hash of their code, space-separated) one terminal
-- may redeem offline, until when, and how many.
CREATE TABLE offline_allowances (
	id              TEXT PRIMARY KEY,
	pos_system_id   TEXT NOT NULL,
	company_id      TEXT NOT NULL,
	location_id     TEXT NOT NULL,
	terminal_id     TEXT NOT NULL,
	salt            TEXT NOT NULL,
	issued_at       TEXT NOT NULL,
	expires_at      TEXT NOT NULL,
	max_redemptions INTEGER NOT NULL,
	code_hashes     TEXT NOT NULL
) STRICT;

-- The coupons redeemed offline under an allowance, replayed (docs/api.md
-- §24.5): slot numbers them 1, 2, … up to the allowance's
-- max_redemptions, so that the keys decide the limit; conflict is the
-- reason the sale could not redeem the coupon, '' when it could.
CREATE TABLE offline_redemptions (
	allowance_id     TEXT NOT NULL REFERENCES offline_allowances (id),
	slot             INTEGER NOT NULL,
	code_key         TEXT NOT NULL,
	pos_system_id    TEXT NOT NULL,
	company_id       TEXT NOT NULL,
	location_id      TEXT NOT NULL,
	terminal_id      TEXT NOT NULL,
	transaction_id   TEXT NOT NULL,
	code             TEXT NOT NULL,
	conflict         TEXT NOT NULL,
	transaction_date TEXT NOT NULL,
	recorded_at      TEXT NOT NULL,
	PRIMARY KEY (allowance_id, slot),
	UNIQUE (allowance_id, code_key)
) STRICT;

CREATE INDEX offline_conflicts_by_company ON offline_redemptions (pos_system_id, company_id, recorded_at) WHERE conflict <> '';
