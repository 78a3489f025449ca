package posgate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The offline kit (docs/api.md §24): what a till needs to go on selling
// while it cannot reach posgate. The server builds it, signs it as one JWS
// with the identity provider's keys and answers it; a till (the Go package
// client/offline) verifies it against the JWKS and evaluates baskets and
// checks coupons from it with the rules below, the same code the server
// runs online: PromotionIndex.Evaluate and Coupon.Redeemability.

// KitType is the JOSE header "typ" of an offline kit.
const KitType = "posgate-kit+jwt"

// KitAudience is the "aud" claim of an offline kit: it is no access token,
// and no resource server accepts it as one.
const KitAudience = "posgate-offline-kit"

// Bounds of an offline kit (docs/api.md §24.3).
const (
	// MaxKitPromotions and MaxKitProducts bound a kit's promotions and
	// catalogue: beyond them the kit is refused (413), since a kit
	// without all of them would evaluate otherwise than the server.
	MaxKitPromotions = 5_000
	MaxKitProducts   = 20_000
	// MaxKitCoupons is how many coupons the allowance lists at most: the
	// first ones by code without regard to case; the others are refused
	// offline.
	MaxKitCoupons = 1_000
	// DefaultKitRedemptions is how many coupons one terminal may redeem
	// offline under one kit.
	DefaultKitRedemptions = 20
	// DefaultKitTTL is how long a kit, and its allowance, is valid.
	DefaultKitTTL = 24 * time.Hour
)

// OfflineKit is the payload of a location's offline kit for one terminal
// (docs/api.md §24.2). A section that is nil is unchanged since the kit
// Since names: the till keeps its own (OfflineKit.Merge).
type OfflineKit struct {
	Issuer    string `json:"iss"`
	Audience  string `json:"aud"`
	Subject   string `json:"sub"` // posSystemId/posLocationId/terminalId
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
	// ID is the kit's allowance id, which a sale redeeming offline names.
	ID      string `json:"jti"`
	Version string `json:"version"`
	// Since is the version this kit is a delta of; "" for a whole kit.
	Since       string    `json:"since"`
	POSSystemID string    `json:"posSystemId"`
	CompanyID   string    `json:"posCompanyId"`
	LocationID  string    `json:"posLocationId"`
	TerminalID  string    `json:"terminalId"`
	PosStatus   PosStatus `json:"posStatus"`

	Promotions *KitPromotions    `json:"promotions"`
	Catalogue  *KitCatalogue     `json:"catalogue"`
	Loyalty    *KitLoyalty       `json:"loyalty"`
	Allowance  *OfflineAllowance `json:"allowance"`
}

// KitPromotions are the company's promotions that apply at the location,
// ordered by id, and its category tree.
type KitPromotions struct {
	Version    string        `json:"version"`
	Promotions []*Promotion  `json:"promotions"`
	Categories []KitCategory `json:"categories"`
	// TimeZone is the IANA zone the promotions' wall-clock dates are read
	// in at the location (Location.ZoneName; docs/api.md §9.6).
	TimeZone string `json:"timeZone"`
}

// KitCategory is a category of the catalogue as evaluation needs it.
type KitCategory struct {
	ID       string `json:"id"`
	ParentID string `json:"parentId"`
	Name     string `json:"name"`
}

// KitCatalogue is the catalogue's products the promotions can reach
// through their categories (and the products they name), with their
// categories and prices.
type KitCatalogue struct {
	Version  string       `json:"version"`
	Products []KitProduct `json:"products"`
}

// KitProduct is a product of the kit's catalogue.
type KitProduct struct {
	ID         string      `json:"id"`
	CategoryID string      `json:"categoryId"`
	Price      *MinorUnits `json:"price"`
}

// KitLoyalty is the company's loyalty program and the switches a till
// offline must respect.
type KitLoyalty struct {
	Version             string          `json:"version"`
	Program             *LoyaltyProgram `json:"program"`
	CouponsEnabled      bool            `json:"couponsEnabled"`
	TransactionsEnabled bool            `json:"transactionsEnabled"`
}

// OfflineAllowance is what a terminal may redeem offline (docs/api.md
// §24.4): coupons of the location, known by a hash of their code, at most
// MaxRedemptions of them, between IssuedAt and ExpiresAt.
type OfflineAllowance struct {
	ID             string    `json:"id"`
	POSSystemID    string    `json:"-"`
	CompanyID      string    `json:"-"`
	LocationID     string    `json:"-"`
	TerminalID     string    `json:"terminalId"`
	Salt           string    `json:"salt"` // base64url, 16 bytes
	IssuedAt       time.Time `json:"issuedAt"`
	ExpiresAt      time.Time `json:"expiresAt"`
	MaxRedemptions int       `json:"maxRedemptions"`
	// Coupons are ordered by CodeHash.
	Coupons []AllowedCoupon `json:"coupons"`
}

