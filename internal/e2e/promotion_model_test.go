package e2e

import (
	"strings"
	"testing"
)

// TestPromotionModel covers the promotion model (docs/api.md §9.1, §18.2)
// on each store: every result type, condition and stacking rule in one
// basket's line-by-line breakdown, a condition met, the model's fields as
// stored, and their import checks.
func TestPromotionModel(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok, admin := s.posToken(t), s.adminToken(t)
		s.company(t, admin, "model", "M1")
		mustImport(t, s.call(t, tok, "POST", importPath("model"), items(
			`{"id":"BOGO-MUFFIN","name":"A free muffin with a sandwich","productIds":["SANDWICH"],
				"promotionResults":[{"promotionType":"BuyXGetY","value":100,"buyQuantity":1,"getQuantity":1,"getProductIds":["MUFFIN"],"maxApplications":1}]}`,
			`{"id":"FIX-COFFEE","name":"Coffee at 2.00","productIds":["COFFEE"],"promotionResults":[{"promotionType":"FixedPrice","value":2}]}`,
			`{"id":"PCT-ALL","name":"10% off, stacks","useForAllProducts":true,"stackable":true,"promotionResults":[{"promotionType":"Percentage","value":10}]}`,
			`{"id":"AMT-VIP","name":"1 off each unit with a coupon","useForAllProducts":true,"requiresCoupon":true,"promotionResults":[{"promotionType":"Amount","value":1}]}`,
			`{"id":"PRIO-JUICE","name":"5% off juice, first","productIds":["JUICE"],"priority":1,"promotionResults":[{"promotionType":"Percentage","value":5}]}`,
			`{"id":"MIN-QTY","name":"Half price from 3 cookies","productIds":["COOKIE"],"minQuantity":3,"promotionResults":[{"promotionType":"Percentage","value":50}]}`,
			`{"id":"MIN-BASKET","name":"0.50 off each unit from 100.00","useForAllProducts":true,"stackable":true,"minBasketAmount":100,
				"promotionResults":[{"promotionType":"Amount","value":0.5}]}`)))
		eval := func(products string) response {
			t.Helper()
			return s.pos(t, tok, evaluatePath, `{"posLocationId":"M1","transactionDate":"2030-06-01T08:00:00Z","products":[`+products+`]}`)
		}
		line := func(product, subtotal, discount, total, applied, notApplied string) string {
			return `{"productId":"` + product + `","subtotal":` + subtotal + `,"discount":` + discount + `,"total":` + total +
				`,"promotions":[` + applied + `],"notApplied":[` + notApplied + `]}`
		}
		const (
			vip    = `{"id":"AMT-VIP","reason":"CouponRequired","lostTo":null}`
			basket = `{"id":"MIN-BASKET","reason":"MinBasketAmountNotMet","lostTo":null}`
		)
		// The sandwich: 10 % stacks (the others' conditions fail). The
		// muffins: one free (buy 1 sandwich, at most once), which excludes
		// 10 %. The coffee: AMT-VIP ties FixedPrice's 2.00 and ranks first
		// by id, but needs a coupon; FixedPrice makes 2 × 3.00 cost 2 × 2.00.
		// The juice: priority 1 beats larger discounts. The cookies: 2 of
		// the 3 that MIN-QTY needs, so 10 % applies.
		mustBody(t, eval(`{"productId":"SANDWICH","price":5.50},{"productId":"MUFFIN","quantity":2,"price":2.50},`+
			`{"productId":"COFFEE","quantity":2,"price":3.00},{"productId":"JUICE","price":4.00},{"productId":"COOKIE","quantity":2,"price":1.00}`),
			`{"data":{"posStatus":"Accepted","promotions":[`+
				`{"id":"BOGO-MUFFIN","name":"A free muffin with a sandwich","promotionType":"BuyXGetY","value":100,"discount":2.50,"productIds":["MUFFIN"]},`+
				`{"id":"FIX-COFFEE","name":"Coffee at 2.00","promotionType":"FixedPrice","value":2,"discount":2.00,"productIds":["COFFEE"]},`+
				`{"id":"PCT-ALL","name":"10% off, stacks","promotionType":"Percentage","value":10,"discount":0.75,"productIds":["SANDWICH","COOKIE"]},`+
				`{"id":"PRIO-JUICE","name":"5% off juice, first","promotionType":"Percentage","value":5,"discount":0.20,"productIds":["JUICE"]}],`+
				`"subtotal":22.50,"totalDiscount":5.45,"total":17.05,"lines":[`+
				line("SANDWICH", "5.50", "0.55", "4.95", `{"id":"PCT-ALL","discount":0.55,"couponCode":null}`, vip+`,`+basket)+`,`+
				line("MUFFIN", "5.00", "2.50", "2.50", `{"id":"BOGO-MUFFIN","discount":2.50,"couponCode":null}`,
					vip+`,`+basket+`,{"id":"PCT-ALL","reason":"SmallerDiscount","lostTo":"BOGO-MUFFIN"}`)+`,`+
				line("COFFEE", "6.00", "2.00", "4.00", `{"id":"FIX-COFFEE","discount":2.00,"couponCode":null}`,
					vip+`,`+basket+`,{"id":"PCT-ALL","reason":"SmallerDiscount","lostTo":"FIX-COFFEE"}`)+`,`+
				line("JUICE", "4.00", "0.20", "3.80", `{"id":"PRIO-JUICE","discount":0.20,"couponCode":null}`,
					vip+`,`+basket+`,{"id":"PCT-ALL","reason":"LowerPriority","lostTo":"PRIO-JUICE"}`)+`,`+
				line("COOKIE", "2.00", "0.20", "1.80", `{"id":"PCT-ALL","discount":0.20,"couponCode":null}`,
					vip+`,`+basket+`,{"id":"MIN-QTY","reason":"MinQuantityNotMet","lostTo":null}`)+
				`],"coupons":[],"loyalty":null}}`)
		// Three cookies meet MIN-QTY, which (not stackable) then excludes 10 %.
		mustBody(t, eval(`{"productId":"COOKIE","quantity":3,"price":1.00}`),
			`{"data":{"posStatus":"Accepted","promotions":[`+
				`{"id":"MIN-QTY","name":"Half price from 3 cookies","promotionType":"Percentage","value":50,"discount":1.50,"productIds":["COOKIE"]}],`+
				`"subtotal":3.00,"totalDiscount":1.50,"total":1.50,"lines":[`+
				line("COOKIE", "3.00", "1.50", "1.50", `{"id":"MIN-QTY","discount":1.50,"couponCode":null}`,
					vip+`,`+basket+`,{"id":"PCT-ALL","reason":"SmallerDiscount","lostTo":"MIN-QTY"}`)+
				`],"coupons":[],"loyalty":null}}`)

		// A coupon that carries AMT-VIP (which requires a coupon) makes it
		// apply: it excludes the others; the coupon shows its discount.
		mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/clover/companies/model/coupons", `{"code":"VIP1","promotionId":"AMT-VIP"}`), 201)
		mustBody(t, s.pos(t, tok, evaluatePath, `{"posLocationId":"M1","transactionDate":"2030-06-01T08:00:00Z","couponCodes":["vip1"],`+
			`"products":[{"productId":"COOKIE","quantity":2,"price":1.00}]}`),
			`{"data":{"posStatus":"Accepted","promotions":[`+
				`{"id":"AMT-VIP","name":"1 off each unit with a coupon","promotionType":"Amount","value":1,"discount":2.00,"productIds":["COOKIE"]}],`+
				`"subtotal":2.00,"totalDiscount":2.00,"total":0.00,"lines":[`+
				line("COOKIE", "2.00", "2.00", "0.00", `{"id":"AMT-VIP","discount":2.00,"couponCode":"VIP1"}`,
					basket+`,{"id":"MIN-QTY","reason":"MinQuantityNotMet","lostTo":null},{"id":"PCT-ALL","reason":"SmallerDiscount","lostTo":"AMT-VIP"}`)+
				`],"coupons":[{"code":"vip1","redeemable":true,"errorMessage":null,"promotionId":"AMT-VIP","discount":2.00}],"loyalty":null}}`)
		// The coupon lookups show the promotion it carries.
		r := s.pos(t, tok, "/v2/pos/clover/coupon/couponCodes/lookup", `{"code":"VIP1","posLocationId":"M1"}`)
		if !strings.Contains(string(r.Body), `"promotionId":"AMT-VIP"`) {
			t.Fatalf("lookup of VIP1: %d %s", r.Status, r.Body)
		}
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/model/coupons/VIP1", "")
		if !strings.Contains(string(r.Body), `"promotionId":"AMT-VIP"`) {
			t.Fatalf("VIP1: %d %s", r.Status, r.Body)
		}

		// The model's fields as stored.
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/model/promotions/BOGO-MUFFIN", "")
		mustStatus(t, r, 200)
		stamp := s.clock.Now().Format("2006-01-02T15:04:05Z07:00")
		mustBody(t, r, `{"data":{"posSystemId":"clover","posCompanyId":"model","id":"BOGO-MUFFIN","name":"A free muffin with a sandwich",`+
			`"useForAllCategories":false,"useForAllProducts":false,"locationIds":[],"categoryIds":[],"productIds":["SANDWICH"],"promotionValidities":[],`+
			`"promotionResults":[{"promotionType":"BuyXGetY","value":100,"buyQuantity":1,"getQuantity":1,"getProductIds":["MUFFIN"],"maxApplications":1}],`+
			`"priority":0,"stackable":false,"minQuantity":0,"minBasketAmount":0,"requiresCoupon":false,"createdAt":"`+stamp+`","updatedAt":"`+stamp+`"}}`)
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/model/promotions/MIN-BASKET", "")
		mustBody(t, r, `{"data":{"posSystemId":"clover","posCompanyId":"model","id":"MIN-BASKET","name":"0.50 off each unit from 100.00",`+
			`"useForAllCategories":false,"useForAllProducts":true,"locationIds":[],"categoryIds":[],"productIds":[],"promotionValidities":[],`+
			`"promotionResults":[{"promotionType":"Amount","value":0.5,"buyQuantity":0,"getQuantity":0,"getProductIds":[],"maxApplications":0}],`+
			`"priority":0,"stackable":true,"minQuantity":0,"minBasketAmount":100,"requiresCoupon":false,"createdAt":"`+stamp+`","updatedAt":"`+stamp+`"}}`)

		// Import checks, item by item; the valid item is stored.
		r = s.call(t, tok, "POST", importPath("model"), items(
			`{"id":"OK","name":"ok","priority":-5,"minQuantity":0.5,"promotionResults":[{"promotionType":"FixedPrice","value":1}]}`,
			`{"id":"B1","name":"b","promotionResults":[{"promotionType":"BuyXGetY","value":100,"getQuantity":1}]}`,
			`{"id":"B2","name":"b","priority":2000000,"minBasketAmount":1.005,"promotionResults":[{"promotionType":"Percentage","value":5,"maxApplications":2}]}`))
		mustBody(t, r, `{"data":{"status":"CompletedWithErrors","createdCount":1,"updatedCount":0,"errors":[`+
			`{"entityId":"B1","rowNumber":2,"errorMessage":"A BuyXGetY result's buyQuantity must be a whole number from 1 to 10000.","errorDetails":"promotionResults[0].buyQuantity: 0"},`+
			`{"entityId":"B2","rowNumber":3,"errorMessage":"The buyQuantity, getQuantity, getProductIds and maxApplications belong to BuyXGetY results only.","errorDetails":"promotionResults[0].promotionType: \"Percentage\""},`+
			`{"entityId":"B2","rowNumber":3,"errorMessage":"The priority must be a whole number from -1000000 to 1000000.","errorDetails":"priority: 2000000"},`+
			`{"entityId":"B2","rowNumber":3,"errorMessage":"The minBasketAmount must be a number from 0 to 1000000000 with at most 2 decimals.","errorDetails":"minBasketAmount: 1.005"}],`+
			`"warnings":[]}}`)
		// A value of the wrong JSON type is the request's 400.
		mustProblem(t, s.call(t, tok, "POST", importPath("model"), items(`{"id":"X","name":"x","priority":1.5}`)), 400, "*",
			map[string][]string{"items[0].priority": {"The items[0].priority field must be an integer."}})
	})
}
