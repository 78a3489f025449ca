package client

import (
	"encoding/json"
	"time"
)

// RewardProvider mirrors the API's RewardProvider enumeration.
type RewardProvider string

// The values of RewardProvider.
const (
	RewardProviderTwoReward RewardProvider = "TwoReward"
	RewardProviderPJM       RewardProvider = "PJM"
	RewardProviderDummy     RewardProvider = "Dummy"
)

// CouponStatus mirrors the API's CouponCodeItemStatus enumeration.
type CouponStatus string

// The values of CouponStatus.
const (
	CouponStatusIssued    CouponStatus = "Issued"
	CouponStatusRedeemed  CouponStatus = "Redeemed"
	CouponStatusCancelled CouponStatus = "Cancelled"
	CouponStatusExpired   CouponStatus = "Expired"
)

// AccountStatus mirrors the API's AccountStatus enumeration.
type AccountStatus string

// The values of AccountStatus.
const (
	AccountStatusActive          AccountStatus = "Active"
	AccountStatusDisabled        AccountStatus = "Disabled"
	AccountStatusAccountNotFound AccountStatus = "AccountNotFound"
)

// PosStatus mirrors the API's PosResponseStatus enumeration.
type PosStatus string

// The values of PosStatus.
const (
	PosStatusAccepted     PosStatus = "Accepted"
	PosStatusDisabled     PosStatus = "Disabled"
	PosStatusNotAvailable PosStatus = "NotAvailable"
	PosStatusRejected     PosStatus = "Rejected"
	PosStatusError        PosStatus = "Error"
)

// Status mirrors the API's Status enumeration.
type Status string

// The values of Status.
const (
	StatusActive   Status = "Active"
	StatusDisabled Status = "Disabled"
)

// Scope mirrors the API's Scope enumeration.
type Scope string

// The values of Scope.
const (
	ScopePosIntegration Scope = "pos_integration"
	ScopeServiceAPI     Scope = "service_api"
	ScopeAdmin          Scope = "admin"
)

// CouponSearchRequest mirrors the API's SearchUserCouponsDto: Coupon search criteria. At least one of `code`,
// `email` and `phone` must hold more than blanks (null, `""` and blanks count as not given), and a `phone`
// given must hold digits: otherwise the search is answered 400. Unknown properties are answered 400 naming
// them.
type CouponSearchRequest struct {
	// The coupon code, without regard to case.
	Code string `json:"code,omitempty"`
	// The owner's e-mail, without regard to case.
	Email string `json:"email,omitempty"`
	// The owner's phone, compared on its digits (so it must hold some).
	Phone string `json:"phone,omitempty"`
	// Keeps the coupons usable at this location of the POS system; null or `""` searches every company.
	PosLocationID string `json:"posLocationId,omitempty"`
}

// CouponInfo mirrors the API's CouponCodeDisplayInfoDto: An additional information section of a coupon; texts
// are at most 1000 bytes, without control characters.
type CouponInfo struct {
	Title *string        `json:"title"`
	Items map[string]any `json:"items"`
}

// CouponInfoInput mirrors the API's CouponInfoInput: An additional information section of a coupon to issue;
// texts are at most 1000 bytes, without control characters.
type CouponInfoInput struct {
	Title string         `json:"title,omitempty"`
	Items map[string]any `json:"items,omitempty"`
}

// CouponDisplay mirrors the API's CouponCodeDisplayDto: A coupon as a POS shows it; unset fields are null.
type CouponDisplay struct {
	RewardProvider RewardProvider `json:"rewardProvider"`
	Code           *string        `json:"code"`
	Name           *string        `json:"name"`
	Title          *string        `json:"title"`
	PictureURL     *string        `json:"pictureUrl"`
	AvailableUntil *time.Time     `json:"availableUntil"`
	Status         CouponStatus   `json:"status"`
	Info           []CouponInfo   `json:"info"`
	// The promotion the coupon carries, which it makes apply to a basket (docs/api.md §18.3); null for none.
	// posgate's addition.
	PromotionID *string `json:"promotionId"`
}

// Page mirrors the API's PageModel: A page of a paged answer.
type Page struct {
	Page     int `json:"page"`
	PageSize int `json:"pageSize"`
	Total    int `json:"total"`
}

// CouponPage mirrors the API's CouponCodeDisplayDtoPagedResult: The answer of the coupon search and of the
// active coupons, with `data`, `page` and `posStatus` at the top level.
type CouponPage struct {
	Data      []CouponDisplay `json:"data"`
	Page      Page            `json:"page"`
	PosStatus PosStatus       `json:"posStatus"`
}

// CompanySettings mirrors the API's CompanySettingsDto: Whether posgate serves each feature to the company
// now; all `false` unless the account is `Active`.
type CompanySettings struct {
	// startInteraction (the check-in) is served; the `transactions` switch.
	IsCheckInMenuEnabled bool `json:"isCheckInMenuEnabled"`
	// The `transactions` switch.
	IsTransactionsEnabled bool `json:"isTransactionsEnabled"`
	// Always `false`; posgate serves no POS rules.
	IsPosRulesEnabled bool `json:"isPosRulesEnabled"`
	// The `receiptPromotion` switch.
	IsReceiptPromotionEnabled bool `json:"isReceiptPromotionEnabled"`
	// The `coupons` switch (coupon search and lookups, active coupons, loyalty-card lookup).
	IsCouponsEnabled bool `json:"isCouponsEnabled"`
	// The `productsImport` switch (the catalogue imports).
	IsProductsImportEnabled bool `json:"isProductsImportEnabled"`
	// The `carousel` switch.
	IsCarouselEnabled bool `json:"isCarouselEnabled"`
	// The `promotionImport` switch.
	IsPromotionImportEnabled bool `json:"isPromotionImportEnabled"`
}

// NotificationSettings mirrors the API's NotificationSettingsDto: How posgate notifies the POS's back office
// of events; posgate sends none yet, so `Disabled` on `None`.
type NotificationSettings struct {
	Status  string `json:"status"`
	Channel string `json:"channel"`
	// For an Active company, "terminalEvents": the URL of the tills' channel (GetTerminalEvents), with
	// {posLocationId} and {terminalId} to fill in; otherwise empty.
	Configuration map[string]any `json:"configuration"`
}

// Settings mirrors the API's SettingsLookupResultDto object.
type Settings struct {
	// Echo of the request.
	PosCompanyID         string               `json:"posCompanyId"`
	AccountStatus        AccountStatus        `json:"accountStatus"`
	CompanySettings      CompanySettings      `json:"companySettings"`
	NotificationSettings NotificationSettings `json:"notificationSettings"`
}

// CouponLookupRequest mirrors the API's LookupCouponCodesDto: The v2 coupon lookup. Both fields are required
// and non-empty (400 otherwise); unknown properties are ignored.
type CouponLookupRequest struct {
	// A location of the POS system.
	PosLocationID string `json:"posLocationId"`
	// The coupon code, without regard to case.
	Code string `json:"code"`
}

// CouponLookupResult mirrors the API's CouponCodesResultDto object.
type CouponLookupResult struct {
	CouponCodes []CouponDisplay `json:"couponCodes"`
}

// LoyaltyUserLookupRequest mirrors the API's LookupLoyaltyUsersDto: The loyalty-card user lookup. Both fields
// are required (400 otherwise); unknown properties are ignored.
type LoyaltyUserLookupRequest struct {
	// A location of the POS system.
	PosLocationID string `json:"posLocationId"`
	// At least 3 characters once surrounding spaces are trimmed, at most 200 bytes, without control characters.
	Keyword string `json:"keyword"`
}

// LoyaltyCardUser mirrors the API's LoyaltyUserDto: A loyalty-card user; unset text fields are empty strings.
type LoyaltyCardUser struct {
	ID        string `json:"id"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	// Free text.
	Gender string `json:"gender"`
	Phone  string `json:"phone"`
	Email  string `json:"email"`
	Stamps int    `json:"stamps"`
	Points int    `json:"points"`
}

// LoyaltyUserLookupResult mirrors the API's LoyaltyUsersResultDto object.
type LoyaltyUserLookupResult struct {
	Users []LoyaltyCardUser `json:"users"`
}

// CreateCouponRequest mirrors the API's CreateCouponRequest: A coupon to issue; unknown properties are
// answered 400. A property that may be left out may also be null, which means the same.
type CreateCouponRequest struct {
	// Unique in the company without regard to case; 1–128 bytes of printable text without `/`, `\`, `?`, `#`, `%`
	// or surrounding spaces.
	Code string `json:"code"`
	// Who funds the reward; `""` or absent means `TwoReward`.
	RewardProvider string `json:"rewardProvider,omitempty"`
	// At most 200 bytes, without control characters.
	Name string `json:"name,omitempty"`
	// At most 200 bytes, without control characters.
	Title string `json:"title,omitempty"`
	// An absolute http(s) URL of at most 2048 bytes.
	PictureURL string `json:"pictureUrl,omitempty"`
	// When the coupon stops being usable (an ISO 8601 date-time; without an offset it is UTC, a bare date is
	// midnight UTC).
	AvailableUntil string `json:"availableUntil,omitempty"`
	// `""` or absent means `Issued`; `Expired` cannot be set (it is computed from `availableUntil`).
	Status string            `json:"status,omitempty"`
	Info   []CouponInfoInput `json:"info,omitempty"`
	// A loyalty user of the company who owns the coupon (404 otherwise); empty for none.
	UserID string `json:"userId,omitempty"`
	// The owner's e-mail (name@domain without spaces, at most 254 bytes); empty for none.
	Email string `json:"email,omitempty"`
	// The owner's phone: digits, spaces and `+ - ( ) . /`, with at least 3 digits; empty for none.
	Phone string `json:"phone,omitempty"`
	// Locations of the company where the coupon is usable (404 for others); none means all of them.
	LocationIds []string `json:"locationIds,omitempty"`
	// The id of a promotion of the company the coupon carries (docs/api.md §18.3); empty for none. A promotion
	// not imported (yet) gives nothing.
	PromotionID string `json:"promotionId,omitempty"`
}

