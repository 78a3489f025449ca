package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// Offline kits' allowances and offline redemptions (docs/api.md §24).

// allowance stores an allowance of acme's A1 for terminal T1 listing codes,
// with limit redemptions.
func (e *env) allowance(id string, limit int, codes ...string) *posgate.OfflineAllowance {
	e.t.Helper()
	now := e.clk.Now()
	a := &posgate.OfflineAllowance{ID: id, POSSystemID: "clover", CompanyID: "acme", LocationID: "A1", TerminalID: "T1",
		Salt: "AAECAwQFBgcICQoLDA0ODw", IssuedAt: posgate.Timestamp(now.Add(-time.Hour)).Truncate(time.Second),
		ExpiresAt: posgate.Timestamp(now.Add(23 * time.Hour)).Truncate(time.Second), MaxRedemptions: limit}
	for _, c := range codes {
		a.Coupons = append(a.Coupons, posgate.AllowedCoupon{CodeHash: posgate.KitCodeHash(a.Salt, c)})
	}
	if err := e.s.PutOfflineAllowance(e.t.Context(), a); err != nil {
		e.t.Fatalf("PutOfflineAllowance: %v", err)
	}
	return a
}

// testOfflineAllowance: an allowance comes back as stored (its hashes, not
// its coupons' expiries), only in its POS system; its id is unique.
func testOfflineAllowance(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	a := e.allowance("kit-1", 3, "C1", "C2")
	got := must[*posgate.OfflineAllowance](t, "FindOfflineAllowance")(e.s.FindOfflineAllowance(ctx, "clover", "kit-1"))
	check(t, "allowance", got, a)
	_, err := e.s.FindOfflineAllowance(ctx, "pax", "kit-1")
	checkErr(t, "another POS system's", err, posgate.ErrNotFound, "offline kit \"kit-1\" not found")
	err = e.s.PutOfflineAllowance(ctx, a)
	if posgate.ErrorCode(err) != posgate.ECONFLICT {
		t.Fatalf("the same id again: %v, want a conflict", err)
	}

	// The sweep: an allowance expired before the time given goes, unless
	// a redemption names it.
	e.coupon(issued("C1"))
	used := e.allowance("kit-used", 3, "C1")
	e.apply(e.txInput(1, "SWEEP-1", 100, func(in *posgate.TransactionInput) {
		in.CardNumber, in.CouponCodes = "", []string{"C1"}
		in.Offline = &posgate.OfflineClaim{AllowanceID: used.ID, MaxRedemptions: 3, Codes: map[string]bool{"c1": true}}
	}))
	n, err := e.s.DeleteExpiredOfflineAllowances(ctx, a.ExpiresAt)
	if err != nil || n != 0 {
		t.Fatalf("sweep at the expiry: %d, %v; want none (expired before it)", n, err)
	}
	n, err = e.s.DeleteExpiredOfflineAllowances(ctx, a.ExpiresAt.Add(time.Second))
	if err != nil || n != 1 {
		t.Fatalf("sweep after the expiry: %d, %v; want kit-1 alone", n, err)
	}
	_, err = e.s.FindOfflineAllowance(ctx, "clover", "kit-1")
	checkErr(t, "swept", err, posgate.ErrNotFound, "offline kit \"kit-1\" not found")
	must[*posgate.OfflineAllowance](t, "FindOfflineAllowance")(e.s.FindOfflineAllowance(ctx, "clover", "kit-used"))
}

// testOfflineRedemptions: sales at once, each redeeming under one
// allowance a coupon redeemed already, are honoured up to the allowance's
// limit and no further, whatever their order; a code is honoured once per
// allowance; the conflicts are listed newest first, paged.
func testOfflineRedemptions(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	const n, limit = 12, 5
	codes := make([]string, n)
	for i := range codes {
		codes[i] = fmt.Sprintf("OFF-%02d", i)
		e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: codes[i], Status: posgate.CouponRedeemed})
	}
	a := e.allowance("kit-2", limit, codes...)
	sale := func(id, code string) *posgate.TransactionInput {
		return e.txInput(1, id, 100, func(in *posgate.TransactionInput) {
			in.CardNumber, in.CouponCodes = "", []string{code}
			in.Offline = &posgate.OfflineClaim{AllowanceID: a.ID, MaxRedemptions: limit, Codes: map[string]bool{posgate.Fold(code): true}}
		})
	}
	var wg sync.WaitGroup
	honoured := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := sale(fmt.Sprintf("OFF-SALE-%02d", i), codes[i])
			in.ID = uid()
			out, err := e.s.ApplyTransactions(ctx, []*posgate.TransactionInput{in})
			if err != nil {
				t.Errorf("apply: %v", err)
				return
			}
			c := answerOf(t, out[0]).Coupons[0]
			honoured[i] = c.Status == posgate.CouponRedeemed
			if !honoured[i] && (c.ErrorMessage == nil || *c.ErrorMessage != fmt.Sprintf("Coupon '%s' has already been redeemed.", codes[i])) {
				t.Errorf("%s: %+v", codes[i], c)
			}
		}()
	}
	wg.Wait()
	count := 0
	for _, h := range honoured {
		if h {
			count++
		}
	}
	if count != limit {
		t.Fatalf("%d of %d offline redemptions honoured, want the allowance's %d", count, n, limit)
	}
	// A code honoured once under an allowance is not again (a second
	// allowance, with room), an hour later.
	e.clk.advance()
	b := e.allowance("kit-3", limit, codes[0])
	twice := func(id string) posgate.TransactionCoupon {
		in := sale(id, codes[0])
		in.Offline.AllowanceID = b.ID
		return answerOf(t, e.apply(in)[0]).Coupons[0]
	}
	if c := twice("OFF-TWICE-1"); c.Status != posgate.CouponRedeemed {
		t.Fatalf("first under kit-3: %+v", c)
	}
	if c := twice("OFF-TWICE-2"); c.Status != posgate.CouponRejected {
		t.Fatalf("the same code again under kit-3: %+v", c)
	}
	page, total, err := e.s.ListOfflineConflicts(ctx, "clover", "acme", 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if total != limit+1 || len(page) != 4 || page[0].AllowanceID != "kit-3" || page[0].TransactionID != "OFF-TWICE-1" ||
		page[0].Conflict != "Coupon 'OFF-00' has already been redeemed." || page[0].RecordedAt.Location() != time.UTC {
		t.Fatalf("conflicts: %d, first %+v", total, page[0])
	}
	rest, _, err := e.s.ListOfflineConflicts(ctx, "clover", "acme", 4, 4)
	if err != nil || len(rest) != 2 {
		t.Fatalf("the second page: %d, %v", len(rest), err)
	}
	if other, total, err := e.s.ListOfflineConflicts(ctx, "clover", "zeta", 0, 10); err != nil || total != 0 || len(other) != 0 {
		t.Fatalf("another company's conflicts: %d, %v", total, err)
	}
}
