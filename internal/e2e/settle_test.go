package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// A sale's settlement (docs/api.md §13.9) and promotion budgets (§9.7)
// end to end, on both stores: budgets consumed atomically by concurrent
// sales (also on two instances sharing one PostgreSQL), per customer, given
// back by a full refund only, and the settlement's answer.

// budgetItems are demo-company's budget promotions of these tests: BUDGET
// takes 1.00 off SKU-BUDGET with budget (a redemption object), FALLBACK 10 %
// off it without one.
func budgetItems(budget string) string {
	return items(`{"id":"BUDGET","name":"1 off, limited","productIds":["SKU-BUDGET"],"promotionResults":[{"promotionType":"Amount","value":1}],"redemption":`+budget+`}`,
		`{"id":"FALLBACK","name":"10% off","productIds":["SKU-BUDGET"],"promotionResults":[{"promotionType":"Percentage","value":10}]}`)
}

// budgetSale is a sale of one SKU-BUDGET at 5.00 for amount, with extra
// fields (a card, a session).
func budgetSale(e *txEnv, id, amount, extra string) string {
	return `{"transactionId":"` + id + `","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":` + amount +
		`,"transactionDate":"` + e.date(-time.Minute) + `","products":[{"productId":"SKU-BUDGET","quantity":1,"price":5.00}]` + extra + `}`
}

