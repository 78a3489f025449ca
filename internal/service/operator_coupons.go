package service

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// The operator's coupon and loyalty-user use cases, under a company p must
// reach.

// MaxCouponBatch caps one bulk issue through the operator API; bigger files
// go through the CLI's streaming import.
const MaxCouponBatch = 100_000

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
	// PromotionID is the promotion of the company the coupon carries.
	PromotionID string `json:"promotionId"`

	// Line is the line of a CSV file the coupon came from, for errors (0
	// where the input has no lines).
	Line int `json:"-"`
}

// coupon returns the coupon in describes for a company, normalised but not
// yet validated.
func (in *CouponInput) coupon(posSystemID, companyID string) *posgate.Coupon {
	c := &posgate.Coupon{
		POSSystemID: posSystemID, CompanyID: companyID, Code: in.Code, RewardProvider: in.RewardProvider,
		Name: in.Name, Title: in.Title, PictureURL: in.PictureURL, AvailableUntil: in.AvailableUntil, Status: in.Status,
		Info: in.Info, UserID: in.UserID, Email: in.Email, Phone: in.Phone, LocationIDs: in.LocationIDs,
		PromotionID: in.PromotionID,
	}
	c.Normalize()
	return c
}

// CouponView is a coupon as operators see it: every stored field, with
// status as reported to POS systems (Expired computed) and storedStatus
// beside it.
type CouponView struct {
	*posgate.Coupon
	Status       posgate.CouponStatus `json:"status"`
	StoredStatus posgate.CouponStatus `json:"storedStatus"`
	LocationIDs  []string             `json:"locationIds"`
	// RedeemedBy names the transaction that redeemed the coupon (docs/api.md
	// §13.8); absent when no transaction's redemption stands.
	RedeemedBy *posgate.CouponRedemption `json:"redeemedBy,omitempty"`
}

func (s *Service) viewCoupon(c *posgate.Coupon, err error) (*CouponView, error) {
	if err != nil {
		return nil, err
	}
	return &CouponView{Coupon: c, Status: c.StatusAt(s.now()), StoredStatus: c.Status, LocationIDs: nonNil(c.LocationIDs)}, nil
}

// IssueCoupon issues one coupon of a company p reaches.
func (s *Service) IssueCoupon(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, in *CouponInput) (*CouponView, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	c := in.coupon(posSystemID, companyID)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	err := s.audited(ctx, p, "coupon.issue", func(ctx context.Context, ch *change) error {
		ch.target, ch.after, ch.issued = companyTarget("coupon", c.Code, posSystemID, companyID), c, []*posgate.Coupon{c}
		return s.store.CreateCoupon(ctx, c)
	})
	return s.viewCoupon(c, err)
}

// CouponBatchResult is the answer of a bulk issue.
type CouponBatchResult struct {
	Created int `json:"createdCount"`
}