// ImportCouponsRequest mirrors the API's ImportCouponsRequest: Coupons to issue together: at least one (400),
// at most 100,000 (413); unknown properties are answered 400.
type ImportCouponsRequest struct {
	Items []CreateCouponRequest `json:"items"`
}

// Coupon mirrors the API's Coupon: A coupon as the operator sees it; `status` is reported as POS systems see
// it, `storedStatus` as stored.
type Coupon struct {
	PosSystemID    string         `json:"posSystemId"`
	PosCompanyID   string         `json:"posCompanyId"`
	Code           string         `json:"code"`
	RewardProvider RewardProvider `json:"rewardProvider"`
	Name           *string        `json:"name"`
	Title          *string        `json:"title"`
	PictureURL     *string        `json:"pictureUrl"`
	AvailableUntil *time.Time     `json:"availableUntil"`
	Status         CouponStatus   `json:"status"`
	StoredStatus   string         `json:"storedStatus"`
	Info           []CouponInfo   `json:"info"`
	UserID         string         `json:"userId"`
	Email          string         `json:"email"`
	Phone          string         `json:"phone"`
	LocationIds    []string       `json:"locationIds"`
	// The promotion the coupon carries; empty for none.
	PromotionID string            `json:"promotionId"`
	CreatedAt   time.Time         `json:"createdAt"`
	UpdatedAt   time.Time         `json:"updatedAt"`
	RedeemedBy  *CouponRedemption `json:"redeemedBy,omitempty"`
}

// CouponImportResult mirrors the API's CouponImportResult object.
type CouponImportResult struct {
	CreatedCount int `json:"createdCount"`
}

// CreateLoyaltyUserRequest mirrors the API's CreateLoyaltyUserRequest: A loyalty user to register; unknown
// properties are answered 400. A property that may be left out may also be null, which means the same. Texts
// are without control characters.
type CreateLoyaltyUserRequest struct {
	// Unique in the company; 1–128 bytes of printable text without `/`, `\`, `?`, `#`, `%` or surrounding spaces.
	ID        string `json:"id"`
	FirstName string `json:"firstName,omitempty"`
	LastName  string `json:"lastName,omitempty"`
	// Free text.
	Gender string `json:"gender,omitempty"`
	// Digits, spaces and `+ - ( ) . /`, with at least 3 digits; empty for none.
	Phone string `json:"phone,omitempty"`
	// name@domain without spaces, at most 254 bytes; empty for none.
	Email  string `json:"email,omitempty"`
	Stamps *int   `json:"stamps,omitempty"`
	Points *int   `json:"points,omitempty"`
}

// UpdateLoyaltyUserRequest mirrors the API's UpdateLoyaltyUserRequest: The fields to change (absent or null:
// unchanged) and signed balance adjustments; unknown properties are answered 400.
type UpdateLoyaltyUserRequest struct {
	FirstName   *string `json:"firstName,omitempty"`
	LastName    *string `json:"lastName,omitempty"`
	Gender      *string `json:"gender,omitempty"`
	Phone       *string `json:"phone,omitempty"`
	Email       *string `json:"email,omitempty"`
	StampsDelta *int    `json:"stampsDelta,omitempty"`
	PointsDelta *int    `json:"pointsDelta,omitempty"`
}

