package httpapi

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/ops"
)

// posStrictBody reads a POS body whose type forbids unknown properties
// (SearchUserCouponsDto).
var posStrictBody = bodyOpts{strict: true}

// Paging of the coupon search (contract.md §6).
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// Limits of the operator's coupon import: it is read whole before the
// store's transaction begins, so that a slow client never holds the store's
// write lock; larger sets go through several requests or the CLI.
const (
	maxCouponImportItems = 10_000
	maxCouponImportBytes = 16 << 20
)

// searchCouponsRequest is SearchUserCouponsDto (interface.md §2.2): every
// field is nullable and unknown properties are rejected.
type searchCouponsRequest struct {
	Code          *string `json:"code"`
	Email         *string `json:"email"`
	Phone         *string `json:"phone"`
	PosLocationID *string `json:"posLocationId"`
}

// given returns the trimmed value of an optional field, "" when absent.
func given(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

// Validate requires at least one of code, email and phone; a phone must
// have digits. Blank values count as absent.
func (q *searchCouponsRequest) Validate() error {
	v := posgate.ValidationError{}
	if given(q.Code) == "" && given(q.Email) == "" && given(q.Phone) == "" {
		v.Add("$", "At least one of code, email and phone is required.")
	} else if given(q.Phone) != "" && posgate.PhoneDigits(*q.Phone) == "" {
		v.Add("phone", "The phone field must contain digits.")
	}
	return v.Err()
}

// pageModel is PageModel (interface.md §2.4).
type pageModel struct {
	Page     int `json:"page"`
	PageSize int `json:"pageSize"`
	Total    int `json:"total"`
}

// couponDisplay is CouponCodeDisplayDto (interface.md §2.3): every nullable
// field is present, null when unset.
type couponDisplay struct {
	RewardProvider posgate.RewardProvider `json:"rewardProvider"`
	Code           *string                `json:"code"`
	Name           *string                `json:"name"`
	Title          *string                `json:"title"`
	PictureURL     *string                `json:"pictureUrl"`
	AvailableUntil *time.Time             `json:"availableUntil"`
	Status         posgate.CouponStatus   `json:"status"`
	Info           []posgate.CouponInfo   `json:"info"`
}

func displayCoupons(cs []*posgate.Coupon, now time.Time) []couponDisplay {
	out := make([]couponDisplay, len(cs))
	for i, c := range cs {
		out[i] = couponDisplay{RewardProvider: c.RewardProvider, Code: &c.Code, Name: c.Name, Title: c.Title, PictureURL: c.PictureURL,
			AvailableUntil: c.AvailableUntil, Status: c.StatusAt(now), Info: c.Info}
	}
	return out
}

// couponSearchResult is endpoint 2's answer: no data envelope, but data,
// page and posStatus at the top level (interface.md §2.1).
type couponSearchResult struct {
	Data      []couponDisplay   `json:"data"`
	Page      pageModel         `json:"page"`
	PosStatus posgate.PosStatus `json:"posStatus"`
}

// paging reads page (default 1) and pageSize (default 20, at most 100).
func paging(q url.Values) (page, size int, err error) {
	v := posgate.ValidationError{}
	read := func(name string, def, hi int, msg string) int {
		vals := q[name]
		if len(vals) == 0 {
			return def
		}
		n, err := strconv.Atoi(vals[0])
		if len(vals) > 1 || err != nil || n < 1 || n > hi {
			v.Add(name, msg)
		}
		return n
	}
	page = read("page", 1, math.MaxInt32, "The page query parameter must be one integer from 1 to 2147483647.")
	size = read("pageSize", defaultPageSize, maxPageSize, "The pageSize query parameter must be one integer from 1 to 100.")
	return page, size, v.Err()
}

// searchCoupons is endpoint 2. With posLocationId it searches the
// location's company and keeps the coupons usable there; without, every
// company of the POS system that the client may see. Companies that are
// disabled or have the coupons feature off contribute nothing; when no
// company is left (or the location's company, or the location, is such),
// posStatus is Disabled and data is empty.
func (s *Server) searchCoupons(r *http.Request, req *searchCouponsRequest) (int, any, error) {
	page, size, err := paging(r.URL.Query())
	if err != nil {
		return 0, nil, err
	}
	ctx := r.Context()
	posSystemID := r.PathValue("posSystemId")
	q := posgate.CouponQuery{POSSystemID: posSystemID, Code: given(req.Code), Email: given(req.Email), Phone: given(req.Phone),
		Offset: (page - 1) * size, Limit: size}
	if req.PosLocationID != nil && *req.PosLocationID != "" {
		loc, err := s.findLocation(ctx, posSystemID, *req.PosLocationID)
		if err != nil {
			return 0, nil, err
		}
		if placeStatus(loc, posgate.FeatureCoupons) == posgate.PosAccepted {
			q.CompanyIDs, q.LocationID = []string{loc.CompanyID}, loc.ID
		}
	} else {
		companies, err := s.store.ListCompanies(ctx, posSystemID)
		if err != nil {
			return 0, nil, err
		}
		for _, c := range companies {
			if canSee(principal(ctx), c.ID) && c.Status == posgate.StatusActive && c.Features.Coupons {
				q.CompanyIDs = append(q.CompanyIDs, c.ID)
			}
		}
	}
	out := couponSearchResult{Data: []couponDisplay{}, Page: pageModel{Page: page, PageSize: size}, PosStatus: posgate.PosDisabled}
	if len(q.CompanyIDs) > 0 {
		res, err := s.store.SearchCoupons(ctx, q)
		if err != nil {
			return 0, nil, err
		}
		out.Data = displayCoupons(res.Coupons, s.now())
		out.Page.Total = min(res.Total, math.MaxInt32)
		out.PosStatus = posgate.PosAccepted
	}
	return http.StatusOK, out, nil
}

// lookupCouponsRequest is the v2 coupon lookup (interface.md §2.6).
type lookupCouponsRequest struct {
	PosLocationID *string `json:"posLocationId"`
	Code          *string `json:"code"`
}

// Validate requires both fields.
func (q *lookupCouponsRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "posLocationId", q.PosLocationID)
	if given(q.Code) == "" {
		v.Add("code", "The code field is required.")
	}
	return v.Err()
}

