-- The import log (docs/api.md §23, the dashboard's recent imports): one row
-- per finished import of promotions, products or categories, written in the
-- import's own transaction, so that a rolled-back import leaves none. seq
-- orders the rows, newest last, and
-- identifies them (a reset restarts it, so the demo data set is reproducible).
CREATE TABLE import_log (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	kind          TEXT NOT NULL,
	created_count INTEGER NOT NULL,
	updated_count INTEGER NOT NULL,
	failed_count  INTEGER NOT NULL,
	started_at    TEXT NOT NULL,
	finished_at   TEXT NOT NULL,
	client_id     TEXT NOT NULL,
	person_id     TEXT NOT NULL,
	channel       TEXT NOT NULL
) STRICT;

-- A reader's list: its POS system (and companies), newest first.
CREATE INDEX import_log_place ON import_log (pos_system_id, company_id, seq);
