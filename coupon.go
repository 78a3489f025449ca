package posgate

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// RewardProvider is the interface's RewardProvider (docs/api.md §5.1): who
// funds a coupon's reward.
type RewardProvider string

// Reward providers (docs/api.md §5.1).
const (
	ProviderTwoReward RewardProvider = "TwoReward"
	ProviderPJM       RewardProvider = "PJM"
	ProviderDummy     RewardProvider = "Dummy"
)

// RewardProviders lists every provider in the interface's order.
var RewardProviders = []RewardProvider{ProviderTwoReward, ProviderPJM, ProviderDummy}

// Valid reports whether p is a known provider.
func (p RewardProvider) Valid() bool { return slices.Contains(RewardProviders, p) }

// CouponStatus is the interface's CouponCodeItemStatus (docs/api.md §5.1).
type CouponStatus string

// Coupon statuses. Expired is never stored: an Issued coupon past its
// AvailableUntil is reported as Expired (docs/api.md §5.1), so that no
// background job has to flip millions of rows at midnight.
const (
	CouponIssued    CouponStatus = "Issued"
	CouponRedeemed  CouponStatus = "Redeemed"
	CouponCancelled CouponStatus = "Cancelled"
	CouponExpired   CouponStatus = "Expired"
)

// CouponStatuses lists every status in the interface's order.
var CouponStatuses = []CouponStatus{CouponIssued, CouponRedeemed, CouponCancelled, CouponExpired}

// Storable reports whether s may be stored: every status but the computed
// Expired.
func (s CouponStatus) Storable() bool {
	return s == CouponIssued || s == CouponRedeemed || s == CouponCancelled
}

// CouponInfo is one CouponCodeDisplayInfoDto section: a title and a map of
// string values, either of which may be null.
type CouponInfo struct {
	Title *string            `json:"title"`
	Items map[string]*string `json:"items"`
}

