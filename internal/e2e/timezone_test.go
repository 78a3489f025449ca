package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const allFeatures = `{"coupons":true,"receiptPromotion":true,"carousel":true,"promotionImport":true,"transactions":true,"productsImport":true}`

// TestTimeZonesOperatorAPI: companies and locations take an IANA timeZone
// on create and update and show it on every answer; an unknown zone is a
// per-field 400 that changes nothing; "" removes it.
func TestTimeZonesOperatorAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		call := func(method, path, body string) response {
			t.Helper()
			return s.admin(t, admin, method, path, body)
		}
		now := s.clock.Now().UTC().Format(time.RFC3339)
		company := func(zone string) string {
			return `{"posSystemId":"clover","posCompanyId":"nyco","name":"NY Co","status":"Active","features":` + allFeatures +
				`,"timeZone":"` + zone + `","createdAt":"` + now + `","updatedAt":"` + now + `"}`
		}
		location := func(id, name, zone string) string {
			return `{"posSystemId":"clover","posLocationId":"` + id + `","posCompanyId":"nyco","name":"` + name + `","status":"Active","timeZone":"` + zone +
				`","createdAt":"` + now + `","updatedAt":"` + now + `"}`
		}
		r := call("POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"nyco","name":"NY Co","timeZone":"America/New_York"}`)
		mustStatus(t, r, 201)
		if want := `{"data":` + company("America/New_York") + `}`; string(r.Body) != want {
			t.Fatalf("created company\n got %s\nwant %s", r.Body, want)
		}
		r = call("POST", "/admin/v1/pos-systems/clover/locations", `{"posLocationId":"NY1","posCompanyId":"nyco","name":"Times Square"}`)
		mustStatus(t, r, 201)
		if want := `{"data":` + location("NY1", "Times Square", "") + `}`; string(r.Body) != want {
			t.Fatalf("created location\n got %s\nwant %s", r.Body, want)
		}
		r = call("POST", "/admin/v1/pos-systems/clover/locations", `{"posLocationId":"BER1","posCompanyId":"nyco","name":"Berlin","timeZone":"Europe/Berlin"}`)
		mustStatus(t, r, 201)
		mustBody(t, call("GET", "/admin/v1/pos-systems/clover/companies/nyco", ""), `{"data":`+company("America/New_York")+`}`)
		mustBody(t, call("GET", "/admin/v1/pos-systems/clover/locations/BER1", ""), `{"data":`+location("BER1", "Berlin", "Europe/Berlin")+`}`)
		mustBody(t, call("GET", "/admin/v1/pos-systems/clover/locations?posCompanyId=nyco", ""),
			`{"data":[`+location("BER1", "Berlin", "Europe/Berlin")+`,`+location("NY1", "Times Square", "")+`]}`)

		// Unknown zones: a 400 naming the field, and nothing changes.
		bad := func(zone string) map[string][]string {
			return map[string][]string{"timeZone": {`The timeZone field must be an IANA time zone name such as Europe/Berlin or America/New_York (or empty for none); "` + zone + `" is not one.`}}
		}
		mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"mars","timeZone":"Mars/Olympus_Mons"}`), 400, "*", bad("Mars/Olympus_Mons"))
		mustProblem(t, call("GET", "/admin/v1/pos-systems/clover/companies/mars", ""), 404, "*", nil)
		mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/locations", `{"posLocationId":"X1","posCompanyId":"nyco","timeZone":"Local"}`), 400, "*", bad("Local"))
		mustProblem(t, call("GET", "/admin/v1/pos-systems/clover/locations/X1", ""), 404, "*", nil)
		mustProblem(t, call("PATCH", "/admin/v1/pos-systems/clover/companies/nyco", `{"name":"renamed","timeZone":"EST5EDT "}`), 400, "*", bad("EST5EDT "))
		mustProblem(t, call("PATCH", "/admin/v1/pos-systems/clover/locations/NY1", `{"status":"Closed","timeZone":"America/NewYork"}`), 400, "*",
			map[string][]string{"status": {"The status field must be Active or Disabled."}, "timeZone": bad("America/NewYork")["timeZone"]})
		mustBody(t, call("GET", "/admin/v1/pos-systems/clover/companies/nyco", ""), `{"data":`+company("America/New_York")+`}`)
		mustBody(t, call("GET", "/admin/v1/pos-systems/clover/locations/NY1", ""), `{"data":`+location("NY1", "Times Square", "")+`}`)

		// Update: set, keep when absent, remove with "".
		mustBody(t, call("PATCH", "/admin/v1/pos-systems/clover/locations/NY1", `{"timeZone":"America/Chicago"}`), `{"data":`+location("NY1", "Times Square", "America/Chicago")+`}`)
		mustBody(t, call("PATCH", "/admin/v1/pos-systems/clover/locations/NY1", `{"name":"Midtown"}`), `{"data":`+location("NY1", "Midtown", "America/Chicago")+`}`)
		mustBody(t, call("PATCH", "/admin/v1/pos-systems/clover/locations/NY1", `{"timeZone":""}`), `{"data":`+location("NY1", "Midtown", "")+`}`)
		mustBody(t, call("PATCH", "/admin/v1/pos-systems/clover/companies/nyco", `{"timeZone":""}`), `{"data":`+company("")+`}`)
		mustBody(t, call("PATCH", "/admin/v1/pos-systems/clover/companies/nyco", `{"timeZone":"America/New_York"}`), `{"data":`+company("America/New_York")+`}`)
		mustBody(t, call("GET", "/admin/v1/pos-systems/clover/companies", ""),
			`{"data":[{"posSystemId":"clover","posCompanyId":"demo-company","name":"Demo Company","status":"Active","features":`+
				allFeatures+`,"timeZone":"","createdAt":"`+now+`","updatedAt":"`+now+`"},`+company("America/New_York")+`]}`)
	})
}

// TestTimeZonesEvaluation: promotion dates imported without an offset are
// the location's wall-clock time (its own zone, else its company's), kept
// as given and shown as given; dates with an offset stay instants. The
// evaluation at instants around both daylight-saving changes of New York
// and Berlin applies them on the local clock.
func TestTimeZonesEvaluation(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok, admin := s.posToken(t), s.adminToken(t)
		mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"tz","timeZone":"America/New_York"}`), 201)
		for _, l := range []string{`{"posLocationId":"NYC","posCompanyId":"tz"}`, `{"posLocationId":"BER","posCompanyId":"tz","timeZone":"Europe/Berlin"}`,
			`{"posLocationId":"UTC","posCompanyId":"tz","timeZone":"UTC"}`} {
			mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/clover/locations", l), 201)
		}
		breakfast := `{"id":"BREAKFAST","name":"Weekend breakfast","productIds":["COFFEE"],` +
			`"promotionValidities":[{"startDate":"2026-01-01","recurrence":{"daysOfWeek":["Saturday","Sunday"],"startDate":"2026-01-03T07:00:00","endDate":"2026-01-03T11:00:00"}}],` +
			`"promotionResults":[{"promotionType":"Percentage","value":50}]}`
		// Valid from 01:30 New York time on the day of the autumn change
		// (the first of the two 01:30s) to 02:30 on the day of the spring
		// change, an hour the clock skips.
		night := `{"id":"NIGHT","name":"Night","productIds":["TEA"],` +
			`"promotionValidities":[{"startDate":"2026-11-01T01:30:00","endDate":"2027-03-14T02:30:00"}],` +
			`"promotionResults":[{"promotionType":"Amount","value":1}]}`
		// An offset is that instant everywhere.
		fixed := `{"id":"FIXED","name":"Fixed","productIds":["CAKE"],` +
			`"promotionValidities":[{"startDate":"2026-03-08T02:30:00-05:00","endDate":"2026-03-08T12:00:00Z"}],` +
			`"promotionResults":[{"promotionType":"Amount","value":1}]}`
		mixed := `{"id":"MIXED","name":"Mixed","promotionValidities":[{"recurrence":{"startDate":"2026-01-03T07:00:00","endDate":"2026-01-03T11:00:00Z"}}]}`
		checkResult(t, mustImport(t, s.call(t, tok, "POST", importPath("tz"), items(breakfast, night, fixed, mixed))), importResult{
			Status: "CompletedWithErrors", CreatedCount: 3,
			Errors: []importError{{EntityID: "MIXED", RowNumber: 4,
				ErrorMessage: "The recurrence's startDate and endDate must both have a zone offset (fixed instants of the day) or both have none (the location's local time).",
				ErrorDetails: "promotionValidities[0].recurrence: startDate 2026-01-03T07:00:00, endDate 2026-01-03T11:00:00Z"}}})

		// The stored promotions show each date as it was given: wall-clock
		// times without an offset, instants in UTC.
		stamp := s.clock.Now().UTC().Format(time.RFC3339)
		mustBody(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/tz/promotions/BREAKFAST", ""),
			`{"data":{"posSystemId":"clover","posCompanyId":"tz","id":"BREAKFAST","name":"Weekend breakfast","useForAllCategories":false,"useForAllProducts":false,`+
				`"locationIds":[],"categoryIds":[],"productIds":["COFFEE"],"promotionValidities":[{"startDate":"2026-01-01T00:00:00","endDate":null,`+
				`"recurrence":{"daysOfWeek":["Sunday","Saturday"],"startDate":"2026-01-03T07:00:00","endDate":"2026-01-03T11:00:00"}}],`+
				`"promotionResults":[{"promotionType":"Percentage","value":50,"buyQuantity":0,"getQuantity":0,"getProductIds":[],"maxApplications":0}],"priority":0,"stackable":false,"minQuantity":0,"minBasketAmount":0,"requiresCoupon":false,"createdAt":"`+stamp+`","updatedAt":"`+stamp+`"}}`)
		mustBody(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/tz/promotions/FIXED", ""),
			`{"data":{"posSystemId":"clover","posCompanyId":"tz","id":"FIXED","name":"Fixed","useForAllCategories":false,"useForAllProducts":false,`+
				`"locationIds":[],"categoryIds":[],"productIds":["CAKE"],"promotionValidities":[{"startDate":"2026-03-08T07:30:00Z","endDate":"2026-03-08T12:00:00Z",`+
				`"recurrence":null}],"promotionResults":[{"promotionType":"Amount","value":1,"buyQuantity":0,"getQuantity":0,"getProductIds":[],"maxApplications":0}],"priority":0,"stackable":false,"minQuantity":0,"minBasketAmount":0,"requiresCoupon":false,"createdAt":"`+stamp+`","updatedAt":"`+stamp+`"}}`)

		eval := func(loc, at, product string) string {
			t.Helper()
			return string(mustStatusBody(t, s.pos(t, tok, evaluatePath, `{"posLocationId":"`+loc+`","transactionDate":"`+at+`","products":[{"productId":"`+product+`","price":4.00}]}`)))
		}
		// An answer for one product priced 4.00, with no promotion, with
		// BREAKFAST (50 %), or with one Amount promotion of 1.00.
		answer := func(product, promotions, discount, total, lines string) string {
			return `{"data":{"posStatus":"Accepted","promotions":[` + promotions + `],"subtotal":4.00,"totalDiscount":` + discount + `,"total":` + total +
				`,"lines":[{"productId":"` + product + `","subtotal":4.00,"discount":` + discount + `,"total":` + total + `,"promotions":[` + lines + `],"notApplied":[]}],"coupons":[],"loyalty":null}}`
		}
		const none, half = "none", "half"
		one := func(id, name, product string) string {
			return answer(product, `{"id":"`+id+`","name":"`+name+`","promotionType":"Amount","value":1,"discount":1.00,"productIds":["`+product+`"]}`,
				"1.00", "3.00", `{"id":"`+id+`","discount":1.00,"couponCode":null}`)
		}
		for _, tc := range []struct {
			loc, at, product string
			want             string
		}{
			// Breakfast 07:00–11:00 local at New York (the company's zone):
			// EST in winter, EDT in summer, and on both change days.
			{"NYC", "2026-01-10T11:59:59Z", "COFFEE", none},
			{"NYC", "2026-01-10T12:00:00Z", "COFFEE", half},
			{"NYC", "2026-01-10T15:59:59Z", "COFFEE", half},
			{"NYC", "2026-01-10T16:00:00Z", "COFFEE", none},
			{"NYC", "2026-07-11T11:00:00Z", "COFFEE", half},
			{"NYC", "2026-07-11T15:00:00Z", "COFFEE", none},
			{"NYC", "2026-03-08T10:59:59Z", "COFFEE", none},
			{"NYC", "2026-03-08T11:00:00Z", "COFFEE", half},
			{"NYC", "2026-11-01T11:59:59Z", "COFFEE", none},
			{"NYC", "2026-11-01T12:00:00Z", "COFFEE", half},
			{"NYC", "2026-11-01T15:59:59Z", "COFFEE", half},
			{"NYC", "2026-11-01T16:00:00Z", "COFFEE", none},
			{"NYC", "2026-01-09T12:00:00Z", "COFFEE", none}, // a Friday
			// At Berlin (its own zone) and at a location in UTC.
			{"BER", "2026-03-29T04:59:59Z", "COFFEE", none},
			{"BER", "2026-03-29T05:00:00Z", "COFFEE", half},
			{"BER", "2026-10-25T05:59:59Z", "COFFEE", none},
			{"BER", "2026-10-25T06:00:00Z", "COFFEE", half},
			{"BER", "2026-10-25T09:59:59Z", "COFFEE", half},
			{"BER", "2026-10-25T10:00:00Z", "COFFEE", none},
			{"UTC", "2026-10-25T07:00:00Z", "COFFEE", half},
			{"UTC", "2026-10-25T06:59:59Z", "COFFEE", none},
			// The night promotion's bounds in the repeated and the skipped
			// hour of New York.
			{"NYC", "2026-11-01T05:29:59Z", "TEA", none},
			{"NYC", "2026-11-01T05:30:00Z", "TEA", one("NIGHT", "Night", "TEA")},
			{"NYC", "2026-11-01T06:10:00Z", "TEA", one("NIGHT", "Night", "TEA")}, // 01:10 EST, the second time round
			{"NYC", "2027-03-14T06:59:59Z", "TEA", one("NIGHT", "Night", "TEA")},
			{"NYC", "2027-03-14T07:00:00Z", "TEA", none},                         // 03:00 EDT: the clock jumped over the end
			{"BER", "2026-11-01T00:30:00Z", "TEA", one("NIGHT", "Night", "TEA")}, // 01:30 in Berlin
			{"BER", "2026-11-01T00:29:59Z", "TEA", none},
			// The instants are the same everywhere.
			{"BER", "2026-03-08T07:29:59Z", "CAKE", none},
			{"BER", "2026-03-08T07:30:00Z", "CAKE", one("FIXED", "Fixed", "CAKE")},
			{"NYC", "2026-03-08T12:00:00Z", "CAKE", one("FIXED", "Fixed", "CAKE")},
			{"NYC", "2026-03-08T12:00:01Z", "CAKE", none},
		} {
			switch tc.want {
			case none:
				tc.want = answer(tc.product, "", "0.00", "4.00", "")
			case half:
				tc.want = answer(tc.product, `{"id":"BREAKFAST","name":"Weekend breakfast","promotionType":"Percentage","value":50,"discount":2.00,"productIds":["COFFEE"]}`,
					"2.00", "2.00", `{"id":"BREAKFAST","discount":2.00,"couponCode":null}`)
			}
			if got := eval(tc.loc, tc.at, tc.product); got != tc.want {
				t.Errorf("%s at %s, %s:\n got %s\nwant %s", tc.product, tc.loc, tc.at, got, tc.want)
			}
		}

		// The operator's listing of what is valid uses the same check, in
		// the named location's zone (else the company's).
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"&validAt=2026-11-01T05:30:00Z&posLocationId=NYC", []string{"NIGHT"}},
			{"&validAt=2026-11-01T05:29:00Z&posLocationId=NYC", []string{}},
			{"&validAt=2026-11-01T05:29:00Z&posLocationId=BER", []string{"NIGHT"}},
			{"&validAt=2026-11-01T07:00:00Z&posLocationId=BER", []string{"BREAKFAST", "NIGHT"}},
			{"&validAt=2026-10-25T06:00:00Z&posLocationId=BER", []string{"BREAKFAST"}},
			{"&validAt=2026-11-01T07:30:00Z&posLocationId=UTC", []string{"BREAKFAST", "NIGHT"}},
			{"&validAt=2026-11-01T07:30:00Z", []string{"NIGHT"}}, // the company's zone: 02:30 EST
		} {
			if got := s.promotionIDs(t, admin, "tz", tc.query); !slices.Equal(got, tc.want) {
				t.Errorf("promotions %s: %v, want %v", tc.query, got, tc.want)
			}
		}
	})
}

