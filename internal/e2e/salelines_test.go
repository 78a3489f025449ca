package e2e

import (
	"strings"
	"testing"
)

// TestSaleLinesValidated: a sale's product lines need a productId or a
// productName, a quantity above 0 and a price of at least 0; an amount
// other than 0 that rounds to 0.00 is refused rather than read as 0 (a
// refund of -0.001 would become a sale). Each refusal is a 400 with exact
// messages, and nothing is recorded (docs/api.md §13.1, §13.3).
func TestSaleLinesValidated(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		sess := e.session("TERM-05")
		body := func(id, amount, fields string) string {
			return `{"sessionId":"` + sess + `","transactionId":"` + id + `","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":` +
				amount + `,"transactionDate":"` + e.date(0) + `"` + fields + `}`
		}
		const (
			needsID   = "A product line needs a productId or a productName."
			saleQty   = "A sale's quantity must be greater than 0 (a negative quantity is a refund's)."
			negPrice  = "The price field must not be negative (it is the price of one unit; a refund's lines say so by their quantity)."
			roundZero = " field must be 0 or at least 0.01 in magnitude: a number other than 0 that rounds to 0.00 at two decimals is refused."
		)
		for _, c := range []struct {
			name, body string
			errs       map[string][]string
		}{
			{"an empty line", body("L-1", "5", `,"products":[{}]`), map[string][]string{"products[0]": {needsID}}},
			{"a negative quantity and price", body("L-2", "5", `,"products":[{"productId":"P1","quantity":-3,"price":-5.00}]`),
				map[string][]string{"products[0].quantity": {saleQty}, "products[0].price": {negPrice}}},
			{"a zero quantity", body("L-3", "5", `,"products":[{"productName":"Latte","quantity":0,"price":5}]`),
				map[string][]string{"products[0].quantity": {saleQty}}},
			{"a second line without a name", body("L-4", "5", `,"products":[{"productId":"P1","quantity":1,"price":5},{"productId":"","productName":"","quantity":1}]`),
				map[string][]string{"products[1]": {needsID}}},
			{"an amount that rounds to 0", body("L-5", "-0.001", ``), map[string][]string{"transactionAmount": {"The transactionAmount" + roundZero}}},
			{"a positive amount that rounds to 0", body("L-6", "0.004", ``), map[string][]string{"transactionAmount": {"The transactionAmount" + roundZero}}},
			{"a price that rounds to 0", body("L-7", "5", `,"products":[{"productId":"P1","quantity":1,"price":0.001}]`),
				map[string][]string{"products[0].price": {"The products[0].price" + roundZero}}},
		} {
			detail := "*"
			if len(c.errs) == 1 {
				for _, msgs := range c.errs {
					detail = msgs[0]
				}
			}
			mustProblem(t, e.sale(c.body), 400, detail, c.errs)
		}
		if r := e.admin_("GET", "/transactions", ""); !strings.Contains(string(r.Body), `"total":0`) {
			t.Fatalf("refused sales recorded something: %s", r.Body)
		}

		// What stays accepted: a free line, a line named only, a refund's
		// negative quantity, an amount of exactly 0.
		mustStatus(t, e.sale(body("OK-1", "5", `,"products":[{"productName":"Water","quantity":1,"price":0},{"productId":"P1","quantity":0.5,"price":10}]`)), 200)
		sess = e.session("TERM-05")
		mustStatus(t, e.sale(body("OK-2", "0", ``)), 200)
		mustStatus(t, e.sale(`{"transactionId":"OK-R","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":-5,"transactionDate":"`+
			e.date(0)+`","originalTransactionId":"OK-1","products":[{"productId":"P1","quantity":-0.5,"price":10}]}`), 200)
	})
}
