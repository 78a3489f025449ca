package httpapi

import (
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/ops"
)

// Paging of the coupon search (contract.md §6).
const (
	defaultCouponPageSize = 20
	maxCouponPageSize     = 100
)

// maxCouponImportItems caps one bulk issue; bigger files go through the CLI.
const maxCouponImportItems = 100_000

// couponImportBodyBytes caps a bulk issue's body: 100,000 small coupons.
const couponImportBodyBytes = 32 << 20

// strictPOSBody is posBody with unknown properties refused, for the DTOs that
// interface.md marks "Unknown properties are not allowed".
var strictPOSBody = bodyOpts{strict: true}

// searchCouponsRequest is SearchUserCouponsDto (interface.md §2.2). A null
// and an empty string both mean "not given".
type searchCouponsRequest struct {
	Code          *string `json:"code"`
	Email         *string `json:"email"`
	Phone         *string `json:"phone"`
	PosLocationID *string `json:"posLocationId"`
}

func given(s *string) bool { return s != nil && *s != "" }

// criterion reports whether a search field was given: blanks only are as
// good as nothing, since codes and e-mails are matched trimmed.
func criterion(s *string) bool { return s != nil && strings.TrimSpace(*s) != "" }

func value(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Validate requires one of code, email and phone; a phone must hold digits,
// since phones are matched on their digits.
func (q *searchCouponsRequest) Validate() error {
	v := posgate.ValidationError{}
	if !criterion(q.Code) && !criterion(q.Email) && !criterion(q.Phone) {
		for _, f := range []string{"code", "email", "phone"} {
			v.Add(f, "One of code, email and phone is required.")
		}
	}
	if criterion(q.Phone) && posgate.PhoneDigits(*q.Phone) == "" {
		v.Add("phone", "The phone field must contain digits.")
	}
	return v.Err()
}

// couponCodeDisplay is CouponCodeDisplayDto (interface.md §2.3); status is
// the reported one (Expired computed).
type couponCodeDisplay struct {
	RewardProvider posgate.RewardProvider `json:"rewardProvider"`
	Code           string                 `json:"code"`
	Name           *string                `json:"name"`
	Title          *string                `json:"title"`
	PictureURL     *string                `json:"pictureUrl"`
	AvailableUntil *time.Time             `json:"availableUntil"`
	Status         posgate.CouponStatus   `json:"status"`
	Info           []posgate.CouponInfo   `json:"info"`
}

func displayCoupon(c *posgate.Coupon, now time.Time) couponCodeDisplay {
	return couponCodeDisplay{RewardProvider: c.RewardProvider, Code: c.Code, Name: c.Name, Title: c.Title,
		PictureURL: c.PictureURL, AvailableUntil: c.AvailableUntil, Status: c.StatusAt(now), Info: c.Info}
}

// pageModel is PageModel (interface.md §2.4).
type pageModel struct {
	Page     int `json:"page"`
	PageSize int `json:"pageSize"`
	Total    int `json:"total"`
}

// couponSearchResult is endpoint 2's answer: data, page and posStatus at the
// top level (interface.md §2.1), not inside a data envelope.
type couponSearchResult struct {
	Data      []couponCodeDisplay `json:"data"`
	Page      pageModel           `json:"page"`
	PosStatus posgate.PosStatus   `json:"posStatus"`
}

// pageParams reads ?page= (≥ 1, default 1) and ?pageSize= (1–100, default 20).
func pageParams(r *http.Request) (page, size int, err error) {
	v := posgate.ValidationError{}
	q := r.URL.Query()
	read := func(name string, def, lo, hi int) int {
		s := q.Get(name)
		if !q.Has(name) {
			return def
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			v.Add(name, "The "+name+" parameter must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi)+".")
		}
		return n
	}
	page = read("page", 1, 1, math.MaxInt32/maxCouponPageSize)
	size = read("pageSize", defaultCouponPageSize, 1, maxCouponPageSize)
	return page, size, v.Err()
}

// searchCoupons is endpoint 2. With posLocationId it searches the location's
// company and keeps the coupons usable there (a disabled place answers
// Disabled and no coupons); without, it searches every active company of the
// POS system with coupons on that the client may see, and answers Accepted.
func (s *Server) searchCoupons(r *http.Request, req *searchCouponsRequest) (int, any, error) {
	ctx := r.Context()
	page, size, err := pageParams(r)
	if err != nil {
		return 0, nil, err
	}
	posSystemID := r.PathValue("posSystemId")
	q := posgate.CouponQuery{POSSystemID: posSystemID, Code: value(req.Code), Email: value(req.Email), Phone: value(req.Phone),
		Offset: (page - 1) * size, Limit: size}
	out := couponSearchResult{Data: []couponCodeDisplay{}, Page: pageModel{Page: page, PageSize: size}, PosStatus: posgate.PosAccepted}
	if given(req.PosLocationID) {
		loc, err := s.findLocation(ctx, posSystemID, *req.PosLocationID)
		if err != nil {
			return 0, nil, err
		}
		if out.PosStatus = placeStatus(loc, posgate.FeatureCoupons); out.PosStatus != posgate.PosAccepted {
			return http.StatusOK, out, nil
		}
		q.CompanyIDs, q.LocationID = []string{loc.CompanyID}, loc.ID
	} else {
		companies, err := s.store.ListCompanies(ctx, posSystemID)
		if err != nil {
			return 0, nil, err
		}
		p := principal(ctx)
		for _, c := range companies {
			if canSee(p, c.ID) && c.Status == posgate.StatusActive && c.Features.Enabled(posgate.FeatureCoupons) {
				q.CompanyIDs = append(q.CompanyIDs, c.ID)
			}
		}
	}
	res, err := s.store.SearchCoupons(ctx, q)
	if err != nil {
		return 0, nil, err
	}
	now := s.now()
	for _, c := range res.Coupons {
		out.Data = append(out.Data, displayCoupon(c, now))
	}
	out.Page.Total = res.Total
	return http.StatusOK, out, nil
}

// lookupCouponRequest is the v2 lookup request (interface.md §2.6).
type lookupCouponRequest struct {
	PosLocationID *string `json:"posLocationId"`
	Code          *string `json:"code"`
}

// Validate requires both fields, non-empty.
func (q *lookupCouponRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "posLocationId", q.PosLocationID)
	required(v, "code", q.Code)
	return v.Err()
}

type couponCodesResult struct {
	CouponCodes []couponCodeDisplay `json:"couponCodes"`
}

// lookupCoupon is endpoint 3: the location company's coupon with the code
// (without regard to case) when it is usable at the location, else an
// empty list; a disabled place gets an empty list too.
func (s *Server) lookupCoupon(r *http.Request, req *lookupCouponRequest) (int, any, error) {
	ctx := r.Context()
	posSystemID := r.PathValue("posSystemId")
	loc, err := s.findLocation(ctx, posSystemID, *req.PosLocationID)
	if err != nil {
		return 0, nil, err
	}
	out := couponCodesResult{CouponCodes: []couponCodeDisplay{}}
	if placeStatus(loc, posgate.FeatureCoupons) != posgate.PosAccepted {
		return http.StatusOK, envelope{out}, nil
	}
	c, err := s.store.FindCoupon(ctx, posSystemID, loc.CompanyID, *req.Code)
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
	case err != nil:
		return 0, nil, err
	case len(c.LocationIDs) == 0 || slices.Contains(c.LocationIDs, loc.ID):
		out.CouponCodes = append(out.CouponCodes, displayCoupon(c, s.now()))
	}
	return http.StatusOK, envelope{out}, nil
}

