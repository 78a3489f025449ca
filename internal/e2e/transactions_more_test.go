package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
)

// saleBody is a sale of amount at TERM-05/LOC123 for john-doe's card.
func (e *txEnv) saleBody(id, amount, extra string) string {
	return `{"sessionId":"` + e.session("TERM-05") + `","transactionId":"` + id + `","terminalId":"TERM-05","posLocationId":"LOC123",
		"transactionType":"Sale","transactionAmount":` + amount + `,"transactionDate":"` + e.date(-time.Minute) + `","loyalty":{"cardNumber":"john-doe"}` + extra + `}`
}

func (e *txEnv) refundBody(id, original, amount, extra string) string {
	return `{"transactionId":"` + id + `","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":` + amount +
		`,"originalTransactionId":"` + original + `","transactionDate":"` + e.date(0) + `"` + extra + `}`
}

func TestTransactionRefunds(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"REF-1"}`), 201)
		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"REF-2","availableUntil":"`+e.date(time.Hour)+`"}`), 201)
		r := e.sale(e.saleBody("S-1", "25", `,"couponCodes":["REF-1","REF-2"]`))
		mustStatus(t, r, 200)
		if p, s := e.balance("john-doe"); p != 145 || s != 4 {
			t.Fatalf("after the sale: %d points, %d stamps", p, s)
		}
		// A partial refund (type Refund, positive amount): round(25 × 10/25).
		r = e.sale(e.refundBody("R-1", "S-1", "10", `,"transactionType":"Refund"`))
		mustTxBody(t, r, 200, `{"data":{"id":"ID","transactionId":"R-1","sessionId":null,"transactionType":"Refund","posStatus":"Accepted",`+
			`"loyalty":{"userId":"john-doe","pointsEarned":-10,"stampsEarned":0,"points":135,"stamps":4},"coupons":[],"promotions":[],"cfsTemplate":{"cfsCarouselUrl":"CFS"},`+
			receipt1+`"-10 points, balance 135"}}}`)
		// Beyond the sale: 409, nothing changed.
		mustProblem(t, e.sale(e.refundBody("R-2", "S-1", "-15.01", "")), 409,
			"Refunding 15.01 would exceed sale 'S-1': 10.00 of its 25.00 are refunded already.", nil)
		mustProblem(t, e.sale(e.refundBody("R-2", "NOPE", "-1", "")), 404, "Transaction 'NOPE' is not recorded.", nil)
		mustProblem(t, e.sale(e.refundBody("R-2", "R-1", "-1", "")), 400, "Transaction 'R-1' is a refund; a refund's originalTransactionId names a sale.", nil)
		// The coupons come back only with the whole sale, unexpired ones
		// only: REF-2 expires before the rest is refunded.
		e.s.clock.Advance(2 * time.Hour)
		e.pos, e.admin = e.s.posToken(t), e.s.adminToken(t)
		// Points spent meanwhile are owed back: the balance goes negative.
		mustStatus(t, e.admin_("PATCH", "/loyalty-users/john-doe", `{"pointsDelta":-130}`), 200)
		r = e.sale(e.refundBody("R-3", "S-1", "-15", ""))
		mustStatus(t, r, 200)
		if !strings.Contains(string(r.Body), `"loyalty":{"userId":"john-doe","pointsEarned":-15,"stampsEarned":-1,"points":-10,"stamps":3}`) {
			t.Fatalf("whole refund: %s", r.Body)
		}
		for code, want := range map[string]string{"REF-1": `"status":"Issued","storedStatus":"Issued"`, "REF-2": `"status":"Redeemed","storedStatus":"Redeemed"`} {
			if r := e.admin_("GET", "/coupons/"+code, ""); !strings.Contains(string(r.Body), want) {
				t.Errorf("%s after the whole refund: %s", code, r.Body)
			}
		}
		// An operator may raise a negative balance, never lower one further.
		mustProblem(t, e.admin_("PATCH", "/loyalty-users/john-doe", `{"pointsDelta":-1}`), 409, "Loyalty user john-doe has -10 points: taking 1 would leave -11, below 0. Nothing was changed.", nil)
		mustStatus(t, e.admin_("PATCH", "/loyalty-users/john-doe", `{"pointsDelta":4}`), 200)
		if p, _ := e.balance("john-doe"); p != -6 {
			t.Fatalf("points: %d", p)
		}

		// The operator's refund: the rest of a sale, idempotent by its id.
		mustStatus(t, e.sale(e.saleBody("S-2", "8.50", "")), 200)
		// Its answer is the POS's refund answer, the receipt to print and
		// the terminal's carousel included.
		r = e.admin_("POST", "/transactions/S-2/refund", `{"transactionId":"OR-1","amount":3}`)
		mustTxBody(t, r, 201, `{"data":{"id":"ID","transactionId":"OR-1","sessionId":null,"transactionType":"Refund","posStatus":"Accepted",`+
			`"loyalty":{"userId":"john-doe","pointsEarned":-3,"stampsEarned":0,"points":-1,"stamps":4},"coupons":[],"promotions":[],"cfsTemplate":{"cfsCarouselUrl":"CFS"},`+
			receipt1+`"-3 points, balance -1"}}}`)
		again := e.admin_("POST", "/transactions/S-2/refund", `{"transactionId":"OR-1","amount":3}`)
		if again.Status != 200 || string(again.Body) != string(r.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("operator refund again: %d %s", again.Status, again.Body)
		}
		r = e.admin_("POST", "/transactions/S-2/refund", `{"transactionId":"OR-2"}`)
		mustStatus(t, r, 201)
		if !strings.Contains(string(r.Body), `"pointsEarned":-5,"stampsEarned":-1`) {
			t.Fatalf("operator refund of the rest: %s", r.Body)
		}
		mustProblem(t, e.admin_("POST", "/transactions/S-2/refund", `{"transactionId":"OR-3"}`), 409, "Sale 'S-2' is refunded in full already.", nil)
		mustProblem(t, e.admin_("POST", "/transactions/S-2/refund", `{"amount":0}`), 400, "*", map[string][]string{
			"transactionId": {"The transactionId field is required."}, "amount": {"The amount field must be a number above 0 and at most 1000000000.00."}})
		if r := e.admin_("GET", "/transactions/S-2", ""); !strings.Contains(string(r.Body), `"transactionAmount":8.50,"refundedAmount":8.50`) {
			t.Fatalf("refunded sale: %s", r.Body)
		}
	})
}

