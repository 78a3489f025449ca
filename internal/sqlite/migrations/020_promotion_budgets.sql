-- Promotion budgets (docs/api.md §9.7). The budget itself is in the
-- promotion's record (internal/promorecord); these are its counters.
--
-- promotion_usage counts the sales that applied a promotion with a budget:
-- in all (user_id '') and per loyalty customer (user_id the user's id). A
-- sale counts a redemption by one conditional upsert per counter, which
-- does nothing when the counter has reached the budget.
CREATE TABLE promotion_usage (
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	promotion_id  TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	used          INTEGER NOT NULL,
	PRIMARY KEY (pos_system_id, company_id, promotion_id, user_id)
) STRICT, WITHOUT ROWID;

-- transaction_promotions records which sale (transactions.id) counted
-- which redemption, so that its full refund gives them back once. No
-- foreign key: the sale's row is written after its redemptions
-- (internal/sqlite/transactions.go, InsertTransaction).
CREATE TABLE transaction_promotions (
	txn_id        TEXT NOT NULL,
	promotion_id  TEXT NOT NULL,
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	PRIMARY KEY (txn_id, promotion_id)
) STRICT, WITHOUT ROWID;
