package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// Loyalty programs and the ledger (posgate.ApplyLedger over each store's
// LedgerTx): what both stores must decide alike, concurrency included.

// txInput is a sale of amount (hundredths) at acme's A1 for card u1.
func (e *env) txInput(row int, id string, amount posgate.Amount, mod ...func(*posgate.TransactionInput)) *posgate.TransactionInput {
	in := &posgate.TransactionInput{Row: row, ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", e.clk.Now().UnixNano()%1e9*1000+int64(row)),
		POSSystemID: "clover", CompanyID: "acme", LocationID: "A1", TerminalID: "T1", TransactionID: id, Type: posgate.TransactionSale,
		Amount: amount, Date: e.clk.Now().Add(-time.Minute), CardNumber: "u1", CouponsEnabled: true, RequestHash: "h-" + id,
		Request: json.RawMessage(`{"transactionId":"` + id + `"}`),
		Answer:  posgate.TransactionAnswer{TransactionID: id, TransactionType: posgate.TransactionSale, PosStatus: posgate.PosAccepted}}
	for _, m := range mod {
		m(in)
	}
	return in
}

var txSeq struct {
	sync.Mutex
	n int
}

// uid returns a fresh UUID-shaped id.
func uid() string {
	txSeq.Lock()
	defer txSeq.Unlock()
	txSeq.n++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", txSeq.n)
}

func (e *env) apply(items ...*posgate.TransactionInput) []*posgate.TransactionOutcome {
	e.t.Helper()
	for _, it := range items {
		it.ID = uid()
	}
	out, err := e.s.ApplyTransactions(e.t.Context(), items)
	if err != nil {
		e.t.Fatalf("ApplyTransactions: %v", err)
	}
	return out
}

func answerOf(t *testing.T, o *posgate.TransactionOutcome) posgate.TransactionAnswer {
	t.Helper()
	var a posgate.TransactionAnswer
	if err := json.Unmarshal(o.Answer, &a); err != nil {
		t.Fatalf("answer %s: %v", o.Answer, err)
	}
	return a
}

func testLoyaltyProgram(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	_, err := e.s.FindLoyaltyProgram(ctx, "clover", "acme")
	checkErr(t, "program never set", err, posgate.ErrNotFound, `loyalty program of company "acme" not found`)
	p := &posgate.LoyaltyProgram{POSSystemID: "clover", CompanyID: "acme", PointsPerCurrencyUnit: 250, StampsPerSale: 2, MinimumAmountForStamp: 1000, AutoEnroll: true}
	must[struct{}](t, "PutLoyaltyProgram")(struct{}{}, e.s.PutLoyaltyProgram(ctx, p))
	at := e.clk.stamp()
	got := must[*posgate.LoyaltyProgram](t, "FindLoyaltyProgram")(e.s.FindLoyaltyProgram(ctx, "clover", "acme"))
	check(t, "program", got, &posgate.LoyaltyProgram{POSSystemID: "clover", CompanyID: "acme", PointsPerCurrencyUnit: 250, StampsPerSale: 2,
		MinimumAmountForStamp: 1000, AutoEnroll: true, UpdatedAt: &at})
	err = e.s.PutLoyaltyProgram(ctx, &posgate.LoyaltyProgram{POSSystemID: "clover", CompanyID: "nope"})
	checkErr(t, "program of an unknown company", err, posgate.ErrNotFound, `company "nope" not found`)
}

