-- 005: Idempotency-Key records (docs/api.md §14), one per API client and
-- key. A row is first an in-flight claim (done = 0) that holds the key until
-- locked_until, then the stored answer (done = 1) replayed until
-- expires_at. Claims are taken by one INSERT … ON CONFLICT DO UPDATE … WHERE
-- that only replaces an expired row or a claim whose lease ran out, so that
-- the database decides which of concurrent requests runs.
--
-- A rowid table, not WITHOUT ROWID: an answer's body may be large (a
-- promotion import's errors), and WITHOUT ROWID tables suit small rows.
-- There is no foreign key to clients: clients are never deleted, and the
-- check would cost every keyed request.

CREATE TABLE idempotency_keys (
	client_id    TEXT NOT NULL,
	idem_key     TEXT NOT NULL,
	claim_id     TEXT NOT NULL,
	request_hash BLOB NOT NULL,
	done         INTEGER NOT NULL CHECK (done IN (0, 1)),
	body_hash    BLOB,
	body_length  INTEGER,
	status       INTEGER,
	header       TEXT, -- JSON object: header name → value
	body         BLOB,
	created_at   TEXT NOT NULL,
	locked_until TEXT NOT NULL,
	expires_at   TEXT NOT NULL,
	PRIMARY KEY (client_id, idem_key)
) STRICT;

CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