// Coupon is a coupon code of a company (docs/api.md §5). Its code is unique in
// the company without regard to case. It may belong to a loyalty user
// (UserID) and carry an owner e-mail and phone of its own, for coupons given
// to people outside the loyalty programme; a search by e-mail or phone
// matches either. It is usable at every location of the company unless
// LocationIDs names some.
type Coupon struct {
	POSSystemID    string         `json:"posSystemId"`
	CompanyID      string         `json:"posCompanyId"`
	Code           string         `json:"code"`
	RewardProvider RewardProvider `json:"rewardProvider"`
	Name           *string        `json:"name"`
	Title          *string        `json:"title"`
	PictureURL     *string        `json:"pictureUrl"`
	AvailableUntil *time.Time     `json:"availableUntil"`
	// Status is the stored status: Issued, Redeemed or Cancelled. StatusAt
	// gives the status to report.
	Status CouponStatus `json:"status"`
	// Info is nil when the coupon has no info (null), which differs from an
	// empty list.
	Info        []CouponInfo `json:"info"`
	UserID      string       `json:"userId"`
	Email       string       `json:"email"`
	Phone       string       `json:"phone"`
	LocationIDs []string     `json:"locationIds"`
	// PromotionID is the promotion of the company the coupon carries (""
	// for none): presented with a basket, a redeemable coupon makes it
	// apply, also when it requiresCoupon (PromotionIndex.EvaluateInput).
	PromotionID string    `json:"promotionId"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// UsableAt reports whether the coupon may be used at a location of its
// company: a coupon limited to no location is usable at every one.
func (c *Coupon) UsableAt(locationID string) bool {
	return len(c.LocationIDs) == 0 || slices.Contains(c.LocationIDs, locationID)
}

// StatusAt is the status to report at time now: an Issued coupon whose
// AvailableUntil has passed is Expired.
func (c *Coupon) StatusAt(now time.Time) CouponStatus {
	if c.Status == CouponIssued && c.AvailableUntil != nil && now.After(*c.AvailableUntil) {
		return CouponExpired
	}
	return c.Status
}

// StatusConflict is the ECONFLICT error of a store refusing to move coupon c
// to status to at time now, because it is not (or no longer) Issued; both
// stores word it alike.
func (c *Coupon) StatusConflict(to CouponStatus, now time.Time) error {
	verb := "redeemed"
	if to == CouponCancelled {
		verb = "cancelled"
	}
	return Errorf(ECONFLICT, "coupon %q is %s; only an Issued coupon can be %s", c.Code, c.StatusAt(now), verb)
}

// Limits on coupon and loyalty-user fields. They keep rows small enough for
// a million of them and keep one coupon's display within a POS screen.
const (
	MaxTextLen      = 200  // names, titles
	MaxURLLen       = 2048 // picture URLs
	MaxEmailLen     = 254  // RFC 5321's limit for a path
	MaxPhoneLen     = 32   // a written phone number, punctuation included
	MaxGenderLen    = 50
	MaxInfoSections = 20
	MaxInfoItems    = 50
	MaxInfoTextLen  = 1000 // an info title, key or value
	MaxLocations    = 1000 // location limits of one coupon
)

// Normalize completes the fields an operator may leave out (an Issued status,
// the TwoReward provider), sorts and de-duplicates the location limits and
// normalises the times, so that every store keeps the same coupon.
func (c *Coupon) Normalize() {
	if c.Status == "" {
		c.Status = CouponIssued
	}
	if c.RewardProvider == "" {
		c.RewardProvider = ProviderTwoReward
	}
	if c.AvailableUntil != nil {
		t := Timestamp(*c.AvailableUntil)
		c.AvailableUntil = &t
	}
	if len(c.LocationIDs) > 0 {
		ids := slices.Clone(c.LocationIDs)
		slices.Sort(ids)
		c.LocationIDs = slices.Compact(ids)
	} else {
		c.LocationIDs = nil
	}
}

// Validate checks the fields an operator supplies (after Normalize).
func (c *Coupon) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", c.POSSystemID)
	checkKey(v, "posCompanyId", c.CompanyID)
	checkKey(v, "code", c.Code)
	if !c.RewardProvider.Valid() {
		v.Add("rewardProvider", fmt.Sprintf("The rewardProvider field must be one of %s.", join(RewardProviders)))
	}
	if !c.Status.Storable() {
		v.Add("status", fmt.Sprintf("The status field must be %s, %s or %s (Expired is computed from availableUntil).", CouponIssued, CouponRedeemed, CouponCancelled))
	}
	checkOptText(v, "name", c.Name, MaxTextLen)
	checkOptText(v, "title", c.Title, MaxTextLen)
	if c.PictureURL != nil {
		checkURL(v, "pictureUrl", *c.PictureURL)
	}
	checkInfo(v, c.Info)
	if c.UserID != "" {
		checkKey(v, "userId", c.UserID)
	}
	checkEmail(v, "email", c.Email)
	checkPhone(v, "phone", c.Phone)
	if len(c.LocationIDs) > MaxLocations {
		v.Add("locationIds", fmt.Sprintf("A coupon may be limited to at most %d locations.", MaxLocations))
	}
	for _, id := range c.LocationIDs {
		checkKey(v, "locationIds", id)
	}
	if c.PromotionID != "" {
		checkKey(v, "promotionId", c.PromotionID)
	}
	return v.Err()
}

// CheckLocations is the ENOTFOUND error of a coupon limited to a location
// its company does not have (companyLocations holds the ids of the
// company's locations); nil when every limit is one of them. The limits are
// a list, which no foreign key can hold, so each store checks them before it
// writes a coupon: a limit naming no location of the company is an
// operator's mistake that would otherwise leave the coupon unusable there,
// unnoticed.
func (c *Coupon) CheckLocations(companyLocations map[string]bool) error {
	for _, id := range c.LocationIDs {
		if !companyLocations[id] {
			return Errorf(ENOTFOUND, "location %q of company %q not found", id, c.CompanyID)
		}
	}
	return nil
}

// CheckStatusChange is the EINVALID error of a request to move a coupon to
// status to, unless to is Redeemed or Cancelled: a coupon is issued once and
// never returns to Issued, and Expired is computed, never stored. Stores
// check it before they touch the coupon, so that both refuse alike.
func CheckStatusChange(to CouponStatus) error {
	if to != CouponRedeemed && to != CouponCancelled {
		return Errorf(EINVALID, "A coupon can only be changed to %s or %s.", CouponRedeemed, CouponCancelled)
	}
	return nil
}

// CouponKeys are a coupon's code, e-mail and phone in the form in which
// stores keep and compare them: the code folded, the e-mail trimmed and
// folded, the phone reduced to its digits. A search finds a coupon when the
// keys it gives equal the coupon's, so both sides are derived here (Keys of
// Coupon and of CouponQuery) and a change of the rule reaches both at once.
type CouponKeys struct {
	Code, Email, Phone string
}

// Keys returns the keys a store keeps beside c's own code, e-mail and
// phone; an empty one means c has no such field.
func (c *Coupon) Keys() CouponKeys {
	return CouponKeys{Code: Fold(c.Code), Email: FoldEmail(c.Email), Phone: PhoneDigits(c.Phone)}
}

// LoyaltyCard is a loyalty user as the loyalty-card lookup shows it and as
// an operator creates one: id, names, contact and balances.
type LoyaltyCard struct {
	ID        string `json:"id"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Gender    string `json:"gender"`
	Phone     string `json:"phone"`
	Email     string `json:"email"`
	Stamps    int32  `json:"stamps"`
	Points    int32  `json:"points"`
}