// LoyaltyUser mirrors the API's LoyaltyUser: A loyalty-card user as the operator sees it.
type LoyaltyUser struct {
	PosSystemID  string `json:"posSystemId"`
	PosCompanyID string `json:"posCompanyId"`
	ID           string `json:"id"`
	FirstName    string `json:"firstName"`
	LastName     string `json:"lastName"`
	Gender       string `json:"gender"`
	Phone        string `json:"phone"`
	Email        string `json:"email"`
	Stamps       int    `json:"stamps"`
	// Negative when a refund took back points already spent.
	Points    int       `json:"points"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// The user's latest transactions (at most 5), newest first; absent when there are none.
	RecentTransactions []TransactionSummary `json:"recentTransactions,omitempty"`
}

// StartInteractionRequest mirrors the API's StartInteractionDto: The terminal and location of an interaction.
// Both are required: a missing, null or empty value is answered 400. Unknown properties are ignored; names
// are case-sensitive (`terminalID` is not `terminalId`).
type StartInteractionRequest struct {
	// The terminal identifier in the POS system; the terminal must be registered with posgate.
	TerminalID string `json:"terminalId"`
	// The location identifier in the POS system.
	PosLocationID string `json:"posLocationId"`
	// posgate's addition: the session's customer, whose coupons issued while the session is open reach the
	// terminal's channel as CouponIssued (WatchTerminal).
	Loyalty *LoyaltyCard `json:"loyalty,omitempty"`
}

// StartInteractionResult mirrors the API's StartInteractionResultDto object.
type StartInteractionResult struct {
	// Echo of the request.
	TerminalID string `json:"terminalId"`
	// Echo of the request.
	PosLocationID string `json:"posLocationId"`
	// Links the interaction to a later transaction; null when `posStatus` is not `Accepted` (no session is made).
	SessionID *string   `json:"sessionId"`
	PosStatus PosStatus `json:"posStatus"`
}

// Token mirrors the API's TokenResponse object.
type Token struct {
	// A JWT (ES256, `typ` `at+jwt`), sent as a bearer token on later calls.
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	// Lifetime in seconds (3600 by default).
	ExpiresIn int `json:"expires_in"`
	// The granted scopes, space-separated.
	Scope string `json:"scope"`
	// Issued by the browser flows' grants only (authorization code and
	// refresh token, docs/api.md §21.3).
	RefreshToken string `json:"refresh_token,omitempty"`
}

// Discovery mirrors the API's Discovery: OpenID provider metadata of posgate's identity provider.
type Discovery struct {
	Issuer        string `json:"issuer"`
	JWKSURI       string `json:"jwks_uri"`
	TokenEndpoint string `json:"token_endpoint"`
	// The browser flows' metadata (docs/api.md §21.3), where posgate serves
	// them.
	AuthorizationEndpoint                      string   `json:"authorization_endpoint,omitempty"`
	ResponseModesSupported                     []string `json:"response_modes_supported,omitempty"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported,omitempty"`
	AuthorizationResponseIssParameterSupported *bool    `json:"authorization_response_iss_parameter_supported,omitempty"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	SubjectTypesSupported                      []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported           []string `json:"id_token_signing_alg_values_supported"`
}

// JWKS mirrors the API's Jwks object.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWK mirrors the API's Jwk: A P-256 public key (RFC 7517, RFC 7518 §6.2).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	// Base64url X coordinate.
	X string `json:"x"`
	// Base64url Y coordinate.
	Y   string `json:"y"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// Health mirrors the API's HealthStatus object (the readiness answer).
type Health struct {
	Status string `json:"status"`
}

// Liveness mirrors the API's Liveness object: the process serves, the
// build it runs and an id of the process, new at every start.
type Liveness struct {
	Status       string `json:"status"`
	Version      string `json:"version"`
	Revision     string `json:"revision"`
	RevisionTime string `json:"revisionTime"`
	Modified     bool   `json:"modified"`
	GoVersion    string `json:"goVersion"`
	Instance     string `json:"instance"`
}

// Features mirrors the API's Features: A company's feature switches; startInteraction belongs to
// `transactions`.
type Features struct {
	// The catalogue imports (products and product categories).
	ProductsImport   bool `json:"productsImport"`
	Coupons          bool `json:"coupons"`
	ReceiptPromotion bool `json:"receiptPromotion"`
	Carousel         bool `json:"carousel"`
	PromotionImport  bool `json:"promotionImport"`
	Transactions     bool `json:"transactions"`
}

// FeaturesUpdate mirrors the API's FeaturesUpdate: Feature switches to set; the switches not given (or null)
// keep their value (on creation, their default, which is on).
type FeaturesUpdate struct {
	ProductsImport   *bool `json:"productsImport,omitempty"`
	Coupons          *bool `json:"coupons,omitempty"`
	ReceiptPromotion *bool `json:"receiptPromotion,omitempty"`
	Carousel         *bool `json:"carousel,omitempty"`
	PromotionImport  *bool `json:"promotionImport,omitempty"`
	Transactions     *bool `json:"transactions,omitempty"`
}

// PosSystem mirrors the API's PosSystem object.
type PosSystem struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// CreatePosSystemRequest mirrors the API's CreatePosSystemRequest: A POS system to register; unknown
// properties are answered 400.
type CreatePosSystemRequest struct {
	// 1–128 bytes of printable text without `/`, `\`, `?`, `#`, `%` or surrounding spaces.
	ID string `json:"id"`
	// At most 200 bytes.
	Name string `json:"name,omitempty"`
}

// Company mirrors the API's Company object.
type Company struct {
	PosSystemID  string   `json:"posSystemId"`
	PosCompanyID string   `json:"posCompanyId"`
	Name         string   `json:"name"`
	Status       Status   `json:"status"`
	Features     Features `json:"features"`
	// The IANA time zone of the company's locations that have none of their own (e.g. `America/New_York`);
	// empty when not set (UTC).
	TimeZone  string    `json:"timeZone"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// CreateCompanyRequest mirrors the API's CreateCompanyRequest: A company to register; unknown properties are
// answered 400.
type CreateCompanyRequest struct {
	// 1–128 bytes of printable text without `/`, `\`, `?`, `#`, `%` or surrounding spaces.
	PosCompanyID string `json:"posCompanyId"`
	// At most 200 bytes.
	Name string `json:"name,omitempty"`
	// Default `Active`.
	Status   Status          `json:"status,omitempty"`
	Features *FeaturesUpdate `json:"features,omitempty"`
	// An IANA time zone name (e.g. `Europe/Berlin`), the default of the company's locations; empty or absent for
	// none (UTC). An unknown zone is answered 400.
	TimeZone string `json:"timeZone,omitempty"`
}

// UpdateCompanyRequest mirrors the API's UpdateCompanyRequest: The fields to change (absent or null keep
// their value); unknown properties are answered 400.
type UpdateCompanyRequest struct {
	Name     *string         `json:"name,omitempty"`
	Status   *Status         `json:"status,omitempty"`
	Features *FeaturesUpdate `json:"features,omitempty"`
	// An IANA time zone name; empty removes the company's zone (UTC). An unknown zone is answered 400.
	TimeZone *string `json:"timeZone,omitempty"`
}

// Location mirrors the API's Location object.
type Location struct {
	PosSystemID   string `json:"posSystemId"`
	PosLocationID string `json:"posLocationId"`
	PosCompanyID  string `json:"posCompanyId"`
	Name          string `json:"name"`
	Status        Status `json:"status"`
	// The IANA time zone of the location's local time, in which its promotions' wall-clock dates are read; empty
	// when not set (the company's applies, else UTC).
	TimeZone  string    `json:"timeZone"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// CreateLocationRequest mirrors the API's CreateLocationRequest: A location to register; unknown properties
// are answered 400.
type CreateLocationRequest struct {
	// Unique in the POS system; 1–128 bytes of printable text without `/`, `\`, `?`, `#`, `%` or surrounding
	// spaces.
	PosLocationID string `json:"posLocationId"`
	// The company the location belongs to; it must be registered (404 otherwise).
	PosCompanyID string `json:"posCompanyId"`
	// At most 200 bytes.
	Name string `json:"name,omitempty"`
	// Default `Active`.
	Status Status `json:"status,omitempty"`
	// An IANA time zone name (e.g. `America/New_York`); empty or absent for none: the company's zone applies,
	// else UTC. An unknown zone is answered 400.
	TimeZone string `json:"timeZone,omitempty"`
}

// UpdateLocationRequest mirrors the API's UpdateLocationRequest: The fields to change (absent or null keep
// their value); unknown properties are answered 400.
type UpdateLocationRequest struct {
	Name   *string `json:"name,omitempty"`
	Status *Status `json:"status,omitempty"`
	// An IANA time zone name; empty removes the location's own zone (the company's applies again). An unknown
	// zone is answered 400.
	TimeZone *string `json:"timeZone,omitempty"`
}

// Terminal mirrors the API's Terminal object.
type Terminal struct {
	PosSystemID   string    `json:"posSystemId"`
	PosLocationID string    `json:"posLocationId"`
	TerminalID    string    `json:"terminalId"`
	Name          string    `json:"name"`
	Status        Status    `json:"status"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// CreateTerminalRequest mirrors the API's CreateTerminalRequest: A terminal to register; unknown properties
// are answered 400.
type CreateTerminalRequest struct {
	// Unique at the location; 1–128 bytes of printable text without `/`, `\`, `?`, `#`, `%` or surrounding
	// spaces.
	TerminalID string `json:"terminalId"`
	// At most 200 bytes.
	Name string `json:"name,omitempty"`
	// Default `Active`.
	Status Status `json:"status,omitempty"`
}

// APIClient mirrors the API's Client: An OAuth client; its secret is never shown again after creation.
type APIClient struct {
	ClientID string `json:"clientId"`
	Name     string `json:"name"`
	// The POS system the client is bound to; empty for operator clients.
	PosSystemID string  `json:"posSystemId"`
	Scopes      []Scope `json:"scopes"`
	// When not empty, the only companies the client sees.
	CompanyIds []string  `json:"companyIds"`
	Disabled   bool      `json:"disabled"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
	// The client's own rate limit; null when the installation's default applies.
	RateLimit *RateLimit `json:"rateLimit"`
}

// RateLimit mirrors the API's RateLimit: A token bucket: the client may send bursts of up to `burst`
// requests, refilled at `requestsPerSecond`. It is counted on each posgate instance separately.
type RateLimit struct {
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Burst             int     `json:"burst"`
}

// APIClientWithSecret mirrors the API's ClientWithSecret: A new OAuth client with its secret, shown this
// once.
type APIClientWithSecret struct {
	ClientID    string    `json:"clientId"`
	Name        string    `json:"name"`
	PosSystemID string    `json:"posSystemId"`
	Scopes      []Scope   `json:"scopes"`
	CompanyIds  []string  `json:"companyIds"`
	Disabled    bool      `json:"disabled"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// Always null for a new client (the default applies).
	RateLimit *RateLimit `json:"rateLimit"`
	// The client secret; store it now, posgate keeps only its hash. Empty
	// in a replay of the answer (an Idempotency-Key sent again).
	ClientSecret string `json:"clientSecret,omitempty"`
	// Only in a replay of the answer, in place of ClientSecret: how to get
	// a new secret (rotate it).
	SecretNote string `json:"secretNote,omitempty"`
}

// CreateAPIClientRequest mirrors the API's CreateClientRequest: An API client to register; unknown properties
// are answered 400.
type CreateAPIClientRequest struct {
	// Generated when absent or empty; else 1–128 bytes of printable text without `/`, `\`, `?`, `#`, `%` or
	// surrounding spaces.
	ClientID string `json:"clientId,omitempty"`
	// At most 200 bytes.
	Name string `json:"name,omitempty"`
	// Required with a POS scope (400 otherwise); the POS system must be registered (404 otherwise).
	PosSystemID string  `json:"posSystemId,omitempty"`
	Scopes      []Scope `json:"scopes"`
	// Restricts the client to these registered companies of its POS system (404 for others); needs `posSystemId`.
	CompanyIds []string `json:"companyIds,omitempty"`
}

// Session mirrors the API's Session: One customer interaction started at a terminal; its id links a later
// transaction.
type Session struct {
	SessionID     string    `json:"sessionId"`
	PosSystemID   string    `json:"posSystemId"`
	PosCompanyID  string    `json:"posCompanyId"`
	PosLocationID string    `json:"posLocationId"`
	TerminalID    string    `json:"terminalId"`
	CreatedAt     time.Time `json:"createdAt"`
	ExpiresAt     time.Time `json:"expiresAt"`
}

// SigningKey mirrors the API's SigningKey: A token signing key (the private half never leaves posgate).
type SigningKey struct {
	Kid       string    `json:"kid"`
	Algorithm string    `json:"algorithm"`
	CreatedAt time.Time `json:"createdAt"`
	// True for the newest key, the one that signs new tokens.
	Signing bool `json:"signing"`
}

// PromotionImport mirrors the API's PromotionImportDto: A promotion import. Unknown properties are ignored.
type PromotionImport struct {
	Items []PromotionItem `json:"items,omitempty"`
}

// PromotionItem mirrors the API's PromotionItemDto: One promotion. Which fields are required, and which
// values are accepted, is checked per item and reported in the result's `errors` (see the operation); a field
// of the wrong JSON type is answered 400.
type PromotionItem struct {
	// The promotion's identifier in the POS system; required, unique within the company.
	ID string `json:"id,omitempty"`
	// Required; at most 500 bytes.
	Name                string `json:"name,omitempty"`
	UseForAllCategories *bool  `json:"useForAllCategories,omitempty"`
	UseForAllProducts   *bool  `json:"useForAllProducts,omitempty"`
	// Locations of the company where the promotion applies; empty or missing means all of them.
	LocationIds []string `json:"locationIds,omitempty"`
	CategoryIds []string `json:"categoryIds,omitempty"`
	ProductIds  []string `json:"productIds,omitempty"`
	// Periods in which the promotion applies; none means always.
	PromotionValidities []PromotionValidity `json:"promotionValidities,omitempty"`
	PromotionResults    []PromotionResult   `json:"promotionResults,omitempty"`
	// Higher first on a line (default 0), from -1,000,000 to 1,000,000.
	Priority *int `json:"priority,omitempty"`
	// Whether it applies beside other stackable promotions on a line (default false: it applies alone).
	Stackable *bool `json:"stackable,omitempty"`
	// Condition: the quantity of the basket's lines it targets is at least this.
	MinQuantity *float64 `json:"minQuantity,omitempty"`
	// Condition: the basket's amount before discounts is at least this.
	MinBasketAmount *float64 `json:"minBasketAmount,omitempty"`
	// Condition: a presented redeemable coupon carries it.
	RequiresCoupon *bool `json:"requiresCoupon,omitempty"`
	// The promotion's budget (docs/api.md §9.7); nil for none.
	Redemption *PromotionRedemption `json:"redemption,omitempty"`
}

// PromotionRedemption mirrors the API's PromotionRedemption: a promotion's budget, the sales it may be applied
// to in all (Quantity) and per loyalty customer (PerCustomer); nil sets no limit. Used is how many sales
// applied it under the budget, in all: answered by the operator API, never sent (an import refuses it).
type PromotionRedemption struct {
	Quantity    *int64 `json:"quantity"`
	PerCustomer *int64 `json:"perCustomer"`
	Used        *int64 `json:"used,omitempty"`
}

// PromotionValidity mirrors the API's PromotionValidity: A period in which a promotion applies, bounds
// included; a missing bound is open.
type PromotionValidity struct {
	// An ISO 8601 date-time. With a zone offset or `Z` it is that instant; without one it is a wall-clock time
	// of the location the promotion is evaluated at, in the location's `timeZone` (else its company's, else
	// UTC), and a bare date is its local midnight. Anything else is answered 400.
	StartDate string `json:"startDate,omitempty"`
	// As startDate; not before it (an item error otherwise).
	EndDate    string               `json:"endDate,omitempty"`
	Recurrence *PromotionRecurrence `json:"recurrence,omitempty"`
}

// PromotionRecurrence mirrors the API's PromotionRecurrence: Narrows the period to a window repeated on some
// days: on each day in `daysOfWeek` (every day when empty), from the time of day of `startDate` to the time
// of day of `endDate` (excluded). Only the times of day are used; an `endDate` earlier in the day than
// `startDate` runs past midnight; equal times of day (or a missing one) mean the whole day. Times without an
// offset are read on the location's local clock and calendar (07:00–11:00 stays 07:00–11:00 local across
// daylight-saving changes); times with an offset are fixed instants of the UTC day. The two must be of the
// same kind (an item error otherwise).
type PromotionRecurrence struct {
	// Day names `Sunday`, `Monday`, `Tuesday`, `Wednesday`, `Thursday`, `Friday`, `Saturday` (exact spelling);
	// another value makes the item an error in the result, not the request a 400.
	DaysOfWeek []string `json:"daysOfWeek,omitempty"`
	// An ISO 8601 date-time, as in PromotionValidity; only its time of day counts.
	StartDate string `json:"startDate,omitempty"`
	// An ISO 8601 date-time, as in PromotionValidity; only its time of day counts.
	EndDate string `json:"endDate,omitempty"`
}

// PromotionResult mirrors the API's PromotionResult object.
type PromotionResult struct {
	// `Amount` (value off each unit), `Percentage` (value percent off), `FixedPrice` (the unit price becomes
	// value) or `BuyXGetY` (for each `buyQuantity` units bought, `getQuantity` units are value percent off);
	// anything else is an item error.
	PromotionType string `json:"promotionType,omitempty"`
	// At least 0, at most 100 for `Percentage` and `BuyXGetY` and 1,000,000,000 for `Amount` and `FixedPrice`,
	// else an item error; a missing value is 0.
	Value float64 `json:"value"`
	// `BuyXGetY` only (required, 1 to 10,000): the units bought per application.
	BuyQuantity *int `json:"buyQuantity,omitempty"`
	// `BuyXGetY` only (required, 1 to 10,000): the units discounted per application (the cheapest).
	GetQuantity *int `json:"getQuantity,omitempty"`
	// `BuyXGetY` only: the products whose units are discounted (missing: the lines the promotion targets).
	GetProductIds []string `json:"getProductIds,omitempty"`
	// `BuyXGetY` only: the most applications per basket (0 or missing: no limit).
	MaxApplications *int `json:"maxApplications,omitempty"`
}

// ImportResult mirrors the API's PromotionImportResult object.
type ImportResult struct {
	Status string `json:"status"`
	// Promotions created by this import.
	CreatedCount int `json:"createdCount"`
	// Promotions that replaced a stored one with the same id (changed or not).
	UpdatedCount int `json:"updatedCount"`
	// One entry per failed check; the item is not stored.
	Errors []ImportError `json:"errors"`
	// Doubtful items that are stored anyway (unknown category or product ids).
	Warnings []ImportWarning `json:"warnings"`
}

// ImportError mirrors the API's ImportError object.
type ImportError struct {
	// The item's `id` (empty when it has none).
	EntityID string `json:"entityId"`
	// The item's 1-based position in `items`.
	RowNumber int `json:"rowNumber"`
	// What is wrong, for people.
	ErrorMessage string `json:"errorMessage"`
	// The field and the value at fault, e.g. `promotionResults[0].value: -1`.
	ErrorDetails string `json:"errorDetails"`
}

// ImportWarning mirrors the API's ImportWarning object.
type ImportWarning struct {
	EntityID  string `json:"entityId"`
	RowNumber int    `json:"rowNumber"`
	Message   string `json:"message"`
	// The ids at fault, e.g. `categoryIds: "C9"; productIds: "SKU-404"`.
	Details string `json:"details"`
}

// Promotion mirrors the API's Promotion: A stored promotion, as imported (lists without repeats, daysOfWeek
// in week order, instants in UTC with Z, wall-clock times without an offset).
type Promotion struct {
	PosSystemID         string `json:"posSystemId"`
	PosCompanyID        string `json:"posCompanyId"`
	ID                  string `json:"id"`
	Name                string `json:"name"`
	UseForAllCategories bool   `json:"useForAllCategories"`
	UseForAllProducts   bool   `json:"useForAllProducts"`
	// Empty means every location of the company.
	LocationIds         []string                  `json:"locationIds"`
	CategoryIds         []string                  `json:"categoryIds"`
	ProductIds          []string                  `json:"productIds"`
	PromotionValidities []StoredPromotionValidity `json:"promotionValidities"`
	PromotionResults    []StoredPromotionResult   `json:"promotionResults"`
	Priority            int                       `json:"priority"`
	Stackable           bool                      `json:"stackable"`
	MinQuantity         float64                   `json:"minQuantity"`
	MinBasketAmount     float64                   `json:"minBasketAmount"`
	RequiresCoupon      bool                      `json:"requiresCoupon"`
	CreatedAt           time.Time                 `json:"createdAt"`
	// The time of the last import that changed it.
	UpdatedAt time.Time `json:"updatedAt"`
	// The promotion's budget (docs/api.md §9.7); nil when it has none.
	Redemption *PromotionRedemption `json:"redemption,omitempty"`
}

// StoredPromotionValidity mirrors the API's StoredPromotionValidity object.
type StoredPromotionValidity struct {
	// An instant in UTC (`2026-03-08T07:00:00Z`), or a wall-clock time of the location without an offset
	// (`2026-03-08T02:30:00`), as imported.
	StartDate *string `json:"startDate"`
	// As startDate.
	EndDate    *string                    `json:"endDate"`
	Recurrence *StoredPromotionRecurrence `json:"recurrence"`
}

// StoredPromotionRecurrence mirrors the API's StoredPromotionRecurrence object.
type StoredPromotionRecurrence struct {
	DaysOfWeek []string `json:"daysOfWeek"`
	// As the validity's startDate.
	StartDate *string `json:"startDate"`
	// As the validity's startDate.
	EndDate *string `json:"endDate"`
}

// StoredPromotionResult mirrors the API's StoredPromotionResult object.
type StoredPromotionResult struct {
	PromotionType string  `json:"promotionType"`
	Value         float64 `json:"value"`
	// 0 but for `BuyXGetY`.
	BuyQuantity int `json:"buyQuantity"`
	// 0 but for `BuyXGetY`.
	GetQuantity     int      `json:"getQuantity"`
	GetProductIds   []string `json:"getProductIds"`
	MaxApplications int      `json:"maxApplications"`
}

// PromotionPage mirrors the API's PromotionPageEnvelope object.
type PromotionPage struct {
	Data []Promotion `json:"data"`
	Page Page        `json:"page"`
}

// ProductImport mirrors the API's ProductImportDto: A products import. Unknown properties are ignored.
type ProductImport struct {
	Items []ProductItem `json:"items,omitempty"`
}

// ProductItem mirrors the API's ProductItemDto: One product; its checks are reported in the result's `errors`
// (see the operation); a field of the wrong JSON type is answered 400.
type ProductItem struct {
	// Required; the product's id in the POS system, unique within the company.
	ProductID string `json:"productId,omitempty"`
	// At most 500 bytes.
	ProductName string `json:"productName,omitempty"`
	// The id of the product's category (`posProductCategoryId`); one that is not in the catalogue is a warning.
	ProductCategoryID string `json:"productCategoryId,omitempty"`
	// The category's name, as the POS shows it; at most 500 bytes.
	ProductCategory string `json:"productCategory,omitempty"`
	// At most 500 bytes.
	Manufacturer string `json:"manufacturer,omitempty"`
	// The unit price, 0 to 1,000,000,000, read exactly and rounded half to even to 2 decimals.
	Price *float64 `json:"price,omitempty"`
}

// CategoryImport mirrors the API's CategoryImportDto: A categories import. Unknown properties are ignored.
type CategoryImport struct {
	Items []CategoryItem `json:"items,omitempty"`
}

// CategoryItem mirrors the API's CategoryItemDto: One category; its checks are reported in the result's
// `errors` (see the operation).
type CategoryItem struct {
	// Required; at most 500 bytes.
	Name string `json:"name,omitempty"`
	// The parent category's id; empty or absent for a top-level category.
	PosProductParentCategoryID string `json:"posProductParentCategoryId,omitempty"`
	// Required; the category's id in the POS system, unique within the company.
	PosProductCategoryID string `json:"posProductCategoryId,omitempty"`
	// The POS's catalogue this category belongs to (kept, not interpreted); at most 128 bytes.
	PosCatalogID string `json:"posCatalogId,omitempty"`
}

// Product mirrors the API's Product object.
type Product struct {
	PosSystemID       string `json:"posSystemId"`
	PosCompanyID      string `json:"posCompanyId"`
	ProductID         string `json:"productId"`
	ProductName       string `json:"productName"`
	ProductCategoryID string `json:"productCategoryId"`
	ProductCategory   string `json:"productCategory"`
	Manufacturer      string `json:"manufacturer"`
	// The unit price with 2 decimals; null when the POS gave none.
	Price     *float64  `json:"price"`
	CreatedAt time.Time `json:"createdAt"`
	// The time of the last import that changed the product.
	UpdatedAt time.Time `json:"updatedAt"`
}

// Category mirrors the API's Category object.
type Category struct {
	PosSystemID          string `json:"posSystemId"`
	PosCompanyID         string `json:"posCompanyId"`
	PosProductCategoryID string `json:"posProductCategoryId"`
	// Empty for a category that the operator's catalogue replacement added with its id only.
	Name string `json:"name"`
	// The parent's id; empty for a top-level category.
	PosProductParentCategoryID string    `json:"posProductParentCategoryId"`
	PosCatalogID               string    `json:"posCatalogId"`
	CreatedAt                  time.Time `json:"createdAt"`
	UpdatedAt                  time.Time `json:"updatedAt"`
}

// ProductPage mirrors the API's ProductPageEnvelope object.
type ProductPage struct {
	Data []Product `json:"data"`
	Page Page      `json:"page"`
}

// CategoryPage mirrors the API's CategoryPageEnvelope object.
type CategoryPage struct {
	Data []Category `json:"data"`
	Page Page       `json:"page"`
}

// EvaluateRequest mirrors the API's EvaluatePromotionsDto: A basket at a location. `posLocationId` is
// required (a missing, null or empty one is answered 400), and so are each line's `productId` and `price`.
// Unknown properties are ignored.
type EvaluateRequest struct {
	PosLocationID string `json:"posLocationId"`
	// Optional; when given, a terminal registered at the location (404 otherwise), whose state counts for
	// `posStatus`.
	TerminalID string `json:"terminalId,omitempty"`
	// When the sale happens; default now.
	TransactionDate *time.Time        `json:"transactionDate,omitempty"`
	Products        []EvaluateProduct `json:"products,omitempty"`
	CouponCodes     []string          `json:"couponCodes,omitempty"`
	Loyalty         *LoyaltyCard      `json:"loyalty,omitempty"`
	// The sale's customer, as a transaction gives it: its contacts find the loyalty user without a card
	// number, and are who the customer is known by for a coupon's owner e-mail or phone.
	Customer *Customer `json:"customer,omitempty"`
}

// LoyaltyCard mirrors the API's LoyaltyCard object.
type LoyaltyCard struct {
	// A loyalty user's id.
	CardNumber string `json:"cardNumber,omitempty"`
}

// EvaluateProduct mirrors the API's EvaluateProductDto object.
type EvaluateProduct struct {
	ProductID string `json:"productId"`
	// The line's category, an id or a name of the catalogue's; absent, the product's category in the catalogue.
	ProductCategory string `json:"productCategory,omitempty"`
	// Default 1; more than 0, at most 3 decimals.
	Quantity *float64 `json:"quantity,omitempty"`
	// The unit price, read exactly and rounded half to even to 2 decimals.
	Price float64 `json:"price"`
}

// Evaluation mirrors the API's Evaluation object.
type Evaluation struct {
	PosStatus string `json:"posStatus"`
	// The promotions that were best for some line, ordered by id.
	Promotions []AppliedPromotion `json:"promotions"`
	// The lines' amounts (price × quantity, each rounded half to even to the cent); posgate's addition.
	Subtotal float64 `json:"subtotal"`
	// What the promotions take off in all.
	TotalDiscount float64 `json:"totalDiscount"`
	// What the basket costs after its promotions (subtotal − totalDiscount).
	Total float64 `json:"total"`
	// Each line's breakdown, in the order of `products` (empty when `posStatus` is `Disabled`).
	Lines   []EvaluationLine   `json:"lines"`
	Coupons []CouponCheck      `json:"coupons"`
	Loyalty *EvaluationLoyalty `json:"loyalty"`
}

// EvaluationLine mirrors the API's EvaluationLine object.
type EvaluationLine struct {
	ProductID string `json:"productId"`
	// Price × quantity, rounded half to even to the cent.
	Subtotal float64 `json:"subtotal"`
	// What the promotions applied to the line take off it.
	Discount float64 `json:"discount"`
	// subtotal − discount.
	Total float64 `json:"total"`
	// The promotions applied to the line, in the order applied.
	Promotions []LinePromotion `json:"promotions"`
	// The first 3 promotions (in the line's ranking) that target the line but did not apply to it.
	NotApplied []LineRejection `json:"notApplied"`
}

// LinePromotion mirrors an entry of the API's EvaluationLine.promotions.
type LinePromotion struct {
	ID       string  `json:"id"`
	Discount float64 `json:"discount"`
	// The presented coupon that carries the promotion; null for none.
	CouponCode *string `json:"couponCode"`
}

// LineRejection mirrors an entry of the API's EvaluationLine.notApplied.
type LineRejection struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
	// For LowerPriority and SmallerDiscount, the applied promotion that excluded it.
	LostTo *string `json:"lostTo"`
}

