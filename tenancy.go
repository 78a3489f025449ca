package posgate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Status is the lifecycle state of a company, location or terminal.
type Status string

// Statuses of companies, locations and terminals.
const (
	StatusActive   Status = "Active"
	StatusDisabled Status = "Disabled"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return s == StatusActive || s == StatusDisabled }

// PosStatus is the interface's PosResponseStatus (docs/api.md §1.5).
type PosStatus string

// PosStatus values. Rejected and Error are known to some POS integrations:
// they parse but posgate never produces them (docs/api.md §1.5).
const (
	PosAccepted     PosStatus = "Accepted"
	PosDisabled     PosStatus = "Disabled"
	PosNotAvailable PosStatus = "NotAvailable"
	PosRejected     PosStatus = "Rejected"
	PosError        PosStatus = "Error"
)

// Scopes a client may be granted.
const (
	ScopePOSIntegration = "pos_integration"
	ScopeServiceAPI     = "service_api"
	ScopeAdmin          = "admin"
)

// KnownScopes lists every scope the identity provider knows, in a stable order.
var KnownScopes = []string{ScopePOSIntegration, ScopeServiceAPI, ScopeAdmin}

// Feature names a company feature switch; the names are used by the CLI, the
// operator API and the stores.
type Feature string

// Company feature switches (docs/api.md §1.3).
const (
	FeatureCoupons          Feature = "coupons"
	FeatureReceiptPromotion Feature = "receiptPromotion"
	FeatureCarousel         Feature = "carousel"
	FeaturePromotionImport  Feature = "promotionImport"
	FeatureTransactions     Feature = "transactions"
	FeatureProductsImport   Feature = "productsImport"
)

// AllFeatures lists every feature switch in a stable order.
var AllFeatures = []Feature{FeatureCoupons, FeatureReceiptPromotion, FeatureCarousel, FeaturePromotionImport, FeatureTransactions, FeatureProductsImport}

// Features holds a company's feature switches. startInteraction belongs to
// Transactions: a session exists only to link a later transaction.
type Features struct {
	Coupons          bool `json:"coupons"`
	ReceiptPromotion bool `json:"receiptPromotion"`
	Carousel         bool `json:"carousel"`
	PromotionImport  bool `json:"promotionImport"`
	Transactions     bool `json:"transactions"`
	// ProductsImport governs the catalogue imports (docs/api.md §17).
	ProductsImport bool `json:"productsImport"`
}

// AllFeaturesOn is the default for a new company: everything switched on.
func AllFeaturesOn() Features {
	return Features{Coupons: true, ReceiptPromotion: true, Carousel: true, PromotionImport: true, Transactions: true, ProductsImport: true}
}

// Enabled reports whether feature f is switched on.
func (f Features) Enabled(name Feature) bool {
	switch name {
	case FeatureCoupons:
		return f.Coupons
	case FeatureReceiptPromotion:
		return f.ReceiptPromotion
	case FeatureCarousel:
		return f.Carousel
	case FeaturePromotionImport:
		return f.PromotionImport
	case FeatureTransactions:
		return f.Transactions
	case FeatureProductsImport:
		return f.ProductsImport
	}
	return false
}

// Set switches feature name on or off; it returns an EINVALID error for an
// unknown name.
func (f *Features) Set(name Feature, on bool) error {
	switch name {
	case FeatureCoupons:
		f.Coupons = on
	case FeatureReceiptPromotion:
		f.ReceiptPromotion = on
	case FeatureCarousel:
		f.Carousel = on
	case FeaturePromotionImport:
		f.PromotionImport = on
	case FeatureTransactions:
		f.Transactions = on
	case FeatureProductsImport:
		f.ProductsImport = on
	default:
		return Errorf(EINVALID, "unknown feature %q (known: %s)", name, featureNames())
	}
	return nil
}

// ParseFeatures builds Features from a comma-separated list of feature names
// that are on; "all" switches every feature on and "" or "none" none.
func ParseFeatures(list string) (Features, error) {
	var f Features
	list = strings.TrimSpace(list)
	if list == "" || list == "none" {
		return f, nil
	}
	if list == "all" {
		return AllFeaturesOn(), nil
	}
	for _, name := range strings.Split(list, ",") {
		if err := f.Set(Feature(strings.TrimSpace(name)), true); err != nil {
			return Features{}, err
		}
	}
	return f, nil
}

