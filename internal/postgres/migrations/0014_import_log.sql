-- The import log (docs/api.md §23, the dashboard's recent imports): one row
-- per finished import of promotions, products or categories, written in the
-- import's own transaction, so that a rolled-back import leaves none. seq
-- orders the rows, newest last, and
-- identifies them (a reset restarts it, so the demo data set is reproducible).
CREATE TABLE import_log (
    seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    kind          text COLLATE "C" NOT NULL,
    created_count integer NOT NULL,
    updated_count integer NOT NULL,
    failed_count  integer NOT NULL,
    started_at    timestamptz NOT NULL,
    finished_at   timestamptz NOT NULL,
    client_id     text COLLATE "C" NOT NULL,
    person_id     text COLLATE "C" NOT NULL,
    channel       text COLLATE "C" NOT NULL
);

-- A reader's list: its POS system (and companies), newest first.
CREATE INDEX import_log_place ON import_log (pos_system_id, company_id, seq);
