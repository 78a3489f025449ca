-- Idempotency-Key records (docs/api.md §14), one per API client and key. A
-- row is first an in-flight claim (done = false) that holds the key until
-- locked_until, then the stored answer (done = true) replayed until
-- expires_at. Claims are taken by one INSERT … ON CONFLICT DO UPDATE … WHERE
-- that only replaces an expired row or a claim whose lease ran out, so that
-- the database decides which of concurrent requests (on any instance) runs.
-- There is no foreign key to clients: clients are never deleted, and the
-- check would cost every keyed request.
CREATE TABLE idempotency_keys (
    client_id    text COLLATE "C" NOT NULL,
    idem_key     text COLLATE "C" NOT NULL,
    claim_id     text COLLATE "C" NOT NULL,
    request_hash bytea NOT NULL,
    done         boolean NOT NULL,
    body_hash    bytea,
    body_length  bigint,
    status       integer,
    header       text, -- JSON object: header name → value
    body         bytea,
    created_at   timestamptz NOT NULL,
    locked_until timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (client_id, idem_key)
);

CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
