package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
)

const evaluatePath = "/v2/pos/clover/promotions/evaluate"

// TestPromotionEvaluate covers promotion evaluation (docs/api.md §18):
// every matching rule at its edges, both discount types and their rounding,
// the best promotion per line and ties, the place's state, the coupons'
// checks and the loyalty preview.
func TestPromotionEvaluate(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok, admin := s.posToken(t), s.adminToken(t)
		s.company(t, admin, "shop", "S1", "S2")
		s.company(t, admin, "rival", "R1")
		for _, l := range []string{"S1", "S2"} {
			mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/clover/locations/"+l+"/terminals", `{"terminalId":"T1"}`), 201)
		}
		post := func(path, body string) {
			t.Helper()
			mustImport(t, s.call(t, tok, "POST", path, body))
		}
		post(categoriesPath("shop"), items(`{"posProductCategoryId":"FOOD","name":"Food"}`,
			`{"posProductCategoryId":"BAKERY","name":"Bakery","posProductParentCategoryId":"FOOD"}`,
			`{"posProductCategoryId":"PASTRY","name":"Viennoiserie","posProductParentCategoryId":"BAKERY"}`,
			`{"posProductCategoryId":"DRINKS","name":"Drinks"}`))
		post(productsPath("shop"), items(`{"productId":"P-CROISSANT","productCategoryId":"PASTRY","price":2.5}`,
			`{"productId":"P-LATTE","productCategoryId":"DRINKS"}`))
		post(importPath("shop"), items(
			`{"id":"A-ALL","name":"5% off everything","useForAllProducts":true,"promotionResults":[{"promotionType":"Percentage","value":5}]}`,
			`{"id":"B-BAKERY","name":"10% off bakery at S1","locationIds":["S1"],"categoryIds":["BAKERY"],"promotionResults":[{"promotionType":"Percentage","value":10}]}`,
			`{"id":"C-LATTE","name":"1 off a latte in June","productIds":["P-LATTE"],
				"promotionValidities":[{"startDate":"2030-06-02T08:00:00Z","endDate":"2030-06-30T18:00:00Z"}],
				"promotionResults":[{"promotionType":"Amount","value":1}]}`,
			`{"id":"D-WEEKEND","name":"1.50 off a latte on Saturday mornings","productIds":["P-LATTE"],
				"promotionValidities":[{"startDate":"2030-01-01T00:00:00Z","recurrence":{"daysOfWeek":["Saturday"],"startDate":"2030-01-05T07:00:00Z","endDate":"2030-01-05T11:00:00Z"}}],
				"promotionResults":[{"promotionType":"Amount","value":1.5}]}`,
			`{"id":"E-BIG","name":"100 off water","productIds":["P-WATER"],"promotionResults":[{"promotionType":"Amount","value":100}]}`,
			`{"id":"T-1","name":"20% off tea","productIds":["P-TEA"],"promotionResults":[{"promotionType":"Percentage","value":20}]}`,
			`{"id":"T-0","name":"Another 20% off tea","categoryIds":["TEA"],"promotionResults":[{"promotionType":"Percentage","value":20}]}`,
			`{"id":"N-NONE","name":"no result","useForAllProducts":true}`))
		post(importPath("rival"), items(`{"id":"Z-RIVAL","name":"50% off at the rival","useForAllProducts":true,"promotionResults":[{"promotionType":"Percentage","value":50}]}`))

		// The lines' breakdown is left out here: TestPromotionModel checks
		// it, body by body.
		eval := func(body string) response {
			t.Helper()
			return withoutLines(s.pos(t, tok, evaluatePath, body))
		}
		// The basket: the croissants' category comes from the catalogue
		// (PASTRY, under BAKERY), the tea's from the request.
		basket := func(loc, at string) string {
			return `{"posLocationId":"` + loc + `","transactionDate":"` + at + `","products":[` +
				`{"productId":"P-CROISSANT","quantity":2,"price":2.50},` +
				`{"productId":"P-LATTE","quantity":1,"price":4.20},` +
				`{"productId":"P-WATER","price":1.00},` +
				`{"productId":"P-TEA","productCategory":"TEA","price":3.00},` +
				`{"productId":"P-GUM","price":0.30},` +
				`{"productId":"P-MINT","price":0.50}]}`
		}
		answer := func(promotions, subtotal, discount string) string {
			return `{"data":{"posStatus":"Accepted","promotions":[` + promotions + `],"subtotal":` + subtotal + `,"totalDiscount":` + discount +
				`,"total":` + minus(subtotal, discount) + `,"coupons":[],"loyalty":null}}`
		}
		// Small lines at 5 %: 0.30 → 0.015 → 0.02, 0.50 → 0.025 → 0.02 (half to even).

		tea := `{"id":"T-0","name":"Another 20% off tea","promotionType":"Percentage","value":20,"discount":0.60,"productIds":["P-TEA"]}`
		water := `{"id":"E-BIG","name":"100 off water","promotionType":"Amount","value":100,"discount":1.00,"productIds":["P-WATER"]}`

		// Saturday 08:00 at S1: the bakery promotion reaches the croissants
		// through PASTRY's parent, the weekend latte beats June's and 5 %,
		// water's 100 off is cut to the line, the tea tie goes to the lower id.
		mustBody(t, eval(basket("S1", "2030-06-01T08:00:00Z")), answer(
			`{"id":"A-ALL","name":"5% off everything","promotionType":"Percentage","value":5,"discount":0.04,"productIds":["P-GUM","P-MINT"]},`+
				`{"id":"B-BAKERY","name":"10% off bakery at S1","promotionType":"Percentage","value":10,"discount":0.50,"productIds":["P-CROISSANT"]},`+
				`{"id":"D-WEEKEND","name":"1.50 off a latte on Saturday mornings","promotionType":"Amount","value":1.5,"discount":1.50,"productIds":["P-LATTE"]},`+
				water+`,`+tea, "14.00", "3.64"))
		// At S2 the bakery promotion (S1 only) does not apply: 5 % of 5.00.
		mustBody(t, eval(basket("S2", "2030-06-01T08:00:00Z")), answer(
			`{"id":"A-ALL","name":"5% off everything","promotionType":"Percentage","value":5,"discount":0.29,"productIds":["P-CROISSANT","P-GUM","P-MINT"]},`+
				`{"id":"D-WEEKEND","name":"1.50 off a latte on Saturday mornings","promotionType":"Amount","value":1.5,"discount":1.50,"productIds":["P-LATTE"]},`+
				water+`,`+tea, "14.00", "3.39"))

		// The latte alone, at the edges of C's validity and D's window.
		latte := func(at string) string {
			r := eval(`{"posLocationId":"S1","transactionDate":"` + at + `","products":[{"productId":"P-LATTE","price":4.20}]}`)
			mustStatus(t, r, 200)
			p := r.JSON(t)["data"].(map[string]any)["promotions"].([]any)
			if len(p) != 1 {
				t.Fatalf("latte at %s: %s", at, r.Body)
			}
			return p[0].(map[string]any)["id"].(string)
		}
		for _, tc := range []struct{ at, want string }{
			{"2030-06-01T07:00:00Z", "D-WEEKEND"},        // the window's start is in
			{"2030-06-01T10:59:59.999999Z", "D-WEEKEND"}, // its last microsecond too
			{"2030-06-01T11:00:00Z", "A-ALL"},            // its end is out; C not yet valid
			{"2030-06-01T06:59:59Z", "A-ALL"},
			{"2030-06-02T07:59:59.999999Z", "A-ALL"}, // Sunday, before C's start
			{"2030-06-02T08:00:00Z", "C-LATTE"},      // C's start is in; D is Saturdays only
			{"2030-06-30T18:00:00Z", "C-LATTE"},      // C's end is in
			{"2030-06-30T18:00:00.000001Z", "A-ALL"},
			{"2030-06-08T09:00:00+02:00", "D-WEEKEND"}, // 07:00 UTC, a Saturday
		} {
			if got := latte(tc.at); got != tc.want {
				t.Errorf("latte at %s: %s, want %s", tc.at, got, tc.want)
			}
		}

		// Quantities: Amount per unit (pro rata), never more than the line.
		mustBody(t, eval(`{"posLocationId":"S1","transactionDate":"2030-06-01T08:00:00Z","products":[`+
			`{"productId":"P-LATTE","quantity":2,"price":4.20},{"productId":"P-WATER","quantity":0.5,"price":1.00}]}`),
			answer(`{"id":"D-WEEKEND","name":"1.50 off a latte on Saturday mornings","promotionType":"Amount","value":1.5,"discount":3.00,"productIds":["P-LATTE"]},`+
				`{"id":"E-BIG","name":"100 off water","promotionType":"Amount","value":100,"discount":0.50,"productIds":["P-WATER"]}`, "8.90", "3.50"))
		// A category named by its name; an unknown category is matched as an id.
		mustBody(t, eval(`{"posLocationId":"S2","transactionDate":"2030-06-03T12:00:00Z","products":[`+
			`{"productId":"X1","productCategory":"Viennoiserie","price":10},{"productId":"X2","productCategory":"TEA","price":10}]}`),
			answer(`{"id":"A-ALL","name":"5% off everything","promotionType":"Percentage","value":5,"discount":0.50,"productIds":["X1"]},`+
				`{"id":"T-0","name":"Another 20% off tea","promotionType":"Percentage","value":20,"discount":2.00,"productIds":["X2"]}`, "20.00", "2.50"))
		// Another company's promotions never apply, and this one's never there.
		mustBody(t, eval(`{"posLocationId":"R1","products":[{"productId":"P-TEA","productCategory":"TEA","price":3}]}`),
			answer(`{"id":"Z-RIVAL","name":"50% off at the rival","promotionType":"Percentage","value":50,"discount":1.50,"productIds":["P-TEA"]}`, "3.00", "1.50"))
		// An empty basket, in XML.
		mustBody(t, withoutLines(s.do(t, req{Method: "POST", Path: evaluatePath, Token: tok, ContentType: "application/xml",
			Body: `<EvaluatePromotionsDto><posLocationId>S1</posLocationId><terminalId>T1</terminalId></EvaluatePromotionsDto>`})), answer(``, "0.00", "0.00"))
		mustBody(t, withoutLines(s.do(t, req{Method: "POST", Path: evaluatePath, Token: tok, ContentType: "application/xml",
			Body: `<E><posLocationId>S1</posLocationId><transactionDate>2030-06-01T08:00:00Z</transactionDate>` +
				`<products><productId>P-WATER</productId><quantity>0.5</quantity><price>1.00</price></products></E>`})),
			answer(`{"id":"E-BIG","name":"100 off water","promotionType":"Amount","value":100,"discount":0.50,"productIds":["P-WATER"]}`, "0.50", "0.50"))

		// Coupons, checked as a sale would redeem them, and the customer.
		adm := func(method, path, body string, want int) {
			t.Helper()
			mustStatus(t, s.call(t, admin, method, "/admin/v1/pos-systems/clover/companies/shop/"+path, body), want)
		}
		adm("POST", "loyalty-users", `{"id":"ann","firstName":"Ann","email":"ann@example.com"}`, 201)
		adm("PATCH", "loyalty-users/ann", `{"pointsDelta":40,"stampsDelta":2}`, 200)
		adm("POST", "coupons", `{"code":"FREE1"}`, 201)
		adm("POST", "coupons", `{"code":"ANN1","userId":"ann"}`, 201)
		adm("POST", "coupons", `{"code":"ANNMAIL","email":"ANN@example.com"}`, 201)
		adm("POST", "coupons", `{"code":"BOB1","email":"bob@example.com"}`, 201)
		adm("POST", "coupons", `{"code":"USED"}`, 201)
		adm("POST", "coupons/USED/redeem", ``, 200)
		adm("POST", "coupons", `{"code":"GONE"}`, 201)
		adm("POST", "coupons/GONE/cancel", ``, 200)
		adm("POST", "coupons", `{"code":"OLD","availableUntil":"2030-05-31T23:59:59Z"}`, 201)
		adm("POST", "coupons", `{"code":"S2ONLY","locationIds":["S2"]}`, 201)
		codes := `"couponCodes":["free1","ANN1","annmail","BOB1","USED","GONE","OLD","S2ONLY","NOPE"]`
		coupons := func(customer bool) string {
			owned := `{"code":"ANN1","redeemable":true,"errorMessage":null,"promotionId":null,"discount":0.00},{"code":"annmail","redeemable":true,"errorMessage":null,"promotionId":null,"discount":0.00},`
			if !customer {
				owned = `{"code":"ANN1","redeemable":false,"errorMessage":"The coupon belongs to a loyalty customer; name the customer to use it.","promotionId":null,"discount":0.00},` +
					`{"code":"annmail","redeemable":false,"errorMessage":"The coupon belongs to a loyalty customer; name the customer to use it.","promotionId":null,"discount":0.00},`
			}
			bob := `{"code":"BOB1","redeemable":false,"errorMessage":"The coupon belongs to another customer.","promotionId":null,"discount":0.00}`
			if !customer {
				bob = `{"code":"BOB1","redeemable":false,"errorMessage":"The coupon belongs to a loyalty customer; name the customer to use it.","promotionId":null,"discount":0.00}`
			}
			return `[{"code":"free1","redeemable":true,"errorMessage":null,"promotionId":null,"discount":0.00},` + owned + bob + `,` +
				`{"code":"USED","redeemable":false,"errorMessage":"The coupon has already been redeemed.","promotionId":null,"discount":0.00},` +
				`{"code":"GONE","redeemable":false,"errorMessage":"The coupon has been cancelled.","promotionId":null,"discount":0.00},` +
				`{"code":"OLD","redeemable":false,"errorMessage":"The coupon expired at 2030-05-31T23:59:59Z.","promotionId":null,"discount":0.00},` +
				`{"code":"S2ONLY","redeemable":false,"errorMessage":"The coupon cannot be used at location 'S1'.","promotionId":null,"discount":0.00},` +
				`{"code":"NOPE","redeemable":false,"errorMessage":"The coupon 'NOPE' does not exist.","promotionId":null,"discount":0.00}]`
		}
		// 9.00 paid (10.00 less the bakery's 10 % at S1) earns 9 points.
		mustBody(t, eval(`{"posLocationId":"S1","terminalId":"T1","transactionDate":"2030-06-03T12:00:00Z",`+codes+`,"loyalty":{"cardNumber":"ann"},`+
			`"products":[{"productId":"P-CROISSANT","quantity":4,"price":2.50}]}`),
			`{"data":{"posStatus":"Accepted","promotions":[{"id":"B-BAKERY","name":"10% off bakery at S1","promotionType":"Percentage","value":10,"discount":1.00,"productIds":["P-CROISSANT"]}],`+
				`"subtotal":10.00,"totalDiscount":1.00,"total":9.00,"coupons":`+coupons(true)+`,"loyalty":{"userId":"ann","points":40,"stamps":2,"pointsToEarn":9}}}`)
		// The company's loyalty program decides: at 2.5 points per unit, 9.00 earns 22.
		mustStatus(t, s.call(t, admin, "PUT", "/admin/v1/pos-systems/clover/companies/shop/loyalty-program", `{"pointsPerCurrencyUnit":2.5}`), 200)
		if r := eval(`{"posLocationId":"S1","terminalId":"T1","transactionDate":"2030-06-03T12:00:00Z","loyalty":{"cardNumber":"ann"},` +
			`"products":[{"productId":"P-CROISSANT","quantity":4,"price":2.50}]}`); !strings.Contains(string(r.Body), `"pointsToEarn":22}`) {
			t.Fatalf("pointsToEarn at 2.5 points per unit: %s", r.Body)
		}
		mustBody(t, eval(`{"posLocationId":"S1","transactionDate":"2030-06-03T12:00:00Z",`+codes+`,"loyalty":{"cardNumber":"nobody"}}`),
			`{"data":{"posStatus":"Accepted","promotions":[],"subtotal":0.00,"totalDiscount":0.00,"total":0.00,"coupons":`+coupons(false)+`,"loyalty":null}}`)
		// Nothing was redeemed.
		r := s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/shop/coupons/FREE1", "")
		if !strings.Contains(string(r.Body), `"storedStatus":"Issued"`) {
			t.Fatalf("FREE1 after evaluations: %s", r.Body)
		}

		// A disabled place: Disabled and nothing else (validation still first).
		disabled := `{"data":{"posStatus":"Disabled","promotions":[],"subtotal":0.00,"totalDiscount":0.00,"total":0.00,"coupons":[],"loyalty":null}}`
		one := `"products":[{"productId":"P-TEA","price":3}],"couponCodes":["FREE1"]`
		mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/clover/locations/S2/terminals/T1/disable", ""), 200)
		mustBody(t, eval(`{"posLocationId":"S2","terminalId":"T1",`+one+`}`), disabled)
		if r := eval(`{"posLocationId":"S2",` + one + `}`); !strings.Contains(string(r.Body), `"posStatus":"Accepted"`) {
			t.Fatalf("S2 without the disabled terminal: %s", r.Body)
		}
		mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/locations/S2", `{"status":"Disabled"}`), 200)
		mustBody(t, eval(`{"posLocationId":"S2",`+one+`}`), disabled)
		mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/shop", `{"status":"Disabled"}`), 200)
		mustBody(t, eval(`{"posLocationId":"S1",`+one+`}`), disabled)
		mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/shop", `{"status":"Active"}`), 200)

		// Bad input: 400 naming every field; unknown places 404; tokens.
		bad := func(body string, errs map[string][]string) {
			t.Helper()
			mustProblem(t, eval(body), 400, "*", errs)
		}
		bad(`{"products":[{"price":1}]}`, map[string][]string{"posLocationId": {"The posLocationId field is required."},
			"products[0].productId": {"The products[0].productId field is required."}})
		qty := "The quantity must be a number greater than 0 and at most 1000000, with at most 3 decimals."
		price := "The price must be a number from 0 to 1000000000.00."
		bad(`{"posLocationId":"S1","products":[{"productId":"A","quantity":0,"price":1},{"productId":"B","quantity":1.0001,"price":-1},{"productId":"C"},{"productId":"D","price":1e10}],"couponCodes":[""]}`,
			map[string][]string{"products[0].quantity": {qty}, "products[1].quantity": {qty}, "products[1].price": {price},
				"products[2].price": {"The price field is required."}, "products[3].price": {price}, "couponCodes[0]": {"A coupon code must not be empty."}})
		bad(`{"posLocationId":"S1","products":[{"productId":"A","price":"1.00"}]}`, map[string][]string{"products[0].price": {"The products[0].price field must be a number."}})
		bad(`{"posLocationId":"S1","transactionDate":"soon"}`, map[string][]string{"transactionDate": {"The transactionDate field must be a date-time (ISO 8601)."}})
		bad(`{"posLocationId":"S1","products":[{"productId":"A","quantity":1000000,"price":1000000000}]}`, nil)
		mustProblem(t, eval(`{"posLocationId":"NOPE"}`), 404, "Location 'NOPE' is not registered.", nil)
		mustProblem(t, eval(`{"posLocationId":"S1","terminalId":"T9"}`), 404, "Terminal 'T9' is not registered at location 'S1'.", nil)
		other := restrictedClient(t, s, admin)
		mustProblem(t, s.pos(t, other, evaluatePath, `{"posLocationId":"S1"}`), 404, "Location 'S1' is not registered.", nil)
		mustProblem(t, s.pos(t, admin, evaluatePath, `{"posLocationId":"S1"}`), 403, "*", nil)
		mustProblem(t, s.call(t, "", "POST", evaluatePath, `{}`), 401, "*", nil)
		mustProblem(t, s.do(t, req{Method: "POST", Path: evaluatePath, Token: tok, ContentType: "text/csv", Body: `x`}), 415, "*", nil)
		mustProblem(t, eval(`{"posLocationId":"S1","products":[`+strings.Repeat(`{"productId":"A","price":1},`, 3000)+`{}]}`), 413, "*", nil)
	})
}

