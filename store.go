package posgate

import "context"

// Store is posgate's storage: one interface implemented by internal/sqlite and
// internal/postgres and checked by one conformance suite
// (internal/storetest).
//
// Conventions every implementation follows:
//   - Create* sets CreatedAt and UpdatedAt from the store's clock (tenancy
//     objects) and returns an ECONFLICT *Error when the key exists; Session
//     and SigningKey carry times chosen by the caller, stored as given.
//   - Find* returns an ENOTFOUND *Error when absent; Update* too.
//   - Creating a child whose parent is absent (a company of an unknown POS
//     system, a terminal of an unknown location…) is ENOTFOUND.
//   - Times come back in UTC, truncated to microseconds (see Timestamp).
//   - Lists are ordered by their key(s), ascending.
type Store interface {
	TenancyStore
	CouponStore
	ContentStore
	PromotionStore
	CatalogueStore
	IdempotencyStore
	TransactionStore
	WebhookStore

	// Ping reports whether the store can serve requests (for /readyz).
	Ping(ctx context.Context) error
	Close() error
}
