package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/posgate/posgate"
)

// IssueCoupon completes (Normalize) and checks a coupon before storing it,
// so that the operator API and the CLI refuse the same coupons with the same
// messages.
func IssueCoupon(ctx context.Context, st posgate.Store, c *posgate.Coupon) error {
	c.Normalize()
	if err := c.Validate(); err != nil {
		return err
	}
	return st.CreateCoupon(ctx, c)
}

// IssueCoupons stores coupons all-or-nothing. Every coupon is checked
// before the store sees any, and a faulty one is reported under its position
// (field paths prefixed with prefix and its 0-based index, e.g.
// "items[3].code", as the body decoder names them), so that an operator can
// fix the line; the store's own refusals (a duplicate code, an unknown
// location) come back as "Item n: …" with the 1-based position.
func IssueCoupons(ctx context.Context, st posgate.Store, prefix string, coupons []*posgate.Coupon) (int, error) {
	for i, c := range coupons {
		c.Normalize()
		if err := c.Validate(); err != nil {
			return 0, itemFields(prefix, i, err)
		}
	}
	return st.ImportCoupons(ctx, func(yield func(*posgate.Coupon, error) bool) {
		for _, c := range coupons {
			if !yield(c, nil) {
				return
			}
		}
	})
}

// ChangeLoyaltyUser validates an update and applies it.
func ChangeLoyaltyUser(ctx context.Context, st posgate.Store, posSystemID, companyID, id string, upd posgate.LoyaltyUserUpdate) (*posgate.LoyaltyUser, error) {
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	return st.UpdateLoyaltyUser(ctx, posSystemID, companyID, id, upd)
}

// AddLoyaltyUser validates and stores a new loyalty user.
func AddLoyaltyUser(ctx context.Context, st posgate.Store, u *posgate.LoyaltyUser) error {
	if err := u.Validate(); err != nil {
		return err
	}
	return st.CreateLoyaltyUser(ctx, u)
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
