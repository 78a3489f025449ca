-- 015: loyalty keyword search by the start of words, e-mails, domains and
-- phones (docs/api.md §6.1, docs/decisions.md "Loyalty keyword search
-- matches the start of terms"), instead of substrings.
--
-- search_terms is the JSON array of the user's search terms, computed by
-- posgate (posgate.LoyaltyUser.SearchTerms: accent-free folded name words,
-- e-mail, domain, phone starts and reversed digits) and written with every
-- write of the user; NULL for the users stored before this step, whose terms
-- posgate computes when it opens the database (the partial index finds
-- them). The triggers keep loyalty_user_terms, one row per user and term
-- with the user's rank (folded last name, first name, id), in step with it.
-- A search reads the terms with a prefix as a B-tree range, and a bucket of
-- terms (the first three characters after a kind's marker, see
-- posgate.TermBucket) in rank order, so that the first matches of a prefix
-- that thousands of users hold come without reading them all.

DROP TRIGGER loyalty_users_fts_insert;
DROP TRIGGER loyalty_users_fts_update;
DROP TRIGGER loyalty_users_fts_delete;
DROP TABLE loyalty_users_fts;
-- The prefix lookups of names ran through these; nothing else reads them.
DROP INDEX loyalty_users_by_first;
DROP INDEX loyalty_users_by_last;

ALTER TABLE loyalty_users ADD COLUMN search_terms TEXT;
CREATE INDEX loyalty_users_terms_pending ON loyalty_users (user_key) WHERE search_terms IS NULL;

CREATE TABLE loyalty_user_terms (
	pos_system_id TEXT NOT NULL,
	company_id    TEXT NOT NULL,
	term          TEXT NOT NULL,
	last_norm     TEXT NOT NULL,
	first_norm    TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	user_key      INTEGER NOT NULL, -- the user's rowid, to read the answer's users by
	PRIMARY KEY (pos_system_id, company_id, term, last_norm, first_norm, user_id)
) STRICT, WITHOUT ROWID;

-- The bucket expression is posgate.TermBucket: queries spell it exactly so.
CREATE INDEX loyalty_user_terms_bucket ON loyalty_user_terms
	(pos_system_id, company_id, substr(term, 1, 3 + (term < char(4))), last_norm, first_norm, user_id, term, user_key);

CREATE TRIGGER loyalty_user_terms_insert AFTER INSERT ON loyalty_users BEGIN
	INSERT INTO loyalty_user_terms (pos_system_id, company_id, term, last_norm, first_norm, user_id, user_key)
	SELECT new.pos_system_id, new.company_id, j.value, new.last_norm, new.first_norm, new.user_id, new.user_key FROM json_each(new.search_terms) j;
END;

CREATE TRIGGER loyalty_user_terms_update AFTER UPDATE OF search_terms, last_norm, first_norm ON loyalty_users
WHEN old.search_terms IS NOT new.search_terms OR old.last_norm IS NOT new.last_norm OR old.first_norm IS NOT new.first_norm BEGIN
	DELETE FROM loyalty_user_terms WHERE pos_system_id = old.pos_system_id AND company_id = old.company_id
		AND term IN (SELECT value FROM json_each(old.search_terms))
		AND last_norm = old.last_norm AND first_norm = old.first_norm AND user_id = old.user_id;
	INSERT INTO loyalty_user_terms (pos_system_id, company_id, term, last_norm, first_norm, user_id, user_key)
	SELECT new.pos_system_id, new.company_id, j.value, new.last_norm, new.first_norm, new.user_id, new.user_key FROM json_each(new.search_terms) j;
END;

CREATE TRIGGER loyalty_user_terms_delete AFTER DELETE ON loyalty_users BEGIN
	DELETE FROM loyalty_user_terms WHERE pos_system_id = old.pos_system_id AND company_id = old.company_id
		AND term IN (SELECT value FROM json_each(old.search_terms))
		AND last_norm = old.last_norm AND first_norm = old.first_norm AND user_id = old.user_id;
END;
