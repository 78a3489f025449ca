-- The terminal channel's log (docs/api.md §25): the events a till's
-- Server-Sent Events stream sends, by id. location_id '' is every location
-- of the company, terminal_id '' every terminal of the location; user_id
-- names the customer of a CouponIssued. AUTOINCREMENT: an id is never
-- given twice, even after the retention deleted the newest events.
CREATE TABLE terminal_events (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	pos_system_id TEXT NOT NULL,
	company_id TEXT NOT NULL,
	location_id TEXT NOT NULL,
	terminal_id TEXT NOT NULL,
	user_id TEXT NOT NULL,
	event_type TEXT NOT NULL,
	data TEXT NOT NULL,
	created_at TEXT NOT NULL
) STRICT;
CREATE INDEX terminal_events_company ON terminal_events (pos_system_id, company_id, id);
CREATE INDEX terminal_events_created ON terminal_events (created_at);

-- The newest id the retention deleted: a till resuming before it may have
-- missed events, and is told to resync.
CREATE TABLE terminal_event_horizon (
	k INTEGER PRIMARY KEY CHECK (k = 1),
	deleted_through INTEGER NOT NULL
) STRICT;

-- The customer of each terminal's newest session that named one.
CREATE TABLE terminal_customers (
	pos_system_id TEXT NOT NULL,
	location_id TEXT NOT NULL,
	terminal_id TEXT NOT NULL,
	session_id TEXT NOT NULL,
	user_id TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, location_id, terminal_id)
) STRICT, WITHOUT ROWID;
