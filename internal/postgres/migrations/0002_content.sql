-- Customer-facing content (docs/api.md §7, §8): carousel slides and settings,
-- receipt promotions, daily impression counters, and the secrets that sign
-- the carousel and QR code URLs.

CREATE TABLE slides (
    pos_system_id    text COLLATE "C" NOT NULL,
    company_id       text COLLATE "C" NOT NULL,
    slide_id         text COLLATE "C" NOT NULL,
    position         integer NOT NULL CHECK (position BETWEEN 1 AND 10000),
    image_url        text NOT NULL,
    title            text NOT NULL,
    text             text NOT NULL,
    duration_seconds integer NOT NULL CHECK (duration_seconds BETWEEN 5 AND 15),
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, slide_id),
    FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
);

-- url_template is '' when the company uses posgate's own carousel page.
CREATE TABLE carousel_settings (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    url_template  text NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id),
    FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
);

-- location_id is '' for the company default. A location's row is only
-- written when the location belongs to the company (checked by the INSERT;
-- locations are never deleted nor moved).
CREATE TABLE receipt_promotions (
    pos_system_id  text COLLATE "C" NOT NULL,
    company_id     text COLLATE "C" NOT NULL,
    location_id    text COLLATE "C" NOT NULL,
    primary_text   text NOT NULL,
    secondary_text text NOT NULL,
    target_url     text NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, location_id),
    FOREIGN KEY (pos_system_id, company_id) REFERENCES companies (pos_system_id, company_id)
);

-- One counter per slide, terminal and UTC day, so the table grows with
-- days × terminals × slides, not with every showing.
CREATE TABLE carousel_impressions (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    day           date NOT NULL,
    location_id   text COLLATE "C" NOT NULL,
    terminal_id   text COLLATE "C" NOT NULL,
    slide_id      text COLLATE "C" NOT NULL,
    count         bigint NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, day, location_id, terminal_id, slide_id),
    FOREIGN KEY (pos_system_id, location_id, terminal_id) REFERENCES terminals (pos_system_id, location_id, terminal_id)
);

CREATE TABLE secrets (
    name       text COLLATE "C" PRIMARY KEY,
    value      bytea NOT NULL,
    created_at timestamptz NOT NULL
);