// IssueCouponBatch issues the coupons of items, all or none, for the
// operator API: items is read (it may be the request body, decoded as it
// is read) only once p's reach is checked, and at most MaxCouponBatch of
// them (ETOOLARGE beyond, without reading further). Every coupon is checked
// before the store sees any, and a faulty one is reported under its path
// ("items[3].code", 0-based, as the body decoder names them); the store's
// own refusals (a duplicate code, an unknown location) come back as
// "Item n: …" with the 1-based position.
func (s *Service) IssueCouponBatch(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, items iter.Seq2[*CouponInput, error]) (*CouponBatchResult, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	var coupons []*posgate.Coupon
	for in, err := range items {
		if err != nil {
			return nil, err
		}
		if len(coupons) >= MaxCouponBatch {
			return nil, posgate.Errorf(posgate.ETOOLARGE, "A batch holds at most %d coupons; split the file.", MaxCouponBatch)
		}
		coupons = append(coupons, in.coupon(posSystemID, companyID))
	}
	if len(coupons) == 0 {
		return nil, invalid("items", "The items field must hold at least one coupon.")
	}
	// Every bad item (up to MaxReportedItems) is named, so that one round
	// trip shows all there is to fix.
	v, bad := posgate.ValidationError{}, 0
	for i, c := range coupons {
		err := c.Validate()
		if err == nil {
			continue
		}
		var e *posgate.Error
		if !errors.As(itemFields("items", i, err), &e) || len(e.Fields) == 0 {
			return nil, posgate.ItemError(i+1, err)
		}
		for field, msgs := range e.Fields {
			for _, m := range msgs {
				v.Add(field, m)
			}
		}
		if bad++; bad == MaxReportedItems {
			break
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	var n int
	err := s.audited(ctx, p, "coupon.import", func(ctx context.Context, ch *change) error {
		var err error
		n, err = s.store.ImportCoupons(ctx, func(yield func(*posgate.Coupon, error) bool) {
			for _, c := range coupons {
				if !yield(c, nil) {
					return
				}
			}
		})
		ch.target, ch.after, ch.issued = companyTarget("coupons", companyID, posSystemID, companyID), importCounts{Created: n}, coupons
		return err
	})
	if err != nil {
		return nil, err
	}
	return &CouponBatchResult{Created: n}, nil
}

// MaxReportedItems is how many bad lines or items an import names before
// it stops reading and refuses: enough to fix a file in one go, few enough
// to read.
const MaxReportedItems = 100

// LineError is one bad line of a file. The file readers
// (importfile.ReadCouponsCSV) yield it and read on, so that an import can
// name every bad line; any other error from a reader ends the file.
type LineError struct {
	Line int
	Err  error
}

// Error implements error.
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the line's own error.
func (e *LineError) Unwrap() error { return e.Err }

// badItems collects the bad lines or items of an import, in file order.
type badItems struct {
	fields map[string][]string
	n      int
	lines  bool
}

// add records err under label ("line 7", "item 3"), with a validation
// error's fields spelled out; it reports whether the list is full.
func (b *badItems) add(label string, err error) bool {
	if b.fields == nil {
		b.fields = map[string][]string{}
	}
	b.n++
	b.lines = b.lines || strings.HasPrefix(label, "line ")
	var e *posgate.Error
	switch {
	case errors.As(err, &e) && len(e.Fields) > 0:
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, m := range e.Fields[k] {
				b.fields[label] = append(b.fields[label], k+": "+m)
			}
		}
	default:
		b.fields[label] = append(b.fields[label], posgate.ErrorMessage(err))
	}
	return b.n >= MaxReportedItems
}

// err is the refusal naming every bad line, nil when there is none.
func (b *badItems) err() error {
	if b.n == 0 {
		return nil
	}
	noun := "items"
	if b.lines {
		noun = "lines"
	}
	msg := fmt.Sprintf("%d %s are bad.", b.n, noun)
	switch {
	case b.n == 1:
		msg = fmt.Sprintf("1 %s is bad.", strings.TrimSuffix(noun, "s"))
	case b.n >= MaxReportedItems:
		msg = fmt.Sprintf("At least %d %s are bad (the first %d are listed).", b.n, noun, b.n)
	}
	return &posgate.Error{Code: posgate.EINVALID, Message: msg, Fields: b.fields}
}

// ImportCoupons issues the coupons of a file, all or none, for the CLI: it
// streams inputs into the store without holding them, so files of millions
// of coupons fit. A bad line (a LineError from the reader, or a coupon that
// fails validation) stops the storing but not the reading: every bad line,
// up to MaxReportedItems, is named in the refusal ("line 7", or "item 3"
// where the input has no lines), and nothing is stored.
func (s *Service) ImportCoupons(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, inputs iter.Seq2[*CouponInput, error]) (int, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return 0, err
	}
	var created int
	err := s.audited(ctx, p, "coupon.import", func(ctx context.Context, c *change) error {
		var err error
		created, err = s.importCoupons(ctx, posSystemID, companyID, inputs, &c.issued)
		c.target, c.after = companyTarget("coupons", companyID, posSystemID, companyID), importCounts{Created: created}
		return err
	})
	return created, err
}

// importCounts is what the audit entry of an import records: how many
// items it wrote, not the items.
type importCounts struct {
	Created int `json:"created"`
	Updated int `json:"updated"`
}

// importCoupons streams a coupon file into the store, and adds the
// coupons issued to a loyalty user to owned (the terminal channel's
// CouponIssued; the others are not kept).
func (s *Service) importCoupons(ctx context.Context, posSystemID, companyID string, inputs iter.Seq2[*CouponInput, error], owned *[]*posgate.Coupon) (int, error) {
	return s.store.ImportCoupons(ctx, func(yield func(*posgate.Coupon, error) bool) {
		for in, err := range checkedCoupons(posSystemID, companyID, inputs) {
			var c *posgate.Coupon
			if err == nil {
				c = in.coupon(posSystemID, companyID)
				if c.UserID != "" && c.Status == posgate.CouponIssued {
					*owned = append(*owned, c)
				}
			}
			if !yield(c, err) {
				return
			}
		}
	})
}