func testTransactionLedger(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.coupon(issued("C1"))
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "acme", Code: "C2", UserID: "u1"})
	e.coupon(&posgate.Coupon{POSSystemID: "clover", CompanyID: "zeta", Code: "Z9"})

	// A sale: 12.34 at the default program, two coupons, one of another
	// company (absent here).
	out := e.apply(e.txInput(1, "T1", 1234, func(in *posgate.TransactionInput) {
		in.SessionID, in.CouponCodes = "s-1", []string{"c1", "C2", "Z9"}
	}))
	if out[0].Status != posgate.OutcomeCreated {
		t.Fatalf("sale: %+v", out[0])
	}
	a := answerOf(t, out[0])
	check(t, "loyalty", a.Loyalty, &posgate.TransactionLoyalty{UserID: "u1", PointsEarned: 12, StampsEarned: 1, Points: 132, Stamps: 4})
	msg := "Coupon 'Z9' does not exist."
	check(t, "coupons", a.Coupons, []posgate.TransactionCoupon{{Code: "C1", Status: posgate.CouponRedeemed}, {Code: "C2", Status: posgate.CouponRedeemed},
		{Code: "Z9", Status: posgate.CouponRejected, ErrorMessage: &msg}})
	check(t, "receipt line", a.Receipt.LoyaltyText, "+12 points, balance 132")

	// The same content again: the first answer, nothing applied twice;
	// other content: a conflict; another id on the same session too.
	again := e.apply(e.txInput(1, "T1", 1234, func(in *posgate.TransactionInput) { in.SessionID = "s-1" }))
	if again[0].Status != posgate.OutcomeDuplicate || string(again[0].Answer) != string(out[0].Answer) {
		t.Fatalf("duplicate: %+v", again[0])
	}
	other := e.apply(e.txInput(1, "T1", 1234, func(in *posgate.TransactionInput) { in.RequestHash = "other" }),
		e.txInput(2, "T2", 100, func(in *posgate.TransactionInput) { in.SessionID = "s-1" }))
	checkErr(t, "other content", other[0].Err, posgate.ErrConflict, "Transaction 'T1' is already recorded with other content.")
	checkErr(t, "session taken", other[1].Err, posgate.ErrConflict, "Session 's-1' is already linked to transaction 'T1'.")
	// A sale that its settlement refuses: refused for that, whether or not
	// its id or session is taken; nothing of it stays.
	refuse := func(in *posgate.TransactionInput) {
		in.CouponCodes = []string{"C1", "C2"}
		in.Settle = &posgate.SaleSettlement{Evaluate: func(string, []posgate.EvaluationCoupon, func(string) bool) (*posgate.Evaluation, error) {
			return nil, posgate.Errorf(posgate.EINVALID, "Refused by the test.")
		}}
	}
	refused := e.apply(e.txInput(1, "T1", 1234, func(in *posgate.TransactionInput) { refuse(in); in.RequestHash = "other" }),
		e.txInput(2, "T2", 100, func(in *posgate.TransactionInput) { refuse(in); in.SessionID = "s-1" }),
		e.txInput(3, "T3", 100, refuse))
	for i, what := range []string{"refused sale, id taken", "refused sale, session taken", "refused sale"} {
		checkErr(t, what, refused[i].Err, posgate.ErrInvalid, "Refused by the test.")
	}
	if _, err := e.s.FindTransaction(ctx, "clover", "acme", "T3"); !errors.Is(err, posgate.ErrNotFound) {
		t.Fatalf("refused sale T3 recorded: %v", err)
	}
	u := must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, "clover", "acme", "u1"))
	check(t, "balances", [2]int32{u.Points, u.Stamps}, [2]int32{132, 4})

	// Refunds: part, then beyond the sale (rolled back alone), then the
	// rest in the same batch, applied in date order.
	refund := func(row int, id string, amount posgate.Amount, d time.Duration) *posgate.TransactionInput {
		return e.txInput(row, id, -amount, func(in *posgate.TransactionInput) {
			in.Type, in.OriginalTransactionID, in.CardNumber, in.Date = posgate.TransactionRefund, "T1", "", e.clk.Now().Add(d)
		})
	}
	out = e.apply(refund(1, "R3", 734, 3*time.Second), refund(2, "R1", 500, time.Second), refund(3, "R2", 800, 2*time.Second))
	check(t, "statuses", []string{out[0].Status, out[1].Status, out[2].Status}, []string{posgate.OutcomeCreated, posgate.OutcomeCreated, posgate.OutcomeRejected})
	checkErr(t, "over-refund", out[2].Err, posgate.ErrConflict, "Refunding 8.00 would exceed sale 'T1': 5.00 of its 12.34 are refunded already.")
	check(t, "partial", answerOf(t, out[1]).Loyalty, &posgate.TransactionLoyalty{UserID: "u1", PointsEarned: -5, StampsEarned: 0, Points: 127, Stamps: 4})
	check(t, "rest", answerOf(t, out[0]).Loyalty, &posgate.TransactionLoyalty{UserID: "u1", PointsEarned: -7, StampsEarned: -1, Points: 120, Stamps: 3})
	for _, code := range []string{"C1", "C2"} {
		c := must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", code))
		check(t, code+" after the whole refund", c.Status, posgate.CouponIssued)
	}
	_, err := e.s.FindCouponRedemption(ctx, "clover", "acme", "C1")
	checkErr(t, "restored coupon's redemption", err, posgate.ErrNotFound, `redemption of coupon "C1" not found`)
	_, err = e.s.FindTransaction(ctx, "clover", "acme", "R2")
	checkErr(t, "rejected refund", err, posgate.ErrNotFound, `transaction "R2" not found`)
	sale := must[*posgate.Transaction](t, "FindTransaction")(e.s.FindTransaction(ctx, "clover", "acme", "T1"))
	check(t, "sale", [4]any{sale.Amount, sale.RefundedAmount, sale.UserID, sale.SessionID}, [4]any{posgate.Amount(1234), posgate.Amount(1234), "u1", "s-1"})
	if sale.RedeemedCoupons != nil || string(sale.Request) != `{"transactionId":"T1"}` {
		t.Fatalf("sale: %+v", sale)
	}
	r1 := must[*posgate.Transaction](t, "FindTransaction")(e.s.FindTransaction(ctx, "clover", "acme", "R1"))
	check(t, "refund", [4]any{r1.Amount, r1.OriginalID, r1.OriginalTransactionID, r1.PointsEarned}, [4]any{posgate.Amount(-500), sale.ID, "T1", int32(-5)})
	bySession := must[*posgate.Transaction](t, "FindTransactionBySession")(e.s.FindTransactionBySession(ctx, "s-1"))
	check(t, "by session", bySession.ID, sale.ID)

	// Lists: newest first, filtered, paged.
	list, total, err := e.s.ListTransactions(ctx, posgate.TransactionQuery{POSSystemID: "clover", CompanyID: "acme", Limit: 2})
	if err != nil || total != 3 || len(list) != 2 || list[0].TransactionID != "R3" || list[1].TransactionID != "R2" && list[1].TransactionID != "R1" {
		t.Fatalf("list: %v %d %v", list, total, err)
	}
	for q, want := range map[posgate.TransactionQuery]int{
		{POSSystemID: "clover", CompanyID: "acme", UserID: "u1", Limit: 10}:                         3,
		{POSSystemID: "clover", CompanyID: "acme", UserID: "u2", Limit: 10}:                         0,
		{POSSystemID: "clover", CompanyID: "acme", LocationID: "A2", Limit: 10}:                     0,
		{POSSystemID: "clover", CompanyID: "acme", Day: e.clk.Now(), Limit: 10}:                     3,
		{POSSystemID: "clover", CompanyID: "acme", Day: e.clk.Now().Add(48 * time.Hour), Limit: 10}: 0,
		{POSSystemID: "clover", CompanyID: "zeta", Limit: 10}:                                       0,
		{POSSystemID: "clover", CompanyID: "acme", Offset: 10, Limit: 10}:                           3,
	} {
		_, total, err := e.s.ListTransactions(ctx, q)
		if err != nil || total != want {
			t.Errorf("list %+v: total %d (%v), want %d", q, total, err, want)
		}
	}

	// A coupon validated by transaction: redeemed once, the same answer
	// again with its first time.
	res, at, err := e.s.RedeemCouponForTransaction(ctx, sale, "c1", nil, "A1")
	if err != nil || res.Status != posgate.CouponRedeemed {
		t.Fatalf("validate: %+v %v", res, err)
	}
	e.clk.advance()
	res2, at2, err := e.s.RedeemCouponForTransaction(ctx, sale, "C1", nil, "A1")
	if err != nil || res2.Status != posgate.CouponRedeemed || !at2.Equal(at) {
		t.Fatalf("validate again: %+v %v %v (first at %v)", res2, at2, err, at)
	}
	r := must[*posgate.CouponRedemption](t, "FindCouponRedemption")(e.s.FindCouponRedemption(ctx, "clover", "acme", "C1"))
	check(t, "redemption", r, &posgate.CouponRedemption{ID: sale.ID, TransactionID: "T1", RedeemedAt: at})
}

