-- 011: people (operators who sign in), their sign-in sessions, and the
-- authorization codes, refresh tokens and redirect URIs of the browser flows
-- (docs/api.md §21). Secrets (session ids, codes, refresh tokens) are stored
-- only as their SHA-256, passwords only as argon2id PHC strings.

-- people.pos_system_id is NULL for an admin; company_ids and location_ids are
-- JSON arrays in the order given.
CREATE TABLE people (
	person_id     TEXT NOT NULL PRIMARY KEY,
	email         TEXT NOT NULL UNIQUE,
	name          TEXT NOT NULL,
	password_hash TEXT NOT NULL,
	role          TEXT NOT NULL CHECK (role IN ('admin', 'pos-admin', 'company-admin', 'location-manager')),
	pos_system_id TEXT REFERENCES pos_systems (pos_system_id),
	company_ids   TEXT NOT NULL,
	location_ids  TEXT NOT NULL,
	disabled      INTEGER NOT NULL CHECK (disabled IN (0, 1)),
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE sign_ins (
	id_hash    BLOB NOT NULL PRIMARY KEY,
	person_id  TEXT NOT NULL REFERENCES people (person_id),
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX sign_ins_expiry ON sign_ins (expires_at);

CREATE TABLE auth_codes (
	code_hash      BLOB NOT NULL PRIMARY KEY,
	family_id      TEXT NOT NULL,
	client_id      TEXT NOT NULL REFERENCES clients (client_id),
	person_id      TEXT NOT NULL REFERENCES people (person_id),
	redirect_uri   TEXT NOT NULL,
	scopes         TEXT NOT NULL,
	code_challenge TEXT NOT NULL,
	expires_at     TEXT NOT NULL,
	used           INTEGER NOT NULL CHECK (used IN (0, 1))
) STRICT, WITHOUT ROWID;

CREATE TABLE refresh_tokens (
	token_hash BLOB NOT NULL PRIMARY KEY,
	family_id  TEXT NOT NULL,
	client_id  TEXT NOT NULL REFERENCES clients (client_id),
	person_id  TEXT NOT NULL REFERENCES people (person_id),
	scopes     TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	used       INTEGER NOT NULL CHECK (used IN (0, 1)),
	revoked    INTEGER NOT NULL CHECK (revoked IN (0, 1))
) STRICT, WITHOUT ROWID;

CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

CREATE TABLE client_redirect_uris (
	client_id    TEXT NOT NULL REFERENCES clients (client_id),
	position     INTEGER NOT NULL,
	redirect_uri TEXT NOT NULL,
	PRIMARY KEY (client_id, position)
) STRICT, WITHOUT ROWID;