// EvaluationLoyalty mirrors the API's EvaluationLoyalty object.
type EvaluationLoyalty struct {
	UserID string `json:"userId"`
	Points int    `json:"points"`
	Stamps int    `json:"stamps"`
	// Points a sale of this basket would earn (1 per whole currency unit paid).
	PointsToEarn int64 `json:"pointsToEarn"`
}

// AppliedPromotion mirrors the API's AppliedPromotion object.
type AppliedPromotion struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	PromotionType string  `json:"promotionType"`
	Value         float64 `json:"value"`
	// What it takes off the lines it was best for, in currency units with 2 decimals.
	Discount   float64  `json:"discount"`
	ProductIds []string `json:"productIds"`
}

// CouponCheck mirrors the API's CouponCheck object.
type CouponCheck struct {
	Code       string `json:"code"`
	Redeemable bool   `json:"redeemable"`
	// Why it could not be redeemed; null when it could.
	ErrorMessage *string `json:"errorMessage"`
	// The promotion a redeemable coupon carries; null for none (or when it is not redeemable).
	PromotionID *string `json:"promotionId"`
	// What the coupon's promotion takes off the basket (0 when it carries none or it did not apply).
	Discount float64 `json:"discount"`
}

// Catalogue mirrors the API's Catalogue object.
type Catalogue struct {
	PosSystemID  string `json:"posSystemId"`
	PosCompanyID string `json:"posCompanyId"`
	// Sorted, without repeats; empty means no catalogue of categories.
	CategoryIds []string `json:"categoryIds"`
	// Sorted, without repeats; empty means no catalogue of products.
	ProductIds []string `json:"productIds"`
}

