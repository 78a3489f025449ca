-- 010: reserved for the audit log (issue 15), which lands in its own branch;
-- this placeholder only keeps the numbering contiguous until then and is
-- replaced by that migration at merge.
SELECT 1;
