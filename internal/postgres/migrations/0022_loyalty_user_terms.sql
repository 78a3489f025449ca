-- Loyalty keyword search by the start of words, e-mails, domains and phones
-- (docs/api.md §6.1, docs/decisions.md "Loyalty keyword search matches the
-- start of terms"), instead of substrings: the name list (0005, 0017), the
-- 4-gram (0015) and trigram (0003) indexes, and the name indexes that served
-- the prefix lookups go.
--
-- search_terms holds the user's search terms, computed by posgate
-- (posgate.LoyaltyUser.SearchTerms: accent-free folded name words, e-mail,
-- domain, phone starts and reversed digits) and written with every write of
-- the user; NULL for the users stored before this step, whose terms posgate
-- computes when it migrates (the partial index finds them). The triggers
-- keep loyalty_user_terms, one row per user and term with the user's rank
-- (folded last name, first name, id), in step with it. A search reads the
-- terms with a prefix as a B-tree range, and a bucket of terms (the first
-- three characters after a kind's marker, posgate.TermBucket) in rank
-- order, so that the first matches of a prefix that thousands of users hold
-- come without reading them all.

DROP TRIGGER loyalty_user_names_insert ON loyalty_users;
DROP TRIGGER loyalty_user_names_rename ON loyalty_users;
DROP FUNCTION loyalty_user_names_add();
DROP FUNCTION loyalty_user_names_rename();
DROP TABLE loyalty_user_names;
DROP INDEX loyalty_users_grams;
DROP FUNCTION loyalty_user_grams(text);
DROP INDEX loyalty_users_trgm;
DROP INDEX loyalty_users_first;
DROP INDEX loyalty_users_last;

ALTER TABLE loyalty_users ADD COLUMN search_terms text[] COLLATE "C";
CREATE INDEX loyalty_users_terms_pending ON loyalty_users (pos_system_id, company_id, user_id) WHERE search_terms IS NULL;

CREATE TABLE loyalty_user_terms (
    pos_system_id text COLLATE "C" NOT NULL,
    company_id    text COLLATE "C" NOT NULL,
    term          text COLLATE "C" NOT NULL,
    last_norm     text COLLATE "C" NOT NULL,
    first_norm    text COLLATE "C" NOT NULL,
    user_id       text COLLATE "C" NOT NULL,
    PRIMARY KEY (pos_system_id, company_id, term, last_norm, first_norm, user_id)
);

-- The bucket expression is posgate.TermBucket: queries spell it exactly so.
CREATE INDEX loyalty_user_terms_bucket ON loyalty_user_terms
    (pos_system_id, company_id, (left(term, 3 + (term < E'\x04')::integer)), last_norm, first_norm, user_id) INCLUDE (term);

-- An import's COPY inserts its users' terms in one statement, in the order
-- of the primary key (its pages filled one after the other, not at random).
CREATE FUNCTION loyalty_user_terms_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO loyalty_user_terms
        SELECT n.pos_system_id, n.company_id, t, n.last_norm, n.first_norm, n.user_id FROM new_users n, unnest(n.search_terms) t
        ORDER BY 1, 2, 3, 4, 5, 6;
    RETURN NULL;
END
$$;

CREATE TRIGGER loyalty_user_terms_insert AFTER INSERT ON loyalty_users
    REFERENCING NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION loyalty_user_terms_insert();

-- A row trigger, so that it can name its columns and a condition: a sale's
-- balance update sets none of them and does not fire it.
CREATE FUNCTION loyalty_user_terms_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM loyalty_user_terms WHERE pos_system_id = OLD.pos_system_id AND company_id = OLD.company_id
        AND term = ANY (OLD.search_terms) AND last_norm = OLD.last_norm AND first_norm = OLD.first_norm AND user_id = OLD.user_id;
    INSERT INTO loyalty_user_terms
        SELECT NEW.pos_system_id, NEW.company_id, t, NEW.last_norm, NEW.first_norm, NEW.user_id FROM unnest(NEW.search_terms) t;
    RETURN NULL;
END
$$;

CREATE TRIGGER loyalty_user_terms_update AFTER UPDATE OF search_terms, last_norm, first_norm ON loyalty_users
    FOR EACH ROW WHEN (OLD.search_terms IS DISTINCT FROM NEW.search_terms OR OLD.last_norm IS DISTINCT FROM NEW.last_norm
        OR OLD.first_norm IS DISTINCT FROM NEW.first_norm)
    EXECUTE FUNCTION loyalty_user_terms_update();

CREATE FUNCTION loyalty_user_terms_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM loyalty_user_terms t USING old_users o, unnest(o.search_terms) x (term)
        WHERE t.pos_system_id = o.pos_system_id AND t.company_id = o.company_id AND t.term = x.term
        AND t.last_norm = o.last_norm AND t.first_norm = o.first_norm AND t.user_id = o.user_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER loyalty_user_terms_delete AFTER DELETE ON loyalty_users
    REFERENCING OLD TABLE AS old_users FOR EACH STATEMENT EXECUTE FUNCTION loyalty_user_terms_delete();
