package posgate

// PromotionStore holds imported promotions (endpoint 7); its methods arrive
// with that feature.
type PromotionStore interface{}
