-- The marks of the demo servers running on this store (docs/api.md §20.1):
-- each demo server writes its own at start and watches it. A reset of the
-- demo data (posgate demo reset, serve --demo --reset) empties this table
-- like every other, which tells every demo server on the store to start its
-- sandbox clock at the real time again.
CREATE TABLE sandbox_marks (
	id TEXT PRIMARY KEY
) STRICT;
