-- The IANA time zones of companies and locations (docs/api.md §1.3): a
-- location's promotions are valid in its local time, a location without a
-- zone takes its company's, and neither set is UTC. '' is "not set".
ALTER TABLE companies ADD COLUMN time_zone text NOT NULL DEFAULT '';
ALTER TABLE locations ADD COLUMN time_zone text NOT NULL DEFAULT '';
