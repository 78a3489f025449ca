-- Tenancy, clients, sessions and signing keys. Identifier columns use the "C"
-- collation so that lists sort byte-wise, exactly as SQLite's BINARY does.

-- Coupon and loyalty-user search (later migrations) uses trigram indexes.
-- The extension goes into the current schema unless the database already has
-- it (tests install it in public, beside their own schemas).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE pos_systems (
    id         text COLLATE "C" PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL
);

CREATE TABLE companies (
    pos_system_id     text COLLATE "C" NOT NULL REFERENCES pos_systems (id),
    company_id        text COLLATE "C" NOT NULL,
    name              text NOT NULL,
    status            text NOT NULL CHECK (status IN ('Active', 'Disabled')),
    coupons           boolean NOT NULL,
    receipt_promotion boolean NOT NULL,
    carousel          boolean NOT NULL,
    promotion_import  boolean NOT NULL,
    transactions      boolean NOT NULL,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id)
);

CREATE TABLE locations (
    pos_system_id text COLLATE "C" NOT NULL,
    location_id   text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    name          text NOT NULL,
    status        text NOT NULL CHECK (status IN ('Active', 'Disabled')),
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, location_id),
    FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
);

CREATE INDEX locations_company ON locations (pos_system_id, company_id, location_id);

CREATE TABLE terminals (
    pos_system_id text COLLATE "C" NOT NULL,
    location_id   text COLLATE "C" NOT NULL,
    terminal_id   text COLLATE "C" NOT NULL,
    name          text NOT NULL,
    status        text NOT NULL CHECK (status IN ('Active', 'Disabled')),
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, location_id, terminal_id),
    FOREIGN KEY (pos_system_id, location_id) REFERENCES locations (pos_system_id, location_id)
);

CREATE TABLE clients (
    id            text COLLATE "C" PRIMARY KEY,
    name          text NOT NULL,
    secret_hash   bytea NOT NULL,
    -- NULL for operator clients, which belong to no POS system.
    pos_system_id text COLLATE "C" REFERENCES pos_systems (id),
    -- Both arrays keep the order given. company_ids are companies of
    -- pos_system_id; CreateClient checks that they exist.
    scopes        text[] NOT NULL,
    company_ids   text[] NOT NULL,
    disabled      boolean NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

-- Session ids are random UUIDs (docs/api.md §4.2) but stored as text: the
-- Store interface takes any string, as SQLite does.
CREATE TABLE sessions (
    id            text COLLATE "C" PRIMARY KEY,
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    location_id   text COLLATE "C" NOT NULL,
    terminal_id   text COLLATE "C" NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    FOREIGN KEY (pos_system_id, location_id, terminal_id) REFERENCES terminals (pos_system_id, location_id, terminal_id)
);

CREATE INDEX sessions_expires_at ON sessions (expires_at);

CREATE TABLE signing_keys (
    id          text COLLATE "C" PRIMARY KEY,
    algorithm   text NOT NULL,
    private_key bytea NOT NULL,
    created_at  timestamptz NOT NULL
);
