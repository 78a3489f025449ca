-- Room on every page of webhook_deliveries for a new version of its rows, so
-- that a claim (lease_owner and lease_until, neither indexed) is a heap-only
-- (HOT) update: the new version goes on the same page and none of the
-- table's four indexes gets an entry. On full pages (the default fillfactor
-- of 100) a claim moved most rows to another page and inserted them into
-- every index, the two partial indexes of the Pending deliveries included,
-- which the next claim then reads past (docs/decisions.md "Outbox bookkeeping
-- in batches"). The setting applies to pages written from now on.
ALTER TABLE webhook_deliveries SET (fillfactor = 70);