// testConcurrentTransactions: the same transaction at once records one,
// answered alike; sales racing for one coupon: one wins.
func testConcurrentTransactions(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.coupon(issued("RACE"))
	const n = 20
	var wg sync.WaitGroup
	outs := make([]*posgate.TransactionOutcome, 2*n)
	errs := make([]error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			in := e.txInput(1, "SAME", 1000)
			in.ID = uid()
			o, err := e.s.ApplyTransactions(ctx, []*posgate.TransactionInput{in})
			if err == nil {
				outs[i] = o[0]
			}
			errs[i] = err
		}()
		go func() {
			defer wg.Done()
			in := e.txInput(1, fmt.Sprintf("RACE-%d", i), 100, func(in *posgate.TransactionInput) { in.CouponCodes, in.CardNumber = []string{"RACE"}, "" })
			in.ID = uid()
			o, err := e.s.ApplyTransactions(ctx, []*posgate.TransactionInput{in})
			if err == nil {
				outs[n+i] = o[0]
			}
			errs[n+i] = err
		}()
	}
	wg.Wait()
	created, redeemed := 0, 0
	for i := range 2 * n {
		if errs[i] != nil {
			t.Fatalf("apply %d: %v", i, errs[i])
		}
		if i < n {
			if outs[i].Status == posgate.OutcomeCreated {
				created++
			}
			if string(outs[i].Answer) != string(outs[0].Answer) {
				t.Fatalf("answers differ: %s / %s", outs[i].Answer, outs[0].Answer)
			}
		} else if answerOf(t, outs[i]).Coupons[0].Status == posgate.CouponRedeemed {
			redeemed++
		}
	}
	u := must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, "clover", "acme", "u1"))
	if created != 1 || redeemed != 1 || u.Points != 130 {
		t.Fatalf("created %d, redeemed %d, points %d; want 1, 1, 130", created, redeemed, u.Points)
	}
}