// linesPattern is an evaluation's lines, which come before its coupons.
var linesPattern = regexp.MustCompile(`,"lines":\[.*?\],"coupons"`)

// withoutLines drops an evaluation's lines from its body.
func withoutLines(r response) response {
	r.Body = linesPattern.ReplaceAll(r.Body, []byte(`,"coupons"`))
	return r
}

// minus is a − b for amounts written with 2 decimals.
func minus(a, b string) string {
	x, _ := posgate.Decimal(a).MinorUnits()
	y, _ := posgate.Decimal(b).MinorUnits()
	return (x - y).String()
}

// TestPromotionEvaluateCache checks evaluation's per-company index with a
// cache (--cache-ttl): an import through this instance is evaluated at
// once; a change made elsewhere (another instance, the CLI: here a second
// handle on the store) is evaluated once the TTL has passed, through the
// catalogue version.
func TestPromotionEvaluateCache(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		const ttl = 300 * time.Millisecond
		s := start(t, dsn, func(c *app.Config) { c.CacheTTL = ttl })
		tok, admin := s.posToken(t), s.adminToken(t)
		s.company(t, admin, "cc", "C1")
		promo := func(id string, pct int) string {
			return fmt.Sprintf(`{"id":"%s","name":"%s","useForAllProducts":true,"promotionResults":[{"promotionType":"Percentage","value":%d}]}`, id, id, pct)
		}
		best := func() string {
			t.Helper()
			r := s.pos(t, tok, evaluatePath, `{"posLocationId":"C1","products":[{"productId":"X","productCategory":"K","price":10}]}`)
			mustStatus(t, r, 200)
			ps := r.JSON(t)["data"].(map[string]any)["promotions"].([]any)
			if len(ps) == 0 {
				return ""
			}
			return ps[0].(map[string]any)["id"].(string)
		}
		if got := best(); got != "" {
			t.Fatalf("no promotions yet: %s", got)
		}
		mustImport(t, s.request(t, importReq(tok, "cc", "application/json", items(promo("A", 10)))))
		if got := best(); got != "A" {
			t.Fatalf("after importing A here: %q", got)
		}
		mustImport(t, s.request(t, importReq(tok, "cc", "application/json", items(promo("B", 20)))))
		if got := best(); got != "B" {
			t.Fatalf("after importing B here: %q", got)
		}
		// Elsewhere: a category that makes K a child of a new parent with a
		// better promotion, then that promotion, through another handle.
		st := s.openStore(t)
		ctx := t.Context()
		cc := posgate.NewCategoryChecker("clover", "cc")
		cc.Check(1, &posgate.CategoryItem{PosProductCategoryID: "K", Name: "K", PosProductParentCategoryID: "TOP"})
		cc.Check(2, &posgate.CategoryItem{PosProductCategoryID: "TOP", Name: "Top"})
		if _, _, err := st.ImportCategories(ctx, "clover", "cc", cc.Plan); err != nil {
			t.Fatal(err)
		}
		p := &posgate.Promotion{ID: "C", Name: "C", CategoryIDs: []string{"TOP"}, Results: []posgate.PromotionResult{{PromotionType: posgate.PromotionPercentage, Value: 30}}}
		if !posgate.NewPromotionChecker("cc", []string{"C1"}, nil).Check(1, p) {
			t.Fatal("C fails its checks")
		}
		imp, err := st.BeginPromotionImport(ctx, "clover", "cc")
		if err != nil {
			t.Fatal(err)
		}
		if err := imp.Add(ctx, p); err != nil {
			t.Fatal(err)
		}
		if _, _, err := imp.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(3 * ttl)
		for best() != "C" {
			if time.Now().After(deadline) {
				t.Fatalf("a change made elsewhere is not evaluated %s after it", 3*ttl)
			}
			time.Sleep(ttl / 10)
		}
	})
}
