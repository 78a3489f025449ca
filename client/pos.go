package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The POS API (docs/api.md §1.2): methods of *Client, each taking the POS
// system of the path first. They need a token of scope pos_integration (or
// service_api) of a client of that POS system.

// StartInteraction begins a customer's visit at a till and answers its
// session (operation startInteraction, docs/api.md §4.1).
func (c *Client) StartInteraction(ctx context.Context, posSystemID string, r StartInteractionRequest) (*StartInteractionResult, error) {
	return call[StartInteractionResult](ctx, c, c.api("POST", path("/pos/%s/startInteraction", posSystemID), r))
}

// SearchCoupons searches coupons by code, e-mail or phone, a page at a time
// (operation searchCouponCodes, docs/api.md §5.2).
func (c *Client) SearchCoupons(ctx context.Context, posSystemID string, r CouponSearchRequest, p PageOptions) (*CouponPage, error) {
	q := c.api("POST", path("/pos/%s/coupon/couponCode/search", posSystemID), r)
	q.query = p.set(nil)
	return unwrapped[CouponPage](ctx, c, q)
}

// LookupCouponCodes looks one coupon code up at a location (operation
// lookupCouponCodes, docs/api.md §5.3).
func (c *Client) LookupCouponCodes(ctx context.Context, posSystemID string, r CouponLookupRequest) (*CouponLookupResult, error) {
	return call[CouponLookupResult](ctx, c, c.api("POST", path("/v2/pos/%s/coupon/couponCodes/lookup", posSystemID), r))
}

// LookupLoyaltyUsers finds loyalty-card users by a keyword (operation
// lookupLoyaltyUsers, docs/api.md §6.1).
func (c *Client) LookupLoyaltyUsers(ctx context.Context, posSystemID string, r LoyaltyUserLookupRequest) (*LoyaltyUserLookupResult, error) {
	return call[LoyaltyUserLookupResult](ctx, c, c.api("POST", path("/v2/pos/%s/loyaltyCard/users/lookup", posSystemID), r))
}

// ListActiveCoupons answers the coupons any customer may use at a location,
// a page at a time (operation listActiveCoupons, docs/api.md §15.2).
func (c *Client) ListActiveCoupons(ctx context.Context, posSystemID, posLocationID string, p PageOptions) (*CouponPage, error) {
	q := c.api("GET", path("/pos/%s/coupon/active/locationId/%s", posSystemID, posLocationID), nil)
	q.query = p.set(nil)
	return unwrapped[CouponPage](ctx, c, q)
}

// GetSettings answers which of posgate's features a company is served, by
// GET (operation getSettings, docs/api.md §15.1).
func (c *Client) GetSettings(ctx context.Context, posSystemID, posCompanyID string) (*Settings, error) {
	q := c.api("GET", path("/v2/pos/%s/settings/lookup", posSystemID), nil)
	q.query = url.Values{"posCompanyId": {posCompanyID}}
	return call[Settings](ctx, c, q)
}

// LookupSettings is GetSettings by POST (operation lookupSettings).
func (c *Client) LookupSettings(ctx context.Context, posSystemID, posCompanyID string) (*Settings, error) {
	body := struct {
		PosCompanyID string `json:"posCompanyId"`
	}{posCompanyID}
	return call[Settings](ctx, c, c.api("POST", path("/v2/pos/%s/settings/lookup", posSystemID), body))
}

// GetCarouselURL answers the URL of a terminal's customer-facing carousel
// (operation getCarouselUrl, docs/api.md §7.1).
func (c *Client) GetCarouselURL(ctx context.Context, posSystemID string, r CarouselRequest) (*CarouselURL, error) {
	return call[CarouselURL](ctx, c, c.api("POST", path("/v2/pos/%s/carousel", posSystemID), r))
}

// GetReceiptPromotion answers the promotion to print on a location's
// receipts (operation getReceiptPromotion, docs/api.md §8.1).
func (c *Client) GetReceiptPromotion(ctx context.Context, posSystemID, posLocationID string) (*PosReceiptPromotion, error) {
	return call[PosReceiptPromotion](ctx, c, c.api("GET", path("/pos/%s/receipt/promotion/location/%s", posSystemID, posLocationID), nil))
}