// LoyaltyUser is a loyalty-card holder of a company (docs/api.md §6.1). Its
// id is unique in the company. Every text field may be empty.
type LoyaltyUser struct {
	POSSystemID string `json:"posSystemId"`
	CompanyID   string `json:"posCompanyId"`
	// LoyaltyCard holds the user's own fields, inlined in JSON: the one
	// definition of them, shared by the loyalty-card lookup's answer and the
	// operator's create request.
	LoyaltyCard
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Validate checks the fields an operator supplies.
func (u *LoyaltyUser) Validate() error {
	v := ValidationError{}
	checkKey(v, "posSystemId", u.POSSystemID)
	checkKey(v, "posCompanyId", u.CompanyID)
	checkKey(v, "id", u.ID)
	checkText(v, "firstName", u.FirstName, MaxTextLen)
	checkText(v, "lastName", u.LastName, MaxTextLen)
	checkText(v, "gender", u.Gender, MaxGenderLen)
	checkEmail(v, "email", u.Email)
	checkPhone(v, "phone", u.Phone)
	if u.Stamps < 0 {
		v.Add("stamps", "The stamps field must not be negative.")
	}
	if u.Points < 0 {
		v.Add("points", "The points field must not be negative.")
	}
	return v.Err()
}

// LoyaltyUserUpdate names the fields of a loyalty user to change; nil leaves
// a field as it is. AddStamps and AddPoints are signed adjustments applied
// atomically to the stored balances, which must stay within 0–2³¹-1.
type LoyaltyUserUpdate struct {
	FirstName *string
	LastName  *string
	Gender    *string
	Phone     *string
	Email     *string
	AddStamps int32
	AddPoints int32
}

// Validate checks the fields the update sets.
func (u *LoyaltyUserUpdate) Validate() error {
	v := ValidationError{}
	if u.FirstName != nil {
		checkText(v, "firstName", *u.FirstName, MaxTextLen)
	}
	if u.LastName != nil {
		checkText(v, "lastName", *u.LastName, MaxTextLen)
	}
	if u.Gender != nil {
		checkText(v, "gender", *u.Gender, MaxGenderLen)
	}
	if u.Email != nil {
		checkEmail(v, "email", *u.Email)
	}
	if u.Phone != nil {
		checkPhone(v, "phone", *u.Phone)
	}
	return v.Err()
}

// ApplyUserUpdate applies upd to u: the fields it sets, then its balance
// adjustments, all or nothing. An adjustment whose result stays within
// 0–2³¹-1 always applies; one that would take a balance below 0 or above
// 2³¹-1 is ECONFLICT naming the balance it found, and leaves u as it was,
// every field and the other balance included (docs/decisions.md, "Loyalty
// adjustments"). A negative points balance (which only a refund makes) may
// be raised. Stores call it inside their write transaction.
func ApplyUserUpdate(u *LoyaltyUser, upd LoyaltyUserUpdate) error {
	stamps, points := int64(u.Stamps)+int64(upd.AddStamps), int64(u.Points)+int64(upd.AddPoints)
	for _, b := range []struct {
		name        string
		was, change int32
		now         int64
	}{{"stamps", u.Stamps, upd.AddStamps, stamps}, {"points", u.Points, upd.AddPoints, points}} {
		// A refund may leave points below 0 (docs/api.md §13.4); an
		// operator's adjustment may raise such a balance but never take one
		// below 0.
		switch {
		case b.now < 0 && b.change < 0:
			return Errorf(ECONFLICT, "Loyalty user %s has %d %s: taking %d would leave %d, below 0. Nothing was changed.",
				u.ID, b.was, b.name, -int64(b.change), b.now)
		case b.now > math.MaxInt32:
			return Errorf(ECONFLICT, "Loyalty user %s has %d %s: adding %d would leave %d, above %d. Nothing was changed.",
				u.ID, b.was, b.name, b.change, b.now, math.MaxInt32)
		}
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&u.FirstName, upd.FirstName)
	set(&u.LastName, upd.LastName)
	set(&u.Gender, upd.Gender)
	set(&u.Phone, upd.Phone)
	set(&u.Email, upd.Email)
	u.Stamps, u.Points = int32(stamps), int32(points)
	return nil
}

// CouponQuery is a coupon search (docs/api.md §5.2). The given criteria
// combine with AND; at least one of Code, Email and Phone must be given (a
// store answers EINVALID otherwise). Values are matched as that section
// says: codes and e-mails without regard to case, phones on their digits.
type CouponQuery struct {
	POSSystemID string
	// CompanyIDs are the companies searched; none means no result.
	CompanyIDs []string
	Code       string
	Email      string
	Phone      string
	// LocationID, when not empty, keeps the coupons usable there.
	LocationID string
	// Offset and Limit select the page; results are ordered by code (without
	// regard to case), then company.
	Offset, Limit int
}

// CouponPage is one page of a coupon search and the number of coupons on
// all pages.
type CouponPage struct {
	Coupons []*Coupon
	Total   int
}

// Keys returns q's criteria as the keys they must equal, empty where a
// criterion is not given; a code is trimmed first, as a cashier's scanner or
// keyboard may add spaces around it. A query that gives none of code,
// e-mail and phone is EINVALID: it would select every coupon.
func (q *CouponQuery) Keys() (CouponKeys, error) {
	k := CouponKeys{Code: Fold(strings.TrimSpace(q.Code)), Email: FoldEmail(q.Email), Phone: PhoneDigits(q.Phone)}
	if k == (CouponKeys{}) {
		return k, Errorf(EINVALID, "A coupon search needs a code, an e-mail or a phone.")
	}
	return k, nil
}

// ActiveCouponQuery asks for the coupons that a location can hand out to
// any customer (docs/api.md §15.2): of one company, Issued, not past
// AvailableUntil at At, held by nobody (no loyalty user, owner e-mail or
// owner phone) and usable at LocationID: the coupons any customer may be
// offered there, which is why a coupon with an owner never belongs here.
type ActiveCouponQuery struct {
	POSSystemID, CompanyID string
	// LocationID is the location the coupons must be usable at; "" lists
	// the company's active coupons whatever locations they are limited to
	// (the set internal/storecache keeps, and filters per location itself).
	LocationID string
	// At is the moment whose unexpired coupons are listed; the service
	// passes its clock, so that the list and the answer's statuses agree.
	At time.Time
	// Offset and Limit select the page; coupons are ordered by code without
	// regard to case (codes are unique in a company so folded).
	Offset, Limit int
}

// MaxUserMatches is how many loyalty users a keyword search returns at most
// (docs/api.md §6.1).
const MaxUserMatches = 50

// CouponStore holds coupons and loyalty users (docs/api.md §5, §6).
//
// Conventions beyond Store's: codes are unique per company without regard to
// case (ECONFLICT); a coupon's company, loyalty user and locations must exist
// and the locations must be the company's (ENOTFOUND otherwise); imports run
// in one transaction, so that a bad item stores nothing.
type CouponStore interface {
	// CreateCoupon stores c (Normalize and Validate it first) and sets its
	// CreatedAt and UpdatedAt.
	CreateCoupon(ctx context.Context, c *Coupon) error
	// ImportCoupons stores every coupon of seq in one transaction and
	// returns how many it stored. The first error (seq's own, or a
	// coupon's) stops it, stores nothing and is returned, wrapped with the
	// 1-based position of the item when the item is at fault.
	ImportCoupons(ctx context.Context, seq iter.Seq2[*Coupon, error]) (int, error)
	// FindCoupon returns the coupon whose code equals code without regard
	// to case.
	FindCoupon(ctx context.Context, posSystemID, companyID, code string) (*Coupon, error)
	// ChangeCouponStatus moves an Issued, unexpired coupon (by the store's
	// clock) to Redeemed or Cancelled; any other coupon is ECONFLICT.
	ChangeCouponStatus(ctx context.Context, posSystemID, companyID, code string, to CouponStatus) (*Coupon, error)
	// SearchCoupons answers a coupon search.
	SearchCoupons(ctx context.Context, q CouponQuery) (*CouponPage, error)
	// ListActiveCoupons answers one page of the coupons q asks for, with
	// the number of them on all pages. It reads them through an index of
	// the company's unowned Issued coupons, so that a page costs no more
	// for a company holding a million owned coupons.
	ListActiveCoupons(ctx context.Context, q ActiveCouponQuery) (*CouponPage, error)

	// CreateLoyaltyUser stores u and sets its CreatedAt and UpdatedAt.
	CreateLoyaltyUser(ctx context.Context, u *LoyaltyUser) error
	// ImportLoyaltyUsers is ImportCoupons for loyalty users.
	ImportLoyaltyUsers(ctx context.Context, seq iter.Seq2[*LoyaltyUser, error]) (int, error)
	FindLoyaltyUser(ctx context.Context, posSystemID, companyID, id string) (*LoyaltyUser, error)
	// UserIDsByEmail and UserIDsByPhone return up to two ids of the
	// company's users with that folded e-mail or those phone digits (two:
	// ambiguous), as LedgerTx's do (MatchCustomer).
	UserIDsByEmail(ctx context.Context, posSystemID, companyID, emailNorm string) ([]string, error)
	UserIDsByPhone(ctx context.Context, posSystemID, companyID, digits string) ([]string, error)
	// UpdateLoyaltyUser changes the fields upd sets and applies its
	// adjustments; a balance leaving 0–2³¹-1 is ECONFLICT and changes
	// nothing.
	UpdateLoyaltyUser(ctx context.Context, posSystemID, companyID, id string, upd LoyaltyUserUpdate) (*LoyaltyUser, error)
	// SearchLoyaltyUsers returns the company's users matching keyword
	// (docs/api.md §6.1, see UserKeyword), at most MaxUserMatches: exact
	// matches first, each group by last name, first name and id. When more
	// users match, the exact ones still come first but which other matches
	// fill the list is up to the store. The users carry their card, POS
	// system and company, not their times (the answers show none).
	SearchLoyaltyUsers(ctx context.Context, posSystemID, companyID string, keyword UserKeyword) ([]*LoyaltyUser, error)
}

// ItemError attributes err to the n-th (1-based) item of an import, so that
// an operator can find the line to fix; the error keeps its code.
func ItemError(n int, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return fmt.Errorf("item %d: %w", n, err)
	}
	return &Error{Code: e.Code, Message: fmt.Sprintf("Item %d: %s", n, e.Message), Fields: e.Fields}
}