// TestTransactionConcurrency: 50 identical requests at once record one sale
// and answer it 50 times alike; 50 sales redeeming one coupon at once: one
// wins.
func TestTransactionConcurrency(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		const n = 50
		body := e.saleBody("C-1", "10", "")
		bodies, replays := make([]string, n), 0
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.sale(body)
				mu.Lock()
				defer mu.Unlock()
				if r.Status != 200 {
					t.Errorf("request %d: %d %s", i, r.Status, r.Body)
				}
				bodies[i] = string(r.Body)
				if r.Header.Get("Idempotent-Replayed") == "true" {
					replays++
				}
			}()
		}
		wg.Wait()
		for i := range bodies {
			if bodies[i] != bodies[0] {
				t.Fatalf("answer %d differs:\n%s\n%s", i, bodies[i], bodies[0])
			}
		}
		if replays != n-1 {
			t.Fatalf("%d replayed answers, want %d", replays, n-1)
		}
		if p, s := e.balance("john-doe"); p != 130 || s != 4 {
			t.Fatalf("after 50 identical requests: %d points, %d stamps; want 130, 4", p, s)
		}

		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"RACE-1"}`), 201)
		sessions := make([]string, n)
		for i := range sessions {
			sessions[i] = e.session("TERM-05")
		}
		redeemed := 0
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.sale(`{"sessionId":"` + sessions[i] + `","transactionId":"RC-` + fmt.Sprint(i) + `","terminalId":"TERM-05","posLocationId":"LOC123",
					"transactionAmount":1,"transactionDate":"` + e.date(0) + `","couponCodes":["RACE-1"]}`)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Status != 200:
					t.Errorf("sale %d: %d %s", i, r.Status, r.Body)
				case strings.Contains(string(r.Body), `{"code":"RACE-1","status":"Redeemed","errorMessage":null}`):
					redeemed++
				case !strings.Contains(string(r.Body), `{"code":"RACE-1","status":"Rejected","errorMessage":"Coupon 'RACE-1' has already been redeemed."}`):
					t.Errorf("sale %d: %s", i, r.Body)
				}
			}()
		}
		wg.Wait()
		if redeemed != 1 {
			t.Fatalf("%d sales redeemed RACE-1, want exactly 1", redeemed)
		}
		if r := e.admin_("GET", "/transactions?pageSize=500", ""); !strings.Contains(string(r.Body), `"total":51`) {
			t.Fatalf("transactions: %s", r.Body[len(r.Body)-60:])
		}
	})
}

func TestTransactionBatch(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		item := func(id, amount, date, extra string) string {
			return `{"transactionId":"` + id + `","terminalId":"TERM-06","posLocationId":"LOC123","transactionAmount":` + amount +
				`,"transactionDate":"` + date + `","loyalty":{"cardNumber":"john-doe"}` + extra + `}`
		}
		sess := e.session("TERM-06")
		// Out of date order: the refund (row 1) is dated after its sale
		// (row 2); row 3 repeats row 2; row 4 lacks its amount; row 5 uses
		// row 2's id with other content; row 6 is at a disabled terminal.
		body := `{"items":[` + item("B-R", "-4", e.date(-time.Hour), `,"originalTransactionId":"B-1"`) + `,` +
			item("B-1", "10", e.date(-2*time.Hour), `,"sessionId":"`+sess+`"`) + `,` +
			item("B-1", "10", e.date(-2*time.Hour), `,"sessionId":"`+sess+`"`) + `,` +
			`{"transactionId":"B-X","terminalId":"TERM-06","posLocationId":"LOC123","transactionDate":"` + e.date(0) + `"},` +
			item("B-1", "11", e.date(-2*time.Hour), "") + `,` +
			`{"transactionId":"B-D","terminalId":"TERM-99","posLocationId":"LOC123","transactionAmount":1,"transactionDate":"` + e.date(0) + `"}]}`
		r := e.post("/v2/pos/clover/transactions/batch", e.pos, body)
		mustStatus(t, r, 200)
		got := masked(r.Body)
		for _, want := range []string{
			`"status":"CompletedWithErrors","createdCount":2,"duplicateCount":1,"errors":[` +
				`{"entityId":"B-X","rowNumber":4,"errorMessage":"The transactionAmount field is required.","errorDetails":"transactionAmount"},` +
				`{"entityId":"B-1","rowNumber":5,"errorMessage":"Transaction 'B-1' is already recorded with other content. ` + sandboxStartOver + `","errorDetails":"conflict"},` +
				`{"entityId":"B-D","rowNumber":6,"errorMessage":"The place is disabled or has transactions switched off (posStatus Disabled): nothing is recorded.","errorDetails":"invalid"}]`,
			`{"transactionId":"B-R","rowNumber":1,"status":"Created","data":{"id":"ID","transactionId":"B-R","sessionId":null,"transactionType":"Refund","posStatus":"Accepted","loyalty":{"userId":"john-doe","pointsEarned":-4,"stampsEarned":0,"points":126,"stamps":4}`,
			`{"transactionId":"B-1","rowNumber":2,"status":"Created","data":{"id":"ID","transactionId":"B-1","sessionId":"SESSION","transactionType":"Undefined","posStatus":"Accepted","loyalty":{"userId":"john-doe","pointsEarned":10,"stampsEarned":1,"points":130,"stamps":4}`,
			`{"transactionId":"B-1","rowNumber":3,"status":"Duplicate","data":{"id":"ID","transactionId":"B-1"`,
			`{"transactionId":"B-X","rowNumber":4,"status":"Rejected","data":null}`,
			`{"transactionId":"B-D","rowNumber":6,"status":"Rejected","data":{"id":null,"transactionId":"B-D"`,
		} {
			if !strings.Contains(got, want) {
				t.Fatalf("batch answer lacks\n%s\nin\n%s", want, got)
			}
		}
		// Sending the batch again records nothing new.
		r = e.post("/v2/pos/clover/transactions/batch", e.pos, body)
		if got := masked(r.Body); !strings.Contains(got, `"status":"CompletedWithErrors","createdCount":0,"duplicateCount":3`) {
			t.Fatalf("batch again: %s", got)
		}
		if p, _ := e.balance("john-doe"); p != 126 {
			t.Fatalf("points after two batches: %d", p)
		}
		// XML, and more than 1,000 items.
		xml := `<Batch><items><transactionId>B-XML</transactionId><terminalId>TERM-06</terminalId><posLocationId>LOC123</posLocationId>` +
			`<transactionAmount>1.005</transactionAmount><transactionDate>` + e.date(0) + `</transactionDate></items></Batch>`
		r = e.s.do(t, req{Method: "POST", Path: "/v2/pos/clover/transactions/batch", Token: e.pos, ContentType: "text/xml", Body: xml})
		if got := masked(r.Body); !strings.Contains(got, `"status":"Completed","createdCount":1,"duplicateCount":0,"errors":[]`) {
			t.Fatalf("XML batch: %s", got)
		}
		if r := e.admin_("GET", "/transactions/B-XML", ""); !strings.Contains(string(r.Body), `"transactionAmount":1.00,`) {
			t.Fatalf("1.005 is not 1.00 (half-even): %s", r.Body)
		}
		items := make([]string, 1001)
		for i := range items {
			items[i] = `{"transactionId":"M-` + fmt.Sprint(i) + `"}`
		}
		mustProblem(t, e.post("/v2/pos/clover/transactions/batch", e.pos, `{"items":[`+strings.Join(items, ",")+`]}`), 413,
			"The batch holds more than 1000 transactions; send at most 1000 per request.", nil)
		mustStatus(t, e.post("/v2/pos/clover/transactions/batch", e.pos, `{"items":[]}`), 200)
	})
}

// TestTransactionTenancy: another company's location, customer, coupon and
// transaction are invisible; operators restricted away see nothing.
func TestTransactionTenancy(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		other := restrictedClient(t, e.s, e.admin) // other-co with OTHER-1/T1, and a client that sees only it
		mustStatus(t, e.sale(e.saleBody("TN-1", "10", "")), 200)
		// The restricted client: demo-company's location does not exist.
		mustProblem(t, e.post("/pos/clover/transaction", other, e.saleBody("TN-2", "1", "")), 404, "Location 'LOC123' is not registered.", nil)
		r := e.post("/pos/clover/startInteraction", other, `{"terminalId":"T1","posLocationId":"OTHER-1"}`)
		mustStatus(t, r, 200)
		sess := r.JSON(t)["data"].(map[string]any)["sessionId"].(string)
		r = e.post("/pos/clover/transaction", other, `{"sessionId":"`+sess+`","transactionId":"TN-1","terminalId":"T1","posLocationId":"OTHER-1",
			"transactionAmount":5,"transactionDate":"`+e.date(0)+`","loyalty":{"cardNumber":"john-doe"},"couponCodes":["Sl75Ev"]}`)
		mustStatus(t, r, 200) // the same transaction id in another company is another transaction
		if got := masked(r.Body); !strings.Contains(got, `"loyalty":null,"coupons":[{"code":"Sl75Ev","status":"Rejected","errorMessage":"Coupon 'Sl75Ev' does not exist."}]`) {
			t.Fatalf("another company's customer and coupon: %s", got)
		}
		mustProblem(t, e.post("/pos/clover/transaction", other, `{"transactionId":"TN-R","terminalId":"T1","posLocationId":"OTHER-1",
			"transactionAmount":-1,"originalTransactionId":"S-ONLY-DEMO","transactionDate":"`+e.date(0)+`"}`), 404, "Transaction 'S-ONLY-DEMO' is not recorded.", nil)
		// A session of another company's terminal is unknown to the other.
		mustProblem(t, e.post("/pos/clover/coupon/validate/byTransaction", other, `{"sessionId":"`+e.session("TERM-05")+`","transactionId":"TN-1","code":"X"}`), 404, "*", nil)
		// A restricted operator does not reach demo-company.
		ctx := t.Context()
		created, err := e.adminAPI().Admin.CreateClient(ctx, client.CreateAPIClientRequest{ClientID: "op-other", PosSystemID: "clover",
			Scopes: []client.Scope{client.ScopeAdmin}, CompanyIds: []string{"other-co"}})
		if err != nil {
			t.Fatal(err)
		}
		opAPI := e.s.api(t, e.s.token(t, "op-other", created.ClientSecret, "admin"))
		a := opAPI.Admin
		for _, call := range []func() error{
			func() error {
				_, err := a.ListTransactions(ctx, "clover", "demo-company", client.TransactionQuery{})
				return err
			},
			func() error { _, err := a.GetTransaction(ctx, "clover", "demo-company", "TN-1"); return err },
			func() error { _, err := a.GetLoyaltyProgram(ctx, "clover", "demo-company"); return err },
			func() error {
				_, err := a.PutLoyaltyProgram(ctx, "clover", "demo-company", client.PutLoyaltyProgramRequest{})
				return err
			},
			func() error {
				_, err := a.RefundTransaction(ctx, "clover", "demo-company", "TN-1", client.RefundTransactionRequest{TransactionID: "x"})
				return err
			},
		} {
			mustProblem(t, opAPI.answer(call()), 404, `company "demo-company" not found`, nil)
		}
		_, err = a.ListTransactions(ctx, "clover", "other-co", client.TransactionQuery{})
		r = opAPI.ok(err)
		if !strings.Contains(string(r.Body), `"total":1`) {
			t.Fatalf("other-co's transactions: %s", r.Body)
		}
	})
}

func TestValidateCouponByTransaction(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"VAL-1","userId":"john-doe"}`), 201)
		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"VAL-2","userId":"jane-doe"}`), 201)
		sess := e.session("TERM-05")
		mustStatus(t, e.sale(`{"sessionId":"`+sess+`","transactionId":"VT-1","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":7,
			"transactionDate":"`+e.date(0)+`","loyalty":{"cardNumber":"john-doe"}}`), 200)
		validate := func(body string) response {
			return e.post("/pos/clover/coupon/validate/byTransaction", e.pos, body)
		}
		ok := `{"posStatus":"Accepted","data":{"externalSessionId":"SESSION","status":"Redeemed","validationDate":"DATE","errorMessage":null,"promotionId":null,"discount":0.00}}`
		first := validate(`{"sessionId":"` + sess + `","transactionId":"VT-1","code":"val-1"}`)
		mustTxBody(t, first, 200, ok)
		// Repeating it answers the same, the first redemption's time included.
		again := validate(`{"sessionId":"` + sess + `","transactionId":"VT-1","campaignId":"VAL-1"}`)
		if string(again.Body) != string(first.Body) {
			t.Fatalf("again: %s\nfirst: %s", again.Body, first.Body)
		}
		mustTxBody(t, validate(`{"sessionId":"`+sess+`","transactionId":"VT-1","code":"VAL-2"}`), 200,
			`{"posStatus":"Accepted","data":{"externalSessionId":"SESSION","status":"Rejected","validationDate":"DATE","errorMessage":"Coupon 'VAL-2' belongs to another customer.","promotionId":null,"discount":0.00}}`)
		// A claimed owner who is the coupon's owner may redeem it.
		mustTxBody(t, validate(`{"sessionId":"`+sess+`","transactionId":"VT-1","code":"VAL-2","couponUser":{"firstName":"jane","email":"Jane.Doe@example.com"}}`), 200, ok)
		mustProblem(t, validate(`{"sessionId":"`+sess+`","transactionId":"VT-9","code":"VAL-1"}`), 404, "Transaction 'VT-9' is not recorded for session '"+sess+"'.", nil)
		mustProblem(t, validate(`{"sessionId":"nope","transactionId":"VT-1","code":"VAL-1"}`), 404, "Session 'nope' is unknown or has expired.", nil)
		mustProblem(t, validate(`{}`), 400, "*", map[string][]string{"sessionId": {"The sessionId field is required."},
			"transactionId": {"The transactionId field is required."}, "code": {"The code field (or campaignId) is required."}})
	})
}

// TestValidateCouponByTransactionValue covers the coupon's value in the
// validation by transaction (docs/api.md §13.5) on each store: a coupon
// that carries a requiresCoupon promotion shows it and what it takes off
// the recorded sale's priced lines; one that carries none shows null and
// 0; a rejected one shows its promotion and 0; a sale without priced lines
// gives 0.
func TestValidateCouponByTransactionValue(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		mustImport(t, e.s.call(t, e.pos, "POST", importPath("demo-company"), items(
			`{"id":"BYT-COOKIE","name":"1 off each cookie with a coupon","productIds":["SKU-BYT-COOKIE"],"requiresCoupon":true,
				"promotionResults":[{"promotionType":"Amount","value":1}]}`)))
		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"BYT-VAL","userId":"john-doe","promotionId":"BYT-COOKIE"}`), 201)
		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"BYT-PLAIN","userId":"john-doe"}`), 201)
		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"BYT-JANE","userId":"jane-doe","promotionId":"BYT-COOKIE"}`), 201)
		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"BYT-NOLINES","userId":"john-doe","promotionId":"BYT-COOKIE"}`), 201)
		sess := e.session("TERM-05")
		// Two cookies at 1.50 and a latte are priced; the unpriced cookie
		// line cannot be discounted.
		mustStatus(t, e.sale(`{"sessionId":"`+sess+`","transactionId":"VV-1","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":9,
			"transactionDate":"`+e.date(0)+`","loyalty":{"cardNumber":"john-doe"},
			"products":[{"productId":"SKU-BYT-COOKIE","quantity":2,"price":1.5},{"productId":"SKU-BYT-COOKIE","quantity":4},{"productId":"SKU-OTHER","price":6}]}`), 200)
		validate := func(sess, txn, code string) response {
			return e.post("/pos/clover/coupon/validate/byTransaction", e.pos, `{"sessionId":"`+sess+`","transactionId":"`+txn+`","code":"`+code+`"}`)
		}
		first := validate(sess, "VV-1", "byt-val")
		mustTxBody(t, first, 200,
			`{"posStatus":"Accepted","data":{"externalSessionId":"SESSION","status":"Redeemed","validationDate":"DATE","errorMessage":null,"promotionId":"BYT-COOKIE","discount":2.00}}`)
		// Repeating it answers the same, the value included.
		if again := validate(sess, "VV-1", "BYT-VAL"); string(again.Body) != string(first.Body) {
			t.Fatalf("again: %s\nfirst: %s", again.Body, first.Body)
		}
		mustTxBody(t, validate(sess, "VV-1", "BYT-PLAIN"), 200,
			`{"posStatus":"Accepted","data":{"externalSessionId":"SESSION","status":"Redeemed","validationDate":"DATE","errorMessage":null,"promotionId":null,"discount":0.00}}`)
		mustTxBody(t, validate(sess, "VV-1", "BYT-JANE"), 200,
			`{"posStatus":"Accepted","data":{"externalSessionId":"SESSION","status":"Rejected","validationDate":"DATE","errorMessage":"Coupon 'BYT-JANE' belongs to another customer.","promotionId":"BYT-COOKIE","discount":0.00}}`)
		mustTxBody(t, validate(sess, "VV-1", "BYT-NONE"), 200,
			`{"posStatus":"Accepted","data":{"externalSessionId":"SESSION","status":"Rejected","validationDate":"DATE","errorMessage":"Coupon 'BYT-NONE' does not exist.","promotionId":null,"discount":0.00}}`)
		// A sale without priced lines: the promotion takes nothing off.
		sess2 := e.session("TERM-05")
		mustStatus(t, e.sale(`{"sessionId":"`+sess2+`","transactionId":"VV-2","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":3,
			"transactionDate":"`+e.date(0)+`","loyalty":{"cardNumber":"john-doe"},"products":[{"productId":"SKU-BYT-COOKIE","quantity":2}]}`), 200)
		mustTxBody(t, validate(sess2, "VV-2", "BYT-NOLINES"), 200,
			`{"posStatus":"Accepted","data":{"externalSessionId":"SESSION","status":"Redeemed","validationDate":"DATE","errorMessage":null,"promotionId":"BYT-COOKIE","discount":0.00}}`)
	})
}