// ImportPromotions imports a company's promotions (operation
// importPromotions, docs/api.md §9).
func (c *Client) ImportPromotions(ctx context.Context, posSystemID, posCompanyID string, r PromotionImport) (*ImportResult, error) {
	return call[ImportResult](ctx, c, c.api("POST", path("/pos/%s/company/%s/import/promotions", posSystemID, posCompanyID), r))
}

// ImportProducts imports a company's products (operation importProducts,
// docs/api.md §17.1).
func (c *Client) ImportProducts(ctx context.Context, posSystemID, posCompanyID string, r ProductImport) (*ImportResult, error) {
	return call[ImportResult](ctx, c, c.api("POST", path("/pos/%s/company/%s/import/products", posSystemID, posCompanyID), r))
}

// ImportProductCategories imports a company's product categories
// (operation importProductCategories, docs/api.md §17.2).
func (c *Client) ImportProductCategories(ctx context.Context, posSystemID, posCompanyID string, r CategoryImport) (*ImportResult, error) {
	return call[ImportResult](ctx, c, c.api("POST", path("/pos/%s/company/%s/import/productCategories", posSystemID, posCompanyID), r))
}

// EvaluatePromotions answers what a basket would get (promotions, coupons,
// loyalty) without storing anything (operation evaluatePromotions,
// docs/api.md §18).
func (c *Client) EvaluatePromotions(ctx context.Context, posSystemID string, r EvaluateRequest) (*Evaluation, error) {
	return call[Evaluation](ctx, c, c.api("POST", path("/v2/pos/%s/promotions/evaluate", posSystemID), r))
}

// CreateTransaction records the sale (or refund) of an interaction
// (operation createPosTransaction, docs/api.md §13.1). Send it with
// WithIdempotencyKey and a key stored with the sale when the till may
// restart before it has the answer.
func (c *Client) CreateTransaction(ctx context.Context, posSystemID string, r TransactionRequest) (*TransactionResult, error) {
	return call[TransactionResult](ctx, c, c.api("POST", path("/pos/%s/transaction", posSystemID), r))
}

// ReplayTransactions replays up to 1,000 transactions recorded offline
// (operation replayPosTransactions, docs/api.md §13.6).
func (c *Client) ReplayTransactions(ctx context.Context, posSystemID string, r BatchRequest) (*BatchResult, error) {
	return call[BatchResult](ctx, c, c.api("POST", path("/v2/pos/%s/transactions/batch", posSystemID), r))
}

// ValidateCouponByTransaction redeems a coupon for a recorded transaction
// (operation validateCouponByTransaction, docs/api.md §13.5). Its answer has
// posStatus beside data, so it is answered whole.
func (c *Client) ValidateCouponByTransaction(ctx context.Context, posSystemID string, r ValidateCouponRequest) (*CouponValidationResult, error) {
	return unwrapped[CouponValidationResult](ctx, c, c.api("POST", path("/pos/%s/coupon/validate/byTransaction", posSystemID), r))
}

// The carousel page's routes (docs/api.md §7.2) take no token: the signed
// link GetCarouselURL answers is their credential.

// carouselLink turns the URL GetCarouselURL answered into a request of route
// on this client's posgate, carrying the link's signed query.
func (c *Client) carouselLink(method, carouselURL, route string) (request, error) {
	u, err := url.Parse(carouselURL)
	if err != nil || u.RawQuery == "" {
		return request{}, fmt.Errorf("posgate client: %q is not a carousel link", carouselURL)
	}
	r := request{method: method, base: c.baseURL, path: route, noAuth: true}
	r.query, err = url.ParseQuery(u.RawQuery)
	return r, err
}

// GetCarouselPage answers the HTML of the carousel page at carouselURL, a
// link GetCarouselURL answered (operation getCarouselPage).
func (c *Client) GetCarouselPage(ctx context.Context, carouselURL string) ([]byte, error) {
	r, err := c.carouselLink("GET", carouselURL, "/carousel")
	if err != nil {
		return nil, err
	}
	var b []byte
	r.raw = &b
	if err := c.do(ctx, r, nil); err != nil {
		return nil, err
	}
	return b, nil
}

