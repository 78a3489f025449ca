-- People (operators who sign in), their sign-in sessions, and the
-- authorization codes, refresh tokens and redirect URIs of the browser flows
-- (docs/api.md §21). Secrets (session ids, codes, refresh tokens) are stored
-- only as their SHA-256, passwords only as argon2id PHC strings.
CREATE TABLE people (
    person_id     text COLLATE "C" PRIMARY KEY,
    email         text COLLATE "C" NOT NULL UNIQUE,
    name          text NOT NULL,
    password_hash text NOT NULL,
    role          text NOT NULL CHECK (role IN ('admin', 'pos-admin', 'company-admin', 'location-manager')),
    pos_system_id text COLLATE "C" REFERENCES pos_systems (id),
    company_ids   text[] NOT NULL,
    location_ids  text[] NOT NULL,
    disabled      boolean NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

CREATE TABLE sign_ins (
    id_hash    bytea PRIMARY KEY,
    person_id  text NOT NULL REFERENCES people (person_id),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

CREATE INDEX sign_ins_expiry ON sign_ins (expires_at);

CREATE TABLE auth_codes (
    code_hash      bytea PRIMARY KEY,
    family_id      text NOT NULL,
    client_id      text COLLATE "C" NOT NULL REFERENCES clients (id),
    person_id      text NOT NULL REFERENCES people (person_id),
    redirect_uri   text NOT NULL,
    scopes         text[] NOT NULL,
    code_challenge text NOT NULL,
    expires_at     timestamptz NOT NULL,
    used           boolean NOT NULL
);

CREATE TABLE refresh_tokens (
    token_hash bytea PRIMARY KEY,
    family_id  text NOT NULL,
    client_id  text COLLATE "C" NOT NULL REFERENCES clients (id),
    person_id  text NOT NULL REFERENCES people (person_id),
    scopes     text[] NOT NULL,
    expires_at timestamptz NOT NULL,
    used       boolean NOT NULL,
    revoked    boolean NOT NULL
);

CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

CREATE TABLE client_redirect_uris (
    client_id    text COLLATE "C" NOT NULL REFERENCES clients (id),
    position     integer NOT NULL,
    redirect_uri text NOT NULL,
    PRIMARY KEY (client_id, position)
);
