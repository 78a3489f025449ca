package service

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// Paging of the coupon search (docs/api.md §5.2).
const (
	DefaultCouponPageSize = 20
	MaxCouponPageSize     = 100
	// MaxCouponPage keeps (page-1)*pageSize within 32 bits.
	MaxCouponPage = math.MaxInt32 / MaxCouponPageSize
)

// SearchCouponsRequest is SearchUserCouponsDto (docs/api.md §5.2).
// A null and an empty string both mean "not given". Page and PageSize come
// from the query string, not the body.
type SearchCouponsRequest struct {
	Code          *string `json:"code"`
	Email         *string `json:"email"`
	Phone         *string `json:"phone"`
	PosLocationID *string `json:"posLocationId"`

	// Page and PageSize are the query parameters; nil when absent.
	Page     *int `json:"-"`
	PageSize *int `json:"-"`
}

// criterion reports whether a search field was given: blanks only are as
// good as nothing, since codes and e-mails are matched trimmed.
func criterion(s *string) bool { return s != nil && strings.TrimSpace(*s) != "" }

func given(s *string) bool { return s != nil && *s != "" }

func value(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Validate requires one of code, email and phone; a phone must hold digits,
// since phones are matched on their digits; page and pageSize must be in
// range.
func (q *SearchCouponsRequest) Validate() error {
	v := posgate.ValidationError{}
	if !criterion(q.Code) && !criterion(q.Email) && !criterion(q.Phone) {
		for _, f := range []string{"code", "email", "phone"} {
			v.Add(f, "One of code, email and phone is required.")
		}
	}
	if criterion(q.Phone) && posgate.PhoneDigits(*q.Phone) == "" {
		v.Add("phone", "The phone field must contain digits.")
	}
	checkRange(v, "page", q.Page, 1, MaxCouponPage)
	checkRange(v, "pageSize", q.PageSize, 1, MaxCouponPageSize)
	return v.Err()
}

// checkRange records a message for a query parameter outside [lo, hi]. The
// HTTP adapter hands over a parameter that is not an integer as 0, out of
// every range, so that one message covers both.
func checkRange(v posgate.ValidationError, name string, n *int, lo, hi int) {
	if n != nil && (*n < lo || *n > hi) {
		v.Add(name, "The "+name+" parameter must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi)+".")
	}
}

func intOr(n *int, def int) int {
	if n == nil {
		return def
	}
	return *n
}

// CouponCodeDisplay is CouponCodeDisplayDto (docs/api.md §5.1); status is
// the reported one (Expired computed).
type CouponCodeDisplay struct {
	RewardProvider posgate.RewardProvider `json:"rewardProvider"`
	Code           string                 `json:"code"`
	Name           *string                `json:"name"`
	Title          *string                `json:"title"`
	PictureURL     *string                `json:"pictureUrl"`
	AvailableUntil *time.Time             `json:"availableUntil"`
	Status         posgate.CouponStatus   `json:"status"`
	Info           []posgate.CouponInfo   `json:"info"`
	// PromotionID is the promotion the coupon carries (null for none):
	// posgate's addition.
	PromotionID *string `json:"promotionId"`
}

func displayCoupon(c *posgate.Coupon, now time.Time) CouponCodeDisplay {
	d := CouponCodeDisplay{RewardProvider: c.RewardProvider, Code: c.Code, Name: c.Name, Title: c.Title,
		PictureURL: c.PictureURL, AvailableUntil: c.AvailableUntil, Status: c.StatusAt(now), Info: c.Info}
	if c.PromotionID != "" {
		d.PromotionID = &c.PromotionID
	}
	return d
}

// displayCoupons is a page of coupons as answered, in one allocation: the
// answer's slice grown by append was the largest allocation of the active
// coupons answer in its allocation profile.
func displayCoupons(cs []*posgate.Coupon, now time.Time) []CouponCodeDisplay {
	out := make([]CouponCodeDisplay, len(cs))
	for i, c := range cs {
		out[i] = displayCoupon(c, now)
	}
	return out
}

// PageModel is the paging record of a paged answer.
type PageModel struct {
	Page     int `json:"page"`
	PageSize int `json:"pageSize"`
	Total    int `json:"total"`
}

// CouponSearchResult is the coupon search's answer: data, page and posStatus
// at the top level, not inside a data envelope.
type CouponSearchResult struct {
	Data      []CouponCodeDisplay `json:"data"`
	Page      PageModel           `json:"page"`
	PosStatus posgate.PosStatus   `json:"posStatus"`
}

// SearchCoupons searches coupons by code, e-mail or phone. With
// posLocationId it searches the location's company and keeps the coupons
// usable there (a disabled place answers Disabled and no coupons); without,
// it searches every active company of the POS system with coupons on that p
// may see, and answers Accepted.
func (s *Service) SearchCoupons(ctx context.Context, p *posgate.Principal, posSystemID string, req *SearchCouponsRequest) (*CouponSearchResult, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	page, size := intOr(req.Page, 1), intOr(req.PageSize, DefaultCouponPageSize)
	q := posgate.CouponQuery{POSSystemID: posSystemID, Code: value(req.Code), Email: value(req.Email), Phone: value(req.Phone),
		Offset: (page - 1) * size, Limit: size}
	out := &CouponSearchResult{Data: []CouponCodeDisplay{}, Page: PageModel{Page: page, PageSize: size}, PosStatus: posgate.PosAccepted}
	if given(req.PosLocationID) {
		loc, err := s.posLocation(ctx, p, posSystemID, *req.PosLocationID)
		if err != nil {
			return nil, err
		}
		if out.PosStatus = placeStatus(loc, posgate.FeatureCoupons); out.PosStatus != posgate.PosAccepted {
			return out, nil
		}
		q.CompanyIDs, q.LocationID = []string{loc.CompanyID}, loc.ID
	} else {
		companies, err := s.store.ListCompanies(ctx, posSystemID)
		if err != nil {
			return nil, err
		}
		for _, c := range companies {
			if p.CanSeeCompany(posSystemID, c.ID) && c.Status == posgate.StatusActive && c.Features.Enabled(posgate.FeatureCoupons) {
				q.CompanyIDs = append(q.CompanyIDs, c.ID)
			}
		}
	}
	res, err := s.store.SearchCoupons(ctx, q)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out.Data = displayCoupons(res.Coupons, now)
	out.Page.Total = res.Total
	return out, nil
}

// LookupCouponRequest is the v2 coupon lookup request (docs/api.md §5.3).
type LookupCouponRequest struct {
	PosLocationID *string `json:"posLocationId"`
	Code          *string `json:"code"`
}

// Validate requires both fields, non-empty.
func (q *LookupCouponRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "posLocationId", q.PosLocationID)
	required(v, "code", q.Code)
	return v.Err()
}

// CouponCodes is the v2 coupon lookup's answer.
type CouponCodes struct {
	CouponCodes []CouponCodeDisplay `json:"couponCodes"`
}

// LookupCoupon finds the location company's coupon with the code (without
// regard to case) when it is usable at the location, else an empty list; a
// disabled place gets an empty list too.
func (s *Service) LookupCoupon(ctx context.Context, p *posgate.Principal, posSystemID string, req *LookupCouponRequest) (*CouponCodes, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	loc, err := s.posLocation(ctx, p, posSystemID, *req.PosLocationID)
	if err != nil {
		return nil, err
	}
	out := &CouponCodes{CouponCodes: []CouponCodeDisplay{}}
	if placeStatus(loc, posgate.FeatureCoupons) != posgate.PosAccepted {
		return out, nil
	}
	c, err := s.store.FindCoupon(ctx, posSystemID, loc.CompanyID, *req.Code)
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
	case err != nil:
		return nil, err
	case c.UsableAt(loc.ID):
		out.CouponCodes = append(out.CouponCodes, displayCoupon(c, s.now()))
	}
	return out, nil
}

