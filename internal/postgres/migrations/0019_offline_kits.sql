-- The offline allowances of the offline kits issued (docs/api.md §24.4):
-- which coupons (by the hash of their code, space-separated) one terminal
-- may redeem offline, until when, and how many.
CREATE TABLE offline_allowances (
    id              text COLLATE "C" PRIMARY KEY,
    pos_system_id   text COLLATE "C" NOT NULL,
    company_id      text COLLATE "C" NOT NULL,
    location_id     text COLLATE "C" NOT NULL,
    terminal_id     text COLLATE "C" NOT NULL,
    salt            text NOT NULL,
    issued_at       timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    max_redemptions integer NOT NULL,
    code_hashes     text NOT NULL
);

-- The coupons redeemed offline under an allowance, replayed (docs/api.md
-- §24.5): slot numbers them 1, 2, … up to the allowance's
-- max_redemptions, so that the keys decide the limit; conflict is the
-- reason the sale could not redeem the coupon, '' when it could.
CREATE TABLE offline_redemptions (
    allowance_id     text COLLATE "C" NOT NULL REFERENCES offline_allowances (id),
    slot             integer NOT NULL,
    code_key         text COLLATE "C" NOT NULL,
    pos_system_id    text COLLATE "C" NOT NULL,
    company_id       text COLLATE "C" NOT NULL,
    location_id      text COLLATE "C" NOT NULL,
    terminal_id      text COLLATE "C" NOT NULL,
    transaction_id   text COLLATE "C" NOT NULL,
    code             text NOT NULL,
    conflict         text NOT NULL,
    transaction_date timestamptz NOT NULL,
    recorded_at      timestamptz NOT NULL,
    PRIMARY KEY (allowance_id, slot),
    UNIQUE (allowance_id, code_key)
);

CREATE INDEX offline_conflicts_by_company ON offline_redemptions (pos_system_id, company_id, recorded_at) WHERE conflict <> '';
