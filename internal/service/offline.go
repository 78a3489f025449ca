package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/encode"
)

// The offline kit (docs/api.md §24): a location's promotions, the
// catalogue they reach, the loyalty program and an offline redemption
// allowance for one terminal, signed by the identity provider.

// KitSigner signs an offline kit's payload as a compact JWS with the
// identity provider's newest key (internal/auth).
type KitSigner interface {
	SignKit(payload []byte) (string, error)
	Issuer() string
}

// KitRequest asks for a location's kit for a terminal; Since, when given,
// is the version of the kit the terminal holds (a delta), IfNoneMatch the
// request's If-None-Match header.
type KitRequest struct {
	TerminalID  string
	Since       string
	IfNoneMatch string
}

// Kit is a kit answered: the compact JWS, and its version (the ETag's
// value). NotModified: the terminal's kit (If-None-Match) is current, and
// JWS is empty.
type Kit struct {
	JWS         string
	Version     string
	NotModified bool
}

// kitPageSize is how many products a kit reads from the store at once.
const kitPageSize = 5000

// OfflineKit answers a location's offline kit for a terminal (docs/api.md
// §24): 404 for a location or terminal the client does not see, Disabled
// with nothing else for a disabled place.
func (s *Service) OfflineKit(ctx context.Context, p *posgate.Principal, posSystemID, locationID string, req KitRequest) (*Kit, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if s.cfg.Kits == nil {
		return nil, posgate.Errorf(posgate.ENOTFOUND, "Offline kits are not served here.")
	}
	if req.TerminalID == "" {
		return nil, invalid("terminalId", "The terminalId parameter is required.")
	}
	var since kitVersion
	if req.Since != "" {
		var ok bool
		if since, ok = parseKitVersion(req.Since); !ok {
			return nil, invalid("since", "The since parameter must be the version of a kit.")
		}
	}
	loc, term, _, err := s.posTerminal(ctx, p, posSystemID, locationID, req.TerminalID, posgate.FeatureTransactions)
	if err != nil {
		return nil, err
	}
	now := posgate.Timestamp(s.now()).Truncate(time.Second)
	kit := &posgate.OfflineKit{Issuer: s.cfg.Kits.Issuer(), Audience: posgate.KitAudience,
		Subject: posSystemID + "/" + loc.ID + "/" + term.ID, IssuedAt: now.Unix(), ExpiresAt: now.Add(s.kitTTL()).Unix(),
		ID: uuid.NewString(), POSSystemID: posSystemID, CompanyID: loc.CompanyID, LocationID: loc.ID, TerminalID: term.ID,
		PosStatus: activeStatus(loc, term)}
	var b *kitBuild
	if kit.PosStatus == posgate.PosAccepted {
		if b, err = s.kitVersions(ctx, loc, term, now); err != nil {
			return nil, err
		}
	} else {
		b = &kitBuild{}
	}
	kit.Version = b.version.String()
	if etagMatches(req.IfNoneMatch, kit.Version) {
		return &Kit{Version: kit.Version, NotModified: true}, nil
	}
	if kit.PosStatus == posgate.PosAccepted {
		if err := s.fillKit(ctx, kit, b, loc, since); err != nil {
			return nil, err
		}
	}
	payload, err := encode.JSON(kit)
	if err != nil {
		return nil, fmt.Errorf("offline kit: %w", err)
	}
	jws, err := s.cfg.Kits.SignKit(payload)
	if err != nil {
		return nil, err
	}
	return &Kit{JWS: jws, Version: kit.Version}, nil
}

// kitTTL is how long a kit is valid.
func (s *Service) kitTTL() time.Duration {
	if s.cfg.KitTTL > 0 {
		return s.cfg.KitTTL
	}
	return posgate.DefaultKitTTL
}

// kitVersion is a kit's version: one hash per section (promotions,
// catalogue, loyalty, allowance), written as four dot-separated hex texts.
type kitVersion [4]string

func (v kitVersion) String() string {
	if v[0] == "" {
		return "disabled"
	}
	return strings.Join(v[:], ".")
}

func parseKitVersion(s string) (kitVersion, bool) {
	var v kitVersion
	parts := strings.Split(s, ".")
	if len(parts) != len(v) {
		return v, false
	}
	for i, p := range parts {
		if len(p) != 16 {
			return v, false
		}
		if _, err := hex.DecodeString(p); err != nil {
			return v, false
		}
		v[i] = p
	}
	return v, true
}

func sectionHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// etagMatches reports whether an If-None-Match header names version.
func etagMatches(header, version string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == `"`+version+`"` {
			return true
		}
	}
	return false
}

// kitBuild is what the versions of a kit were computed from, for the
// kit's sections.
type kitBuild struct {
	version kitVersion
	program *posgate.LoyaltyProgram
	coupons []*posgate.Coupon
	limit   int
}

