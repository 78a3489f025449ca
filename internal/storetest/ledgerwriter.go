package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// LedgerWriterStore is a store under RunLedgerWriter, with the hooks into
// it that the ledger writer's tests need beyond posgate.Store. A store's own
// tests build it, as they can reach the store's insides.
type LedgerWriterStore struct {
	// Store is a fresh, empty store that is closed when the test ends
	// (closing a closed store must do no harm).
	Store posgate.Store
	// Writer is the storekit.LedgerWriter behind Store's ApplyTransactions
	// of a single transaction.
	Writer *storekit.LedgerWriter
	// AbortSale makes the database fail, from now on, the insert of the
	// transaction with that transactionId: a store error in one sale of a
	// group, which rolls the group's transaction back.
	AbortSale func(t *testing.T, transactionID string)
}

// RunLedgerWriter runs the tests of the grouped ledger writer
// (storekit.LedgerWriter) on a store that uses it: the sales of a group are
// decided as if each had had a transaction of its own, in arrival order,
// each caller gets its own outcome, and no answered sale is lost. open must
// return a fresh store and its hooks; it is called once per subtest.
func RunLedgerWriter(t *testing.T, open func(t *testing.T) LedgerWriterStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, e *env, h LedgerWriterStore)
	}{
		{"GroupIsOneTransactionInArrivalOrder", testSaleGroupInArrivalOrder},
		{"GroupDecidesAsSingleTransactions", testSaleGroupDecidesAsSingles},
		{"GroupFailureRetriesEachSale", testSaleGroupFailureRetriesEach},
		{"GroupSkipsCallersThatLeft", testSaleGroupSkipsCallersThatLeft},
		{"ConcurrentSalesAreGroupedAndAllRecorded", testConcurrentSalesGrouped},
		{"ApplyAfterClose", testApplyAfterClose},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := open(t)
			e := &env{t: t, s: h.Store, clk: &clock{now: time.Date(2031, 5, 17, 10, 20, 30, 0, time.UTC)}}
			couponFixture(e)
			tc.fn(t, e, h)
		})
	}
}

// sales returns sales of 10.00 for card u1 with the transactionIds ids,
// each with an id of its own.
func (e *env) sales(ids ...string) []*posgate.TransactionInput {
	out := make([]*posgate.TransactionInput, len(ids))
	for i, id := range ids {
		out[i] = e.txInput(1, id, 1000)
		out[i].ID = uid()
	}
	return out
}

// applyGroup runs items through the writer as one group, with t's context
// for each caller unless ctxs are given.
func applyGroup(t *testing.T, h LedgerWriterStore, items []*posgate.TransactionInput, ctxs ...context.Context) ([]*posgate.TransactionOutcome, []error) {
	t.Helper()
	if ctxs == nil {
		ctxs = same(len(items), t.Context())
	}
	return h.Writer.ApplyGroup(ctxs, items)
}

// transactionStored reports whether the store holds acme's transaction id.
func transactionStored(t *testing.T, s posgate.Store, id string) bool {
	t.Helper()
	_, err := s.FindTransaction(t.Context(), "clover", "acme", id)
	if err != nil && !errors.Is(err, posgate.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// A group of sales for one customer is one transaction, applied in arrival
// order: each answer shows the balance after the sales before it.
func testSaleGroupInArrivalOrder(t *testing.T, e *env, h LedgerWriterStore) {
	items := e.sales("A", "B", "C")
	// The last to arrive is dated first: arrival order, not date order.
	items[2].Date = items[0].Date.Add(-time.Hour)
	outs, errs := applyGroup(t, h, items)
	for i, o := range outs {
		if errs[i] != nil || o.Status != posgate.OutcomeCreated {
			t.Fatalf("sale %d: %+v, %v", i, o, errs[i])
		}
		check(t, fmt.Sprintf("sale %d loyalty", i), answerOf(t, o).Loyalty,
			&posgate.TransactionLoyalty{UserID: "u1", PointsEarned: 10, StampsEarned: 1, Points: 130 + 10*int32(i), Stamps: 4 + int32(i)})
	}
	if g := h.Writer.Groups(); g != 1 {
		t.Errorf("%d groups applied, want 1", g)
	}
	u := must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(t.Context(), "clover", "acme", "u1"))
	check(t, "balances", [2]int32{u.Points, u.Stamps}, [2]int32{150, 6})
}

// Within a group, each sale is decided by what the sales before it wrote,
// and a rejected one is rolled back alone: the second sale of one coupon
// is refused it, the same transactionId again is a Duplicate with the
// first answer, with other content a conflict, and a refund beyond its
// sale is rejected while the rest of the group is recorded.
func testSaleGroupDecidesAsSingles(t *testing.T, e *env, h LedgerWriterStore) {
	e.coupon(issued("ONE"))
	items := e.sales("S1", "S2", "S1", "S1", "R1")
	items[0].CouponCodes = []string{"ONE"}
	items[1].CouponCodes = []string{"one"}
	items[2].CouponCodes = []string{"ONE"}
	items[3].RequestHash = "other"
	items[4].Type, items[4].Amount, items[4].OriginalTransactionID, items[4].CardNumber = posgate.TransactionRefund, -1001, "S1", ""
	outs, errs := applyGroup(t, h, items)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("sale %d: %v", i, err)
		}
	}
	check(t, "statuses", []string{outs[0].Status, outs[1].Status, outs[2].Status, outs[3].Status, outs[4].Status},
		[]string{posgate.OutcomeCreated, posgate.OutcomeCreated, posgate.OutcomeDuplicate, posgate.OutcomeRejected, posgate.OutcomeRejected})
	check(t, "first sale's coupon", answerOf(t, outs[0]).Coupons, []posgate.TransactionCoupon{{Code: "ONE", Status: posgate.CouponRedeemed}})
	msg := "Coupon 'ONE' has already been redeemed."
	check(t, "second sale's coupon", answerOf(t, outs[1]).Coupons, []posgate.TransactionCoupon{{Code: "ONE", Status: posgate.CouponRejected, ErrorMessage: &msg}})
	check(t, "duplicate's answer", string(outs[2].Answer), string(outs[0].Answer))
	checkErr(t, "other content", outs[3].Err, posgate.ErrConflict, "Transaction 'S1' is already recorded with other content.")
	checkErr(t, "over-refund", outs[4].Err, posgate.ErrConflict, "Refunding 10.01 would exceed sale 'S1': 0.00 of its 10.00 are refunded already.")
	for id, want := range map[string]bool{"S1": true, "S2": true, "R1": false} {
		if got := transactionStored(t, e.s, id); got != want {
			t.Errorf("transaction %s stored: %v, want %v", id, got, want)
		}
	}
	r := must[*posgate.CouponRedemption](t, "FindCouponRedemption")(e.s.FindCouponRedemption(t.Context(), "clover", "acme", "ONE"))
	check(t, "redeemed by", r.TransactionID, "S1")
}

