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
	AuditStore
	PeopleStore
	WebhookStore
	ImportLogStore
	OfflineStore
	TerminalEventStore

	// Ping reports whether the store can serve requests (for /readyz).
	Ping(ctx context.Context) error
	Close() error
}

// DataResetter is a store that can delete all of its data at once, for
// `posgate demo reset` (docs/api.md §20): a sandbox goes back to exactly the
// demo data set, whatever an integrator created or changed. Both stores
// implement it; it is not part of Store because nothing that serves
// requests may call it.
type DataResetter interface {
	// DeleteAllData empties every table but those KeptOnReset names, in
	// one transaction.
	DeleteAllData(ctx context.Context) error
}

// KeptOnReset reports whether a reset keeps a table: the migration record
// (the schema stays), the signing keys (tokens that running servers issued
// stay verifiable) and the server secrets (carousel URLs stay signed
// alike).
func KeptOnReset(table string) bool {
	switch table {
	case "schema_migrations", "signing_keys", "secrets":
		return true
	}
	return false
}