// kitVersions computes a kit's section versions from the cheap reads: the
// company's promotion stamp (which changes with its promotions and
// catalogue), its program and switches, and the coupons of the allowance
// with the half-lifetime period the kit is issued in (so that a terminal
// that polls gets a fresh allowance before its kit expires).
func (s *Service) kitVersions(ctx context.Context, loc *posgate.Location, term *posgate.Terminal, now time.Time) (*kitBuild, error) {
	stamp, err := s.store.PromotionStamp(ctx, loc.POSSystemID, loc.CompanyID)
	if err != nil {
		return nil, err
	}
	program, err := s.loyaltyProgram(ctx, loc.POSSystemID, loc.CompanyID)
	if err != nil {
		return nil, err
	}
	f := loc.Company.Features
	b := &kitBuild{program: program, limit: posgate.DefaultKitRedemptions}
	if !f.Coupons {
		b.limit = 0
	} else {
		page, err := s.store.ListActiveCoupons(ctx, posgate.ActiveCouponQuery{POSSystemID: loc.POSSystemID, CompanyID: loc.CompanyID,
			LocationID: loc.ID, At: now, Limit: posgate.MaxKitCoupons})
		if err != nil {
			return nil, err
		}
		b.coupons = page.Coupons
	}
	pj, _ := json.Marshal(program)
	var coupons strings.Builder
	for _, c := range b.coupons {
		coupons.WriteString(posgate.Fold(c.Code))
		if c.AvailableUntil != nil {
			coupons.WriteString("@" + c.AvailableUntil.UTC().Format(time.RFC3339Nano))
		}
		if c.PromotionID != "" {
			coupons.WriteString("+" + c.PromotionID)
		}
		coupons.WriteByte(' ')
	}
	period := now.UnixNano() / int64(s.kitTTL()/2)
	b.version = kitVersion{
		sectionHash("promotions", loc.ID, loc.ZoneName(), stamp),
		sectionHash("catalogue", loc.ID, stamp),
		sectionHash("loyalty", string(pj), fmt.Sprint(f.Coupons, f.Transactions)),
		sectionHash("allowance", term.ID, coupons.String(), fmt.Sprint(b.limit, period)),
	}
	return b, nil
}