// A store error in one sale loses no other: the group is rolled back and
// each sale applied again alone, each caller getting its own answer.
func testSaleGroupFailureRetriesEach(t *testing.T, e *env, h LedgerWriterStore) {
	h.AbortSale(t, "BOOM")
	outs, errs := applyGroup(t, h, e.sales("A", "BOOM", "B"))
	if errs[0] != nil || errs[1] == nil || errs[2] != nil || outs[0].Status != posgate.OutcomeCreated || outs[2].Status != posgate.OutcomeCreated {
		t.Fatalf("answers %+v, %v; want Created, an error, Created", outs, errs)
	}
	if h.Writer.Groups() != 0 {
		t.Errorf("the failed group counted as applied")
	}
	for id, want := range map[string]bool{"A": true, "BOOM": false, "B": true} {
		if got := transactionStored(t, e.s, id); got != want {
			t.Errorf("transaction %s stored: %v, want %v", id, got, want)
		}
	}
	u := must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(t.Context(), "clover", "acme", "u1"))
	check(t, "balances", [2]int32{u.Points, u.Stamps}, [2]int32{140, 5})
}

// A caller that gave up before its group was applied is told so and its
// sale is not recorded; the others of the group are.
func testSaleGroupSkipsCallersThatLeft(t *testing.T, e *env, h LedgerWriterStore) {
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	outs, errs := applyGroup(t, h, e.sales("A", "GONE", "B"), t.Context(), gone, t.Context())
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], context.Canceled) || outs[1] != nil {
		t.Fatalf("answers %+v, %v; want Created, canceled, Created", outs, errs)
	}
	if transactionStored(t, e.s, "GONE") || !transactionStored(t, e.s, "A") || !transactionStored(t, e.s, "B") {
		t.Error("wrong transactions stored")
	}
}

// Concurrent single sales are grouped (at least one group) and every one
// answered is recorded, each with its own coupon.
func testConcurrentSalesGrouped(t *testing.T, e *env, h LedgerWriterStore) {
	const n = 200
	type result struct {
		out []*posgate.TransactionOutcome
		err error
	}
	results := make(chan result, n)
	for i := range n {
		code := fmt.Sprintf("K%03d", i)
		e.coupon(issued(code))
		in := e.sales(fmt.Sprintf("T%03d", i))[0]
		in.CouponCodes = []string{code}
		go func() {
			out, err := e.s.ApplyTransactions(t.Context(), []*posgate.TransactionInput{in})
			results <- result{out, err}
		}()
	}
	for range n {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if a := answerOf(t, r.out[0]); r.out[0].Status != posgate.OutcomeCreated || a.Coupons[0].Status != posgate.CouponRedeemed {
			t.Fatalf("sale: %+v", r.out[0])
		}
	}
	if h.Writer.Groups() == 0 {
		t.Errorf("%d concurrent sales, not one group: not grouped", n)
	}
	_, total, err := e.s.ListTransactions(t.Context(), posgate.TransactionQuery{POSSystemID: "clover", CompanyID: "acme", Limit: 1})
	if err != nil || total != n {
		t.Fatalf("%d transactions recorded (%v), want %d", total, err, n)
	}
	u := must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(t.Context(), "clover", "acme", "u1"))
	check(t, "balances", [2]int32{u.Points, u.Stamps}, [2]int32{120 + 10*n, 3 + n})
}

// After Close, a single sale is refused with ErrClosed and not recorded.
func testApplyAfterClose(t *testing.T, e *env, h LedgerWriterStore) {
	h.Writer.Close()
	_, err := e.s.ApplyTransactions(t.Context(), e.sales("LATE"))
	if !errors.Is(err, storekit.ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
	if transactionStored(t, e.s, "LATE") {
		t.Error("a sale refused after Close was recorded")
	}
}
