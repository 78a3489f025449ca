-- Placeholder for migration 010, assigned to another change; the audit
-- branch needs contiguous numbers before its 012. Replaced at merge.
SELECT 1;
