package posgate

// CouponStore holds coupons and loyalty users (endpoints 2–4); its methods
// arrive with that feature.
type CouponStore interface{}