// GetCarouselContent answers the slides the carousel page at carouselURL
// shows (operation getCarouselContent).
func (c *Client) GetCarouselContent(ctx context.Context, carouselURL string) (*CarouselContent, error) {
	r, err := c.carouselLink("GET", carouselURL, "/carousel/content")
	if err != nil {
		return nil, err
	}
	return call[CarouselContent](ctx, c, r)
}

// RecordCarouselImpression records that the carousel page at carouselURL
// showed a slide (operation recordCarouselImpression). It takes no
// Idempotency-Key, so it is never retried.
func (c *Client) RecordCarouselImpression(ctx context.Context, carouselURL, slideID string) (*ImpressionResult, error) {
	r, err := c.carouselLink("POST", carouselURL, "/carousel/impressions")
	if err != nil {
		return nil, err
	}
	r.body = ImpressionRequest{SlideID: slideID}
	return call[ImpressionResult](ctx, c, r)
}

// GetReceiptQRCode answers the PNG of a receipt promotion's QR code, its
// imageUrl as GetReceiptPromotion answered it (operation getReceiptQrCode,
// docs/api.md §8.2).
func (c *Client) GetReceiptQRCode(ctx context.Context, imageURL string) ([]byte, error) {
	u, err := url.Parse(imageURL)
	if err != nil || !strings.HasSuffix(u.Path, "/receipt/qr.png") {
		return nil, fmt.Errorf("posgate client: %q is not a receipt QR code link", imageURL)
	}
	r := request{method: "GET", base: c.baseURL, path: "/receipt/qr.png", noAuth: true, query: u.Query()}
	var b []byte
	r.raw = &b
	if err := c.do(ctx, r, nil); err != nil {
		return nil, err
	}
	return b, nil
}

// GetHealth answers whether the instance is alive, which build it runs
// and which process answered (operation getHealth).
func (c *Client) GetHealth(ctx context.Context) (*Liveness, error) {
	return unwrapped[Liveness](ctx, c, request{method: "GET", base: c.baseURL, path: "/healthz", noAuth: true})
}

// GetReadiness answers whether the instance takes traffic (operation
// getReadiness); a draining or unready instance is an *Error of status 503,
// answered at once: a probe wants the state, not a retry.
func (c *Client) GetReadiness(ctx context.Context) (*Health, error) {
	return unwrapped[Health](ctx, c, request{method: "GET", base: c.baseURL, path: "/readyz", noAuth: true, noRetry: true})
}

// KitQuery asks for a location's offline kit for a terminal: Since and
// IfNoneMatch, when given, are the version of the kit the terminal holds
// (docs/api.md §24).
type KitQuery struct {
	TerminalID string
	// Since asks for a delta: the sections unchanged since are null.
	Since string
	// IfNoneMatch asks for nothing (NotModified) while the kit is current.
	IfNoneMatch string
}

// OfflineKitAnswer is a kit answered: the compact JWS (package
// client/offline verifies and reads it) and its version; NotModified, with
// no JWS, when IfNoneMatch named the current version.
type OfflineKitAnswer struct {
	JWS         string
	Version     string
	NotModified bool
}

// GetOfflineKit answers a location's offline kit for a terminal (operation
// getOfflineKit, docs/api.md §24).
func (c *Client) GetOfflineKit(ctx context.Context, posSystemID, posLocationID string, q KitQuery) (*OfflineKitAnswer, error) {
	r := c.api("GET", path("/v2/pos/%s/locations/%s/offline-kit", posSystemID, posLocationID), nil)
	r.query = url.Values{"terminalId": {q.TerminalID}}
	setIf(r.query, "since", q.Since)
	if q.IfNoneMatch != "" {
		r.header = http.Header{"If-None-Match": {`"` + q.IfNoneMatch + `"`}}
	}
	var b []byte
	var meta answerMeta
	r.raw, r.answered = &b, &meta
	if err := c.do(ctx, r, nil); err != nil {
		return nil, err
	}
	version := strings.Trim(meta.header.Get("ETag"), `"`)
	if meta.status == http.StatusNotModified {
		return &OfflineKitAnswer{Version: version, NotModified: true}, nil
	}
	return &OfflineKitAnswer{JWS: string(b), Version: version}, nil
}