type couponCodes struct {
	CouponCodes []couponDisplay `json:"couponCodes"`
}

// lookupCoupons is endpoint 3: the coupon of the location's company with
// the code (without regard to case) if it is usable at the location; an
// empty list when there is none, or when the company or location is
// disabled or the coupons feature is off.
func (s *Server) lookupCoupons(r *http.Request, req *lookupCouponsRequest) (int, any, error) {
	ctx := r.Context()
	posSystemID := r.PathValue("posSystemId")
	loc, err := s.findLocation(ctx, posSystemID, *req.PosLocationID)
	if err != nil {
		return 0, nil, err
	}
	out := couponCodes{CouponCodes: []couponDisplay{}}
	if placeStatus(loc, posgate.FeatureCoupons) == posgate.PosAccepted {
		res, err := s.store.SearchCoupons(ctx, posgate.CouponQuery{POSSystemID: posSystemID, CompanyIDs: []string{loc.CompanyID},
			Code: given(req.Code), LocationID: loc.ID, Limit: 1})
		if err != nil {
			return 0, nil, err
		}
		out.CouponCodes = displayCoupons(res.Coupons, s.now())
	}
	return http.StatusOK, envelope{out}, nil
}

// lookupUsersRequest is the loyalty-card user lookup (interface.md §2.7).
type lookupUsersRequest struct {
	PosLocationID *string `json:"posLocationId"`
	Keyword       *string `json:"keyword"`
	keyword       posgate.UserKeyword
}