// testConcurrentSalesOneCustomer: batches of sales for one customer, each
// redeeming a coupon of its own and racing for a shared one, applied at
// once: every sale earns once on the balance the one before it left (the
// answers' balances are each step exactly once), and the shared coupon is
// redeemed once. PostgreSQL decides a sale's redemption and balance on the
// rows it locked when it read them ahead; a stale row would lose points.
func testConcurrentSalesOneCustomer(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.coupon(issued("SHARED"))
	const n = 12
	for i := range n {
		e.coupon(issued(fmt.Sprintf("OWN-%d", i)))
	}
	var wg sync.WaitGroup
	outs := make([][]*posgate.TransactionOutcome, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			items := []*posgate.TransactionInput{
				e.txInput(1, fmt.Sprintf("ONE-%d-a", i), 1000, func(in *posgate.TransactionInput) {
					in.CouponCodes = []string{fmt.Sprintf("own-%d", i), "SHARED"}
				}),
				e.txInput(2, fmt.Sprintf("ONE-%d-b", i), 1000),
			}
			for _, it := range items {
				it.ID = uid()
			}
			outs[i], errs[i] = e.s.ApplyTransactions(ctx, items)
		}()
	}
	wg.Wait()
	balances := map[int32]int{}
	shared := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("batch %d: %v", i, errs[i])
		}
		for _, o := range outs[i] {
			if o.Status != posgate.OutcomeCreated {
				t.Fatalf("batch %d: %+v", i, o)
			}
			a := answerOf(t, o)
			balances[a.Loyalty.Points]++
			for _, c := range a.Coupons {
				switch {
				case c.Code == "SHARED" && c.Status == posgate.CouponRedeemed:
					shared++
				case c.Code != "SHARED" && c.Status != posgate.CouponRedeemed:
					t.Errorf("batch %d: own coupon %+v", i, c)
				}
			}
		}
	}
	for k := int32(1); k <= 2*n; k++ {
		if balances[120+10*k] != 1 {
			t.Errorf("balance %d answered %d times, want once (all: %v)", 120+10*k, balances[120+10*k], balances)
		}
	}
	u := must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, "clover", "acme", "u1"))
	check(t, "balances", [2]int32{u.Points, u.Stamps}, [2]int32{120 + 10*2*n, 3 + 2*n})
	check(t, "shared coupon redeemed", shared, 1)
}

