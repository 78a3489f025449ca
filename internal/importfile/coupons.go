package importfile

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/codec/datetime"
	"github.com/posgate/posgate/internal/service"
)

// The coupon files of the command line, the portal and the operator API's
// bulk issue: JSON ({"items": [CouponInput, …]}) and CSV.

// ReadCouponsJSON reads a coupon file in the operator API's import format,
// {"items": [CouponInput, …]}, one item at a time, so that a large file is
// never held whole. Unknown properties are errors, reported with their path
// (items[3].cde).
func ReadCouponsJSON(r io.Reader) iter.Seq2[*service.CouponInput, error] {
	return CouponItems(r, "application/json")
}

// CouponItems decodes the "items" array of a coupon batch in the format
// contentType names (JSON or XML, as the codec reads bodies) as it is read,
// for IssueCouponBatch and ImportCoupons; the caller has checked the
// content type.
func CouponItems(r io.Reader, contentType string) iter.Seq2[*service.CouponInput, error] {
	return func(yield func(*service.CouponInput, error) bool) {
		stop := errors.New("stop")
		err := codec.StreamReader(r, contentType, "items", codec.Options{DisallowUnknown: true}, func(_ int, in *service.CouponInput) error {
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
	"userId", "email", "phone", "locationIds", "promotionId"}

// ReadCouponsCSV reads a coupon CSV file: a header row naming columns of
// CouponCSVColumns in any order, then one coupon per row. An empty cell is
// an absent value. Errors name the line, so that an operator can fix it.
func ReadCouponsCSV(r io.Reader) iter.Seq2[*service.CouponInput, error] {
	return func(yield func(*service.CouponInput, error) bool) {
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
			}
			var perr *csv.ParseError
			if errors.As(err, &perr) {
				// The reader goes on at the next record: name the line
				// and read on.
				if !yield(nil, &service.LineError{Line: perr.StartLine, Err: posgate.Errorf(posgate.EINVALID, "the CSV record is malformed: %v", perr.Err)}) {
					return
				}
				continue
			} else if err != nil {
				yield(nil, csvError(err))
				return
			}
			line, _ := cr.FieldPos(0)
			in, err := couponFromCSV(cols, rec)
			if err != nil {
				if !yield(nil, &service.LineError{Line: line, Err: posgate.Errorf(posgate.EINVALID, "%v", err)}) {
					return
				}
				continue
			}
			in.Line = line
			if !yield(in, nil) {
				return
			}
		}
	}
}

// csvError reports a coupon file the CSV reader cannot read on.
func csvError(err error) error {
	return posgate.Errorf(posgate.EINVALID, "the CSV file is malformed: %v", err)
}

// couponFromCSV reads one row.
func couponFromCSV(cols, rec []string) (*service.CouponInput, error) {
	in := &service.CouponInput{}
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
				if err != nil || !datetime.InYearRange(t) {
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
		case "promotionId":
			in.PromotionID = v
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
