-- The active coupons of a location (docs/api.md §15.2): Issued coupons held
-- by nobody. The index holds only those, in code order, so that a page of
-- them stops after the page and never walks the owned coupons that make up
-- most of a large company's. It carries every column the statements test
-- (the expiry, the location limits, and the columns of its own WHERE, the
-- same in every entry, which SQLite would otherwise read from the table), so
-- that the count reads the index alone and a page reads the table only for
-- the coupons it answers. Its WHERE is spelled exactly so by the statements
-- that use it (INDEXED BY).
CREATE INDEX coupons_active ON coupons (pos_system_id, company_id, code_norm, available_until, location_ids, status, user_id, email, phone)
	WHERE status = 'Issued' AND user_id IS NULL AND email IS NULL AND phone IS NULL;