// Validate requires the location and a keyword of at least 3 characters.
func (q *lookupUsersRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "posLocationId", q.PosLocationID)
	if given(q.Keyword) == "" {
		v.Add("keyword", "The keyword field is required.")
	} else if k, err := posgate.ParseUserKeyword(*q.Keyword); err != nil {
		var e *posgate.Error
		errors.As(err, &e)
		for _, m := range e.Fields["keyword"] {
			v.Add("keyword", m)
		}
	} else {
		q.keyword = k
	}
	return v.Err()
}

// loyaltyUserView is a loyalty user as endpoint 4 shows it (interface.md
// §2.7).
type loyaltyUserView struct {
	ID        string `json:"id"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Gender    string `json:"gender"`
	Phone     string `json:"phone"`
	Email     string `json:"email"`
	Stamps    int32  `json:"stamps"`
	Points    int32  `json:"points"`
}

type loyaltyUsers struct {
	Users []loyaltyUserView `json:"users"`
}

// lookupUsers is endpoint 4: up to 50 users of the location's company
// matching the keyword, exact matches first; an empty list when the company
// or location is disabled or the coupons feature (which covers the loyalty
// programme) is off.
func (s *Server) lookupUsers(r *http.Request, req *lookupUsersRequest) (int, any, error) {
	ctx := r.Context()
	posSystemID := r.PathValue("posSystemId")
	loc, err := s.findLocation(ctx, posSystemID, *req.PosLocationID)
	if err != nil {
		return 0, nil, err
	}
	out := loyaltyUsers{Users: []loyaltyUserView{}}
	if placeStatus(loc, posgate.FeatureCoupons) == posgate.PosAccepted {
		us, err := s.store.SearchLoyaltyUsers(ctx, posSystemID, loc.CompanyID, req.keyword)
		if err != nil {
			return 0, nil, err
		}
		for _, u := range us {
			out.Users = append(out.Users, loyaltyUserView{ID: u.ID, FirstName: u.FirstName, LastName: u.LastName, Gender: u.Gender,
				Phone: u.Phone, Email: u.Email, Stamps: u.Stamps, Points: u.Points})
		}
	}
	return http.StatusOK, envelope{out}, nil
}

// couponView is a coupon as the operator API shows it: every stored field,
// the status as the POS endpoints report it (Expired computed), null for
// absent owner fields and for locationIds when it is usable everywhere.
type couponView struct {
	POSSystemID    string                 `json:"posSystemId"`
	CompanyID      string                 `json:"posCompanyId"`
	Code           string                 `json:"code"`
	RewardProvider posgate.RewardProvider `json:"rewardProvider"`
	Name           *string                `json:"name"`
	Title          *string                `json:"title"`
	PictureURL     *string                `json:"pictureUrl"`
	AvailableUntil *time.Time             `json:"availableUntil"`
	Status         posgate.CouponStatus   `json:"status"`
	Info           []posgate.CouponInfo   `json:"info"`
	UserID         *string                `json:"userId"`
	Email          *string                `json:"email"`
	Phone          *string                `json:"phone"`
	LocationIDs    []string               `json:"locationIds"`
	CreatedAt      time.Time              `json:"createdAt"`
	UpdatedAt      time.Time              `json:"updatedAt"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (s *Server) viewCoupon(c *posgate.Coupon) couponView {
	return couponView{POSSystemID: c.POSSystemID, CompanyID: c.CompanyID, Code: c.Code, RewardProvider: c.RewardProvider,
		Name: c.Name, Title: c.Title, PictureURL: c.PictureURL, AvailableUntil: c.AvailableUntil, Status: c.StatusAt(s.now()),
		Info: c.Info, UserID: orNull(c.UserID), Email: orNull(c.Email), Phone: orNull(c.Phone), LocationIDs: c.LocationIDs,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// couponResult answers a coupon or the error.
func (s *Server) couponResult(status int, c *posgate.Coupon, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return status, envelope{s.viewCoupon(c)}, nil
}

func (s *Server) issueCoupon(r *http.Request, req *ops.CouponInput) (int, any, error) {
	c, err := ops.IssueCoupon(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req)
	return s.couponResult(http.StatusCreated, c, err)
}

type importResult struct {
	CreatedCount int `json:"createdCount"`
}

// importCoupons issues up to maxCouponImportItems coupons from
// {"items": [...]}, all or none: every item is validated first (400 lists
// the faulty ones), then all are stored in one transaction.
func (s *Server) importCoupons(w http.ResponseWriter, r *http.Request) {
	var inputs []*ops.CouponInput
	var err error = posgate.Errorf(posgate.EUNSUPPORTED, "Send the body as application/json.")
	if codec.KindOf(r.Header.Get("Content-Type")) == codec.JSON {
		r.Body = http.MaxBytesReader(w, r.Body, maxCouponImportBytes)
		err = codec.StreamArray(r, "items", codec.Options{DisallowUnknown: true}, func(i int, in *ops.CouponInput) error {
			if i >= maxCouponImportItems {
				return posgate.Errorf(posgate.ETOOLARGE, "An import holds at most %d coupons; send more in several requests.", maxCouponImportItems)
			}
			inputs = append(inputs, in)
			return nil
		})
	}
	var n int
	if err == nil {
		var cs []*posgate.Coupon
		if cs, err = ops.ValidateCoupons(r.PathValue("posSystemId"), r.PathValue("posCompanyId"), inputs); err == nil {
			n, err = s.store.ImportCoupons(r.Context(), func(yield func(*posgate.Coupon, error) bool) {
				for _, c := range cs {
					if !yield(c, nil) {
						return
					}
				}
			})
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, envelope{importResult{n}})
}

func (s *Server) getCoupon(r *http.Request) (int, any, error) {
	c, err := s.store.FindCoupon(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("code"))
	return s.couponResult(http.StatusOK, c, err)
}

// changeCoupon redeems or cancels an Issued coupon (409 for any other).
func (s *Server) changeCoupon(to posgate.CouponStatus) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		c, err := s.store.ChangeCouponStatus(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("code"), to)
		return s.couponResult(http.StatusOK, c, err)
	}
}

func (s *Server) createLoyaltyUser(r *http.Request, req *ops.LoyaltyUserInput) (int, any, error) {
	return created(ops.CreateLoyaltyUser(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId"), req))
}

func (s *Server) getLoyaltyUser(r *http.Request) (int, any, error) {
	return one(s.store.FindLoyaltyUser(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("userId")))
}

type updateLoyaltyUserRequest struct {
	FirstName *string `json:"firstName"`
	LastName  *string `json:"lastName"`
	Gender    *string `json:"gender"`
	Phone     *string `json:"phone"`
	Email     *string `json:"email"`
}

func (s *Server) updateLoyaltyUser(r *http.Request, req *updateLoyaltyUserRequest) (int, any, error) {
	return one(ops.UpdateLoyaltyUser(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("userId"),
		posgate.LoyaltyUserUpdate{FirstName: req.FirstName, LastName: req.LastName, Gender: req.Gender, Phone: req.Phone, Email: req.Email}))
}

// adjustBalancesRequest adds (or, negative, takes) stamps and points.
type adjustBalancesRequest struct {
	Stamps int32 `json:"stamps"`
	Points int32 `json:"points"`
}

// Validate requires a change.
func (q *adjustBalancesRequest) Validate() error {
	if q.Stamps == 0 && q.Points == 0 {
		v := posgate.ValidationError{}
		v.Add("$", "Give a non-zero stamps or points adjustment.")
		return v.Err()
	}
	return nil
}

func (s *Server) adjustLoyaltyUser(r *http.Request, req *adjustBalancesRequest) (int, any, error) {
	return one(ops.UpdateLoyaltyUser(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("userId"),
		posgate.LoyaltyUserUpdate{AddStamps: req.Stamps, AddPoints: req.Points}))
}
