package ops

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
)

// CouponInput is a coupon as an operator issues it, through the operator
// API, a JSON file or a CSV row; the company comes from the path or the
// command line. Absent optional fields are null; rewardProvider defaults to
// TwoReward and status to Issued.
type CouponInput struct {
	Code           string                 `json:"code"`
	RewardProvider posgate.RewardProvider `json:"rewardProvider"`
	Name           *string                `json:"name"`
	Title          *string                `json:"title"`
	PictureURL     *string                `json:"pictureUrl"`
	AvailableUntil *time.Time             `json:"availableUntil"`
	Status         posgate.CouponStatus   `json:"status"`
	Info           []posgate.CouponInfo   `json:"info"`
	UserID         string                 `json:"userId"`
	Email          string                 `json:"email"`
	Phone          string                 `json:"phone"`
	LocationIDs    []string               `json:"locationIds"`
}

// Coupon returns the coupon the input describes for a company, normalised
// and validated.
func (in *CouponInput) Coupon(posSystemID, companyID string) (*posgate.Coupon, error) {
	c := &posgate.Coupon{
		POSSystemID: posSystemID, CompanyID: companyID, Code: in.Code, RewardProvider: in.RewardProvider,
		Name: in.Name, Title: in.Title, PictureURL: in.PictureURL, AvailableUntil: in.AvailableUntil, Status: in.Status,
		Info: in.Info, UserID: in.UserID, Email: in.Email, Phone: in.Phone, LocationIDs: in.LocationIDs,
	}
	c.Normalize()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// IssueCouponInput validates and stores one coupon given as CLI input.
func IssueCouponInput(ctx context.Context, st posgate.Store, posSystemID, companyID string, in *CouponInput) (*posgate.Coupon, error) {
	c, err := in.Coupon(posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	if err := st.CreateCoupon(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Coupons turns a sequence of inputs into coupons of a company, stopping at
// the first invalid one with its item number (ItemError), as
// Store.ImportCoupons wants them.
func Coupons(posSystemID, companyID string, inputs iter.Seq2[*CouponInput, error]) iter.Seq2[*posgate.Coupon, error] {
	return func(yield func(*posgate.Coupon, error) bool) {
		n := 0
		for in, err := range inputs {
			if err != nil {
				yield(nil, err)
				return
			}
			n++
			c, err := in.Coupon(posSystemID, companyID)
			if err != nil {
				yield(nil, posgate.ItemError(n, err))
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// MaxImportErrors bounds how many invalid items one validation report
// lists.
const MaxImportErrors = 100

// ValidateCoupons checks every input and returns the coupons, or an
// EINVALID error listing up to MaxImportErrors problems under
// "items[i].field" (0-based, like the request body's paths), so that one
// round trip shows everything to fix.
func ValidateCoupons(posSystemID, companyID string, inputs []*CouponInput) ([]*posgate.Coupon, error) {
	out := make([]*posgate.Coupon, 0, len(inputs))
	bad := posgate.ValidationError{}
	for i, in := range inputs {
		c, err := in.Coupon(posSystemID, companyID)
		var e *posgate.Error
		if errors.As(err, &e) {
			for field, msgs := range e.Fields {
				for _, m := range msgs {
					if len(bad) < MaxImportErrors {
						bad.Add(fmt.Sprintf("items[%d].%s", i, field), m)
					}
				}
			}
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadCouponsJSON reads a coupon file in the operator API's import format,
// {"items": [CouponInput, …]}, one item at a time. Unknown properties are
// errors, reported with their path (items[3].cde).
func ReadCouponsJSON(r io.Reader) iter.Seq2[*CouponInput, error] {
	return func(yield func(*CouponInput, error) bool) {
		req, err := http.NewRequest(http.MethodPost, "/", r)
		if err != nil {
			yield(nil, err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		stop := errors.New("stop")
		err = codec.StreamArray(req, "items", codec.Options{DisallowUnknown: true}, func(_ int, in *CouponInput) error {
			if !yield(in, nil) {
				return stop
			}
			return nil
		})
		if err != nil && err != stop {
			yield(nil, err)
		}
	}
}

// CouponCSVColumns are the columns a coupon CSV file may have, named as the
// JSON properties; only code is required. locationIds holds ids separated
// by ";", and info a JSON array.
var CouponCSVColumns = []string{"code", "rewardProvider", "name", "title", "pictureUrl", "availableUntil", "status", "info",
	"userId", "email", "phone", "locationIds"}

// ReadCouponsCSV reads a coupon CSV file: a header row naming columns of
// CouponCSVColumns in any order, then one coupon per row. An empty cell is
// an absent value. Errors name the line.
func ReadCouponsCSV(r io.Reader) iter.Seq2[*CouponInput, error] {
	return func(yield func(*CouponInput, error) bool) {
		cr := csv.NewReader(r)
		cr.ReuseRecord = true
		header, err := cr.Read()
		if err == io.EOF {
			return
		} else if err != nil {
			yield(nil, csvError(err))
			return
		}
		cols := make([]string, len(header))
		seen := map[string]bool{}
		for i, h := range header {
			h = strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF"))
			known := false
			for _, c := range CouponCSVColumns {
				known = known || c == h
			}
			if !known || seen[h] {
				yield(nil, posgate.Errorf(posgate.EINVALID, "line 1: column %q is unknown or repeated (columns: %s)", h, strings.Join(CouponCSVColumns, ", ")))
				return
			}
			seen[h], cols[i] = true, h
		}
		if !seen["code"] {
			yield(nil, posgate.Errorf(posgate.EINVALID, "line 1: the header has no code column"))
			return
		}
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				return
			} else if err != nil {
				yield(nil, csvError(err))
				return
			}
			line, _ := cr.FieldPos(0)
			in, err := couponFromCSV(cols, rec)
			if err != nil {
				yield(nil, posgate.Errorf(posgate.EINVALID, "line %d: %v", line, err))
				return
			}
			if !yield(in, nil) {
				return
			}
		}
	}
}

func csvError(err error) error {
	return posgate.Errorf(posgate.EINVALID, "the CSV file is malformed: %v", err)
}

// couponFromCSV reads one row.
func couponFromCSV(cols, rec []string) (*CouponInput, error) {
	in := &CouponInput{}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for i, v := range rec {
		switch cols[i] {
		case "code":
			in.Code = v
		case "rewardProvider":
			in.RewardProvider = posgate.RewardProvider(v)
		case "name":
			in.Name = opt(v)
		case "title":
			in.Title = opt(v)
		case "pictureUrl":
			in.PictureURL = opt(v)
		case "availableUntil":
			if v != "" {
				t, err := time.Parse(time.RFC3339Nano, v)
				if err != nil {
					return nil, fmt.Errorf("availableUntil %q is not an RFC 3339 date-time", v)
				}
				in.AvailableUntil = &t
			}
		case "status":
			in.Status = posgate.CouponStatus(v)
		case "info":
			if v != "" {
				if err := json.Unmarshal([]byte(v), &in.Info); err != nil {
					return nil, fmt.Errorf("info is not a JSON array of {title, items}: %v", err)
				}
			}
		case "userId":
			in.UserID = v
		case "email":
			in.Email = v
		case "phone":
			in.Phone = v
		case "locationIds":
			for _, id := range strings.Split(v, ";") {
				if id = strings.TrimSpace(id); id != "" {
					in.LocationIDs = append(in.LocationIDs, id)
				}
			}
		}
	}
	return in, nil
}

// LoyaltyUserInput is a loyalty user as an operator creates it; the id is
// generated when empty.
type LoyaltyUserInput struct {
	ID        string `json:"id"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Gender    string `json:"gender"`
	Phone     string `json:"phone"`
	Email     string `json:"email"`
	Stamps    int32  `json:"stamps"`
	Points    int32  `json:"points"`
}

// CreateLoyaltyUser validates and stores a loyalty user of a company.
func CreateLoyaltyUser(ctx context.Context, st posgate.Store, posSystemID, companyID string, in *LoyaltyUserInput) (*posgate.LoyaltyUser, error) {
	u := &posgate.LoyaltyUser{POSSystemID: posSystemID, CompanyID: companyID, ID: in.ID, FirstName: in.FirstName, LastName: in.LastName,
		Gender: in.Gender, Phone: in.Phone, Email: in.Email, Stamps: in.Stamps, Points: in.Points}
	if u.ID == "" {
		u.ID = "u-" + randomID()
	}
	if err := u.Validate(); err != nil {
		return nil, err
	}
	if err := st.CreateLoyaltyUser(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// UpdateLoyaltyUser validates and applies a change to a loyalty user.
func UpdateLoyaltyUser(ctx context.Context, st posgate.Store, posSystemID, companyID, id string, upd posgate.LoyaltyUserUpdate) (*posgate.LoyaltyUser, error) {
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	return st.UpdateLoyaltyUser(ctx, posSystemID, companyID, id, upd)
}