// CheckCoupons reads a coupon file whole and checks each coupon as
// ImportCoupons does, for the CLI, which sends the file through the
// operator API: a refusal names every bad line ("line 7", or "item 3" where
// the input has no lines) before anything is sent, and the coupons are
// answered only when none is bad.
func CheckCoupons(posSystemID, companyID string, inputs iter.Seq2[*CouponInput, error]) ([]*CouponInput, error) {
	var out []*CouponInput
	for in, err := range checkedCoupons(posSystemID, companyID, inputs) {
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// checkedCoupons passes the valid inputs on while no bad one was seen; a
// bad line stops the passing but not the reading, and the error naming
// every bad line (up to MaxReportedItems) comes last.
func checkedCoupons(posSystemID, companyID string, inputs iter.Seq2[*CouponInput, error]) iter.Seq2[*CouponInput, error] {
	return func(yield func(*CouponInput, error) bool) {
		var bad badItems
		n := 0
		for in, err := range inputs {
			if err != nil {
				var le *LineError
				if !errors.As(err, &le) {
					if bad.n == 0 {
						yield(nil, err)
						return
					}
					bad.add("file", err)
					break
				}
				if bad.add(fmt.Sprintf("line %d", le.Line), le.Err) {
					break
				}
				continue
			}
			n++
			if err := in.coupon(posSystemID, companyID).Validate(); err != nil {
				label := fmt.Sprintf("item %d", n)
				if in.Line > 0 {
					label = fmt.Sprintf("line %d", in.Line)
				}
				if bad.add(label, err) {
					break
				}
				continue
			}
			if bad.n == 0 && !yield(in, nil) {
				return
			}
		}
		if err := bad.err(); err != nil {
			yield(nil, err)
		}
	}
}

// itemFields moves a validation error's fields under the item's path.
func itemFields(prefix string, i int, err error) error {
	var e *posgate.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return posgate.ItemError(i+1, err)
	}
	v := posgate.ValidationError{}
	for field, msgs := range e.Fields {
		for _, m := range msgs {
			v.Add(fmt.Sprintf("%s[%d].%s", prefix, i, field), m)
		}
	}
	return v.Err()
}

// FindCoupon returns a coupon of a company p reaches (the code without
// regard to case).
func (s *Service) FindCoupon(ctx context.Context, p *posgate.Principal, posSystemID, companyID, code string) (*CouponView, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	v, err := s.viewCoupon(s.store.FindCoupon(ctx, posSystemID, companyID, code))
	if err != nil || v.StoredStatus != posgate.CouponRedeemed {
		return v, err
	}
	r, err := s.store.FindCouponRedemption(ctx, posSystemID, companyID, code)
	if err == nil {
		v.RedeemedBy = r
	} else if posgate.ErrorCode(err) != posgate.ENOTFOUND {
		return nil, err
	}
	return v, nil
}

// SetCouponStatus redeems or cancels an Issued, unexpired coupon (ECONFLICT
// for any other): the only changes an operator makes to an issued coupon.
func (s *Service) SetCouponStatus(ctx context.Context, p *posgate.Principal, posSystemID, companyID, code string, to posgate.CouponStatus) (*CouponView, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if to != posgate.CouponRedeemed && to != posgate.CouponCancelled {
		return nil, invalid("status", fmt.Sprintf("A coupon can only be set %s or %s.", posgate.CouponRedeemed, posgate.CouponCancelled))
	}
	action := "coupon.redeem"
	if to == posgate.CouponCancelled {
		action = "coupon.cancel"
	}
	var out *posgate.Coupon
	err := s.audited(ctx, p, action, func(ctx context.Context, c *change) error {
		before, err := s.store.FindCoupon(ctx, posSystemID, companyID, code)
		if err != nil {
			return err
		}
		if out, err = s.store.ChangeCouponStatus(ctx, posSystemID, companyID, code, to); err != nil {
			return err
		}
		c.target, c.before, c.after = companyTarget("coupon", out.Code, posSystemID, companyID), before, out
		return nil
	})
	return s.viewCoupon(out, err)
}

// CreateLoyaltyUser adds a loyalty user to a company p reaches. The card is
// the same shape the loyalty-card lookup answers with; an empty id is
// generated ("u-" and 16 random characters).
func (s *Service) CreateLoyaltyUser(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, card *posgate.LoyaltyCard) (*posgate.LoyaltyUser, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	u := &posgate.LoyaltyUser{POSSystemID: posSystemID, CompanyID: companyID, LoyaltyCard: *card}
	if u.ID == "" {
		u.ID = "u-" + randomID()
	}
	if err := u.Validate(); err != nil {
		return nil, err
	}
	err := s.audited(ctx, p, "loyalty-user.create", func(ctx context.Context, c *change) error {
		c.target, c.after = companyTarget("loyalty-user", u.ID, posSystemID, companyID), u
		return s.store.CreateLoyaltyUser(ctx, u)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// FindLoyaltyUser returns a loyalty user of a company p reaches, with its
// latest transactions.
func (s *Service) FindLoyaltyUser(ctx context.Context, p *posgate.Principal, posSystemID, companyID, userID string) (*LoyaltyUserView, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	u, err := s.store.FindLoyaltyUser(ctx, posSystemID, companyID, userID)
	if err != nil {
		return nil, err
	}
	recent, err := s.recentTransactions(ctx, u)
	if err != nil {
		return nil, err
	}
	return &LoyaltyUserView{LoyaltyUser: u, RecentTransactions: recent}, nil
}

// UpdateLoyaltyUserRequest changes the fields it names and adjusts the
// balances by signed deltas (applied atomically, so two tills adding
// stamps at once both count).
type UpdateLoyaltyUserRequest struct {
	FirstName   *string `json:"firstName"`
	LastName    *string `json:"lastName"`
	Gender      *string `json:"gender"`
	Phone       *string `json:"phone"`
	Email       *string `json:"email"`
	StampsDelta int32   `json:"stampsDelta"`
	PointsDelta int32   `json:"pointsDelta"`
}

func (q *UpdateLoyaltyUserRequest) update() posgate.LoyaltyUserUpdate {
	return posgate.LoyaltyUserUpdate{FirstName: q.FirstName, LastName: q.LastName, Gender: q.Gender, Phone: q.Phone, Email: q.Email,
		AddStamps: q.StampsDelta, AddPoints: q.PointsDelta}
}

// Validate checks the fields as the domain does for a new user.
func (q *UpdateLoyaltyUserRequest) Validate() error {
	upd := q.update()
	return upd.Validate()
}

// UpdateLoyaltyUser changes a loyalty user of a company p reaches.
func (s *Service) UpdateLoyaltyUser(ctx context.Context, p *posgate.Principal, posSystemID, companyID, userID string, req *UpdateLoyaltyUserRequest) (*posgate.LoyaltyUser, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var out *posgate.LoyaltyUser
	err := s.audited(ctx, p, "loyalty-user.update", func(ctx context.Context, c *change) error {
		before, err := s.store.FindLoyaltyUser(ctx, posSystemID, companyID, userID)
		if err != nil {
			return err
		}
		out, err = s.store.UpdateLoyaltyUser(ctx, posSystemID, companyID, userID, req.update())
		c.target, c.before, c.after = companyTarget("loyalty-user", userID, posSystemID, companyID), before, out
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CompanyCouponPage is a page of a company's coupons found by the
// operator's search.
type CompanyCouponPage struct {
	Coupons []*CouponView `json:"coupons"`
	Page    PageModel     `json:"page"`
}

// SearchCompanyCoupons searches a company p reaches for coupons by code,
// e-mail or phone, as the POS's coupon search does (req.PosLocationID is
// ignored): the portal's coupon page.
func (s *Service) SearchCompanyCoupons(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *SearchCouponsRequest) (*CompanyCouponPage, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	page, size := intOr(req.Page, 1), intOr(req.PageSize, DefaultCouponPageSize)
	res, err := s.store.SearchCoupons(ctx, posgate.CouponQuery{POSSystemID: posSystemID, CompanyIDs: []string{companyID},
		Code: value(req.Code), Email: value(req.Email), Phone: value(req.Phone), Offset: (page - 1) * size, Limit: size})
	if err != nil {
		return nil, err
	}
	out := &CompanyCouponPage{Coupons: []*CouponView{}, Page: PageModel{Page: page, PageSize: size, Total: res.Total}}
	for _, c := range res.Coupons {
		v, err := s.viewCoupon(c, nil)
		if err != nil {
			return nil, err
		}
		out.Coupons = append(out.Coupons, v)
	}
	return out, nil
}

// SearchCompanyLoyaltyUsers finds at most posgate.MaxUserMatches loyalty
// users of a company p reaches by a keyword (a name, an e-mail address or
// a phone number, as the POS's lookup takes): the portal's loyalty page.
func (s *Service) SearchCompanyLoyaltyUsers(ctx context.Context, p *posgate.Principal, posSystemID, companyID, keyword string) ([]*posgate.LoyaltyUser, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	k, err := posgate.ParseUserKeyword(keyword)
	if err != nil {
		return nil, err
	}
	users, err := s.store.SearchLoyaltyUsers(ctx, posSystemID, companyID, k)
	if err != nil {
		return nil, err
	}
	return nonNil(users), nil
}
