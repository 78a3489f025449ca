-- The promotion a coupon carries (docs/api.md §5.1, §18.3): NULL for none.
-- Not a foreign key: a coupon may be issued before its promotion is
-- imported, and a promotion import replaces promotions whole.
ALTER TABLE coupons ADD COLUMN promotion_id text COLLATE "C";
