package httpapi

import (
	"net/http"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/ops"
)

// maxCouponImportItems caps one bulk issue; bigger files go through the CLI.
const maxCouponImportItems = 100_000

// couponImportBodyBytes caps a bulk issue's body: 100,000 small coupons.
const couponImportBodyBytes = 32 << 20

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