// lookupUsersRequest is the loyalty-card user lookup request (§2.7).
type lookupUsersRequest struct {
	PosLocationID *string `json:"posLocationId"`
	Keyword       *string `json:"keyword"`

	keyword posgate.UserKeyword
}

// Validate requires the location and a keyword of at least 3 characters.
func (q *lookupUsersRequest) Validate() error {
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

// loyaltyUserDto is a loyalty user as §2.7 shows it.
type loyaltyUserDto struct {
	ID        string `json:"id"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Gender    string `json:"gender"`
	Phone     string `json:"phone"`
	Email     string `json:"email"`
	Stamps    int32  `json:"stamps"`
	Points    int32  `json:"points"`
}

type usersResult struct {
	Users []loyaltyUserDto `json:"users"`
}

// lookupUsers is endpoint 4: at most 50 of the location company's users
// matching the keyword, exact matches first; a disabled place (or coupons
// switched off, the switch of the loyalty programme too) gets an empty list.
func (s *Server) lookupUsers(r *http.Request, req *lookupUsersRequest) (int, any, error) {
	ctx := r.Context()
	posSystemID := r.PathValue("posSystemId")
	loc, err := s.findLocation(ctx, posSystemID, *req.PosLocationID)
	if err != nil {
		return 0, nil, err
	}
	out := usersResult{Users: []loyaltyUserDto{}}
	if placeStatus(loc, posgate.FeatureCoupons) != posgate.PosAccepted {
		return http.StatusOK, envelope{out}, nil
	}
	users, err := s.store.SearchLoyaltyUsers(ctx, posSystemID, loc.CompanyID, req.keyword)
	if err != nil {
		return 0, nil, err
	}
	for _, u := range users {
		out.Users = append(out.Users, loyaltyUserDto{ID: u.ID, FirstName: u.FirstName, LastName: u.LastName, Gender: u.Gender,
			Phone: u.Phone, Email: u.Email, Stamps: u.Stamps, Points: u.Points})
	}
	return http.StatusOK, envelope{out}, nil
}

// Operator API: coupons and loyalty users of a company.

// couponRequest is a coupon as an operator issues it: the same shape the
// CLI reads from files (ops.CouponInput); status defaults to Issued and
// rewardProvider to TwoReward.
type couponRequest = ops.CouponInput

// couponOf is the coupon q describes for the company in the path.
func couponOf(r *http.Request, q *couponRequest) *posgate.Coupon {
	return &posgate.Coupon{POSSystemID: r.PathValue("posSystemId"), CompanyID: r.PathValue("posCompanyId"), Code: q.Code,
		RewardProvider: q.RewardProvider, Name: q.Name, Title: q.Title, PictureURL: q.PictureURL, AvailableUntil: q.AvailableUntil,
		Status: q.Status, Info: q.Info, UserID: q.UserID, Email: q.Email, Phone: q.Phone, LocationIDs: q.LocationIDs}
}

// couponView is a coupon as the operator API shows it: every stored field,
// with status as reported (Expired computed) and storedStatus beside it.
type couponView struct {
	*posgate.Coupon
	Status       posgate.CouponStatus `json:"status"`
	StoredStatus posgate.CouponStatus `json:"storedStatus"`
	LocationIDs  []string             `json:"locationIds"`
}

func (s *Server) viewCoupon(c *posgate.Coupon, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{couponView{Coupon: c, Status: c.StatusAt(s.now()), StoredStatus: c.Status, LocationIDs: nonNil(c.LocationIDs)}}, nil
}

func (s *Server) createCoupon(r *http.Request, req *couponRequest) (int, any, error) {
	c := couponOf(r, req)
	if err := ops.IssueCoupon(r.Context(), s.store, c); err != nil {
		return 0, nil, err
	}
	_, out, err := s.viewCoupon(c, nil)
	return http.StatusCreated, out, err
}

type importResult struct {
	Created int `json:"createdCount"`
}

// importCoupons issues a batch {"items":[coupon…]} all-or-nothing.
func (s *Server) importCoupons(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, max(s.cfg.MaxBodyBytes, couponImportBodyBytes))
	var coupons []*posgate.Coupon
	var err error = posgate.Errorf(posgate.EUNSUPPORTED, "Send the body as application/json.")
	if codec.KindOf(r.Header.Get("Content-Type")) == codec.JSON {
		err = codec.StreamArray(r, "items", codec.Options{DisallowUnknown: true}, func(i int, item *couponRequest) error {
			if i >= maxCouponImportItems {
				return posgate.Errorf(posgate.ETOOLARGE, "A batch holds at most %d coupons; split the file.", maxCouponImportItems)
			}
			coupons = append(coupons, couponOf(r, item))
			return nil
		})
	}
	if err == nil && len(coupons) == 0 {
		v := posgate.ValidationError{}
		v.Add("items", "The items field must hold at least one coupon.")
		err = v.Err()
	}
	var n int
	if err == nil {
		n, err = ops.IssueCoupons(r.Context(), s.store, "items", coupons)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, envelope{importResult{Created: n}})
}

func (s *Server) getCoupon(r *http.Request) (int, any, error) {
	return s.viewCoupon(s.store.FindCoupon(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("code")))
}

// setCouponStatus cancels or redeems an Issued, unexpired coupon (409 for
// any other).
func (s *Server) setCouponStatus(to posgate.CouponStatus) func(r *http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		return s.viewCoupon(s.store.ChangeCouponStatus(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("code"), to))
	}
}

// loyaltyUserRequest is a new loyalty user.
type loyaltyUserRequest struct {
	ID        string `json:"id"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Gender    string `json:"gender"`
	Phone     string `json:"phone"`
	Email     string `json:"email"`
	Stamps    int32  `json:"stamps"`
	Points    int32  `json:"points"`
}

func (s *Server) createLoyaltyUser(r *http.Request, req *loyaltyUserRequest) (int, any, error) {
	u := &posgate.LoyaltyUser{POSSystemID: r.PathValue("posSystemId"), CompanyID: r.PathValue("posCompanyId"), ID: req.ID,
		FirstName: req.FirstName, LastName: req.LastName, Gender: req.Gender, Phone: req.Phone, Email: req.Email,
		Stamps: req.Stamps, Points: req.Points}
	return created(u, ops.AddLoyaltyUser(r.Context(), s.store, u))
}

func (s *Server) getLoyaltyUser(r *http.Request) (int, any, error) {
	return one(s.store.FindLoyaltyUser(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("userId")))
}

// updateLoyaltyUserRequest changes the fields it names and adjusts the
// balances by signed deltas.
type updateLoyaltyUserRequest struct {
	FirstName   *string `json:"firstName"`
	LastName    *string `json:"lastName"`
	Gender      *string `json:"gender"`
	Phone       *string `json:"phone"`
	Email       *string `json:"email"`
	StampsDelta int32   `json:"stampsDelta"`
	PointsDelta int32   `json:"pointsDelta"`
}

func (s *Server) updateLoyaltyUser(r *http.Request, req *updateLoyaltyUserRequest) (int, any, error) {
	return one(ops.ChangeLoyaltyUser(r.Context(), s.store, r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("userId"),
		posgate.LoyaltyUserUpdate{FirstName: req.FirstName, LastName: req.LastName, Gender: req.Gender, Phone: req.Phone, Email: req.Email,
			AddStamps: req.StampsDelta, AddPoints: req.PointsDelta}))
}
