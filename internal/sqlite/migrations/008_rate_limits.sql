-- An API client's own rate limit (docs/api.md §16.1): a token bucket of
-- rate_burst requests refilled at rate_limit requests per second. Both NULL:
-- the installation's default applies.
ALTER TABLE clients ADD COLUMN rate_limit REAL CHECK (rate_limit > 0);
ALTER TABLE clients ADD COLUMN rate_burst INTEGER CHECK (rate_burst > 0 AND (rate_burst IS NULL) = (rate_limit IS NULL));