// testLoneRejectedTransaction: a single transaction that is rejected
// leaves nothing, however its store undoes it (a savepoint, or the whole
// database transaction): an over-refund adds no refund row and leaves its
// sale, its customer's balance and its coupon as they were.
func testLoneRejectedTransaction(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.coupon(issued("K1"))
	sale := e.apply(e.txInput(1, "S1", 1000, func(in *posgate.TransactionInput) { in.CouponCodes = []string{"K1"} }))
	if sale[0].Status != posgate.OutcomeCreated {
		t.Fatalf("sale: %+v", sale[0])
	}
	over := e.apply(e.txInput(1, "R1", -1001, func(in *posgate.TransactionInput) {
		in.Type, in.OriginalTransactionID, in.CardNumber = posgate.TransactionRefund, "S1", ""
	}))
	checkErr(t, "over-refund", over[0].Err, posgate.ErrConflict, "Refunding 10.01 would exceed sale 'S1': 0.00 of its 10.00 are refunded already.")
	other := e.apply(e.txInput(1, "S1", 1000, func(in *posgate.TransactionInput) { in.RequestHash = "other" }))
	checkErr(t, "other content", other[0].Err, posgate.ErrConflict, "Transaction 'S1' is already recorded with other content.")
	_, err := e.s.FindTransaction(ctx, "clover", "acme", "R1")
	checkErr(t, "rejected refund", err, posgate.ErrNotFound, `transaction "R1" not found`)
	s := must[*posgate.Transaction](t, "FindTransaction")(e.s.FindTransaction(ctx, "clover", "acme", "S1"))
	check(t, "sale after", [3]any{s.RefundedAmount, s.RequestHash, s.RedeemedCoupons}, [3]any{posgate.Amount(0), "h-S1", []string{"K1"}})
	u := must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, "clover", "acme", "u1"))
	check(t, "balances", [2]int32{u.Points, u.Stamps}, [2]int32{130, 4})
	c := must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", "K1"))
	check(t, "coupon", c.Status, posgate.CouponRedeemed)
	// The store goes on: the next lone sale is recorded.
	if next := e.apply(e.txInput(1, "S2", 500)); next[0].Status != posgate.OutcomeCreated {
		t.Fatalf("next sale: %+v", next[0])
	}
}

