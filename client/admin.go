package client

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// Admin is the operator API (docs/api.md §10), reached as Client.Admin. Its
// methods need a token of scope admin.
type Admin struct{ c *Client }

// api is a request to the API listener; every POST of the API takes an
// Idempotency-Key (docs/api.md §14).
func (c *Client) api(method, p string, body any) request {
	return request{method: method, base: c.baseURL, path: p, body: body, idempotencyKey: method == "POST"}
}

// PageOptions pages a list: Page from 1, PageSize within the operation's
// bounds; zero leaves either to posgate's default.
type PageOptions struct {
	Page, PageSize int
}

func (p PageOptions) set(q url.Values) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if p.Page != 0 {
		q.Set("page", strconv.Itoa(p.Page))
	}
	if p.PageSize != 0 {
		q.Set("pageSize", strconv.Itoa(p.PageSize))
	}
	return q
}

func setIf(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

const (
	systemPath   = "/admin/v1/pos-systems/%s"
	companyPath  = "/admin/v1/pos-systems/%s/companies/%s"
	locationPath = "/admin/v1/pos-systems/%s/locations/%s"
)

// --- POS systems, companies, locations, terminals

// CreatePosSystem registers a POS system (operation createPosSystem).
func (a *Admin) CreatePosSystem(ctx context.Context, r CreatePosSystemRequest) (*PosSystem, error) {
	return call[PosSystem](ctx, a.c, a.c.api("POST", "/admin/v1/pos-systems", r))
}

// ListPosSystems answers every POS system (operation listPosSystems).
func (a *Admin) ListPosSystems(ctx context.Context) ([]PosSystem, error) {
	return list[PosSystem](ctx, a.c, a.c.api("GET", "/admin/v1/pos-systems", nil))
}

// GetPosSystem answers one POS system (operation getPosSystem).
func (a *Admin) GetPosSystem(ctx context.Context, posSystemID string) (*PosSystem, error) {
	return call[PosSystem](ctx, a.c, a.c.api("GET", path(systemPath, posSystemID), nil))
}

// CreateCompany registers a company of a POS system (operation
// createCompany).
func (a *Admin) CreateCompany(ctx context.Context, posSystemID string, r CreateCompanyRequest) (*Company, error) {
	return call[Company](ctx, a.c, a.c.api("POST", path(systemPath+"/companies", posSystemID), r))
}

// ListCompanies answers a POS system's companies (operation listCompanies).
func (a *Admin) ListCompanies(ctx context.Context, posSystemID string) ([]Company, error) {
	return list[Company](ctx, a.c, a.c.api("GET", path(systemPath+"/companies", posSystemID), nil))
}

// GetCompany answers one company (operation getCompany).
func (a *Admin) GetCompany(ctx context.Context, posSystemID, posCompanyID string) (*Company, error) {
	return call[Company](ctx, a.c, a.c.api("GET", path(companyPath, posSystemID, posCompanyID), nil))
}

// UpdateCompany changes a company's name, status or feature switches; nil
// fields stay as they are (operation updateCompany).
func (a *Admin) UpdateCompany(ctx context.Context, posSystemID, posCompanyID string, r UpdateCompanyRequest) (*Company, error) {
	return call[Company](ctx, a.c, a.c.api("PATCH", path(companyPath, posSystemID, posCompanyID), r))
}

// CreateLocation registers a location of a company (operation
// createLocation).
func (a *Admin) CreateLocation(ctx context.Context, posSystemID string, r CreateLocationRequest) (*Location, error) {
	return call[Location](ctx, a.c, a.c.api("POST", path(systemPath+"/locations", posSystemID), r))
}

// ListLocations answers a POS system's locations, only posCompanyID's when it
// is not empty (operation listLocations).
func (a *Admin) ListLocations(ctx context.Context, posSystemID, posCompanyID string) ([]Location, error) {
	r := a.c.api("GET", path(systemPath+"/locations", posSystemID), nil)
	if posCompanyID != "" {
		r.query = url.Values{"posCompanyId": {posCompanyID}}
	}
	return list[Location](ctx, a.c, r)
}

// GetLocation answers one location (operation getLocation).
func (a *Admin) GetLocation(ctx context.Context, posSystemID, posLocationID string) (*Location, error) {
	return call[Location](ctx, a.c, a.c.api("GET", path(locationPath, posSystemID, posLocationID), nil))
}

// UpdateLocation changes a location's name or status (operation
// updateLocation).
func (a *Admin) UpdateLocation(ctx context.Context, posSystemID, posLocationID string, r UpdateLocationRequest) (*Location, error) {
	return call[Location](ctx, a.c, a.c.api("PATCH", path(locationPath, posSystemID, posLocationID), r))
}

// CreateTerminal registers a terminal at a location (operation
// createTerminal).
func (a *Admin) CreateTerminal(ctx context.Context, posSystemID, posLocationID string, r CreateTerminalRequest) (*Terminal, error) {
	return call[Terminal](ctx, a.c, a.c.api("POST", path(locationPath+"/terminals", posSystemID, posLocationID), r))
}

// ListTerminals answers a location's terminals (operation listTerminals).
func (a *Admin) ListTerminals(ctx context.Context, posSystemID, posLocationID string) ([]Terminal, error) {
	return list[Terminal](ctx, a.c, a.c.api("GET", path(locationPath+"/terminals", posSystemID, posLocationID), nil))
}

// GetTerminal answers one terminal (operation getTerminal).
func (a *Admin) GetTerminal(ctx context.Context, posSystemID, posLocationID, terminalID string) (*Terminal, error) {
	return call[Terminal](ctx, a.c, a.c.api("GET", path(locationPath+"/terminals/%s", posSystemID, posLocationID, terminalID), nil))
}

// DisableTerminal disables a terminal (operation disableTerminal).
func (a *Admin) DisableTerminal(ctx context.Context, posSystemID, posLocationID, terminalID string) (*Terminal, error) {
	return call[Terminal](ctx, a.c, a.c.api("POST", path(locationPath+"/terminals/%s/disable", posSystemID, posLocationID, terminalID), nil))
}

// EnableTerminal enables a terminal again (operation enableTerminal).
func (a *Admin) EnableTerminal(ctx context.Context, posSystemID, posLocationID, terminalID string) (*Terminal, error) {
	return call[Terminal](ctx, a.c, a.c.api("POST", path(locationPath+"/terminals/%s/enable", posSystemID, posLocationID, terminalID), nil))
}

// --- API clients, sessions, signing keys

// CreateClient registers an API client; the answer holds its secret, shown
// this once (operation createClient).
func (a *Admin) CreateClient(ctx context.Context, r CreateAPIClientRequest) (*APIClientWithSecret, error) {
	return call[APIClientWithSecret](ctx, a.c, a.c.api("POST", "/admin/v1/clients", r))
}

// ListClients answers every API client (operation listClients).
func (a *Admin) ListClients(ctx context.Context) ([]APIClient, error) {
	return list[APIClient](ctx, a.c, a.c.api("GET", "/admin/v1/clients", nil))
}

// GetClient answers one API client (operation getClient).
func (a *Admin) GetClient(ctx context.Context, clientID string) (*APIClient, error) {
	return call[APIClient](ctx, a.c, a.c.api("GET", path("/admin/v1/clients/%s", clientID), nil))
}

// DisableClient disables an API client, revoking its tokens (operation
// disableClient).
func (a *Admin) DisableClient(ctx context.Context, clientID string) (*APIClient, error) {
	return call[APIClient](ctx, a.c, a.c.api("POST", path("/admin/v1/clients/%s/disable", clientID), nil))
}

// RotateClientSecret gives an API client a new secret, answered this once;
// the old one stops working at once (operation rotateClientSecret).
func (a *Admin) RotateClientSecret(ctx context.Context, clientID string) (*APIClientWithSecret, error) {
	return call[APIClientWithSecret](ctx, a.c, a.c.api("POST", path("/admin/v1/clients/%s/rotate-secret", clientID), nil))
}

// EnableClient enables an API client again (operation enableClient).
func (a *Admin) EnableClient(ctx context.Context, clientID string) (*APIClient, error) {
	return call[APIClient](ctx, a.c, a.c.api("POST", path("/admin/v1/clients/%s/enable", clientID), nil))
}

// PutClientRateLimit sets an API client's own rate limit (operation
// putClientRateLimit, docs/api.md §16.1).
func (a *Admin) PutClientRateLimit(ctx context.Context, clientID string, r RateLimit) (*APIClient, error) {
	return call[APIClient](ctx, a.c, a.c.api("PUT", path("/admin/v1/clients/%s/rate-limit", clientID), r))
}

// DeleteClientRateLimit returns an API client to the installation's default
// rate limit (operation deleteClientRateLimit).
func (a *Admin) DeleteClientRateLimit(ctx context.Context, clientID string) (*APIClient, error) {
	return call[APIClient](ctx, a.c, a.c.api("DELETE", path("/admin/v1/clients/%s/rate-limit", clientID), nil))
}

// PutClientRedirectURIs registers the redirect URIs of a browser client,
// replacing any before; none takes it out of the browser flows (operation
// putClientRedirectUris, docs/api.md §21.3).
func (a *Admin) PutClientRedirectURIs(ctx context.Context, clientID string, r PutClientRedirectURIsRequest) (*ClientRedirectURIs, error) {
	if r.RedirectURIs == nil {
		r.RedirectURIs = []string{}
	}
	return call[ClientRedirectURIs](ctx, a.c, a.c.api("PUT", path("/admin/v1/clients/%s/redirect-uris", clientID), r))
}

// GetSession answers an interaction's session (operation getSession).
func (a *Admin) GetSession(ctx context.Context, sessionID string) (*Session, error) {
	return call[Session](ctx, a.c, a.c.api("GET", path("/admin/v1/sessions/%s", sessionID), nil))
}

// ListSigningKeys answers the token signing keys (operation listSigningKeys).
func (a *Admin) ListSigningKeys(ctx context.Context) ([]SigningKey, error) {
	return list[SigningKey](ctx, a.c, a.c.api("GET", "/admin/v1/keys", nil))
}

// RotateSigningKey adds a signing key, which signs from then on (operation
// rotateSigningKey).
func (a *Admin) RotateSigningKey(ctx context.Context) (*SigningKey, error) {
	return call[SigningKey](ctx, a.c, a.c.api("POST", "/admin/v1/keys/rotate", nil))
}

// --- promotions and catalogue

// PromotionQuery filters and pages ListPromotions: with ValidAt and/or
// PosLocationID, only the promotions that apply there and then
// (docs/api.md §9.6).
type PromotionQuery struct {
	ValidAt       time.Time
	PosLocationID string
	PageOptions
}

// ListPromotions answers a page of a company's promotions (operation
// listPromotions).
func (a *Admin) ListPromotions(ctx context.Context, posSystemID, posCompanyID string, q PromotionQuery) (*PromotionPage, error) {
	r := a.c.api("GET", path(companyPath+"/promotions", posSystemID, posCompanyID), nil)
	r.query = q.PageOptions.set(nil)
	if !q.ValidAt.IsZero() {
		r.query.Set("validAt", q.ValidAt.UTC().Format(time.RFC3339))
	}
	setIf(r.query, "posLocationId", q.PosLocationID)
	return unwrapped[PromotionPage](ctx, a.c, r)
}

// GetPromotion answers one promotion (operation getPromotion).
func (a *Admin) GetPromotion(ctx context.Context, posSystemID, posCompanyID, promotionID string) (*Promotion, error) {
	return call[Promotion](ctx, a.c, a.c.api("GET", path(companyPath+"/promotions/%s", posSystemID, posCompanyID, promotionID), nil))
}

// GetCatalogue answers the ids of a company's categories and products
// (operation getCatalogue, docs/api.md §17.4).
func (a *Admin) GetCatalogue(ctx context.Context, posSystemID, posCompanyID string) (*Catalogue, error) {
	return call[Catalogue](ctx, a.c, a.c.api("GET", path(companyPath+"/catalogue", posSystemID, posCompanyID), nil))
}

// ReplaceCatalogue makes a company's categories and products exactly those
// ids (operation replaceCatalogue).
func (a *Admin) ReplaceCatalogue(ctx context.Context, posSystemID, posCompanyID string, r ReplaceCatalogueRequest) (*Catalogue, error) {
	return call[Catalogue](ctx, a.c, a.c.api("PUT", path(companyPath+"/catalogue", posSystemID, posCompanyID), r))
}

// ListProducts answers a page of a company's products (operation
// listProducts).
func (a *Admin) ListProducts(ctx context.Context, posSystemID, posCompanyID string, p PageOptions) (*ProductPage, error) {
	r := a.c.api("GET", path(companyPath+"/products", posSystemID, posCompanyID), nil)
	r.query = p.set(nil)
	return unwrapped[ProductPage](ctx, a.c, r)
}

// ListCategories answers a page of a company's product categories
// (operation listCategories).
func (a *Admin) ListCategories(ctx context.Context, posSystemID, posCompanyID string, p PageOptions) (*CategoryPage, error) {
	r := a.c.api("GET", path(companyPath+"/categories", posSystemID, posCompanyID), nil)
	r.query = p.set(nil)
	return unwrapped[CategoryPage](ctx, a.c, r)
}

// --- carousel, receipt promotions, impressions

// CreateSlide adds a carousel slide (operation createSlide).
func (a *Admin) CreateSlide(ctx context.Context, posSystemID, posCompanyID string, r CreateSlideRequest) (*Slide, error) {
	return call[Slide](ctx, a.c, a.c.api("POST", path(companyPath+"/slides", posSystemID, posCompanyID), r))
}

// ListSlides answers a company's slides in order (operation listSlides).
func (a *Admin) ListSlides(ctx context.Context, posSystemID, posCompanyID string) ([]Slide, error) {
	return list[Slide](ctx, a.c, a.c.api("GET", path(companyPath+"/slides", posSystemID, posCompanyID), nil))
}

// GetSlide answers one slide (operation getSlide).
func (a *Admin) GetSlide(ctx context.Context, posSystemID, posCompanyID, slideID string) (*Slide, error) {
	return call[Slide](ctx, a.c, a.c.api("GET", path(companyPath+"/slides/%s", posSystemID, posCompanyID, slideID), nil))
}

// UpdateSlide changes a slide; nil fields stay (operation updateSlide).
func (a *Admin) UpdateSlide(ctx context.Context, posSystemID, posCompanyID, slideID string, r UpdateSlideRequest) (*Slide, error) {
	return call[Slide](ctx, a.c, a.c.api("PATCH", path(companyPath+"/slides/%s", posSystemID, posCompanyID, slideID), r))
}

// DeleteSlide removes a slide and answers it (operation deleteSlide).
func (a *Admin) DeleteSlide(ctx context.Context, posSystemID, posCompanyID, slideID string) (*Slide, error) {
	return call[Slide](ctx, a.c, a.c.api("DELETE", path(companyPath+"/slides/%s", posSystemID, posCompanyID, slideID), nil))
}

// GetCarouselSettings answers a company's external carousel template
// (operation getCarouselSettings, docs/api.md §7.3).
func (a *Admin) GetCarouselSettings(ctx context.Context, posSystemID, posCompanyID string) (*CarouselSettings, error) {
	return call[CarouselSettings](ctx, a.c, a.c.api("GET", path(companyPath+"/carousel", posSystemID, posCompanyID), nil))
}

// PutCarouselSettings sets a company's external carousel template
// (operation putCarouselSettings).
func (a *Admin) PutCarouselSettings(ctx context.Context, posSystemID, posCompanyID string, r PutCarouselSettingsRequest) (*CarouselSettings, error) {
	return call[CarouselSettings](ctx, a.c, a.c.api("PUT", path(companyPath+"/carousel", posSystemID, posCompanyID), r))
}

// GetCompanyReceiptPromotion answers a company's default receipt promotion
// (operation getCompanyReceiptPromotion).
func (a *Admin) GetCompanyReceiptPromotion(ctx context.Context, posSystemID, posCompanyID string) (*ReceiptPromotion, error) {
	return call[ReceiptPromotion](ctx, a.c, a.c.api("GET", path(companyPath+"/receipt-promotion", posSystemID, posCompanyID), nil))
}

// PutCompanyReceiptPromotion sets a company's default receipt promotion
// (operation putCompanyReceiptPromotion).
func (a *Admin) PutCompanyReceiptPromotion(ctx context.Context, posSystemID, posCompanyID string, r PutReceiptPromotionRequest) (*ReceiptPromotion, error) {
	return call[ReceiptPromotion](ctx, a.c, a.c.api("PUT", path(companyPath+"/receipt-promotion", posSystemID, posCompanyID), r))
}

// DeleteCompanyReceiptPromotion removes a company's default receipt
// promotion and answers it (operation deleteCompanyReceiptPromotion).
func (a *Admin) DeleteCompanyReceiptPromotion(ctx context.Context, posSystemID, posCompanyID string) (*ReceiptPromotion, error) {
	return call[ReceiptPromotion](ctx, a.c, a.c.api("DELETE", path(companyPath+"/receipt-promotion", posSystemID, posCompanyID), nil))
}

// ListReceiptPromotions answers a company's receipt promotions, its default
// and its locations' own (operation listReceiptPromotions).
func (a *Admin) ListReceiptPromotions(ctx context.Context, posSystemID, posCompanyID string) ([]ReceiptPromotion, error) {
	return list[ReceiptPromotion](ctx, a.c, a.c.api("GET", path(companyPath+"/receipt-promotions", posSystemID, posCompanyID), nil))
}

// GetLocationReceiptPromotion answers a location's own receipt promotion
// (operation getLocationReceiptPromotion).
func (a *Admin) GetLocationReceiptPromotion(ctx context.Context, posSystemID, posLocationID string) (*ReceiptPromotion, error) {
	return call[ReceiptPromotion](ctx, a.c, a.c.api("GET", path(locationPath+"/receipt-promotion", posSystemID, posLocationID), nil))
}

// PutLocationReceiptPromotion sets a location's own receipt promotion
// (operation putLocationReceiptPromotion).
func (a *Admin) PutLocationReceiptPromotion(ctx context.Context, posSystemID, posLocationID string, r PutReceiptPromotionRequest) (*ReceiptPromotion, error) {
	return call[ReceiptPromotion](ctx, a.c, a.c.api("PUT", path(locationPath+"/receipt-promotion", posSystemID, posLocationID), r))
}

// DeleteLocationReceiptPromotion removes a location's own receipt promotion
// (operation deleteLocationReceiptPromotion).
func (a *Admin) DeleteLocationReceiptPromotion(ctx context.Context, posSystemID, posLocationID string) (*ReceiptPromotion, error) {
	return call[ReceiptPromotion](ctx, a.c, a.c.api("DELETE", path(locationPath+"/receipt-promotion", posSystemID, posLocationID), nil))
}

// ImpressionQuery filters GetImpressions: From and To are UTC days
// ("2006-01-02"), by default the last 30.
type ImpressionQuery struct {
	From, To                  string
	PosLocationID, TerminalID string
}

// GetImpressions answers how often a company's carousel slides were shown
// (operation getImpressions).
func (a *Admin) GetImpressions(ctx context.Context, posSystemID, posCompanyID string, q ImpressionQuery) (*ImpressionReport, error) {
	r := a.c.api("GET", path(companyPath+"/impressions", posSystemID, posCompanyID), nil)
	r.query = url.Values{}
	setIf(r.query, "from", q.From)
	setIf(r.query, "to", q.To)
	setIf(r.query, "posLocationId", q.PosLocationID)
	setIf(r.query, "terminalId", q.TerminalID)
	return call[ImpressionReport](ctx, a.c, r)
}

// --- coupons and loyalty

// CreateCoupon issues a coupon (operation createCoupon).
func (a *Admin) CreateCoupon(ctx context.Context, posSystemID, posCompanyID string, r CreateCouponRequest) (*Coupon, error) {
	return call[Coupon](ctx, a.c, a.c.api("POST", path(companyPath+"/coupons", posSystemID, posCompanyID), r))
}

// ImportCoupons issues many coupons, all or none (operation importCoupons).
func (a *Admin) ImportCoupons(ctx context.Context, posSystemID, posCompanyID string, r ImportCouponsRequest) (*CouponImportResult, error) {
	return call[CouponImportResult](ctx, a.c, a.c.api("POST", path(companyPath+"/coupons/import", posSystemID, posCompanyID), r))
}

// GetCoupon answers one coupon, its code in any case (operation getCoupon).
func (a *Admin) GetCoupon(ctx context.Context, posSystemID, posCompanyID, code string) (*Coupon, error) {
	return call[Coupon](ctx, a.c, a.c.api("GET", path(companyPath+"/coupons/%s", posSystemID, posCompanyID, code), nil))
}

// CancelCoupon cancels an issued coupon (operation cancelCoupon).
func (a *Admin) CancelCoupon(ctx context.Context, posSystemID, posCompanyID, code string) (*Coupon, error) {
	return call[Coupon](ctx, a.c, a.c.api("POST", path(companyPath+"/coupons/%s/cancel", posSystemID, posCompanyID, code), nil))
}

// RedeemCoupon redeems an issued coupon (operation redeemCoupon).
func (a *Admin) RedeemCoupon(ctx context.Context, posSystemID, posCompanyID, code string) (*Coupon, error) {
	return call[Coupon](ctx, a.c, a.c.api("POST", path(companyPath+"/coupons/%s/redeem", posSystemID, posCompanyID, code), nil))
}

// CreateLoyaltyUser registers a loyalty-card user (operation
// createLoyaltyUser).
func (a *Admin) CreateLoyaltyUser(ctx context.Context, posSystemID, posCompanyID string, r CreateLoyaltyUserRequest) (*LoyaltyUser, error) {
	return call[LoyaltyUser](ctx, a.c, a.c.api("POST", path(companyPath+"/loyalty-users", posSystemID, posCompanyID), r))
}

// GetLoyaltyUser answers one loyalty-card user (operation getLoyaltyUser).
func (a *Admin) GetLoyaltyUser(ctx context.Context, posSystemID, posCompanyID, userID string) (*LoyaltyUser, error) {
	return call[LoyaltyUser](ctx, a.c, a.c.api("GET", path(companyPath+"/loyalty-users/%s", posSystemID, posCompanyID, userID), nil))
}

// UpdateLoyaltyUser changes a loyalty-card user's fields and moves its
// balances by the signed deltas (operation updateLoyaltyUser).
func (a *Admin) UpdateLoyaltyUser(ctx context.Context, posSystemID, posCompanyID, userID string, r UpdateLoyaltyUserRequest) (*LoyaltyUser, error) {
	return call[LoyaltyUser](ctx, a.c, a.c.api("PATCH", path(companyPath+"/loyalty-users/%s", posSystemID, posCompanyID, userID), r))
}

// GetLoyaltyProgram answers a company's loyalty program (operation
// getLoyaltyProgram, docs/api.md §13.2).
func (a *Admin) GetLoyaltyProgram(ctx context.Context, posSystemID, posCompanyID string) (*LoyaltyProgram, error) {
	return call[LoyaltyProgram](ctx, a.c, a.c.api("GET", path(companyPath+"/loyalty-program", posSystemID, posCompanyID), nil))
}

// PutLoyaltyProgram sets a company's loyalty program whole (operation
// putLoyaltyProgram).
func (a *Admin) PutLoyaltyProgram(ctx context.Context, posSystemID, posCompanyID string, r PutLoyaltyProgramRequest) (*LoyaltyProgram, error) {
	return call[LoyaltyProgram](ctx, a.c, a.c.api("PUT", path(companyPath+"/loyalty-program", posSystemID, posCompanyID), r))
}

// --- transactions

// TransactionQuery filters and pages ListTransactions: Day is a UTC date
// ("2006-01-02").
type TransactionQuery struct {
	PosLocationID, UserID, Day string
	PageOptions
}

// ListTransactions answers a page of a company's transactions, newest first
// (operation listTransactions, docs/api.md §13.8).
func (a *Admin) ListTransactions(ctx context.Context, posSystemID, posCompanyID string, q TransactionQuery) (*TransactionPage, error) {
	r := a.c.api("GET", path(companyPath+"/transactions", posSystemID, posCompanyID), nil)
	r.query = q.PageOptions.set(nil)
	setIf(r.query, "posLocationId", q.PosLocationID)
	setIf(r.query, "userId", q.UserID)
	setIf(r.query, "day", q.Day)
	return call[TransactionPage](ctx, a.c, r)
}

// GetTransaction answers one recorded transaction (operation
// getTransaction).
func (a *Admin) GetTransaction(ctx context.Context, posSystemID, posCompanyID, transactionID string) (*Transaction, error) {
	return call[Transaction](ctx, a.c, a.c.api("GET", path(companyPath+"/transactions/%s", posSystemID, posCompanyID, transactionID), nil))
}

// RefundTransaction refunds a sale as its POS would (operation
// refundTransaction); r.TransactionID is the refund's own id. posgate
// answers 201 for a new refund and 200 for the same refund again: both are
// a success here.
func (a *Admin) RefundTransaction(ctx context.Context, posSystemID, posCompanyID, transactionID string, r RefundTransactionRequest) (*TransactionResult, error) {
	return call[TransactionResult](ctx, a.c, a.c.api("POST", path(companyPath+"/transactions/%s/refund", posSystemID, posCompanyID, transactionID), r))
}

// list is an operation answering {"data": [...]}.
func list[T any](ctx context.Context, c *Client, r request) ([]T, error) {
	out, err := call[[]T](ctx, c, r)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// unwrapped is an operation whose answer has no {"data": …} envelope to
// take off: the pages whose data and page stand side by side, the coupon
// validation, the health routes.
func unwrapped[T any](ctx context.Context, c *Client, r request) (*T, error) {
	var out T
	if err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// --- audit log and sandbox clock

// AuditQuery filters and pages ListAuditEntries; empty fields do not
// filter. From and To are RFC 3339 date-times (From <= time < To); Cursor
// is an earlier page's NextCursor.
type AuditQuery struct {
	Actor, Action, TargetType, TargetID      string
	PosSystemID, PosCompanyID, PosLocationID string
	From, To, Cursor                         string
	PageSize                                 int
}

// ListAuditEntries answers a page of the audit log of operator writes,
// newest first (operation listAuditEntries, docs/api.md §22).
func (a *Admin) ListAuditEntries(ctx context.Context, q AuditQuery) (*AuditPage, error) {
	r := a.c.api("GET", "/admin/v1/audit", nil)
	r.query = url.Values{}
	setIf(r.query, "actor", q.Actor)
	setIf(r.query, "action", q.Action)
	setIf(r.query, "targetType", q.TargetType)
	setIf(r.query, "targetId", q.TargetID)
	setIf(r.query, "posSystemId", q.PosSystemID)
	setIf(r.query, "posCompanyId", q.PosCompanyID)
	setIf(r.query, "posLocationId", q.PosLocationID)
	setIf(r.query, "from", q.From)
	setIf(r.query, "to", q.To)
	setIf(r.query, "cursor", q.Cursor)
	if q.PageSize != 0 {
		r.query.Set("pageSize", strconv.Itoa(q.PageSize))
	}
	return call[AuditPage](ctx, a.c, r)
}

// GetSandboxClock answers a demo server's sandbox clock (operation
// getSandboxClock, docs/api.md §20); other servers answer 404.
func (a *Admin) GetSandboxClock(ctx context.Context) (*SandboxClock, error) {
	return call[SandboxClock](ctx, a.c, a.c.api("GET", "/admin/v1/sandbox/clock", nil))
}

// SetSandboxClock moves a demo server's sandbox clock forward to a given
// time (operation setSandboxClock).
func (a *Admin) SetSandboxClock(ctx context.Context, r SetSandboxClockRequest) (*SandboxClock, error) {
	return call[SandboxClock](ctx, a.c, a.c.api("PUT", "/admin/v1/sandbox/clock", r))
}

// AdvanceSandboxClock moves a demo server's sandbox clock forward by a
// number of seconds (operation advanceSandboxClock).
func (a *Admin) AdvanceSandboxClock(ctx context.Context, r AdvanceSandboxClockRequest) (*SandboxClock, error) {
	return call[SandboxClock](ctx, a.c, a.c.api("POST", "/admin/v1/sandbox/clock/advance", r))
}

// GetRecording answers what a demo server recorded of a POS client's calls
// (operation getRecording, docs/api.md §20.3); other servers answer 404.
func (a *Admin) GetRecording(ctx context.Context, clientID string) (*Recording, error) {
	return call[Recording](ctx, a.c, a.c.api("GET", path("/admin/v1/sandbox/recordings/%s", clientID), nil))
}

// ForgetRecording drops what a demo server recorded of a client's calls
// (operation forgetRecording) and answers the empty recording.
func (a *Admin) ForgetRecording(ctx context.Context, clientID string) (*Recording, error) {
	return call[Recording](ctx, a.c, a.c.api("DELETE", path("/admin/v1/sandbox/recordings/%s", clientID), nil))
}

// --- people (docs/api.md §21.1)

// CreatePerson registers a person who signs in (operation createPerson);
// the reach given must lie within the caller's own.
func (a *Admin) CreatePerson(ctx context.Context, r CreatePersonRequest) (*Person, error) {
	return call[Person](ctx, a.c, a.c.api("POST", "/admin/v1/people", r))
}

// ListPeople answers the people within the caller's reach, by e-mail
// address (operation listPeople).
func (a *Admin) ListPeople(ctx context.Context) ([]Person, error) {
	return list[Person](ctx, a.c, a.c.api("GET", "/admin/v1/people", nil))
}

// GetPerson answers one person by id or e-mail address (operation
// getPerson).
func (a *Admin) GetPerson(ctx context.Context, personID string) (*Person, error) {
	return call[Person](ctx, a.c, a.c.api("GET", path("/admin/v1/people/%s", personID), nil))
}

// DisablePerson disables a person: their sessions and tokens stop working
// (operation disablePerson).
func (a *Admin) DisablePerson(ctx context.Context, personID string) (*Person, error) {
	return call[Person](ctx, a.c, a.c.api("POST", path("/admin/v1/people/%s/disable", personID), nil))
}

// EnablePerson lets a disabled person sign in again (operation
// enablePerson).
func (a *Admin) EnablePerson(ctx context.Context, personID string) (*Person, error) {
	return call[Person](ctx, a.c, a.c.api("POST", path("/admin/v1/people/%s/enable", personID), nil))
}

// --- webhooks (docs/api.md §19)

const webhookPath = companyPath + "/webhooks/%s"

// CreateWebhookEndpoint registers a company's webhook endpoint; the answer
// holds its signing secret, shown this once (operation
// createWebhookEndpoint).
func (a *Admin) CreateWebhookEndpoint(ctx context.Context, posSystemID, posCompanyID string, r CreateWebhookEndpointRequest) (*WebhookEndpointWithSecret, error) {
	return call[WebhookEndpointWithSecret](ctx, a.c, a.c.api("POST", path(companyPath+"/webhooks", posSystemID, posCompanyID), r))
}

// ListWebhookEndpoints answers a company's webhook endpoints by id
// (operation listWebhookEndpoints).
func (a *Admin) ListWebhookEndpoints(ctx context.Context, posSystemID, posCompanyID string) ([]WebhookEndpoint, error) {
	return list[WebhookEndpoint](ctx, a.c, a.c.api("GET", path(companyPath+"/webhooks", posSystemID, posCompanyID), nil))
}

// GetWebhookEndpoint answers one webhook endpoint (operation
// getWebhookEndpoint).
func (a *Admin) GetWebhookEndpoint(ctx context.Context, posSystemID, posCompanyID, endpointID string) (*WebhookEndpoint, error) {
	return call[WebhookEndpoint](ctx, a.c, a.c.api("GET", path(webhookPath, posSystemID, posCompanyID, endpointID), nil))
}

// UpdateWebhookEndpoint changes a webhook endpoint; nil fields stay
// (operation updateWebhookEndpoint).
func (a *Admin) UpdateWebhookEndpoint(ctx context.Context, posSystemID, posCompanyID, endpointID string, r UpdateWebhookEndpointRequest) (*WebhookEndpoint, error) {
	return call[WebhookEndpoint](ctx, a.c, a.c.api("PATCH", path(webhookPath, posSystemID, posCompanyID, endpointID), r))
}

// DeleteWebhookEndpoint removes a webhook endpoint and its deliveries and
// answers it (operation deleteWebhookEndpoint).
func (a *Admin) DeleteWebhookEndpoint(ctx context.Context, posSystemID, posCompanyID, endpointID string) (*WebhookEndpoint, error) {
	return call[WebhookEndpoint](ctx, a.c, a.c.api("DELETE", path(webhookPath, posSystemID, posCompanyID, endpointID), nil))
}

// RotateWebhookSecret gives an endpoint a new secret, shown this once; the
// old one signs beside it for 24 hours (operation rotateWebhookSecret).
func (a *Admin) RotateWebhookSecret(ctx context.Context, posSystemID, posCompanyID, endpointID string) (*WebhookEndpointWithSecret, error) {
	return call[WebhookEndpointWithSecret](ctx, a.c, a.c.api("POST", path(webhookPath+"/rotate-secret", posSystemID, posCompanyID, endpointID), nil))
}

// SendTestWebhook writes a webhook.test event for one endpoint (operation
// sendTestWebhook); posgate answers 202 and delivers it like any event.
func (a *Admin) SendTestWebhook(ctx context.Context, posSystemID, posCompanyID, endpointID string) (*WebhookTestEvent, error) {
	return call[WebhookTestEvent](ctx, a.c, a.c.api("POST", path(webhookPath+"/test", posSystemID, posCompanyID, endpointID), nil))
}

// DeliveryQuery filters and pages ListWebhookDeliveries: Status is Pending,
// Delivered or Dead, empty for all.
type DeliveryQuery struct {
	Status string
	PageOptions
}

// ListWebhookDeliveries answers a page of an endpoint's deliveries, newest
// first (operation listWebhookDeliveries).
func (a *Admin) ListWebhookDeliveries(ctx context.Context, posSystemID, posCompanyID, endpointID string, q DeliveryQuery) (*WebhookDeliveryPage, error) {
	r := a.c.api("GET", path(webhookPath+"/deliveries", posSystemID, posCompanyID, endpointID), nil)
	r.query = q.PageOptions.set(nil)
	setIf(r.query, "status", q.Status)
	return call[WebhookDeliveryPage](ctx, a.c, r)
}

// RedeliverDeadWebhooks makes every dead delivery of an endpoint pending
// again (operation redeliverDeadWebhooks).
func (a *Admin) RedeliverDeadWebhooks(ctx context.Context, posSystemID, posCompanyID, endpointID string) (*WebhookRedelivered, error) {
	return call[WebhookRedelivered](ctx, a.c, a.c.api("POST", path(webhookPath+"/deliveries/redeliver", posSystemID, posCompanyID, endpointID), nil))
}

// RedeliverWebhook makes one dead delivery pending again (operation
// redeliverWebhook).
func (a *Admin) RedeliverWebhook(ctx context.Context, posSystemID, posCompanyID, endpointID string, deliveryID int64) (*WebhookRedelivered, error) {
	return call[WebhookRedelivered](ctx, a.c, a.c.api("POST", path(webhookPath+"/deliveries/%s/redeliver", posSystemID, posCompanyID, endpointID,
		strconv.FormatInt(deliveryID, 10)), nil))
}

// ListOfflineConflicts answers a page of a company's offline redemption
// conflicts, newest first (operation listOfflineConflicts, docs/api.md
// §24.6).
func (a *Admin) ListOfflineConflicts(ctx context.Context, posSystemID, posCompanyID string, p PageOptions) (*OfflineConflictPage, error) {
	r := a.c.api("GET", path(companyPath+"/offline-conflicts", posSystemID, posCompanyID), nil)
	r.query = p.set(nil)
	return call[OfflineConflictPage](ctx, a.c, r)
}