// Fold returns s case-folded with Unicode simple folding, in lower case:
// any two strings that strings.EqualFold calls equal fold alike. Stores keep
// folded copies of codes, e-mails and names for matching.
func Fold(s string) string {
	// ASCII, which names, e-mails and codes mostly are, folds to lower
	// case (the orbits of 'k' and 's' leave ASCII, but their least member
	// is the upper-case letter): a search ranks every candidate by its
	// folded fields, and the rune-by-rune path was most of its CPU time.
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return foldRunes(s)
		}
		upper = upper || ('A' <= c && c <= 'Z')
	}
	if !upper {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// foldRunes is Fold for any text.
func foldRunes(s string) string {
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		return unicode.ToLower(m)
	}, s)
}

// FoldEmail is the form in which e-mails are kept and compared.
func FoldEmail(s string) string { return Fold(strings.TrimSpace(s)) }

// PhoneDigits returns the digits of a written phone number:
// "+1 (555) 555-1234" and "15555551234" are the same phone.
func PhoneDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

func join[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

func checkText(v ValidationError, field, s string, maxLen int) {
	if len(s) > maxLen || !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		v.Add(field, fmt.Sprintf("The %s field must be text of at most %d bytes without control characters.", field, maxLen))
	}
}

func checkOptText(v ValidationError, field string, s *string, maxLen int) {
	if s != nil {
		checkText(v, field, *s, maxLen)
	}
}

