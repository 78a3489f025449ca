-- Promotion budgets (docs/api.md §9.7). The budget itself is in the
-- promotion's record (internal/promorecord); these are its counters.
--
-- promotion_usage counts the sales that applied a promotion with a budget:
-- in all (user_id '') and per loyalty customer (user_id the user's id). A
-- sale counts a redemption by one conditional upsert per counter, which
-- does nothing when the counter has reached the budget; the row stays
-- locked until the sale commits, so concurrent sales on any number of
-- instances count one after the other.
CREATE TABLE promotion_usage (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    promotion_id  text COLLATE "C" NOT NULL,
    user_id       text COLLATE "C" NOT NULL,
    used          bigint NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, promotion_id, user_id)
);

-- transaction_promotions records which sale (transactions.id) counted
-- which redemption, so that its full refund gives them back once. A sale
-- inserts its transactions row whole at its end (docs/decisions.md,
-- "Performance against the floor of the same work"), after it counted its
-- redemptions: the reference is checked when the sale commits.
CREATE TABLE transaction_promotions (
    txn_id        text COLLATE "C" NOT NULL REFERENCES transactions (id) DEFERRABLE INITIALLY DEFERRED,
    promotion_id  text COLLATE "C" NOT NULL,
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    user_id       text COLLATE "C" NOT NULL,
    PRIMARY KEY (txn_id, promotion_id)
);