// ReplaceCatalogueRequest mirrors the API's ReplaceCatalogueRequest: The new catalogue; an absent or null
// list is empty. Unknown properties are answered 400.
type ReplaceCatalogueRequest struct {
	CategoryIds []string `json:"categoryIds,omitempty"`
	ProductIds  []string `json:"productIds,omitempty"`
}

// CarouselRequest mirrors the API's CarouselDto: The location and terminal whose carousel is wanted. Both are
// required: a missing, null or empty value is answered 400. Unknown properties are ignored.
type CarouselRequest struct {
	// The location identifier in the POS system.
	PosLocationID string `json:"posLocationId"`
	// The terminal identifier in the POS system; the terminal must be registered with posgate.
	TerminalID string `json:"terminalId"`
}

// CarouselURL mirrors the API's CarouselResultDto object.
type CarouselURL struct {
	// The URL the customer-facing screen opens; empty unless `posStatus` is `Accepted`.
	URL       string    `json:"url"`
	PosStatus PosStatus `json:"posStatus"`
}

// PosReceiptPromotion mirrors the API's ReceiptPromotionDto: What to print on a receipt.
type PosReceiptPromotion struct {
	PrimaryText   string `json:"primaryText"`
	SecondaryText string `json:"secondaryText"`
	// The PNG QR code of the promotion's link (384 × 384 pixels for 58 mm paper; add `&size=80mm` for 576 × 576).
	ImageURL  string    `json:"imageUrl"`
	PosStatus PosStatus `json:"posStatus"`
}

// CarouselSlide mirrors the API's CarouselSlide: One slide as the carousel page shows it.
type CarouselSlide struct {
	SlideID string `json:"slideId"`
	// Empty for a text-only slide.
	ImageURL        string `json:"imageUrl"`
	Title           string `json:"title"`
	Text            string `json:"text"`
	DurationSeconds int    `json:"durationSeconds"`
}

// CarouselContent mirrors the API's CarouselContent object.
type CarouselContent struct {
	PosStatus PosStatus `json:"posStatus"`
	// How long the page waits before asking again.
	PollSeconds int             `json:"pollSeconds"`
	Slides      []CarouselSlide `json:"slides"`
}