func checkURL(v ValidationError, field, s string) {
	u, err := url.Parse(s)
	if len(s) > MaxURLLen || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.Add(field, fmt.Sprintf("The %s field must be an absolute http or https URL of at most %d bytes.", field, MaxURLLen))
	}
}

func checkEmail(v ValidationError, field, s string) {
	if s == "" {
		return
	}
	local, domain, ok := strings.Cut(s, "@")
	if len(s) > MaxEmailLen || !ok || local == "" || domain == "" || strings.ContainsFunc(s, unicode.IsSpace) ||
		!utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		v.Add(field, fmt.Sprintf("The %s field must be an e-mail address (name@domain) of at most %d bytes.", field, MaxEmailLen))
	}
}

// phonePunct are the characters besides digits that a written phone number
// may hold.
const phonePunct = " +-()./"

// isPhoneText reports whether s is written like a phone number.
func isPhoneText(s string) bool {
	return strings.Trim(s, "0123456789"+phonePunct) == ""
}

func checkPhone(v ValidationError, field, s string) {
	if s == "" {
		return
	}
	if len(s) > MaxPhoneLen || !isPhoneText(s) || len(PhoneDigits(s)) < MinKeywordLen {
		v.Add(field, fmt.Sprintf("The %s field must be a phone number of at most %d characters: digits, spaces and + - ( ) . /, with at least %d digits.", field, MaxPhoneLen, MinKeywordLen))
	}
}

func checkInfo(v ValidationError, info []CouponInfo) {
	if len(info) > MaxInfoSections {
		v.Add("info", fmt.Sprintf("A coupon may have at most %d info sections.", MaxInfoSections))
		return
	}
	for i, sec := range info {
		field := fmt.Sprintf("info[%d]", i)
		if sec.Title != nil {
			checkText(v, field+".title", *sec.Title, MaxInfoTextLen)
		}
		if len(sec.Items) > MaxInfoItems {
			v.Add(field+".items", fmt.Sprintf("An info section may have at most %d items.", MaxInfoItems))
			continue
		}
		for k, val := range sec.Items {
			checkText(v, field+".items", k, MaxInfoTextLen)
			if val != nil {
				checkText(v, field+".items", *val, MaxInfoTextLen)
			}
		}
	}
}