// appliedIDs are the ids of an answer's promotions.
func appliedIDs(t *testing.T, body []byte) string {
	t.Helper()
	var env struct {
		Data struct {
			Promotions []struct{ ID string } `json:"promotions"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Errorf("answer %s: %v", body, err)
		return ""
	}
	var ids []string
	for _, p := range env.Data.Promotions {
		ids = append(ids, p.ID)
	}
	return strings.Join(ids, ",")
}

// TestSaleBudgetConcurrent: 50 concurrent sales against a budget of 10
// apply it exactly 10 times, the other 40 get the next best promotion; on
// PostgreSQL the sales go to two instances sharing the database.
func TestSaleBudgetConcurrent(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		mustImport(t, e.s.pos(t, e.pos, importPath("demo-company"), budgetItems(`{"quantity":10}`)))
		servers := []*server{e.s}
		if !strings.HasSuffix(dsn, ".db") {
			servers = append(servers, start(t, dsn))
		}
		tokens := make([]string, len(servers))
		for i, s := range servers {
			tokens[i] = s.posToken(t)
		}
		bodies := make([]string, 50)
		for i := range bodies {
			bodies[i] = budgetSale(e, fmt.Sprintf("C-%02d", i), "4.00", `,"sessionId":"`+e.session("TERM-05")+`"`)
		}
		c := checkedClient(t)
		answers := make([][]byte, len(bodies))
		var wg sync.WaitGroup
		for i, body := range bodies {
			wg.Go(func() {
				n := i % len(servers)
				r, _ := http.NewRequest("POST", servers[n].base+"/pos/clover/transaction", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer "+tokens[n])
				resp, err := c.Do(r)
				if err != nil {
					t.Errorf("sale %d: %v", i, err)
					return
				}
				defer resp.Body.Close()
				answers[i], _ = io.ReadAll(resp.Body)
				if resp.StatusCode != 200 {
					t.Errorf("sale %d: %d %s", i, resp.StatusCode, answers[i])
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		count := map[string]int{}
		for i, a := range answers {
			ids := appliedIDs(t, a)
			count[ids]++
			settlement := `"settlement":{"subtotal":5.00,"totalDiscount":1.00,"total":4.00,"difference":0.00,"mismatch":false}}}`
			if ids == "FALLBACK" {
				settlement = `"settlement":{"subtotal":5.00,"totalDiscount":0.50,"total":4.50,"difference":-0.50,"mismatch":true}}}`
			}
			if !strings.HasSuffix(string(a), settlement) {
				t.Fatalf("sale %d: %s", i, a)
			}
		}
		if count["BUDGET"] != 10 || count["FALLBACK"] != 40 || len(count) != 2 {
			t.Fatalf("applied: %v, want BUDGET 10 times and FALLBACK 40 times", count)
		}
		usage, err := e.s.openStore(t).PromotionUsage(t.Context(), "clover", "demo-company", "", []string{"BUDGET", "FALLBACK"})
		if err != nil || len(usage) != 1 || usage["BUDGET"] != (posgate.PromotionUsage{Used: 10}) {
			t.Fatalf("usage: %v %v", usage, err)
		}
		// The operator API shows the count, alone and in the list.
		r := e.s.call(t, e.admin, "GET", companyPath+"/promotions/BUDGET", "")
		mustStatus(t, r, 200)
		if !strings.HasSuffix(string(r.Body), `"redemption":{"quantity":10,"perCustomer":null,"used":10}}}`) {
			t.Fatalf("the budget's usage: %s", r.Body)
		}
		r = e.s.call(t, e.admin, "GET", companyPath+"/promotions", "")
		mustStatus(t, r, 200)
		if !strings.Contains(string(r.Body), `"redemption":{"quantity":10,"perCustomer":null,"used":10}}`) || strings.Count(string(r.Body), `"used"`) != 1 {
			t.Fatalf("the list's usage: %s", r.Body)
		}
		// The evaluation previews the used-up budget.
		r = e.s.pos(t, e.pos, evaluatePath, `{"posLocationId":"LOC123","products":[{"productId":"SKU-BUDGET","price":5.00}]}`)
		if ids := appliedIDs(t, r.Body); ids != "FALLBACK" {
			t.Fatalf("evaluation after the budget: %s", r.Body)
		}
	})
}

// TestSaleBudgetPerCustomer: a per-customer budget applies that many times
// to each loyalty customer, and never to a sale without one; the
// evaluation previews it for the customer it names.
func TestSaleBudgetPerCustomer(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		mustImport(t, e.s.pos(t, e.pos, importPath("demo-company"), budgetItems(`{"perCustomer":2}`)))
		evaluate := func(card string) string {
			loyalty := ""
			if card != "" {
				loyalty = `,"loyalty":{"cardNumber":"` + card + `"}`
			}
			return appliedIDs(t, e.s.pos(t, e.pos, evaluatePath, `{"posLocationId":"LOC123","products":[{"productId":"SKU-BUDGET","price":5.00}]`+loyalty+`}`).Body)
		}
		for i, c := range []struct{ card, want string }{
			{"john-doe", "BUDGET"}, {"", "FALLBACK"}, {"john-doe", "BUDGET"}, {"mary-johnson", "BUDGET"}, {"john-doe", "FALLBACK"}, {"mary-johnson", "BUDGET"},
		} {
			if got := evaluate(c.card); got != c.want {
				t.Fatalf("evaluation %d for %q: %s, want %s", i, c.card, got, c.want)
			}
			extra := `,"sessionId":"` + e.session("TERM-05") + `"`
			if c.card != "" {
				extra += `,"loyalty":{"cardNumber":"` + c.card + `"}`
			}
			r := e.sale(budgetSale(e, fmt.Sprintf("PC-%d", i), "4.00", extra))
			mustStatus(t, r, 200)
			if got := appliedIDs(t, r.Body); got != c.want {
				t.Fatalf("sale %d for %q: %s, want %s", i, c.card, r.Body, c.want)
			}
		}
		st := e.s.openStore(t)
		for user, want := range map[string]posgate.PromotionUsage{"john-doe": {Used: 4, CustomerUsed: 2}, "mary-johnson": {Used: 4, CustomerUsed: 2}, "": {Used: 4}} {
			if u, err := st.PromotionUsage(t.Context(), "clover", "demo-company", user, []string{"BUDGET"}); err != nil || u["BUDGET"] != want {
				t.Fatalf("usage of %q: %v %v, want %v", user, u, err, want)
			}
		}
	})
}

// TestSaleBudgetRefund: a partial refund keeps the redemption; the refund
// that completes the sale gives it back (as coupons, docs/api.md §13.4),
// once.
func TestSaleBudgetRefund(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		mustImport(t, e.s.pos(t, e.pos, importPath("demo-company"), budgetItems(`{"quantity":1,"perCustomer":1}`)))
		mustStatus(t, e.admin_("POST", "/coupons", `{"code":"BUD-1"}`), 201)
		sale := func(id, want, extra string) []byte {
			t.Helper()
			r := e.sale(budgetSale(e, id, "4.00", `,"sessionId":"`+e.session("TERM-05")+`","loyalty":{"cardNumber":"john-doe"}`+extra))
			mustStatus(t, r, 200)
			if got := appliedIDs(t, r.Body); got != want {
				t.Fatalf("sale %s: %s, want %s", id, r.Body, want)
			}
			return r.Body
		}
		// The coupon is redeemed in the same transaction as the budget is consumed.
		if b := sale("RB-1", "BUDGET", `,"couponCodes":["BUD-1"]`); !strings.Contains(string(b), `"coupons":[{"code":"BUD-1","status":"Redeemed","errorMessage":null}]`) {
			t.Fatalf("sale with a coupon: %s", b)
		}
		sale("RB-2", "FALLBACK", "")
		mustStatus(t, e.sale(e.refundBody("RB-R1", "RB-1", "-1.00", "")), 200)
		sale("RB-3", "FALLBACK", "") // a partial refund gives nothing back
		mustStatus(t, e.sale(e.refundBody("RB-R2", "RB-1", "-3.00", "")), 200)
		// The whole sale refunded: the redemption is back, and so is the coupon.
		if b := sale("RB-4", "BUDGET", `,"couponCodes":["BUD-1"]`); !strings.Contains(string(b), `"coupons":[{"code":"BUD-1","status":"Redeemed","errorMessage":null}]`) {
			t.Fatalf("sale with the coupon given back: %s", b)
		}
		// Refunding the sale that did not apply it gives nothing back.
		mustStatus(t, e.sale(e.refundBody("RB-R3", "RB-2", "-4.00", "")), 200)
		sale("RB-5", "FALLBACK", "")
		u, err := e.s.openStore(t).PromotionUsage(t.Context(), "clover", "demo-company", "john-doe", []string{"BUDGET"})
		if err != nil || u["BUDGET"] != (posgate.PromotionUsage{Used: 1, CustomerUsed: 1}) {
			t.Fatalf("usage: %v %v", u, err)
		}
	})
}

// TestPromotionBudgetImport: the budget is checked per item, stored with
// the promotion and shown by the operator API (left out when none).
func TestPromotionBudgetImport(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		res := mustImport(t, e.s.pos(t, e.pos, importPath("demo-company"), items(
			`{"id":"B-OK","name":"ok","productIds":["SKU-BUDGET"],"promotionResults":[{"promotionType":"Amount","value":1}],"redemption":{"quantity":10,"perCustomer":1}}`,
			`{"id":"B-ZERO","name":"zero","redemption":{"quantity":0}}`,
			`{"id":"B-HUGE","name":"huge","redemption":{"quantity":5,"perCustomer":1000000001}}`,
			`{"id":"B-NONE","name":"none","redemption":{"quantity":null}}`,
			`{"id":"B-USED","name":"used","redemption":{"quantity":5,"used":3}}`,
			`{"id":"B-ONLY-USED","name":"only used","redemption":{"used":0}}`)))
		checkResult(t, res, importResult{Status: "CompletedWithErrors", CreatedCount: 2, Errors: []importError{
			{EntityID: "B-ZERO", RowNumber: 2, ErrorMessage: "The redemption.quantity must be an integer from 1 to 1000000000.", ErrorDetails: "redemption.quantity: 0"},
			{EntityID: "B-HUGE", RowNumber: 3, ErrorMessage: "The redemption.perCustomer must be an integer from 1 to 1000000000.", ErrorDetails: "redemption.perCustomer: 1000000001"},
			{EntityID: "B-USED", RowNumber: 5, ErrorMessage: "The redemption.used is counted by posgate; an import cannot set it.", ErrorDetails: "redemption.used: 3"},
			{EntityID: "B-ONLY-USED", RowNumber: 6, ErrorMessage: "The redemption.used is counted by posgate; an import cannot set it.", ErrorDetails: "redemption.used: 0"},
		}, Warnings: []importWarning{{EntityID: "B-OK", RowNumber: 1,
			Message: "The promotion names categories or products that are not in the catalogue of company 'demo-company'; it is imported anyway.",
			Details: `productIds: "SKU-BUDGET"`}}})
		r := e.s.call(t, e.admin, "GET", companyPath+"/promotions/B-OK", "")
		mustStatus(t, r, 200)
		if !strings.HasSuffix(string(r.Body), `"redemption":{"quantity":10,"perCustomer":1,"used":0}}}`) {
			t.Fatalf("promotion with a budget: %s", r.Body)
		}
		r = e.s.call(t, e.admin, "GET", companyPath+"/promotions/B-NONE", "")
		mustStatus(t, r, 200)
		if strings.Contains(string(r.Body), "redemption") {
			t.Fatalf("promotion without a budget: %s", r.Body)
		}
		// XML takes it as JSON does.
		res = mustImport(t, e.s.do(t, importReq(e.pos, "demo-company", "application/xml",
			`<PromotionImportDto><items><id>B-XML</id><name>x</name><redemption><quantity>3</quantity></redemption></items></PromotionImportDto>`)))
		checkResult(t, res, importResult{Status: "Completed", CreatedCount: 1})
		r = e.s.call(t, e.admin, "GET", companyPath+"/promotions/B-XML", "")
		mustStatus(t, r, 200)
		if !strings.HasSuffix(string(r.Body), `"redemption":{"quantity":3,"perCustomer":null,"used":0}}}`) {
			t.Fatalf("promotion imported as XML: %s", r.Body)
		}
		// A budget that is not an integer is the body's type error.
		mustStatus(t, e.s.pos(t, e.pos, importPath("demo-company"), items(`{"id":"B-FRAC","name":"f","redemption":{"quantity":1.5}}`)), 400)
	})
}

// TestSaleSettlementAnswer: the exact answer of a settled sale, its stored
// copy, and a sale whose amount matches.
func TestSaleSettlementAnswer(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, allowLoopback)
		e := &txEnv{t: t, s: s, pos: s.posToken(t), admin: s.adminToken(t)}
		h := newHookReceiver(t)
		mustStatus(t, e.admin_("POST", "/webhooks", `{"url":"`+h.srv.URL+`/hook","eventTypes":["transaction.recorded"]}`), 201)
		mustImport(t, e.s.pos(t, e.pos, importPath("demo-company"), budgetItems(`{"quantity":5}`)))
		body := `{"sessionId":"` + e.session("TERM-05") + `","transactionId":"SET-1","terminalId":"TERM-05","posLocationId":"LOC123",
			"transactionAmount":7.00,"transactionDate":"` + e.date(-time.Minute) + `",
			"products":[{"productId":"SKU-BUDGET","quantity":2,"price":4.00},{"productName":"a bag, no id","price":0.10},{"productId":"NO-PRICE"}]}`
		want := `{"data":{"id":"ID","transactionId":"SET-1","sessionId":"SESSION","transactionType":"Undefined","posStatus":"Accepted",` +
			`"loyalty":null,"coupons":[],` +
			`"promotions":[{"id":"BUDGET","name":"1 off, limited","promotionType":"Amount","value":1,"discount":2.00,"productIds":["SKU-BUDGET"]}],` +
			`"cfsTemplate":{"cfsCarouselUrl":"CFS"},` + receipt1 + `""},` +
			`"settlement":{"subtotal":8.00,"totalDiscount":2.00,"total":6.00,"difference":1.00,"mismatch":true}}}`
		r := e.sale(body)
		mustTxBody(t, r, 200, want)
		// The event carries the settlement: the platform sees the mismatch.
		ev := h.wait(t, 1)[0]
		if b, _ := json.Marshal(ev.Data["settlement"]); ev.Type != "transaction.recorded" ||
			string(b) != `{"difference":1,"mismatch":true,"subtotal":8,"total":6,"totalDiscount":2}` {
			t.Fatalf("event %s: %s", ev.Type, ev.Body)
		}
		// The same request again answers the stored answer, consuming nothing more.
		mustTxBody(t, e.sale(body), 200, want)
		if u, err := e.s.openStore(t).PromotionUsage(t.Context(), "clover", "demo-company", "", []string{"BUDGET"}); err != nil || u["BUDGET"].Used != 1 {
			t.Fatalf("usage after a repeated sale: %v %v", u, err)
		}
		// A sale without priced lines has no settlement.
		r = e.sale(`{"sessionId":"` + e.session("TERM-05") + `","transactionId":"SET-2","terminalId":"TERM-05","posLocationId":"LOC123",
			"transactionAmount":3.00,"transactionDate":"` + e.date(-time.Minute) + `","products":[{"productId":"NO-PRICE"}]}`)
		mustStatus(t, r, 200)
		if strings.Contains(string(r.Body), "settlement") || appliedIDs(t, r.Body) != "" {
			t.Fatalf("sale without priced lines: %s", r.Body)
		}
	})
}
