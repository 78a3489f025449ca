package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// TestClaimCouponAgreesWithRedeemability holds the ledger's fast path
// (ClaimCoupon's conditional UPDATE, posgate.LedgerFolding) to the one
// rule, posgate.Coupon.Redeemability, over every combination of status,
// expiry (the boundary included), location limit and owner, for no
// customer and for two users: the database redeems a coupon only when
// the rule would, and redeems every coupon the rule would redeem for the
// matched user alone (a coupon owned by an e-mail or phone without a user
// is left to the rule, which the ledger then runs).
func TestClaimCouponAgreesWithRedeemability(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	db := open(t, filepath.Join(t.TempDir(), "posgate.db"), Options{Now: fixedClock(now)})
	till(t, db)
	ctx := t.Context()
	users := map[string]*posgate.LoyaltyUser{}
	for _, u := range []*posgate.LoyaltyUser{
		{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: "u1", Email: "One@Example.com", Phone: "+1 555 0101"}},
		{POSSystemID: "clover", CompanyID: "acme", LoyaltyCard: posgate.LoyaltyCard{ID: "u2", Email: "two@example.com"}},
	} {
		if err := db.CreateLoyaltyUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		users[u.ID] = u
	}
	statuses := []string{"Issued", "Redeemed", "Cancelled"}
	untils := []any{nil, formatTime(now.Add(-time.Second)), formatTime(now), formatTime(now.Add(time.Hour))}
	locations := []any{nil, `[]`, `["L1"]`, `["L2","L3"]`}
	owners := []posgate.Coupon{{}, {UserID: "u1"}, {UserID: "u2"}, {Email: "one@example.com"}, {Phone: "15550101"},
		{UserID: "u2", Email: "one@example.com"}, {Email: "nobody@example.com"}}
	n, claims := 0, 0
	for _, status := range statuses {
		for _, until := range untils {
			for _, loc := range locations {
				for _, owner := range owners {
					n++
					c := owner
					c.POSSystemID, c.CompanyID, c.Code, c.Status = "clover", "acme", fmt.Sprintf("Claim-%03d", n), posgate.CouponIssued
					if n%2 == 0 {
						c.PromotionID = "P1"
					}
					if err := db.CreateCoupon(ctx, &c); err != nil {
						t.Fatal(err)
					}
					if _, err := db.write.ExecContext(ctx, `UPDATE coupons SET status = ?, available_until = ?, location_ids = ?
						WHERE pos_system_id = 'clover' AND company_id = 'acme' AND code_norm = ?`, status, until, loc, posgate.Fold(c.Code)); err != nil {
						t.Fatal(err)
					}
					stored, err := db.FindCoupon(ctx, "clover", "acme", c.Code)
					if err != nil {
						t.Fatal(err)
					}
					for _, user := range []string{"", "u1", "u2"} {
						r := &posgate.CouponRedeemer{UserID: user}
						if u := users[user]; u != nil {
							r.AddUser(u)
						}
						verdict := stored.Redeemability("L1", now, r)
						byUserAlone := stored.UserID != "" || (stored.Email == "" && stored.Phone == "")
						claimed, promotion, ok := claim(t, db, stored.Code, "L1", user, now)
						if ok {
							claims++
						}
						name := fmt.Sprintf("%s (%s, until %v, locations %v, owner user %q e-mail %q phone %q) for user %q",
							c.Code, status, until, loc, owner.UserID, owner.Email, owner.Phone, user)
						switch {
						case ok && verdict != posgate.CouponRedeemable:
							t.Errorf("%s: the database redeemed it, the rule says %d", name, verdict)
						case !ok && verdict == posgate.CouponRedeemable && byUserAlone:
							t.Errorf("%s: the rule redeems it for the user alone, the database did not", name)
						case ok && (claimed != stored.Code || promotion != stored.PromotionID):
							t.Errorf("%s: claimed %q (promotion %q), want %q (%q)", name, claimed, promotion, stored.Code, stored.PromotionID)
						}
					}
				}
			}
		}
	}
	if claims == 0 {
		t.Fatal("no case was claimed")
	}
}

// errRollBack ends a test's write transaction without keeping it.
var errRollBack = errors.New("rolled back by the test")

// claim runs ClaimCoupon in a write transaction that it rolls back.
func claim(t *testing.T, db *DB, code, locationID, userID string, now time.Time) (claimed, promotionID string, ok bool) {
	t.Helper()
	err := db.inTx(t.Context(), "claim", func(tx *sql.Tx) error {
		l := db.newLedger(tx)
		l.claimed = &posgate.Transaction{ID: "sale"} // the link waits for the sale's row
		var err error
		if claimed, promotionID, ok, err = l.ClaimCoupon(t.Context(), "clover", "acme", code, locationID, userID, "sale", now); err != nil {
			return err
		}
		return errRollBack
	})
	if !errors.Is(err, errRollBack) {
		t.Fatal(err)
	}
	return claimed, promotionID, ok
}