// fillKit reads and sets the kit's sections, leaving out those unchanged
// since the version the terminal holds, and stores its allowance.
func (s *Service) fillKit(ctx context.Context, kit *posgate.OfflineKit, b *kitBuild, loc *posgate.Location, since kitVersion) error {
	if since[0] != "" {
		kit.Since = since.String()
	}
	if since[0] != b.version[0] || since[1] != b.version[1] {
		promos, cats, products, err := s.kitCatalogue(ctx, loc)
		if err != nil {
			return err
		}
		if since[0] != b.version[0] {
			kit.Promotions = &posgate.KitPromotions{Version: b.version[0], Promotions: promos, Categories: cats, TimeZone: loc.ZoneName()}
		}
		if since[1] != b.version[1] {
			kit.Catalogue = &posgate.KitCatalogue{Version: b.version[1], Products: products}
		}
	}
	if since[2] != b.version[2] {
		f := loc.Company.Features
		kit.Loyalty = &posgate.KitLoyalty{Version: b.version[2], Program: b.program, CouponsEnabled: f.Coupons, TransactionsEnabled: f.Transactions}
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	a := &posgate.OfflineAllowance{ID: kit.ID, POSSystemID: kit.POSSystemID, CompanyID: kit.CompanyID, LocationID: kit.LocationID,
		TerminalID: kit.TerminalID, Salt: base64.RawURLEncoding.EncodeToString(salt), IssuedAt: time.Unix(kit.IssuedAt, 0).UTC(),
		ExpiresAt: time.Unix(kit.ExpiresAt, 0).UTC(), MaxRedemptions: b.limit, Coupons: make([]posgate.AllowedCoupon, len(b.coupons))}
	for i, c := range b.coupons {
		a.Coupons[i] = posgate.AllowedCoupon{CodeHash: posgate.KitCodeHash(a.Salt, c.Code), AvailableUntil: c.AvailableUntil, PromotionID: c.PromotionID}
	}
	slices.SortFunc(a.Coupons, func(x, y posgate.AllowedCoupon) int { return strings.Compare(x.CodeHash, y.CodeHash) })
	kit.Allowance = a
	return s.store.PutOfflineAllowance(ctx, a)
}

// kitCatalogue reads the company's promotions that apply at the location,
// its categories, and the products of the catalogue that those promotions
// name or reach through their categories (with their prices): what
// evaluation at the location needs, no more. Beyond the kit's bounds it is
// ETOOLARGE: a kit without all of them would evaluate otherwise than the
// server.
func (s *Service) kitCatalogue(ctx context.Context, loc *posgate.Location) ([]*posgate.Promotion, []posgate.KitCategory, []posgate.KitProduct, error) {
	all, _, err := s.store.ListPromotions(ctx, loc.POSSystemID, loc.CompanyID, 0, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	promos := make([]*posgate.Promotion, 0, len(all))
	named, reached := map[string]bool{}, map[string]bool{}
	for _, p := range all {
		if len(p.LocationIDs) > 0 && !slices.Contains(p.LocationIDs, loc.ID) {
			continue
		}
		promos = append(promos, p)
		for _, id := range p.ProductIDs {
			named[id] = true
		}
		for _, id := range p.CategoryIDs {
			reached[id] = true
		}
	}
	if len(promos) > posgate.MaxKitPromotions {
		return nil, nil, nil, posgate.Errorf(posgate.ETOOLARGE, "Location '%s' has %d promotions; an offline kit holds at most %d.", loc.ID, len(promos), posgate.MaxKitPromotions)
	}
	categories, _, err := s.store.ListCategories(ctx, loc.POSSystemID, loc.CompanyID, 0, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(categories) > posgate.MaxKitProducts {
		return nil, nil, nil, posgate.Errorf(posgate.ETOOLARGE, "Company '%s' has %d categories; an offline kit holds at most %d.", loc.CompanyID, len(categories), posgate.MaxKitProducts)
	}
	cats := make([]posgate.KitCategory, len(categories))
	parent := make(map[string]string, len(categories))
	for i, c := range categories {
		cats[i] = posgate.KitCategory{ID: c.ID, ParentID: c.ParentID, Name: c.Name}
		parent[c.ID] = c.ParentID
	}
	reaches := func(cat string) bool {
		for depth := 0; cat != "" && depth <= len(parent); depth++ {
			if reached[cat] {
				return true
			}
			cat = parent[cat]
		}
		return false
	}
	var products []posgate.KitProduct
	for offset := 0; ; offset += kitPageSize {
		page, total, err := s.store.ListProducts(ctx, loc.POSSystemID, loc.CompanyID, offset, kitPageSize)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, p := range page {
			if named[p.ID] || reaches(p.CategoryID) {
				products = append(products, posgate.KitProduct{ID: p.ID, CategoryID: p.CategoryID, Price: p.Price})
			}
		}
		if len(products) > posgate.MaxKitProducts {
			return nil, nil, nil, posgate.Errorf(posgate.ETOOLARGE, "Location '%s' has promotions for more than %d products; an offline kit holds at most %d.", loc.ID, posgate.MaxKitProducts, posgate.MaxKitProducts)
		}
		if len(page) == 0 || offset+len(page) >= total {
			break
		}
	}
	if products == nil {
		products = []posgate.KitProduct{}
	}
	return promos, cats, products, nil
}

// offlineClaim is the offline allowance a sale names (docs/api.md §24.5),
// as far as it covers the sale: the allowance of the sale's terminal and
// location, valid at the sale's date, and the sale's codes it lists. A
// kit that is unknown, of another terminal, or not valid at the sale's
// date covers nothing (nil), and the sale's coupons take the ordinary
// rules: the sale itself is recorded all the same.
func (s *Service) offlineClaim(ctx context.Context, in *posgate.TransactionInput, kitID string) (*posgate.OfflineClaim, error) {
	if kitID == "" || len(in.CouponCodes) == 0 {
		return nil, nil
	}
	a, err := s.store.FindOfflineAllowance(ctx, in.POSSystemID, kitID)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if a.CompanyID != in.CompanyID || a.LocationID != in.LocationID || a.TerminalID != in.TerminalID || !a.ValidAt(in.Date) {
		return nil, nil
	}
	c := &posgate.OfflineClaim{AllowanceID: a.ID, MaxRedemptions: a.MaxRedemptions, Codes: map[string]bool{}}
	for _, code := range in.CouponCodes {
		if a.Find(code) != nil {
			c.Codes[posgate.Fold(code)] = true
		}
	}
	return c, nil
}

// OfflineConflictPage is one page of a company's offline conflicts.
type OfflineConflictPage struct {
	Conflicts []*posgate.OfflineRedemption `json:"conflicts"`
	Page      PageModel                    `json:"page"`
}

// ListOfflineConflicts pages a company's offline redemptions that were
// conflicts (docs/api.md §24.6), newest first.
func (s *Service) ListOfflineConflicts(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *CataloguePageRequest) (*OfflineConflictPage, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	v := posgate.ValidationError{}
	checkRange(v, "page", req.Page, 1, MaxCouponPage)
	checkRange(v, "pageSize", req.PageSize, 1, MaxTransactionPageSize)
	if err := v.Err(); err != nil {
		return nil, err
	}
	page, size := intOr(req.Page, 1), intOr(req.PageSize, DefaultTransactionPageSize)
	list, total, err := s.store.ListOfflineConflicts(ctx, posSystemID, companyID, (page-1)*size, size)
	if err != nil {
		return nil, err
	}
	return &OfflineConflictPage{Conflicts: nonNil(list), Page: PageModel{Page: page, PageSize: size, Total: total}}, nil
}
