-- Events and webhooks (docs/api.md §19). webhook_endpoints are a company's
-- receivers; webhook_deliveries is the outbox: one row per event and
-- subscribed endpoint, written in the transaction of the change it reports,
-- and the state of its delivery. The secrets are kept as they are: the
-- sender needs them to sign (HMAC), so a hash would not do.
--
-- balance_seq numbers a loyalty user's balance changes; the ledger bumps it
-- in the UPDATE that changes the balance, and loyalty.balance_changed
-- carries it, so that a receiver can order or deduplicate them.

ALTER TABLE loyalty_users ADD COLUMN balance_seq INTEGER NOT NULL DEFAULT 0;

CREATE TABLE webhook_endpoints (
	id                    TEXT PRIMARY KEY,
	pos_system_id         TEXT NOT NULL,
	company_id            TEXT NOT NULL,
	url                   TEXT NOT NULL,
	event_types           TEXT NOT NULL, -- JSON array of type names
	enabled               INTEGER NOT NULL CHECK (enabled IN (0, 1)),
	disabled_reason       TEXT NOT NULL,
	secret                TEXT NOT NULL,
	previous_secret       TEXT NOT NULL,
	previous_secret_until TEXT,
	created_at            TEXT NOT NULL,
	updated_at            TEXT NOT NULL,
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT;

CREATE INDEX webhook_endpoints_by_company ON webhook_endpoints (pos_system_id, company_id, id);

-- status is Pending, Delivered or Dead; next_attempt_at is set while
-- Pending. lease_owner/lease_until mark a delivery a sender is attempting.
CREATE TABLE webhook_deliveries (
	id               INTEGER PRIMARY KEY,
	endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
	event_id         TEXT NOT NULL,
	event_type       TEXT NOT NULL,
	user_id          TEXT NOT NULL, -- '' when the event concerns no loyalty user
	payload          TEXT NOT NULL,
	status           TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Dead')),
	attempts         INTEGER NOT NULL DEFAULT 0,
	next_attempt_at  TEXT,
	lease_owner      TEXT,
	lease_until      TEXT,
	last_attempt_at  TEXT,
	last_status_code INTEGER NOT NULL DEFAULT 0,
	last_error       TEXT NOT NULL DEFAULT '',
	last_response    TEXT NOT NULL DEFAULT '',
	retry_from       TEXT NOT NULL,
	created_at       TEXT NOT NULL
) STRICT;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'Pending';
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint_id, user_id, id) WHERE status = 'Pending';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, id);
