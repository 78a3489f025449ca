-- Loyalty users and coupons (docs/api.md §5, §6). Matching columns hold folded
-- copies computed by posgate (posgate.Fold, FoldEmail, PhoneDigits), so that
-- both stores match alike: *_norm are case-folded, phone_digits are the
-- digits of a phone. Empty text fields of a user are ''.

CREATE TABLE loyalty_users (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    user_id       text COLLATE "C" NOT NULL,
    first_name    text NOT NULL,
    last_name     text NOT NULL,
    gender        text NOT NULL,
    phone         text NOT NULL,
    email         text NOT NULL,
    stamps        integer NOT NULL CHECK (stamps >= 0),
    points        integer NOT NULL CHECK (points >= 0),
    first_norm    text COLLATE "C" NOT NULL,
    last_norm     text COLLATE "C" NOT NULL,
    email_norm    text COLLATE "C" NOT NULL,
    phone_digits  text COLLATE "C" NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, user_id),
    CONSTRAINT loyalty_users_company_fk FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
);

-- Exact matches of a keyword search, already in result order, and the
-- owners of coupons searched by e-mail or phone.
CREATE INDEX loyalty_users_first ON loyalty_users (pos_system_id, company_id, first_norm, last_norm, user_id);
CREATE INDEX loyalty_users_last ON loyalty_users (pos_system_id, company_id, last_norm, first_norm, user_id);
CREATE INDEX loyalty_users_email ON loyalty_users (pos_system_id, company_id, email_norm);
CREATE INDEX loyalty_users_phone ON loyalty_users (pos_system_id, company_id, phone_digits);

-- Substring search (keyword of at least 3 characters) through pg_trgm: one
-- index over names, e-mail and phone digits joined by a control character
-- (which keywords may not hold, so no match spans two fields). Searches check
-- the field they mean in the rows it finds. It indexes an expression on
-- purpose: pg_trgm also serves =, and an index on phone_digits alone lured
-- the planner away from the B-tree for exact phone lookups.
CREATE INDEX loyalty_users_trgm ON loyalty_users
    USING gin ((first_norm || E'\x1f' || last_norm || E'\x1f' || email_norm || E'\x1f' || phone_digits) gin_trgm_ops);

-- code_norm is the folded code, the key within the company. Optional fields
-- are NULL when absent (the interface shows them as null). user_id, email and
-- phone name the owner; their folded copies are NULL when absent, so that
-- the partial indexes skip the coupons owned through a loyalty user only.
-- location_ids lists, sorted, the locations the coupon is usable at; NULL
-- means every location of the company. The store checks that each is a
-- location of the company (locations are never deleted).
CREATE TABLE coupons (
    pos_system_id   text COLLATE "C" NOT NULL,
    company_id      text COLLATE "C" NOT NULL,
    code_norm       text COLLATE "C" NOT NULL,
    code            text NOT NULL,
    reward_provider text NOT NULL CHECK (reward_provider IN ('TwoReward', 'PJM', 'Dummy')),
    name            text,
    title           text,
    picture_url     text,
    available_until timestamptz,
    status          text NOT NULL CHECK (status IN ('Issued', 'Redeemed', 'Cancelled')),
    info            jsonb,
    user_id         text COLLATE "C",
    email           text,
    email_norm      text COLLATE "C",
    phone           text,
    phone_digits    text COLLATE "C",
    location_ids    text[] COLLATE "C",
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, code_norm),
    CONSTRAINT coupons_company_fk FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id),
    CONSTRAINT coupons_user_fk FOREIGN KEY (pos_system_id, company_id, user_id) REFERENCES loyalty_users (pos_system_id, company_id, user_id)
);

CREATE INDEX coupons_user ON coupons (pos_system_id, company_id, user_id) WHERE user_id IS NOT NULL;
CREATE INDEX coupons_email ON coupons (pos_system_id, company_id, email_norm) WHERE email_norm IS NOT NULL;
CREATE INDEX coupons_phone ON coupons (pos_system_id, company_id, phone_digits) WHERE phone_digits IS NOT NULL;
