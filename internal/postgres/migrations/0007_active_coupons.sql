-- The active coupons of a location (docs/api.md §15.2): Issued coupons held
-- by nobody. The index holds only those, in code order, so that a page of
-- them stops after the page and never walks the owned coupons that make up
-- most of a large company's. It includes the expiry and the location limits
-- (PostgreSQL needs no more: the columns of its WHERE are implied), so that
-- the count and the page's codes are index-only scans and only the page's
-- coupons are read from the table. Its WHERE is spelled exactly so by the
-- statements that use it.
CREATE INDEX coupons_active ON coupons (pos_system_id, company_id, code_norm) INCLUDE (available_until, location_ids)
    WHERE status = 'Issued' AND user_id IS NULL AND email IS NULL AND phone IS NULL;