// LookupUsersRequest is the loyalty-card user lookup request (docs/api.md §6.1).
type LookupUsersRequest struct {
	PosLocationID *string `json:"posLocationId"`
	Keyword       *string `json:"keyword"`

	keyword posgate.UserKeyword
}

// Validate requires the location and a keyword of at least 3 characters.
func (q *LookupUsersRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "posLocationId", q.PosLocationID)
	if q.Keyword == nil {
		v.Add("keyword", "The keyword field is required.")
	} else if k, err := posgate.ParseUserKeyword(*q.Keyword); err != nil {
		var e *posgate.Error
		if !errors.As(err, &e) {
			return err
		}
		for f, msgs := range e.Fields {
			for _, m := range msgs {
				v.Add(f, m)
			}
		}
	} else {
		q.keyword = k
	}
	return v.Err()
}

// LoyaltyUsers is the loyalty-card user lookup's answer.
type LoyaltyUsers struct {
	Users []posgate.LoyaltyCard `json:"users"`
}

// LookupUsers finds at most posgate.MaxUserMatches of the location company's
// loyalty users matching the keyword, exact matches first. A disabled place,
// or coupons switched off (the switch of the loyalty programme too), gets an
// empty list.
func (s *Service) LookupUsers(ctx context.Context, p *posgate.Principal, posSystemID string, req *LookupUsersRequest) (*LoyaltyUsers, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	loc, err := s.posLocation(ctx, p, posSystemID, *req.PosLocationID)
	if err != nil {
		return nil, err
	}
	out := &LoyaltyUsers{Users: []posgate.LoyaltyCard{}}
	if placeStatus(loc, posgate.FeatureCoupons) != posgate.PosAccepted {
		return out, nil
	}
	users, err := s.store.SearchLoyaltyUsers(ctx, posSystemID, loc.CompanyID, req.keyword)
	if err != nil {
		return nil, err
	}
	out.Users = make([]posgate.LoyaltyCard, 0, len(users))
	for _, u := range users {
		out.Users = append(out.Users, u.LoyaltyCard)
	}
	return out, nil
}

