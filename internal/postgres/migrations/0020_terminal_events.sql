-- The terminal channel's log (docs/api.md §25): the events a till's
-- Server-Sent Events stream sends, by id. location_id '' is every location
-- of the company, terminal_id '' every terminal of the location; user_id
-- names the customer of a CouponIssued. Appends hold an advisory lock to
-- their commit, so that ids are given in commit order.
CREATE TABLE terminal_events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pos_system_id text COLLATE "C" NOT NULL,
    company_id text COLLATE "C" NOT NULL,
    location_id text COLLATE "C" NOT NULL,
    terminal_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    event_type text NOT NULL,
    data text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX terminal_events_company ON terminal_events (pos_system_id, company_id, id);
CREATE INDEX terminal_events_created ON terminal_events (created_at);

-- The newest id the retention deleted: a till resuming before it may have
-- missed events, and is told to resync.
CREATE TABLE terminal_event_horizon (
    k integer PRIMARY KEY CHECK (k = 1),
    deleted_through bigint NOT NULL
);

-- The customer of each terminal's newest session that named one.
CREATE TABLE terminal_customers (
    pos_system_id text COLLATE "C" NOT NULL,
    location_id text COLLATE "C" NOT NULL,
    terminal_id text COLLATE "C" NOT NULL,
    session_id text NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, location_id, terminal_id)
);
