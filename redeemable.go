package posgate

import (
	"context"
	"time"
)

// Who a coupon is for, and who the customer of a sale is: the one rule that
// a sale (the ledger), a validation by transaction and the promotion
// evaluation's preview all apply (docs/api.md §5.4).

// CouponVerdict is whether a coupon can be redeemed and, when it cannot,
// why (Coupon.Redeemability).
type CouponVerdict int

// Coupon verdicts; each refusal has its own message in each answer.
const (
	CouponRedeemable      CouponVerdict = iota
	CouponAlreadyRedeemed               // Redeemed
	CouponWasCancelled                  // Cancelled (or any status but Issued)
	CouponHasExpired                    // Issued, past availableUntil
	CouponNotUsableHere                 // limited to other locations
	CouponNeedsCustomer                 // held, and no customer identified
	CouponOtherCustomer                 // held by someone the customer is not
)

// CouponRedeemer is the customer who would redeem a coupon: the loyalty
// user matched (UserID, "" for none) and the e-mail addresses and phone
// numbers the customer is known by: those the request gives and the
// matched user's own.
type CouponRedeemer struct {
	UserID string
	Emails []string
	Phones []string
}

// Add adds an e-mail address and a phone number the customer is known by;
// empty ones are skipped.
func (r *CouponRedeemer) Add(email, phone string) {
	if e := FoldEmail(email); e != "" {
		r.Emails = append(r.Emails, e)
	}
	if p := PhoneDigits(phone); p != "" {
		r.Phones = append(r.Phones, p)
	}
}

// AddUser makes u the matched user and adds its e-mail and phone.
func (r *CouponRedeemer) AddUser(u *LoyaltyUser) {
	r.UserID = u.ID
	r.Add(u.Email, u.Phone)
}

// anonymous reports whether the redeemer is known by nothing at all.
func (r *CouponRedeemer) anonymous() bool {
	return r.UserID == "" && len(r.Emails) == 0 && len(r.Phones) == 0
}

// knownBy reports whether the redeemer is known by the folded e-mail or the
// phone digits (an empty one matches nothing).
func (r *CouponRedeemer) knownBy(email, digits string) bool {
	for _, e := range r.Emails {
		if email != "" && e == email {
			return true
		}
	}
	for _, p := range r.Phones {
		if digits != "" && p == digits {
			return true
		}
	}
	return false
}

// Redeemability is the rule of whether coupon c can be redeemed at a
// location of its company at time at by r (docs/api.md §5.4). The coupon
// must be Issued and not past availableUntil, and usable at the location.
// A coupon held by a loyalty user can be redeemed by that user alone: its
// own owner e-mail and phone give it to no one else. A coupon with no
// loyalty user but an owner e-mail or phone can be redeemed by a customer
// known by that e-mail (without regard to case) or phone (its digits),
// enrolled in the loyalty programme or not. A coupon held by nobody can be
// redeemed by anyone. A held coupon is refused with CouponNeedsCustomer
// when nobody is identified (a loyalty user's coupon and no user matched;
// an owner e-mail or phone and no user, e-mail or phone at all), else with
// CouponOtherCustomer. A nil r is nobody.
func (c *Coupon) Redeemability(locationID string, at time.Time, r *CouponRedeemer) CouponVerdict {
	if r == nil {
		r = &CouponRedeemer{}
	}
	switch c.StatusAt(at) {
	case CouponIssued:
	case CouponRedeemed:
		return CouponAlreadyRedeemed
	case CouponExpired:
		return CouponHasExpired
	default:
		return CouponWasCancelled
	}
	if !c.UsableAt(locationID) {
		return CouponNotUsableHere
	}
	switch k := c.Keys(); {
	case c.UserID != "":
		if r.UserID == c.UserID {
			return CouponRedeemable
		}
		if r.UserID == "" {
			return CouponNeedsCustomer
		}
	case c.Email == "" && c.Phone == "":
		return CouponRedeemable
	case r.knownBy(k.Email, k.Phone):
		return CouponRedeemable
	case r.anonymous():
		return CouponNeedsCustomer
	}
	return CouponOtherCustomer
}

// CustomerFinder reads the loyalty users that MatchCustomer looks for: a
// ledger's transaction (LedgerTx), or a store through an adapter.
type CustomerFinder interface {
	FindUser(ctx context.Context, posSystemID, companyID, userID string) (*LoyaltyUser, error)
	UserIDsByEmail(ctx context.Context, posSystemID, companyID, emailNorm string) ([]string, error)
	UserIDsByPhone(ctx context.Context, posSystemID, companyID, digits string) ([]string, error)
}

// CustomerMatch is what MatchCustomer found.
type CustomerMatch struct {
	// ID is the matched user's id, "" for no one.
	ID string
	// User is the matched user when the match read it (by card number),
	// else nil.
	User *LoyaltyUser
	// Enrollable is true when the customer was named (card, e-mail or
	// phone) and nobody has it: a program with autoEnroll enrols them.
	Enrollable bool
}

// MatchCustomer is the rule that finds a customer's loyalty user in a
// company (docs/api.md §13.4): by card number (a user's id), else by the
// e-mail (without regard to case), else by the phone (its digits);
// whichever is given first decides, and an e-mail or phone that two users
// share matches no one.
func MatchCustomer(ctx context.Context, f CustomerFinder, posSystemID, companyID, card, email, phone string) (CustomerMatch, error) {
	var ids []string
	var err error
	switch {
	case card != "":
		u, err := f.FindUser(ctx, posSystemID, companyID, card)
		if err == nil {
			return CustomerMatch{ID: u.ID, User: u}, nil
		} else if ErrorCode(err) != ENOTFOUND {
			return CustomerMatch{}, err
		}
		return CustomerMatch{Enrollable: true}, nil
	case FoldEmail(email) != "":
		ids, err = f.UserIDsByEmail(ctx, posSystemID, companyID, FoldEmail(email))
	case PhoneDigits(phone) != "":
		ids, err = f.UserIDsByPhone(ctx, posSystemID, companyID, PhoneDigits(phone))
	default:
		return CustomerMatch{}, nil
	}
	switch {
	case err != nil:
		return CustomerMatch{}, err
	case len(ids) == 1:
		return CustomerMatch{ID: ids[0]}, nil
	}
	return CustomerMatch{Enrollable: len(ids) == 0}, nil
}