// ImpressionRequest mirrors the API's ImpressionRequest object.
type ImpressionRequest struct {
	SlideID string `json:"slideId"`
}

// ImpressionResult mirrors the API's ImpressionResult object.
type ImpressionResult struct {
	SlideID string `json:"slideId"`
	// False while the place is disabled (nothing is counted then).
	Recorded bool `json:"recorded"`
}

// Slide mirrors the API's Slide: A carousel slide of a company.
type Slide struct {
	PosSystemID     string    `json:"posSystemId"`
	PosCompanyID    string    `json:"posCompanyId"`
	SlideID         string    `json:"slideId"`
	Position        int       `json:"position"`
	ImageURL        string    `json:"imageUrl"`
	Title           string    `json:"title"`
	Text            string    `json:"text"`
	DurationSeconds int       `json:"durationSeconds"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// CreateSlideRequest mirrors the API's CreateSlideRequest: A slide to add; unknown properties are answered
// 400, and a property that may be left out may also be null. A slide needs an image, a title or a text
// (non-blank).
type CreateSlideRequest struct {
	// Generated when absent or empty; else unique in the company, 1–128 bytes of printable text without `/`, `\`,
	// `?`, `#`, `%` or surrounding spaces.
	SlideID string `json:"slideId,omitempty"`
	// Showing order; absent or 0 puts the slide after the last one.
	Position *int `json:"position,omitempty"`
	// An absolute http(s) URL without spaces (at most 2048 bytes) or a `data:image/png|jpeg|gif|webp|svg+xml` URL
	// of at most 16 KiB.
	ImageURL string `json:"imageUrl,omitempty"`
	// At most 200 bytes.
	Title string `json:"title,omitempty"`
	// At most 1000 bytes.
	Text            string `json:"text,omitempty"`
	DurationSeconds *int   `json:"durationSeconds,omitempty"`
}

// UpdateSlideRequest mirrors the API's UpdateSlideRequest: The fields to change (absent or null keep their
// value); unknown properties are answered 400.
type UpdateSlideRequest struct {
	Position *int `json:"position,omitempty"`
	// As on creation; `""` removes the image.
	ImageURL        *string `json:"imageUrl,omitempty"`
	Title           *string `json:"title,omitempty"`
	Text            *string `json:"text,omitempty"`
	DurationSeconds *int    `json:"durationSeconds,omitempty"`
}

// CarouselSettings mirrors the API's CarouselSettings object.
type CarouselSettings struct {
	PosSystemID  string `json:"posSystemId"`
	PosCompanyID string `json:"posCompanyId"`
	// The external carousel URL template; empty for posgate's own page.
	URLTemplate string `json:"urlTemplate"`
	// Null when the company never set its carousel.
	UpdatedAt *time.Time `json:"updatedAt"`
}

// PutCarouselSettingsRequest mirrors the API's PutCarouselSettingsRequest: The external carousel URL
// template; unknown properties are answered 400.
type PutCarouselSettingsRequest struct {
	// An absolute http(s) URL without spaces once the placeholders `{posSystemId}`, `{posCompanyId}`,
	// `{posLocationId}` and `{terminalId}` are filled in, with no other `{` or `}`; `""` for posgate's own page.
	URLTemplate string `json:"urlTemplate"`
}