// AllowedCoupon is a coupon of an allowance: the hash of its code
// (KitCodeHash), its expiry and the promotion it carries (docs/api.md
// §18.3), "" for none.
type AllowedCoupon struct {
	CodeHash       string     `json:"codeHash"`
	AvailableUntil *time.Time `json:"availableUntil"`
	PromotionID    string     `json:"promotionId,omitempty"`
}

// KitCodeHash is the hash by which an allowance names a coupon code:
// HMAC-SHA-256 keyed with the allowance's salt (base64url) of the code
// folded (Fold), its first 16 bytes in base64url. Codes are matched without
// regard to case, so the folded code is hashed.
func KitCodeHash(salt, code string) string {
	key, _ := base64.RawURLEncoding.DecodeString(salt)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(Fold(code)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// Find returns the allowance's coupon whose code is code (any case), or
// nil.
func (a *OfflineAllowance) Find(code string) *AllowedCoupon {
	h := KitCodeHash(a.Salt, code)
	i, ok := slices.BinarySearchFunc(a.Coupons, h, func(c AllowedCoupon, h string) int {
		switch {
		case c.CodeHash < h:
			return -1
		case c.CodeHash > h:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return &a.Coupons[i]
}

// HashList is the allowance's code hashes as the stores keep them:
// space-separated, in order (their expiries are not kept).
func (a *OfflineAllowance) HashList() string {
	hashes := make([]string, len(a.Coupons))
	for i, c := range a.Coupons {
		hashes[i] = c.CodeHash
	}
	return strings.Join(hashes, " ")
}

// SetHashList sets the allowance's coupons from a HashList.
func (a *OfflineAllowance) SetHashList(list string) {
	a.Coupons = nil
	for _, h := range strings.Fields(list) {
		a.Coupons = append(a.Coupons, AllowedCoupon{CodeHash: h})
	}
}

// ValidAt reports whether the allowance covers a sale at time at: from its
// issue to its expiry, both included.
func (a *OfflineAllowance) ValidAt(at time.Time) bool {
	return !at.Before(a.IssuedAt) && !at.After(a.ExpiresAt)
}

// Verdict is the rule of an offline coupon check (docs/api.md §24.4): the
// coupon must be in the allowance, and the allowance valid at time at;
// then it is the coupon as the allowance knows it (Issued, usable at the
// location, held by nobody, with its expiry) judged by
// Coupon.Redeemability, the server's own rule. ok is false when the
// allowance does not cover the code at all.
func (a *OfflineAllowance) Verdict(code, locationID string, at time.Time) (v CouponVerdict, c *Coupon, ok bool) {
	ac := a.Find(code)
	if ac == nil || !a.ValidAt(at) {
		return 0, nil, false
	}
	c = &Coupon{Code: code, Status: CouponIssued, AvailableUntil: ac.AvailableUntil, PromotionID: ac.PromotionID}
	return c.Redeemability(locationID, at, nil), c, true
}

// CouponPreviewMessage is the evaluation's reason (docs/api.md §18.3) for
// verdict v of coupon c at a location: "" when redeemable. The evaluate
// endpoint and an offline till word a refusal alike.
func CouponPreviewMessage(v CouponVerdict, c *Coupon, locationID string) string {
	switch v {
	case CouponRedeemable:
		return ""
	case CouponAlreadyRedeemed:
		return "The coupon has already been redeemed."
	case CouponHasExpired:
		return fmt.Sprintf("The coupon expired at %s.", c.AvailableUntil.UTC().Format(time.RFC3339))
	case CouponNotUsableHere:
		return fmt.Sprintf("The coupon cannot be used at location '%s'.", locationID)
	case CouponNeedsCustomer:
		return "The coupon belongs to a loyalty customer; name the customer to use it."
	case CouponOtherCustomer:
		return "The coupon belongs to another customer."
	}
	return "The coupon has been cancelled."
}

// Merge completes a delta kit k with the sections of prev, the kit it is a
// delta of (k.Since == prev.Version); a whole kit needs nothing. It fails
// when k is a delta of another kit, or a section is missing.
func (k *OfflineKit) Merge(prev *OfflineKit) error {
	if k.Since != "" {
		if prev == nil || prev.Version != k.Since {
			return fmt.Errorf("offline kit: a delta of version %q, not of the kit held", k.Since)
		}
		if k.Promotions == nil {
			k.Promotions = prev.Promotions
		}
		if k.Catalogue == nil {
			k.Catalogue = prev.Catalogue
		}
		if k.Loyalty == nil {
			k.Loyalty = prev.Loyalty
		}
	}
	if k.PosStatus == PosAccepted && (k.Promotions == nil || k.Catalogue == nil || k.Loyalty == nil || k.Allowance == nil) {
		return fmt.Errorf("offline kit: version %q lacks a section", k.Version)
	}
	return nil
}

// Index arranges the kit's promotions and catalogue for evaluation: the
// index the server builds from its store, restricted to what can apply at
// the kit's location.
func (k *OfflineKit) Index() *PromotionIndex {
	cats := make([]*Category, len(k.Promotions.Categories))
	for i, c := range k.Promotions.Categories {
		cats[i] = &Category{ID: c.ID, ParentID: c.ParentID, Name: c.Name}
	}
	ix := NewPromotionIndex(k.Promotions.Promotions, cats)
	ps := make([]*Product, len(k.Catalogue.Products))
	for i, p := range k.Catalogue.Products {
		ps[i] = &Product{ID: p.ID, CategoryID: p.CategoryID}
	}
	ix.SetProductCategories(ps)
	return ix
}

// OfflineClaim is what a replayed sale says of its offline redemptions
// (docs/api.md §24.5): the kit (allowance) it redeemed under, checked by
// the service; Codes are the folded codes of the sale that the allowance
// covers at the sale's date, for the ledger to honour.
type OfflineClaim struct {
	AllowanceID    string
	MaxRedemptions int
	Codes          map[string]bool
}

// OfflineRedemption is a coupon redeemed offline under an allowance, as the
// ledger records it: Conflict is "" when the sale could redeem it, else the
// reason it could not, for which it was honoured all the same (a conflict,
// docs/api.md §24.5).
type OfflineRedemption struct {
	AllowanceID   string    `json:"kitId"`
	POSSystemID   string    `json:"posSystemId"`
	CompanyID     string    `json:"posCompanyId"`
	LocationID    string    `json:"posLocationId"`
	TerminalID    string    `json:"terminalId"`
	TransactionID string    `json:"transactionId"`
	Code          string    `json:"code"`
	Conflict      string    `json:"conflict"`
	SaleDate      time.Time `json:"transactionDate"`
	RecordedAt    time.Time `json:"recordedAt"`
	// Limit is the allowance's MaxRedemptions (not stored).
	Limit int `json:"-"`
}

// OfflineStore keeps the allowances of the offline kits issued and the
// conflicts of offline redemptions (docs/api.md §24).
type OfflineStore interface {
	// PutOfflineAllowance stores an allowance (its coupons' hashes, not
	// their expiries).
	PutOfflineAllowance(ctx context.Context, a *OfflineAllowance) error
	// FindOfflineAllowance returns an allowance of the POS system.
	FindOfflineAllowance(ctx context.Context, posSystemID, id string) (*OfflineAllowance, error)
	// ListOfflineConflicts returns a page of a company's offline
	// redemptions that were conflicts, newest recorded first, and their
	// total.
	ListOfflineConflicts(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*OfflineRedemption, int, error)
	// DeleteExpiredOfflineAllowances removes the allowances that expired
	// before t and that no offline redemption names, and returns how many
	// it removed.
	DeleteExpiredOfflineAllowances(ctx context.Context, t time.Time) (int64, error)
}

// honourOffline is the ledger's rule for a coupon of a sale made offline
// (docs/api.md §24.5): when the sale's allowance covers the code and still
// has room (LedgerTx.RecordOfflineRedemption), a coupon the sale could not
// redeem (res Rejected: redeemed online meanwhile, cancelled…) is
// honoured, Redeemed in the answer, and reported as a conflict
// (conflict true: the coupon's own redemption, if any, stands). Any other
// code keeps res.
func honourOffline(ctx context.Context, tx LedgerTx, it *TransactionInput, code string, res TransactionCoupon, user string) (TransactionCoupon, bool, error) {
	if it.Offline == nil || !it.Offline.Codes[Fold(code)] {
		return res, false, nil
	}
	r := &OfflineRedemption{AllowanceID: it.Offline.AllowanceID, POSSystemID: it.POSSystemID, CompanyID: it.CompanyID,
		LocationID: it.LocationID, TerminalID: it.TerminalID, TransactionID: it.TransactionID, Code: res.Code,
		SaleDate: Timestamp(it.Date), RecordedAt: Timestamp(tx.Now()), Limit: it.Offline.MaxRedemptions}
	if res.Status != CouponRedeemed && res.ErrorMessage != nil {
		r.Conflict = *res.ErrorMessage
	}
	ok, err := tx.RecordOfflineRedemption(ctx, r)
	if err != nil || !ok || r.Conflict == "" {
		return res, false, err
	}
	ev := &Event{Type: EventCouponOfflineConflict, POSSystemID: it.POSSystemID, CompanyID: it.CompanyID, UserID: user,
		Time: r.RecordedAt, Data: r}
	if err := tx.Emit(ctx, ev); err != nil {
		return res, false, err
	}
	return TransactionCoupon{Code: res.Code, Status: CouponRedeemed}, true, nil
}