// testLedgerItemsSeeEarlier: each item of a batch sees what the items
// before it wrote, whatever a store reads ahead for it (PostgreSQL reads a
// sale's program, customer and coupons with its insert): a customer the
// first sale enrolled is found by the second, a coupon it redeemed is
// refused to the second, a duplicate in between changes nothing, and a
// code given twice in one sale is redeemed once.
func testLedgerItemsSeeEarlier(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.coupon(issued("K7"))
	e.coupon(issued("K8"))
	p := &posgate.LoyaltyProgram{POSSystemID: "clover", CompanyID: "acme", PointsPerCurrencyUnit: 100, StampsPerSale: 1, AutoEnroll: true}
	must[struct{}](t, "PutLoyaltyProgram")(struct{}{}, e.s.PutLoyaltyProgram(ctx, p))
	newCustomer := func(in *posgate.TransactionInput) {
		in.CardNumber, in.FirstName, in.LastName, in.EnrollID = "u9", "Ann", "Lee", "u-unused"
	}
	first := e.txInput(1, "B1", 1000, newCustomer, func(in *posgate.TransactionInput) { in.CouponCodes = []string{"K7"} })
	out := e.apply(first,
		e.txInput(2, "B2", 1000, newCustomer, func(in *posgate.TransactionInput) { in.CouponCodes = []string{"k7"} }),
		e.txInput(3, "B1", 1000, newCustomer, func(in *posgate.TransactionInput) { in.CouponCodes = []string{"K7"} }),
		e.txInput(4, "B3", 1000, func(in *posgate.TransactionInput) { in.CouponCodes = []string{"K8", "k8"} }))
	check(t, "statuses", []string{out[0].Status, out[1].Status, out[2].Status, out[3].Status},
		[]string{posgate.OutcomeCreated, posgate.OutcomeCreated, posgate.OutcomeDuplicate, posgate.OutcomeCreated})
	a1, a2, a4 := answerOf(t, out[0]), answerOf(t, out[1]), answerOf(t, out[3])
	check(t, "first sale's loyalty", a1.Loyalty, &posgate.TransactionLoyalty{UserID: "u9", PointsEarned: 10, StampsEarned: 1, Points: 10, Stamps: 1})
	check(t, "second sale's loyalty", a2.Loyalty, &posgate.TransactionLoyalty{UserID: "u9", PointsEarned: 10, StampsEarned: 1, Points: 20, Stamps: 2})
	taken, twice := "Coupon 'K7' has already been redeemed.", "Coupon 'k8' is given more than once in this transaction."
	check(t, "first sale's coupons", a1.Coupons, []posgate.TransactionCoupon{{Code: "K7", Status: posgate.CouponRedeemed}})
	check(t, "second sale's coupons", a2.Coupons, []posgate.TransactionCoupon{{Code: "K7", Status: posgate.CouponRejected, ErrorMessage: &taken}})
	check(t, "third sale's coupons", a4.Coupons, []posgate.TransactionCoupon{{Code: "K8", Status: posgate.CouponRedeemed},
		{Code: "k8", Status: posgate.CouponRejected, ErrorMessage: &twice}})
	if string(out[2].Answer) != string(out[0].Answer) {
		t.Fatalf("duplicate's answer %s, want %s", out[2].Answer, out[0].Answer)
	}
	u := must[*posgate.LoyaltyUser](t, "FindLoyaltyUser")(e.s.FindLoyaltyUser(ctx, "clover", "acme", "u9"))
	check(t, "enrolled customer's balances", [2]int32{u.Points, u.Stamps}, [2]int32{20, 2})
	for code, id := range map[string]string{"K7": "B1", "K8": "B3"} {
		r := must[*posgate.CouponRedemption](t, "FindCouponRedemption")(e.s.FindCouponRedemption(ctx, "clover", "acme", code))
		check(t, code+"'s redemption", r.TransactionID, id)
	}
	// A refund naming itself as its sale finds itself: a refund.
	self := e.apply(e.txInput(1, "R9", -100, func(in *posgate.TransactionInput) {
		in.Type, in.OriginalTransactionID, in.CardNumber = posgate.TransactionRefund, "R9", ""
	}))
	checkErr(t, "refund of itself", self[0].Err, posgate.ErrInvalid, "Transaction 'R9' is a refund; a refund's originalTransactionId names a sale.")
	// Lone sales (the ledger writer's path on SQLite, a transaction of
	// their own on PostgreSQL) read their customer and coupon afresh.
	next := e.apply(e.txInput(1, "B4", 1000, newCustomer, func(in *posgate.TransactionInput) { in.CouponCodes = []string{"K8", "K7"} }))
	a := answerOf(t, next[0])
	check(t, "lone sale's loyalty", a.Loyalty, &posgate.TransactionLoyalty{UserID: "u9", PointsEarned: 10, StampsEarned: 1, Points: 30, Stamps: 3})
	taken8 := "Coupon 'K8' has already been redeemed."
	check(t, "lone sale's coupons", a.Coupons, []posgate.TransactionCoupon{{Code: "K8", Status: posgate.CouponRejected, ErrorMessage: &taken8},
		{Code: "K7", Status: posgate.CouponRejected, ErrorMessage: &taken}})
}

