-- The audit log of operator writes (docs/api.md §22): one row per change,
-- written in the change's own transaction. seq orders the rows (the
-- cursor of the list); pos_system_id, company_id and location_id are '' for
-- what belongs to the whole installation, POS system or company, so that a
-- reader's reach is a plain comparison. before_json and after_json are the changed resource,
-- NULL where it did not exist; secrets never reach them.
CREATE TABLE audit_log (
    seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              text COLLATE "C" NOT NULL UNIQUE,
    at              timestamptz NOT NULL,
    actor_subject   text COLLATE "C" NOT NULL,
    actor_kind      text COLLATE "C" NOT NULL,
    actor_client_id text COLLATE "C" NOT NULL,
    channel         text COLLATE "C" NOT NULL,
    action          text COLLATE "C" NOT NULL,
    target_type     text COLLATE "C" NOT NULL,
    target_id       text COLLATE "C" NOT NULL,
    pos_system_id   text COLLATE "C" NOT NULL,
    company_id      text COLLATE "C" NOT NULL,
    location_id     text COLLATE "C" NOT NULL,
    before_json     text,
    after_json      text,
    trace_id        text NOT NULL,
    user_agent      text NOT NULL
);

-- A restricted reader's list: its POS system (and companies), newest first.
CREATE INDEX audit_log_place ON audit_log (pos_system_id, company_id, seq);
-- The target filter (the history of one object).
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, seq);
