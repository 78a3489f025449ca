package posgate

// ContentStore holds customer-facing content: carousel slides, the external
// carousel template, receipt promotions and impressions (endpoints 5–6); its
// methods arrive with that feature.
type ContentStore interface{}