// testApplyCheckingSession: a transaction whose session the store checks
// (posgate.ApplyCheckingSession: PostgreSQL in the transaction's first
// round trip, the others with a read before) is recorded only when the
// check accepts the session it is given, a sale (read ahead) and a refund
// alike; a refusal is returned as it is and records nothing.
func testApplyCheckingSession(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.coupon(issued("K1"))
	e.terminal("clover", "A1", "T1")
	now := e.clk.Now()
	for _, id := range []string{"SESS-1", "SESS-2"} {
		if err := e.s.CreateSession(ctx, &posgate.Session{ID: id, POSSystemID: "clover", CompanyID: "acme", LocationID: "A1", TerminalID: "T1",
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
	}
	refused := posgate.Errorf(posgate.EINVALID, "refused by the check")
	var seen []string
	checkThat := func(accept bool) posgate.SessionCheck {
		return func(s *posgate.Session, err error) error {
			switch {
			case posgate.ErrorCode(err) == posgate.ENOTFOUND:
				seen = append(seen, "not found")
				return err
			case err != nil:
				t.Fatalf("session read: %v", err)
			}
			seen = append(seen, s.ID+" at "+s.TerminalID)
			if !accept {
				return refused
			}
			return nil
		}
	}
	sale := func(session string) *posgate.TransactionInput {
		in := e.txInput(1, "SC1", 1000, func(in *posgate.TransactionInput) { in.SessionID, in.CouponCodes = session, []string{"K1"} })
		in.ID = uid()
		return in
	}
	if _, err := posgate.ApplyCheckingSession(ctx, e.s, sale("SESS-1"), checkThat(false)); err != refused {
		t.Fatalf("refused sale: %v", err)
	}
	if _, err := posgate.ApplyCheckingSession(ctx, e.s, sale("SESS-NONE"), checkThat(true)); posgate.ErrorCode(err) != posgate.ENOTFOUND {
		t.Fatalf("unknown session: %v", err)
	}
	_, err := e.s.FindTransaction(ctx, "clover", "acme", "SC1")
	checkErr(t, "refused sale", err, posgate.ErrNotFound, `transaction "SC1" not found`)
	c := must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", "K1"))
	check(t, "coupon after the refusals", c.Status, posgate.CouponIssued)
	o, err := posgate.ApplyCheckingSession(ctx, e.s, sale("SESS-1"), checkThat(true))
	if err != nil || o.Status != posgate.OutcomeCreated {
		t.Fatalf("accepted sale: %+v, %v", o, err)
	}
	refund := func() *posgate.TransactionInput {
		in := e.txInput(1, "RC1", -1000, func(in *posgate.TransactionInput) {
			in.Type, in.OriginalTransactionID, in.CardNumber, in.SessionID = posgate.TransactionRefund, "SC1", "", "SESS-2"
		})
		in.ID = uid()
		return in
	}
	if _, err := posgate.ApplyCheckingSession(ctx, e.s, refund(), checkThat(false)); err != refused {
		t.Fatalf("refused refund: %v", err)
	}
	if s := must[*posgate.Transaction](t, "FindTransaction")(e.s.FindTransaction(ctx, "clover", "acme", "SC1")); s.RefundedAmount != 0 {
		t.Fatalf("refused refund refunded %s", s.RefundedAmount)
	}
	if o, err := posgate.ApplyCheckingSession(ctx, e.s, refund(), checkThat(true)); err != nil || o.Status != posgate.OutcomeCreated {
		t.Fatalf("accepted refund: %+v, %v", o, err)
	}
	check(t, "sessions the checks saw", seen, []string{"SESS-1 at T1", "not found", "SESS-1 at T1", "SESS-2 at T1", "SESS-2 at T1"})
	c = must[*posgate.Coupon](t, "FindCoupon")(e.s.FindCoupon(ctx, "clover", "acme", "K1"))
	check(t, "coupon after the refund", c.Status, posgate.CouponIssued)
}

// TransactionListPlans are the transaction list's filters with the index
// each must read (the stores' TestTransactionListIndexes): a customer's,
// a location's and a day's transactions, not the company's whole list.
var TransactionListPlans = []struct {
	Query     posgate.TransactionQuery
	WantIndex string
}{
	{posgate.TransactionQuery{UserID: "u1"}, "transactions_by_user"},
	{posgate.TransactionQuery{UserID: "u1", Day: listPlanDay}, "transactions_by_user"},
	{posgate.TransactionQuery{LocationID: "L1"}, "transactions_by_location"},
	{posgate.TransactionQuery{LocationID: "L1", Day: listPlanDay}, "transactions_by_location"},
	{posgate.TransactionQuery{Day: listPlanDay}, "transactions_by_date"},
}

var listPlanDay = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
