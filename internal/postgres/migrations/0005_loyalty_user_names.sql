-- The distinct first and last names of each company's loyalty users, so
-- that a keyword search finds the users whose name holds the keyword as a
-- substring by looking up the few names that do (trigram index over this
-- small table) and then their users through the B-tree name indexes, LIMIT
-- cut short. The trigram index over loyalty_users must otherwise read every
-- user whose text holds the keyword's trigrams before it can stop: 23,000
-- of 1,000,000 users for "ame", several milliseconds. Names of users
-- renamed since stay: a name without users finds no one, which costs a
-- lookup and changes no answer.
CREATE TABLE loyalty_user_names (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    name_norm     text COLLATE "C" NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, name_norm)
);

CREATE INDEX loyalty_user_names_trgm ON loyalty_user_names USING gin (name_norm gin_trgm_ops);

INSERT INTO loyalty_user_names
    SELECT pos_system_id, company_id, first_norm FROM loyalty_users
    UNION SELECT pos_system_id, company_id, last_norm FROM loyalty_users;

-- Statement triggers with the new rows as a table, so that an import's COPY
-- adds its names in one statement.
CREATE FUNCTION loyalty_user_names_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO loyalty_user_names
        SELECT pos_system_id, company_id, first_norm FROM new_users
        UNION SELECT pos_system_id, company_id, last_norm FROM new_users
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER loyalty_user_names_insert AFTER INSERT ON loyalty_users
    REFERENCING NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION loyalty_user_names_add();
CREATE TRIGGER loyalty_user_names_update AFTER UPDATE ON loyalty_users
    REFERENCING NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION loyalty_user_names_add();