// ActiveCouponsRequest asks for a location's active coupons (docs/api.md
// §15.2): the location from the path, the page from the query.
type ActiveCouponsRequest struct {
	PosLocationID string
	// Page and PageSize are the query parameters; nil when absent.
	Page     *int
	PageSize *int
}

// Validate checks the page with the coupon search's bounds and messages.
func (q *ActiveCouponsRequest) Validate() error {
	v := posgate.ValidationError{}
	checkRange(v, "page", q.Page, 1, MaxCouponPage)
	checkRange(v, "pageSize", q.PageSize, 1, MaxCouponPageSize)
	return v.Err()
}

// ActiveCoupons lists, a page at a time, the coupons any customer may use
// at a location: Issued, unexpired by the service's clock, held by nobody,
// and usable there, ordered by code. It answers like the coupon search
// with a location: a location unknown or hidden from p is a 404, a disabled
// place or coupons switched off answer Disabled and no coupons.
func (s *Service) ActiveCoupons(ctx context.Context, p *posgate.Principal, posSystemID string, req *ActiveCouponsRequest) (*CouponSearchResult, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	loc, err := s.posLocation(ctx, p, posSystemID, req.PosLocationID)
	if err != nil {
		return nil, err
	}
	page, size := intOr(req.Page, 1), intOr(req.PageSize, DefaultCouponPageSize)
	out := &CouponSearchResult{Data: []CouponCodeDisplay{}, Page: PageModel{Page: page, PageSize: size}, PosStatus: placeStatus(loc, posgate.FeatureCoupons)}
	if out.PosStatus != posgate.PosAccepted {
		return out, nil
	}
	// In the stores' precision, so that a coupon the store lists is never
	// Expired in the answer.
	now := posgate.Timestamp(s.now())
	res, err := s.store.ListActiveCoupons(ctx, posgate.ActiveCouponQuery{POSSystemID: posSystemID, CompanyID: loc.CompanyID, LocationID: loc.ID,
		At: now, Offset: (page - 1) * size, Limit: size})
	if err != nil {
		return nil, err
	}
	out.Data = displayCoupons(res.Coupons, now)
	out.Page.Total = res.Total
	return out, nil
}
