-- Loyalty programs and transactions (docs/api.md §13).

-- A refund may take back points already spent, so a points balance may go
-- below 0 (docs/api.md §13.4).
ALTER TABLE loyalty_users DROP CONSTRAINT loyalty_users_points_check;

-- A company's loyalty program; none means posgate's defaults. Rates and
-- amounts are hundredths (posgate.Amount).
CREATE TABLE loyalty_programs (
    pos_system_id     text COLLATE "C" NOT NULL,
    company_id        text COLLATE "C" NOT NULL,
    points_per_unit   bigint NOT NULL,
    stamps_per_sale   integer NOT NULL,
    minimum_for_stamp bigint NOT NULL,
    auto_enroll       boolean NOT NULL,
    updated_at        timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id),
    FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
);

-- Transactions: id is posgate's UUID; (company, transaction_id) is the
-- POS's key and decides idempotency, and a session links to at most one
-- transaction: the unique indexes decide both, also between concurrent
-- requests on several instances (INSERT … ON CONFLICT DO NOTHING waits for
-- the other insert to commit or roll back). amount and refunded are
-- hundredths, amount negative for a refund; original_id is a refund's
-- sale. request is the canonical request (request_hash its SHA-256) and
-- answer the data answered. session_id has no foreign key: expired
-- sessions are swept.
CREATE TABLE transactions (
    id               text COLLATE "C" PRIMARY KEY,
    pos_system_id    text COLLATE "C" NOT NULL,
    company_id       text COLLATE "C" NOT NULL,
    location_id      text COLLATE "C" NOT NULL,
    terminal_id      text COLLATE "C" NOT NULL,
    transaction_id   text COLLATE "C" NOT NULL,
    session_id       text COLLATE "C",
    transaction_type text NOT NULL CHECK (transaction_type IN ('Undefined', 'Sale', 'Refund')),
    amount           bigint NOT NULL,
    refunded         bigint NOT NULL DEFAULT 0 CHECK (refunded >= 0),
    transaction_date timestamptz NOT NULL,
    original_id      text COLLATE "C" REFERENCES transactions (id),
    original_transaction_id text COLLATE "C",
    user_id          text COLLATE "C",
    points_earned    integer NOT NULL DEFAULT 0,
    stamps_earned    integer NOT NULL DEFAULT 0,
    request_hash     text NOT NULL,
    request          text NOT NULL,
    answer           text NOT NULL,
    created_at       timestamptz NOT NULL,
    UNIQUE (pos_system_id, company_id, transaction_id),
    FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
);

CREATE UNIQUE INDEX transactions_by_session ON transactions (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX transactions_by_date ON transactions (pos_system_id, company_id, transaction_date);
CREATE INDEX transactions_by_user ON transactions (pos_system_id, company_id, user_id, transaction_date) WHERE user_id IS NOT NULL;
CREATE INDEX transactions_by_location ON transactions (pos_system_id, company_id, location_id, transaction_date);

-- The coupons a transaction redeemed; restored_at is set when a refund of
-- the whole sale gave the coupon back.
CREATE TABLE transaction_coupons (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    code_norm     text COLLATE "C" NOT NULL,
    txn_id        text COLLATE "C" NOT NULL REFERENCES transactions (id),
    code          text NOT NULL,
    redeemed_at   timestamptz NOT NULL,
    restored_at   timestamptz,
    PRIMARY KEY (pos_system_id, company_id, code_norm, txn_id)
);

CREATE INDEX transaction_coupons_by_transaction ON transaction_coupons (txn_id);
