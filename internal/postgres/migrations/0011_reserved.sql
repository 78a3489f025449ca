-- Placeholder for migration 0011, assigned to another change; the audit
-- branch needs contiguous numbers before its 0013. Replaced at merge.
SELECT 1;