// ReceiptPromotion mirrors the API's ReceiptPromotion: A receipt promotion of a location, or the company
// default (`posLocationId` "").
type ReceiptPromotion struct {
	PosSystemID  string `json:"posSystemId"`
	PosCompanyID string `json:"posCompanyId"`
	// Empty for the company default.
	PosLocationID string `json:"posLocationId"`
	PrimaryText   string `json:"primaryText"`
	SecondaryText string `json:"secondaryText"`
	// Where the QR code leads.
	TargetURL string `json:"targetUrl"`
	// The QR code image, as the receipt promotion endpoint answers it.
	ImageURL  string    `json:"imageUrl"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// PutReceiptPromotionRequest mirrors the API's PutReceiptPromotionRequest: A receipt promotion; unknown
// properties are answered 400.
type PutReceiptPromotionRequest struct {
	// The first line; not blank, at most 500 bytes.
	PrimaryText string `json:"primaryText"`
	// The second line, at most 500 bytes.
	SecondaryText string `json:"secondaryText,omitempty"`
	// The absolute http(s) URL (without spaces, at most 500 bytes) the QR code leads to.
	TargetURL string `json:"targetUrl"`
}

// ImpressionReport mirrors the API's ImpressionReport object.
type ImpressionReport struct {
	PosSystemID  string `json:"posSystemId"`
	PosCompanyID string `json:"posCompanyId"`
	From         string `json:"from"`
	To           string `json:"to"`
	// All impressions of the report.
	Impressions int64                 `json:"impressions"`
	Terminals   []TerminalImpressions `json:"terminals"`
}

// TerminalImpressions mirrors the API's TerminalImpressions object.
type TerminalImpressions struct {
	PosLocationID string `json:"posLocationId"`
	TerminalID    string `json:"terminalId"`
	Impressions   int64  `json:"impressions"`
	// Each slide's impressions on this terminal, by slide id.
	Slides []SlideImpressions `json:"slides"`
}

// SlideImpressions mirrors the API's SlideImpressions object.
type SlideImpressions struct {
	SlideID     string `json:"slideId"`
	Impressions int64  `json:"impressions"`
}

// TransactionRequest mirrors the API's CreatePosTransactionDto: A sale or refund (docs/api.md §13.1): the
// real service's "Create POS Transaction" with posgate's `originalTransactionId`, `couponCodes` and a
// product's `price`. `sessionId` is required except for a refund. Unknown properties are ignored; `null` is
// the same as leaving a property out.
type TransactionRequest struct {
	// The session of the interaction (startInteraction); required except for a refund.
	SessionID string `json:"sessionId,omitempty"`
	// The POS's own id of the transaction, unique in the company; the key of idempotency.
	TransactionID string       `json:"transactionId"`
	TerminalID    string       `json:"terminalId"`
	PosLocationID string       `json:"posLocationId"`
	Customer      *Customer    `json:"customer,omitempty"`
	SalesPerson   *SalesPerson `json:"salesPerson,omitempty"`
	// Stored, otherwise ignored.
	PurchaseName string `json:"purchaseName,omitempty"`
	// Stored, otherwise ignored.
	PurchaseID string `json:"purchaseId,omitempty"`
	// Stored, otherwise ignored.
	PurchaseQuantity string `json:"purchaseQuantity,omitempty"`
	// Stored, otherwise ignored.
	PurchasePrice string `json:"purchasePrice,omitempty"`
	// Absent means `Undefined` (a sale); a negative amount makes a `Refund` whatever the type.
	TransactionType   string  `json:"transactionType,omitempty"`
	TransactionAmount float64 `json:"transactionAmount"`
	// At most 5 minutes in the future and at most `--transaction-max-age` (30 days) old.
	TransactionDate time.Time            `json:"transactionDate"`
	Products        []TransactionProduct `json:"products,omitempty"`
	Loyalty         *LoyaltyCard         `json:"loyalty,omitempty"`
	// A refund's sale (its `transactionId`); required for a refund, refused otherwise.
	OriginalTransactionID string `json:"originalTransactionId,omitempty"`
	// Codes to redeem with this sale (any case); refused on a refund.
	CouponCodes []string `json:"couponCodes,omitempty"`
	// The offline kit a sale made offline redeemed its coupons under (docs/api.md §24.5).
	Offline *OfflineRef `json:"offline,omitempty"`
}

// OfflineRef names the offline kit of a sale made offline: the kit's jti.
type OfflineRef struct {
	KitID string `json:"kitId"`
}

// Customer mirrors the API's Customer object.
type Customer struct {
	ID        string     `json:"id,omitempty"`
	FirstName string     `json:"firstName,omitempty"`
	LastName  string     `json:"lastName,omitempty"`
	BirthDate *time.Time `json:"birthDate,omitempty"`
	// Either shape: `{"email","phone"}` or `{"type":"Email"|"Phone","value"}`.
	Contacts []CustomerContact `json:"contacts,omitempty"`
}

// SalesPerson mirrors the API's SalesPerson object.
type SalesPerson struct {
	ID        string `json:"id,omitempty"`
	FirstName string `json:"firstName,omitempty"`
	LastName  string `json:"lastName,omitempty"`
}

// TransactionProduct mirrors the API's TransactionProduct object.
type TransactionProduct struct {
	ProductID       string   `json:"productId,omitempty"`
	ProductName     string   `json:"productName,omitempty"`
	Manufacturer    string   `json:"manufacturer,omitempty"`
	ProductCategory string   `json:"productCategory,omitempty"`
	Quantity        *float64 `json:"quantity,omitempty"`
	Price           float64  `json:"price"`
}

// CustomerContact mirrors the API's CustomerContact object.
type CustomerContact struct {
	Email string `json:"email,omitempty"`
	Phone string `json:"phone,omitempty"`
	Type  string `json:"type,omitempty"`
	Value string `json:"value,omitempty"`
}

// TransactionResult mirrors the API's PosTransactionDto: The answer's data. `id` is null (and nothing is
// recorded) with `posStatus` `Disabled`.
type TransactionResult struct {
	ID              *string   `json:"id"`
	TransactionID   string    `json:"transactionId"`
	SessionID       *string   `json:"sessionId"`
	TransactionType string    `json:"transactionType"`
	PosStatus       PosStatus `json:"posStatus"`
	// What the transaction did to its customer's balances; null when no customer was matched.
	Loyalty *TransactionLoyalty `json:"loyalty"`
	Coupons []TransactionCoupon `json:"coupons"`
	// The promotions the sale applied: its settlement's evaluation (docs/api.md §13.9, §18); empty for a
	// refund and a Disabled answer.
	Promotions  []AppliedPromotion `json:"promotions"`
	CfsTemplate CfsTemplate        `json:"cfsTemplate"`
	Receipt     Receipt            `json:"receipt"`
	// What posgate computed for the sale's priced lines and how it compares with transactionAmount (docs/api.md
	// §13.9); nil for a refund and a sale without a product with an id and a price.
	Settlement *TransactionSettlement `json:"settlement,omitempty"`
}

// TransactionSettlement mirrors the API's settlement of a sale: amounts in currency units with 2 decimals.
type TransactionSettlement struct {
	// The priced lines' amounts.
	Subtotal float64 `json:"subtotal"`
	// What the applied promotions take off.
	TotalDiscount float64 `json:"totalDiscount"`
	// Subtotal less totalDiscount.
	Total float64 `json:"total"`
	// TransactionAmount less total.
	Difference float64 `json:"difference"`
	// Whether difference is not 0.
	Mismatch bool `json:"mismatch"`
}

// TransactionLoyalty mirrors the API's TransactionLoyalty: What the transaction did to its customer's
// balances; null when no customer was matched.
type TransactionLoyalty struct {
	UserID       string `json:"userId"`
	PointsEarned int    `json:"pointsEarned"`
	StampsEarned int    `json:"stampsEarned"`
	// The balance after the transaction; negative when a refund took back points already spent.
	Points int `json:"points"`
	Stamps int `json:"stamps"`
}

// TransactionCoupon mirrors the API's TransactionCoupon object.
type TransactionCoupon struct {
	Code         string  `json:"code"`
	Status       string  `json:"status"`
	ErrorMessage *string `json:"errorMessage"`
}

// CfsTemplate mirrors the API's CfsTemplate object.
type CfsTemplate struct {
	// The carousel URL the carousel endpoint gives this terminal; `""` when the carousel is disabled.
	CfsCarouselURL string `json:"cfsCarouselUrl"`
}

// Receipt mirrors the API's Receipt object.
type Receipt struct {
	PrimaryText   string    `json:"primaryText"`
	SecondaryText string    `json:"secondaryText"`
	ImageURL      string    `json:"imageUrl"`
	PosStatus     PosStatus `json:"posStatus"`
	// The receipt's loyalty line, e.g. "+12 points, balance 132"; `""` without a customer.
	LoyaltyText string `json:"loyaltyText"`
}

// BatchRequest mirrors the API's PosTransactionBatchDto: Up to 1,000 transactions recorded offline; each
// item's `sessionId` is optional.
type BatchRequest struct {
	Items []TransactionRequest `json:"items,omitempty"`
}

// ValidateCouponRequest mirrors the API's ValidateCouponByTransactionDto: The real service's names, with
// posgate's `code` (`campaignId` is read as a code when `code` is absent).
type ValidateCouponRequest struct {
	SessionID     string `json:"sessionId"`
	TransactionID string `json:"transactionId"`
	Code          string `json:"code,omitempty"`
	CampaignID    string `json:"campaignId,omitempty"`
	// Who claims the coupon; when given, every field given must be the coupon owner's.
	CouponUser *CouponUser `json:"couponUser,omitempty"`
}

// CouponUser mirrors the API's CouponUser: Who claims the coupon; when given, every field given must be the
// coupon owner's.
type CouponUser struct {
	FirstName string `json:"firstName,omitempty"`
	LastName  string `json:"lastName,omitempty"`
	Gender    string `json:"gender,omitempty"`
	Phone     string `json:"phone,omitempty"`
	Email     string `json:"email,omitempty"`
}

// CouponValidationResult mirrors the API's CouponValidationResult object.
type CouponValidationResult struct {
	PosStatus PosStatus        `json:"posStatus"`
	Data      CouponValidation `json:"data"`
}

// CouponValidation mirrors the API's CouponValidation object.
type CouponValidation struct {
	ExternalSessionID string    `json:"externalSessionId"`
	Status            string    `json:"status"`
	ValidationDate    time.Time `json:"validationDate"`
	ErrorMessage      *string   `json:"errorMessage"`
	// The promotion the coupon carries (redeemed or rejected); null for none or an unknown coupon.
	PromotionID *string `json:"promotionId"`
	// What the coupon's promotion takes off the transaction's priced lines, evaluated at the transaction's date and location; 0 when the coupon is not redeemed, carries none, the promotion does not apply or no line is priced.
	Discount float64 `json:"discount"`
}

// LoyaltyProgram mirrors the API's LoyaltyProgram object.
type LoyaltyProgram struct {
	PosSystemID  string `json:"posSystemId"`
	PosCompanyID string `json:"posCompanyId"`
	// Points per currency unit of a sale (two decimals); points earned = floor(amount × rate).
	PointsPerCurrencyUnit float64 `json:"pointsPerCurrencyUnit"`
	StampsPerSale         int     `json:"stampsPerSale"`
	MinimumAmountForStamp float64 `json:"minimumAmountForStamp"`
	// Enrol a customer whom no loyalty user matches (by card number, e-mail or phone).
	AutoEnroll bool `json:"autoEnroll"`
	// When the operator set it; null for posgate's defaults.
	UpdatedAt *time.Time `json:"updatedAt"`
}

// PutLoyaltyProgramRequest mirrors the API's PutLoyaltyProgramRequest: The whole program; a field left out
// takes its default.
type PutLoyaltyProgramRequest struct {
	PointsPerCurrencyUnit float64 `json:"pointsPerCurrencyUnit"`
	StampsPerSale         int     `json:"stampsPerSale"`
	MinimumAmountForStamp float64 `json:"minimumAmountForStamp"`
	AutoEnroll            bool    `json:"autoEnroll"`
}

// Transaction mirrors the API's Transaction: A recorded transaction as the operator sees it; `request` is the
// canonical request that recorded it.
type Transaction struct {
	ID              string `json:"id"`
	PosSystemID     string `json:"posSystemId"`
	PosCompanyID    string `json:"posCompanyId"`
	PosLocationID   string `json:"posLocationId"`
	TerminalID      string `json:"terminalId"`
	TransactionID   string `json:"transactionId"`
	SessionID       string `json:"sessionId"`
	TransactionType string `json:"transactionType"`
	// Negative for a refund.
	TransactionAmount     float64           `json:"transactionAmount"`
	RefundedAmount        float64           `json:"refundedAmount"`
	TransactionDate       time.Time         `json:"transactionDate"`
	OriginalID            string            `json:"originalId"`
	OriginalTransactionID string            `json:"originalTransactionId"`
	UserID                string            `json:"userId"`
	PointsEarned          int               `json:"pointsEarned"`
	StampsEarned          int               `json:"stampsEarned"`
	RedeemedCoupons       []string          `json:"redeemedCoupons"`
	Request               json.RawMessage   `json:"request"`
	Answer                TransactionResult `json:"answer"`
	CreatedAt             time.Time         `json:"createdAt"`
}

// RefundTransactionRequest mirrors the API's RefundTransactionRequest object.
type RefundTransactionRequest struct {
	// The refund's own id (the same id again changes nothing).
	TransactionID string `json:"transactionId"`
	// Default what is left of the sale.
	Amount float64 `json:"amount,omitempty"`
	// Default now.
	TransactionDate *time.Time `json:"transactionDate,omitempty"`
}

// TransactionSummary mirrors the API's TransactionSummary object.
type TransactionSummary struct {
	ID                string    `json:"id"`
	TransactionID     string    `json:"transactionId"`
	TransactionType   string    `json:"transactionType"`
	TransactionAmount float64   `json:"transactionAmount"`
	TransactionDate   time.Time `json:"transactionDate"`
	PointsEarned      int       `json:"pointsEarned"`
	StampsEarned      int       `json:"stampsEarned"`
}

// CouponRedemption mirrors the API's CouponRedemption: The transaction that redeemed the coupon.
type CouponRedemption struct {
	ID            string    `json:"id"`
	TransactionID string    `json:"transactionId"`
	RedeemedAt    time.Time `json:"redeemedAt"`
}

// BatchResult mirrors the API's BatchResult object.
type BatchResult struct {
	Status         string            `json:"status"`
	CreatedCount   int               `json:"createdCount"`
	DuplicateCount int               `json:"duplicateCount"`
	Errors         []ImportError     `json:"errors"`
	Results        []BatchItemResult `json:"results"`
}

// BatchItemResult mirrors the API's BatchItemResult object.
type BatchItemResult struct {
	TransactionID string `json:"transactionId"`
	RowNumber     int    `json:"rowNumber"`
	Status        string `json:"status"`
	// The item's answer (`Created`, `Duplicate`, or a disabled place's); null for another rejected item.
	Data *TransactionResult `json:"data"`
}

// OfflineConflictPage is a page of a company's offline conflicts.
type OfflineConflictPage struct {
	Conflicts []OfflineConflict `json:"conflicts"`
	Page      Page              `json:"page"`
}

// OfflineConflict is a coupon redeemed offline under a kit's allowance that
// the replayed sale could not redeem, honoured all the same (docs/api.md
// §24.6).
type OfflineConflict struct {
	// The kit (its jti) whose allowance covered the coupon.
	KitID         string `json:"kitId"`
	PosSystemID   string `json:"posSystemId"`
	PosCompanyID  string `json:"posCompanyId"`
	PosLocationID string `json:"posLocationId"`
	TerminalID    string `json:"terminalId"`
	// The offline sale (the POS's id).
	TransactionID string `json:"transactionId"`
	Code          string `json:"code"`
	// Why the sale could not redeem the coupon at its replay.
	Conflict        string    `json:"conflict"`
	TransactionDate time.Time `json:"transactionDate"`
	// When the replay recorded it.
	RecordedAt time.Time `json:"recordedAt"`
}

// TransactionPage mirrors the API's TransactionPage object.
type TransactionPage struct {
	Transactions []Transaction `json:"transactions"`
	Page         Page          `json:"page"`
}

// SandboxClock is a demo server's sandbox clock (docs/api.md §20): the time
// every rule of the server reads, the real time, and how far apart they are.
type SandboxClock struct {
	Now           time.Time `json:"now"`
	RealNow       time.Time `json:"realNow"`
	OffsetSeconds int64     `json:"offsetSeconds"`
}

// Recording is what a demo server recorded of one client's calls, oldest
// first (docs/api.md §20.3): what posgate conformance grade grades.
type Recording struct {
	ClientID string         `json:"clientId"`
	Capacity int            `json:"capacity"`
	Dropped  int64          `json:"dropped"`
	Calls    []RecordedCall `json:"calls"`
}

// RecordedToken is an access token as a recording shows it: its
// fingerprint and lifetime, never the token.
type RecordedToken struct {
	Fingerprint   string    `json:"fingerprint"`
	IssuedAt      time.Time `json:"issuedAt"`
	ExpiresAt     time.Time `json:"expiresAt"`
	RealExpiresAt time.Time `json:"realExpiresAt"`
}

// RecordedCall is one recorded call: At by the sandbox clock, RealAt by
// the real one; Token the bearer token it carried, Issued the token a token
// request issued.
type RecordedCall struct {
	Seq                  int64             `json:"seq"`
	At                   time.Time         `json:"at"`
	RealAt               time.Time         `json:"realAt"`
	DurationMs           float64           `json:"durationMs"`
	Method               string            `json:"method"`
	Path                 string            `json:"path"`
	Query                string            `json:"query"`
	RequestHeaders       map[string]string `json:"requestHeaders"`
	Token                *RecordedToken    `json:"token"`
	RequestBody          string            `json:"requestBody"`
	RequestBodyTruncated bool              `json:"requestBodyTruncated"`
	Status               int               `json:"status"`
	ClientGone           bool              `json:"clientGone"`
	AnswerHeaders        map[string]string `json:"answerHeaders"`
	AnswerBody           string            `json:"answerBody"`
	AnswerBodyTruncated  bool              `json:"answerBodyTruncated"`
	Issued               *RecordedToken    `json:"issued"`
}

// SetSandboxClockRequest moves the sandbox clock forward to Now (RFC 3339).
type SetSandboxClockRequest struct {
	Now string `json:"now"`
}

// AdvanceSandboxClockRequest moves the sandbox clock forward by Seconds.
type AdvanceSandboxClockRequest struct {
	Seconds int64 `json:"seconds"`
}

// AuditActor is who made an audited change: its subject and kind, and the
// API client it acted through.
type AuditActor struct {
	Subject  string `json:"subject"`
	Kind     string `json:"kind"`
	ClientID string `json:"clientId"`
}

// AuditTarget is what an audited change was made to, and where it belongs.
type AuditTarget struct {
	Type          string `json:"type"`
	ID            string `json:"id"`
	PosSystemID   string `json:"posSystemId"`
	PosCompanyID  string `json:"posCompanyId"`
	PosLocationID string `json:"posLocationId"`
}

// AuditEntry is one operator write as the audit log keeps it (docs/api.md
// §22); Before and After are the resource as JSON (null where it did not or
// does not exist).
type AuditEntry struct {
	ID        string          `json:"id"`
	Time      time.Time       `json:"time"`
	Actor     AuditActor      `json:"actor"`
	Channel   string          `json:"channel"`
	Action    string          `json:"action"`
	Target    AuditTarget     `json:"target"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
	TraceID   string          `json:"traceId"`
	UserAgent string          `json:"userAgent"`
}

