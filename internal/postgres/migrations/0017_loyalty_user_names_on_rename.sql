-- loyalty_user_names (0005) learns a user's new names only when a name
-- changes. Its statement-level UPDATE trigger ran for every update of a
-- user, and so for every sale's balance update, inserting the user's two
-- unchanged names again (ON CONFLICT DO NOTHING). A loop of 20,000
-- balance updates in one DO block took 0.83–1.24 s with it and 0.54–0.76 s
-- without (three runs each, alternated; docs/decisions.md). A row-level
-- trigger can name the columns it watches and a condition, which the
-- statement-level one with a transition table cannot: it fires only for an
-- UPDATE that sets first_norm or last_norm to something else. Only an
-- operator's update of a user does (imports of users only insert, which the
-- statement-level INSERT trigger keeps covering).
DROP TRIGGER loyalty_user_names_update ON loyalty_users;

CREATE FUNCTION loyalty_user_names_rename() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO loyalty_user_names VALUES (NEW.pos_system_id, NEW.company_id, NEW.first_norm),
        (NEW.pos_system_id, NEW.company_id, NEW.last_norm)
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER loyalty_user_names_rename AFTER UPDATE OF first_norm, last_norm ON loyalty_users
    FOR EACH ROW WHEN (OLD.first_norm IS DISTINCT FROM NEW.first_norm OR OLD.last_norm IS DISTINCT FROM NEW.last_norm)
    EXECUTE FUNCTION loyalty_user_names_rename();
