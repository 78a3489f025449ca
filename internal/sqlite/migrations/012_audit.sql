-- The audit log of operator writes (docs/api.md §22): one row per change,
-- written in the change's own transaction. seq orders the rows (the
-- cursor of the list); pos_system_id, company_id and location_id are '' for
-- what belongs to the whole installation, POS system or company, so that a
-- reader's reach is a plain comparison. before_json and after_json are the changed resource,
-- NULL where it did not exist; secrets never reach them.
CREATE TABLE audit_log (
	seq             INTEGER PRIMARY KEY AUTOINCREMENT,
	id              TEXT NOT NULL UNIQUE,
	at              TEXT NOT NULL,
	actor_subject   TEXT NOT NULL,
	actor_kind      TEXT NOT NULL,
	actor_client_id TEXT NOT NULL,
	channel         TEXT NOT NULL,
	action          TEXT NOT NULL,
	target_type     TEXT NOT NULL,
	target_id       TEXT NOT NULL,
	pos_system_id   TEXT NOT NULL,
	company_id      TEXT NOT NULL,
	location_id     TEXT NOT NULL,
	before_json     TEXT,
	after_json      TEXT,
	trace_id        TEXT NOT NULL,
	user_agent      TEXT NOT NULL
) STRICT;

-- A restricted reader's list: its POS system (and companies), newest first.
CREATE INDEX audit_log_place ON audit_log (pos_system_id, company_id, seq);
-- The target filter (the history of one object).
CREATE INDEX audit_log_target ON audit_log (target_type, target_id, seq);