// AuditPage is one page of the audit log, newest first; NextCursor asks for
// the next, older page (nil on the last).
type AuditPage struct {
	Entries    []AuditEntry `json:"entries"`
	NextCursor *string      `json:"nextCursor"`
}

// Person is someone who signs in (docs/api.md §21.1): an operator of the
// portal and the browser flows, with a role that bounds their reach. The
// password is never shown.
type Person struct {
	PersonID    string    `json:"personId"`
	Email       string    `json:"email"`
	Name        string    `json:"name"`
	Role        string    `json:"role"`
	PosSystemID string    `json:"posSystemId"`
	CompanyIds  []string  `json:"companyIds"`
	LocationIds []string  `json:"locationIds"`
	Disabled    bool      `json:"disabled"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// CreatePersonRequest registers a person: Role is admin, pos-admin,
// company-admin or location-manager; every role but admin names its POS
// system, a company-admin its companies, a location-manager its locations.
type CreatePersonRequest struct {
	Email       string   `json:"email"`
	Name        string   `json:"name"`
	Password    string   `json:"password"`
	Role        string   `json:"role"`
	PosSystemID string   `json:"posSystemId,omitempty"`
	CompanyIds  []string `json:"companyIds,omitempty"`
	LocationIds []string `json:"locationIds,omitempty"`
}

// WebhookEndpoint is a company's webhook endpoint (docs/api.md §19.1); its
// secret is shown only when generated (WebhookEndpointWithSecret).
type WebhookEndpoint struct {
	ID           string   `json:"id"`
	PosSystemID  string   `json:"posSystemId"`
	PosCompanyID string   `json:"posCompanyId"`
	URL          string   `json:"url"`
	EventTypes   []string `json:"eventTypes"`
	Enabled      bool     `json:"enabled"`
	// Why posgate disabled the endpoint itself (a 410 answer); empty
	// otherwise.
	DisabledReason string `json:"disabledReason"`
	// Until when the secret before the last rotation still signs; nil when
	// none does.
	PreviousSecretUntil *time.Time `json:"previousSecretUntil"`
	CreatedAt           time.Time  `json:"createdAt"`
	UpdatedAt           time.Time  `json:"updatedAt"`
}

// WebhookEndpointWithSecret is a webhook endpoint with its new signing
// secret (whsec_…), shown this once: at registration and at rotation.
type WebhookEndpointWithSecret struct {
	WebhookEndpoint
	// Empty in a replay of the answer (an Idempotency-Key sent again).
	Secret string `json:"secret,omitempty"`
	// Only in a replay of the answer, in place of Secret: how to get a new
	// secret (rotate it).
	SecretNote string `json:"secretNote,omitempty"`
}

// CreateWebhookEndpointRequest registers an endpoint; Enabled nil is true.
type CreateWebhookEndpointRequest struct {
	URL        string   `json:"url"`
	EventTypes []string `json:"eventTypes"`
	Enabled    *bool    `json:"enabled,omitempty"`
}

// UpdateWebhookEndpointRequest changes an endpoint; nil fields stay as they
// are.
type UpdateWebhookEndpointRequest struct {
	URL        *string  `json:"url,omitempty"`
	EventTypes []string `json:"eventTypes,omitempty"`
	Enabled    *bool    `json:"enabled,omitempty"`
}

// WebhookDelivery is one event on its way to one endpoint.
type WebhookDelivery struct {
	ID         int64  `json:"id"`
	EndpointID string `json:"endpointId"`
	// The event's id, sent as webhook-id.
	EventID   string `json:"eventId"`
	EventType string `json:"eventType"`
	// The loyalty user the event concerns, empty for none.
	UserID        string     `json:"userId"`
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"nextAttemptAt"`
	LastAttemptAt *time.Time `json:"lastAttemptAt"`
	// The last answer's HTTP status; 0 when none came.
	LastStatusCode int    `json:"lastStatusCode"`
	LastError      string `json:"lastError"`
	// The first 1 KiB of the last answer's body.
	LastResponse string    `json:"lastResponse"`
	CreatedAt    time.Time `json:"createdAt"`
}

// WebhookDeliveryPage is a page of an endpoint's deliveries, newest first.
type WebhookDeliveryPage struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
	Page       Page              `json:"page"`
}

// WebhookRedelivered says how many dead deliveries are pending again.
type WebhookRedelivered struct {
	Redelivered int `json:"redelivered"`
}

// WebhookTestEvent is the webhook.test event written for an endpoint; its
// EventID is the webhook-id the receiver gets.
type WebhookTestEvent struct {
	EventID string `json:"eventId"`
}

// PutClientRedirectURIsRequest is the whole list of a browser client's
// redirect URIs: absolute https URLs (http on the loopback host) without a
// fragment.
type PutClientRedirectURIsRequest struct {
	RedirectURIs []string `json:"redirectUris"`
}

// ClientRedirectURIs is a browser client's redirect URIs as registered.
type ClientRedirectURIs struct {
	ClientID     string   `json:"clientId"`
	RedirectURIs []string `json:"redirectUris"`
}
