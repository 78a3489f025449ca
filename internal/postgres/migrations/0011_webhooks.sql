-- Events and webhooks (docs/api.md §19). webhook_endpoints are a company's
-- receivers; webhook_deliveries is the outbox: one row per event and
-- subscribed endpoint, written in the transaction of the change it reports,
-- and the state of its delivery. The secrets are kept as they are: the
-- sender needs them to sign (HMAC), so a hash would not do.
--
-- balance_seq numbers a loyalty user's balance changes; the ledger bumps it
-- in the UPDATE that changes the balance (under that row's lock), and
-- loyalty.balance_changed carries it.

ALTER TABLE loyalty_users ADD COLUMN balance_seq bigint NOT NULL DEFAULT 0;

CREATE TABLE webhook_endpoints (
    id                    text COLLATE "C" PRIMARY KEY,
    pos_system_id         text COLLATE "C" NOT NULL,
    company_id            text COLLATE "C" NOT NULL,
    url                   text NOT NULL,
    event_types           text[] NOT NULL,
    enabled               boolean NOT NULL,
    disabled_reason       text NOT NULL,
    secret                text NOT NULL,
    previous_secret       text NOT NULL,
    previous_secret_until timestamptz,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
);

CREATE INDEX webhook_endpoints_by_company ON webhook_endpoints (pos_system_id, company_id, id);

-- status is Pending, Delivered or Dead; next_attempt_at is set while
-- Pending. lease_owner/lease_until mark a delivery an instance is
-- attempting: instances claim with FOR UPDATE SKIP LOCKED and skip rows
-- whose lease has not expired, so that each attempt is sent once.
CREATE TABLE webhook_deliveries (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id      text COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id         text COLLATE "C" NOT NULL,
    event_type       text NOT NULL,
    user_id          text COLLATE "C" NOT NULL,
    payload          text NOT NULL,
    status           text NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Dead')),
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz,
    lease_owner      text,
    lease_until      timestamptz,
    last_attempt_at  timestamptz,
    last_status_code integer NOT NULL DEFAULT 0,
    last_error       text NOT NULL DEFAULT '',
    last_response    text NOT NULL DEFAULT '',
    retry_from       timestamptz NOT NULL,
    created_at       timestamptz NOT NULL
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'Pending';
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint_id, user_id, id) WHERE status = 'Pending';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, id);
