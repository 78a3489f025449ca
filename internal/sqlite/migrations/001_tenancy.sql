-- 001: tenancy (POS systems, companies, locations, terminals), API clients,
-- sessions and token signing keys.
--
-- Conventions for this and later migrations: tables are STRICT; tables keyed
-- by text are WITHOUT ROWID; ids are case-sensitive TEXT (BINARY collation);
-- times are TEXT in the fixed-width UTC format 2006-01-02T15:04:05.000000Z,
-- so that they compare and sort as text; booleans are INTEGER 0/1.

CREATE TABLE pos_systems (
	pos_system_id TEXT NOT NULL PRIMARY KEY,
	name          TEXT NOT NULL,
	created_at    TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE companies (
	pos_system_id     TEXT NOT NULL REFERENCES pos_systems (pos_system_id),
	company_id        TEXT NOT NULL,
	name              TEXT NOT NULL,
	status            TEXT NOT NULL CHECK (status IN ('Active', 'Disabled')),
	coupons           INTEGER NOT NULL CHECK (coupons IN (0, 1)),
	receipt_promotion INTEGER NOT NULL CHECK (receipt_promotion IN (0, 1)),
	carousel          INTEGER NOT NULL CHECK (carousel IN (0, 1)),
	promotion_import  INTEGER NOT NULL CHECK (promotion_import IN (0, 1)),
	transactions      INTEGER NOT NULL CHECK (transactions IN (0, 1)),
	created_at        TEXT NOT NULL,
	updated_at        TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, company_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE locations (
	pos_system_id TEXT NOT NULL,
	location_id   TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	name          TEXT NOT NULL,
	status        TEXT NOT NULL CHECK (status IN ('Active', 'Disabled')),
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, location_id),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX locations_by_company ON locations (pos_system_id, company_id, location_id);

CREATE TABLE terminals (
	pos_system_id TEXT NOT NULL,
	location_id   TEXT NOT NULL,
	terminal_id   TEXT NOT NULL,
	name          TEXT NOT NULL,
	status        TEXT NOT NULL CHECK (status IN ('Active', 'Disabled')),
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL,
	PRIMARY KEY (pos_system_id, location_id, terminal_id),
	FOREIGN KEY (pos_system_id, location_id) REFERENCES locations (pos_system_id, location_id)
) STRICT, WITHOUT ROWID;

-- clients.pos_system_id is NULL for operator (admin-only) clients; scopes is
-- a JSON array of scope names in the order given.
CREATE TABLE clients (
	client_id     TEXT NOT NULL PRIMARY KEY,
	name          TEXT NOT NULL,
	secret_hash   BLOB NOT NULL,
	pos_system_id TEXT REFERENCES pos_systems (pos_system_id),
	scopes        TEXT NOT NULL,
	disabled      INTEGER NOT NULL CHECK (disabled IN (0, 1)),
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- client_companies restricts a client to some companies of its POS system;
-- position keeps the order in which they were given.
CREATE TABLE client_companies (
	client_id     TEXT NOT NULL REFERENCES clients (client_id),
	position      INTEGER NOT NULL,
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	PRIMARY KEY (client_id, position),
	FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE sessions (
	session_id    TEXT NOT NULL PRIMARY KEY,
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	location_id   TEXT NOT NULL,
	terminal_id   TEXT NOT NULL,
	created_at    TEXT NOT NULL,
	expires_at    TEXT NOT NULL,
	FOREIGN KEY (pos_system_id, location_id, terminal_id) REFERENCES terminals (pos_system_id, location_id, terminal_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX sessions_by_expiry ON sessions (expires_at);

CREATE TABLE signing_keys (
	key_id      TEXT NOT NULL PRIMARY KEY,
	algorithm   TEXT NOT NULL,
	private_key BLOB NOT NULL,
	created_at  TEXT NOT NULL
) STRICT, WITHOUT ROWID;
