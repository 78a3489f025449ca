package posgate

import (
	"context"
	"time"
)

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

	// Ping reports whether the store can serve requests (for /readyz).
	Ping(ctx context.Context) error
	Close() error
}

// TenancyStore holds POS systems, companies, locations, terminals, API
// clients, sessions and signing keys.
type TenancyStore interface {
	CreatePOSSystem(ctx context.Context, p *POSSystem) error
	FindPOSSystem(ctx context.Context, id string) (*POSSystem, error)
	ListPOSSystems(ctx context.Context) ([]*POSSystem, error)

	CreateCompany(ctx context.Context, c *Company) error
	FindCompany(ctx context.Context, posSystemID, companyID string) (*Company, error)
	ListCompanies(ctx context.Context, posSystemID string) ([]*Company, error)
	UpdateCompany(ctx context.Context, posSystemID, companyID string, upd CompanyUpdate) (*Company, error)

	CreateLocation(ctx context.Context, l *Location) error
	// FindLocation returns the location with its Company filled in.
	FindLocation(ctx context.Context, posSystemID, locationID string) (*Location, error)
	// ListLocations lists a POS system's locations, of one company when
	// companyID is not empty.
	ListLocations(ctx context.Context, posSystemID, companyID string) ([]*Location, error)
	UpdateLocation(ctx context.Context, posSystemID, locationID string, upd LocationUpdate) (*Location, error)

	CreateTerminal(ctx context.Context, t *Terminal) error
	FindTerminal(ctx context.Context, posSystemID, locationID, terminalID string) (*Terminal, error)
	// ListTerminals lists a POS system's terminals, of one location when
	// locationID is not empty.
	ListTerminals(ctx context.Context, posSystemID, locationID string) ([]*Terminal, error)
	UpdateTerminal(ctx context.Context, posSystemID, locationID, terminalID string, upd TerminalUpdate) (*Terminal, error)

	CreateClient(ctx context.Context, c *Client) error
	FindClient(ctx context.Context, id string) (*Client, error)
	ListClients(ctx context.Context) ([]*Client, error)
	UpdateClient(ctx context.Context, id string, upd ClientUpdate) (*Client, error)

	CreateSession(ctx context.Context, s *Session) error
	FindSession(ctx context.Context, id string) (*Session, error)
	// DeleteExpiredSessions removes sessions whose ExpiresAt is before t and
	// returns how many it removed.
	DeleteExpiredSessions(ctx context.Context, t time.Time) (int64, error)

	CreateSigningKey(ctx context.Context, k *SigningKey) error
	// ListSigningKeys returns every key, oldest first.
	ListSigningKeys(ctx context.Context) ([]*SigningKey, error)
	DeleteSigningKey(ctx context.Context, id string) error
}
