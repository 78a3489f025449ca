-- The active coupons of a location (docs/api.md §15.2): Issued coupons held
-- by nobody. The index holds only those, in code order, so that a page of
-- them stops after the page and never walks the owned coupons that make up
-- most of a large company's; it carries the expiry and the location limits,
-- so that counting a location's active coupons reads the index alone. Its
-- WHERE is spelled exactly so by the statements that use it (INDEXED BY).
CREATE INDEX coupons_active ON coupons (pos_system_id, company_id, code_norm, available_until, location_ids)
	WHERE status = 'Issued' AND user_id IS NULL AND email IS NULL AND phone IS NULL;