func featureNames() string {
	names := make([]string, len(AllFeatures))
	for i, f := range AllFeatures {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// POSSystem is a point-of-sale vendor integration (e.g. clover, pax); every
// POS route carries its id in the path.
type POSSystem struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// Validate checks the fields an operator supplies.
func (p *POSSystem) Validate() error {
	v := ValidationError{}
	checkKey(v, "id", p.ID)
	checkName(v, "name", p.Name)
	return v.Err()
}

// Company is a merchant account under one POS system.
type Company struct {
	POSSystemID string   `json:"posSystemId"`
	ID          string   `json:"posCompanyId"`
	Name        string   `json:"name"`
	Status      Status   `json:"status"`
	Features    Features `json:"features"`
	// TimeZone is the IANA zone of the company's locations that have none
	// of their own; "" for none (UTC).
	TimeZone  string    `json:"timeZone"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Validate checks the fields an operator supplies.
func (c *Company) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", c.POSSystemID)
	checkKey(v, "posCompanyId", c.ID)
	checkName(v, "name", c.Name)
	checkStatus(v, c.Status)
	CheckTimeZone(v, "timeZone", c.TimeZone)
	return v.Err()
}

// CompanyUpdate names the fields of a company to change; nil leaves a field
// as it is.
type CompanyUpdate struct {
	Name     *string
	Status   *Status
	Features *Features
	// TimeZone sets the company's zone; "" removes it.
	TimeZone *string
}

// Location is a store of a company; its id is supplied by the POS system.
type Location struct {
	POSSystemID string `json:"posSystemId"`
	ID          string `json:"posLocationId"`
	CompanyID   string `json:"posCompanyId"`
	Name        string `json:"name"`
	Status      Status `json:"status"`
	// TimeZone is the IANA zone of the location's local time; "" for none
	// (its company's, else UTC: Zone).
	TimeZone  string    `json:"timeZone"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`

	// Company is filled in by Store.FindLocation so that the POS routes get
	// the company's status and switches in the same round trip.
	Company *Company `json:"-"`
}

// Validate checks the fields an operator supplies.
func (l *Location) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", l.POSSystemID)
	checkKey(v, "posLocationId", l.ID)
	checkKey(v, "posCompanyId", l.CompanyID)
	checkName(v, "name", l.Name)
	checkStatus(v, l.Status)
	CheckTimeZone(v, "timeZone", l.TimeZone)
	return v.Err()
}

// LocationUpdate names the fields of a location to change.
type LocationUpdate struct {
	Name   *string
	Status *Status
	// TimeZone sets the location's zone; "" removes it (the company's
	// applies again).
	TimeZone *string
}

// Terminal is a registered till at a location; it is usable as soon as it is
// stored (docs/api.md §1.3: no "short wait").
type Terminal struct {
	POSSystemID string    `json:"posSystemId"`
	LocationID  string    `json:"posLocationId"`
	ID          string    `json:"terminalId"`
	Name        string    `json:"name"`
	Status      Status    `json:"status"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Validate checks the fields an operator supplies.
func (t *Terminal) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", t.POSSystemID)
	checkKey(v, "posLocationId", t.LocationID)
	checkKey(v, "terminalId", t.ID)
	checkName(v, "name", t.Name)
	checkStatus(v, t.Status)
	return v.Err()
}

// TerminalUpdate names the fields of a terminal to change.
type TerminalUpdate struct {
	Name   *string
	Status *Status
}

// Client is an OAuth2 client. Its secret is never stored: SecretHash is the
// SHA-256 of it (secrets are generated with 256 bits of entropy, so a slow
// hash would add cost and no safety).
type Client struct {
	ID         string `json:"clientId"`
	Name       string `json:"name"`
	SecretHash []byte `json:"-"`
	// POSSystemID binds a POS client to one POS system; empty for operator
	// (admin-only) clients.
	POSSystemID string   `json:"posSystemId"`
	Scopes      []string `json:"scopes"`
	// CompanyIDs, when not empty, restricts the client to these companies of
	// its POS system: the others answer as if they did not exist.
	CompanyIDs []string  `json:"companyIds"`
	Disabled   bool      `json:"disabled"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`

	// RateLimit is the client's own request budget; nil: the installation's
	// default (posgate serve --rate-limit, docs/api.md §16.1).
	RateLimit *RateLimit `json:"rateLimit"`
}

// Validate checks the fields an operator supplies.
func (c *Client) Validate() error {
	v := ValidationError{}
	checkKey(v, "clientId", c.ID)
	checkName(v, "name", c.Name)
	if len(c.SecretHash) == 0 {
		v.Add("secret", "The client has no secret.")
	}
	if len(c.Scopes) == 0 {
		v.Add("scopes", "At least one scope is required.")
	}
	pos := false
	for _, s := range c.Scopes {
		if !slices.Contains(KnownScopes, s) {
			v.Add("scopes", fmt.Sprintf("Unknown scope %q (known: %s).", s, strings.Join(KnownScopes, ", ")))
		}
		if s == ScopePOSIntegration || s == ScopeServiceAPI {
			pos = true
		}
	}
	if pos && c.POSSystemID == "" {
		v.Add("posSystemId", "A client with a POS scope must be bound to a POS system.")
	}
	if c.POSSystemID != "" {
		checkKey(v, "posSystemId", c.POSSystemID)
	}
	if len(c.CompanyIDs) > 0 && c.POSSystemID == "" {
		v.Add("companyIds", "Company restrictions need a POS system.")
	}
	for _, id := range c.CompanyIDs {
		checkKey(v, "companyIds", id)
	}
	if c.RateLimit != nil {
		c.RateLimit.check(v, "rateLimit.")
	}
	return v.Err()
}

// HasScope reports whether the client may be granted scope s.
func (c *Client) HasScope(s string) bool { return slices.Contains(c.Scopes, s) }

// ClientUpdate names the fields of a client to change.
type ClientUpdate struct {
	Name     *string
	Disabled *bool
	// SecretHash replaces the client's secret hash (a rotated secret);
	// nil keeps it.
	SecretHash []byte
	// RateLimit sets the client's own rate limit; ClearRateLimit removes
	// it, so that the default applies again.
	RateLimit      *RateLimit
	ClearRateLimit bool
}

// Session is one customer interaction started at a terminal
// (docs/api.md §4.1, §4.2). Its ID links the interaction to a later
// transaction submission.
type Session struct {
	ID          string    `json:"sessionId"`
	POSSystemID string    `json:"posSystemId"`
	CompanyID   string    `json:"posCompanyId"`
	LocationID  string    `json:"posLocationId"`
	TerminalID  string    `json:"terminalId"`
	CreatedAt   time.Time `json:"createdAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// SigningKey is a token signing key. Keys are kept in the store so that every
// instance signs and verifies with the same keys and tokens survive restarts.
type SigningKey struct {
	ID         string    // the JWT "kid"
	Algorithm  string    // "ES256"
	PrivateKey []byte    // PKCS #8 DER, or that sealed with a key-encryption key (internal/auth)
	CreatedAt  time.Time // the newest key signs; older ones only verify
}

// Timestamp normalises t to what every store round-trips: UTC, microseconds.
func Timestamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// MaxKeyLen is the longest id accepted for POS systems, companies, locations,
// terminals and clients.
const MaxKeyLen = 128

// ValidKey reports whether s is usable as an identifier: 1–128 characters,
// printable, no spaces at either end, no slash (ids appear in URL paths).
func ValidKey(s string) bool {
	if s == "" || len(s) > MaxKeyLen || !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if r == '/' || r == '\\' || r == '?' || r == '#' || r == '%' || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func checkKey(v ValidationError, field, s string) {
	if s == "" {
		v.Add(field, fmt.Sprintf("The %s field is required.", field))
	} else if !ValidKey(s) {
		v.Add(field, KeyMessage(field))
	}
}

// KeyMessage is the validation message of a field that holds no valid id
// (ValidKey), so that a request type outside this package that takes an id
// refuses a bad one in the same words as the operator's create requests.
func KeyMessage(field string) string {
	return fmt.Sprintf("The %s field must be 1-%d printable characters without '/', '\\', '?', '#', '%%' or surrounding spaces.", field, MaxKeyLen)
}

func checkName(v ValidationError, field, s string) {
	if len(s) > 200 || !utf8.ValidString(s) {
		v.Add(field, fmt.Sprintf("The %s field must be valid text of at most 200 bytes.", field))
	}
}

func checkStatus(v ValidationError, s Status) {
	if !s.Valid() {
		v.Add("status", fmt.Sprintf("The status field must be %s or %s.", StatusActive, StatusDisabled))
	}
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
	// SessionsPerHour counts a company's sessions (interactions) created
	// at or after from and before to, by the UTC hour they began; hours
	// without any are absent. Sessions are kept until they expire, so it
	// sees back as far as the session TTL.
	SessionsPerHour(ctx context.Context, posSystemID, companyID string, from, to time.Time) (map[time.Time]int, error)
	// DeleteExpiredSessions removes sessions whose ExpiresAt is before t and
	// returns how many it removed.
	DeleteExpiredSessions(ctx context.Context, t time.Time) (int64, error)

	CreateSigningKey(ctx context.Context, k *SigningKey) error
	// ListSigningKeys returns every key, oldest first.
	ListSigningKeys(ctx context.Context) ([]*SigningKey, error)
	DeleteSigningKey(ctx context.Context, id string) error
	// ReplaceSigningKey sets key id's PrivateKey to next if it still is
	// old, and reports whether it did (false: the key is gone or another
	// writer changed it first). Encrypting keys at rest rewrites them so.
	ReplaceSigningKey(ctx context.Context, id string, old, next []byte) (bool, error)
}
