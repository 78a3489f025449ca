-- An API client's own rate limit (docs/api.md §16.1): a token bucket of
-- rate_burst requests refilled at rate_limit requests per second. Both NULL:
-- the installation's default applies.
ALTER TABLE clients
    ADD COLUMN rate_limit double precision CHECK (rate_limit > 0),
    ADD COLUMN rate_burst integer CHECK (rate_burst > 0),
    ADD CONSTRAINT clients_rate_limit_whole CHECK ((rate_limit IS NULL) = (rate_burst IS NULL));