func mustStatusBody(t *testing.T, r response) []byte {
	t.Helper()
	mustStatus(t, r, 200)
	return r.Body
}

// TestTimeZonesCarouselAndSale: the carousel shows, and a sale lists, a
// promotion whose wall-clock validity holds now on the location's clock,
// and not while the location is in UTC, where the same dates are 14 hours
// later.
func TestTimeZonesCarouselAndSale(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok, admin := s.posToken(t), s.adminToken(t)
		kiritimati := time.FixedZone("UTC+14", 14*3600) // Pacific/Kiritimati keeps +14 all year
		local := s.clock.Now().In(kiritimati)
		wall := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
		res := mustImport(t, s.request(t, importReq(tok, "demo-company", "application/json", items(
			`{"id":"LOCAL-HOUR","name":"Local hour","locationIds":["LOC123"],"productIds":["SKU-LOCAL"],"promotionResults":[{"promotionType":"Amount","value":1}],`+
				`"promotionValidities":[{"startDate":"`+wall(local.Add(-time.Hour))+`","endDate":"`+wall(local.Add(time.Hour))+`"}]}`))))
		if res.Status != "Completed" {
			t.Fatalf("import %+v", res)
		}
		shown := func() bool {
			t.Helper()
			page := s.pathOf(t, s.carouselURL(t, tok, "TERM-05", "LOC123"))
			r := s.call(t, "", "GET", contentPath(page, "content"), "")
			mustStatus(t, r, 200)
			return strings.Contains(string(r.Body), `"slideId":"promotion:LOCAL-HOUR"`)
		}
		if shown() {
			t.Fatal("shown at LOC123 in UTC, 14 hours before its local hour")
		}
		mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/locations/LOC123", `{"timeZone":"Pacific/Kiritimati"}`), 200)
		if !shown() {
			t.Fatal("not shown at LOC123 in Pacific/Kiritimati, within its local hour")
		}
		mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/locations/LOC123", `{"timeZone":""}`), 200)
		mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"timeZone":"Pacific/Kiritimati"}`), 200)
		if !shown() {
			t.Fatal("not shown at LOC123 in its company's zone")
		}

		// A sale lists what the evaluation gives, by the same check.
		sale := func(id string) string {
			t.Helper()
			session := mustInteraction(t, s.do(t, startReq(tok, "TERM-05", "LOC123")), "TERM-05", "LOC123", "Accepted").SessionID
			r := s.do(t, req{Method: "POST", Path: "/pos/clover/transaction", Token: tok, ContentType: "application/json",
				Body: `{"sessionId":"` + *session + `","transactionId":"` + id + `","terminalId":"TERM-05","posLocationId":"LOC123","transactionType":"Sale",` +
					`"transactionAmount":4,"transactionDate":"` + s.clock.Now().UTC().Format(time.RFC3339) + `","products":[{"productId":"SKU-LOCAL","price":4}]}`})
			mustStatus(t, r, 200)
			return string(r.Body)
		}
		applied := `"promotions":[{"id":"LOCAL-HOUR","name":"Local hour","promotionType":"Amount","value":1,"discount":1.00,"productIds":["SKU-LOCAL"]}]`
		if got := sale("TZ-SALE-1"); !strings.Contains(got, applied) {
			t.Fatalf("a sale within the local hour:\n%s\nlacks %s", got, applied)
		}
		mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"timeZone":""}`), 200)
		if got := sale("TZ-SALE-2"); !strings.Contains(got, `"promotions":[]`) {
			t.Fatalf("a sale in UTC lists promotions:\n%s", got)
		}
	})
}
