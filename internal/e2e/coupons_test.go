package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The demo coupons as CouponCodeDisplayDto, exactly as posgate writes them
// (every nullable property present), in search order: by code without
// regard to case.
const (
	d10OFF    = `{"rewardProvider":"TwoReward","code":"10OFFmq8kl8","name":"10% off","title":"10% off your next purchase","pictureUrl":"https://images.example.com/coupons/10off.png","availableUntil":"2099-12-31T23:59:59Z","status":"Issued","info":[{"title":"Terms","items":{"excludes":null,"minimumSpend":"20.00"}}]}`
	d5OFF     = `{"rewardProvider":"PJM","code":"5OFFrd2x9q","name":"$5 off","title":"$5 off any drink","pictureUrl":null,"availableUntil":"2099-12-31T23:59:59Z","status":"Redeemed","info":null}`
	dFREE     = `{"rewardProvider":"TwoReward","code":"FREEcf7x2p","name":"Free coffee","title":"A free regular coffee","pictureUrl":null,"availableUntil":"2099-12-31T23:59:59Z","status":"Cancelled","info":null}`
	dJANE     = `{"rewardProvider":"TwoReward","code":"JANE15off","name":"15% off","title":"15% off bakery items","pictureUrl":null,"availableUntil":"2099-12-31T23:59:59Z","status":"Issued","info":null}`
	dSl75Ev   = `{"rewardProvider":"Dummy","code":"Sl75Ev","name":"Free drink","title":null,"pictureUrl":null,"availableUntil":null,"status":"Issued","info":null}`
	dSUMMER   = `{"rewardProvider":"TwoReward","code":"SUMMER20ab","name":"20% off","title":"Summer sale: 20% off","pictureUrl":null,"availableUntil":"2020-08-31T23:59:59Z","status":"Expired","info":null}`
	johnsFour = d10OFF + "," + d5OFF + "," + dFREE + "," + dSUMMER

	uJohn = `{"id":"1001","firstName":"John","lastName":"Doe","gender":"Male","phone":"+15555551234","email":"john.doe@example.com","stamps":3,"points":120}`
	uJane = `{"id":"1002","firstName":"Jane","lastName":"Roe","gender":"Female","phone":"+1 (555) 555-9876","email":"jane.roe@example.com","stamps":7,"points":40}`
)

const (
	searchPath = "/pos/clover/coupon/couponCode/search"
	lookupPath = "/v2/pos/clover/coupon/couponCodes/lookup"
	usersPath  = "/v2/pos/clover/loyaltyCard/users/lookup"
	demoAdmin  = "/admin/v1/pos-systems/clover/companies/demo-company"
)

func postJSON(token, path, body string) req {
	return req{Method: "POST", Path: path, Token: token, ContentType: "application/json", Body: body}
}

// searchBody is the exact answer of a coupon search.
func searchBody(coupons string, page, size, total int, status string) string {
	return fmt.Sprintf(`{"data":[%s],"page":{"page":%d,"pageSize":%d,"total":%d},"posStatus":"%s"}`, coupons, page, size, total, status)
}

// mustBody checks the status and the exact body.
func mustBody(t *testing.T, r response, status int, want string) {
	t.Helper()
	mustStatus(t, r, status)
	if string(r.Body) != want {
		t.Fatalf("body\n got %s\nwant %s", r.Body, want)
	}
}

// adminCall sends an operator request and checks its status; it returns the
// answer's data.
func (s *server) adminCall(t *testing.T, admin, method, path, body string, status int) map[string]any {
	t.Helper()
	q := req{Method: method, Path: path, Token: admin}
	if body != "" {
		q.ContentType, q.Body = "application/json", body
	}
	r := s.do(t, q)
	mustStatus(t, r, status)
	if status >= 300 {
		return nil
	}
	data, _ := r.JSON(t)["data"].(map[string]any)
	return data
}

// tenants adds what the isolation tests need: another company of clover
// (other-co, location OTHER-1) with a user and a coupon that look like
// John's, a client restricted to it, and a POS system pax with its own
// client and a coupon with a demo code. It returns the restricted client's
// and pax's tokens.
func tenants(t *testing.T, s *server, admin string) (restricted, pax string) {
	t.Helper()
	s.adminCall(t, admin, "POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"other-co"}`, 201)
	s.adminCall(t, admin, "POST", "/admin/v1/pos-systems/clover/locations", `{"posLocationId":"OTHER-1","posCompanyId":"other-co"}`, 201)
	s.adminCall(t, admin, "POST", "/admin/v1/pos-systems/clover/companies/other-co/loyalty-users",
		`{"id":"o1","firstName":"John","lastName":"Doe","phone":"15555551234","email":"john.doe@example.com"}`, 201)
	s.adminCall(t, admin, "POST", "/admin/v1/pos-systems/clover/companies/other-co/coupons", `{"code":"OTHER1","userId":"o1"}`, 201)
	s.adminCall(t, admin, "POST", "/admin/v1/pos-systems/clover/companies/other-co/coupons", `{"code":"Sl75Ev","name":"Other's"}`, 201)
	secret := s.adminCall(t, admin, "POST", "/admin/v1/clients", `{"clientId":"only-other","posSystemId":"clover","scopes":["pos_integration"],"companyIds":["other-co"]}`, 201)["clientSecret"].(string)
	restricted = s.token(t, "only-other", secret, "pos_integration")

	s.adminCall(t, admin, "POST", "/admin/v1/pos-systems", `{"id":"pax"}`, 201)
	s.adminCall(t, admin, "POST", "/admin/v1/pos-systems/pax/companies", `{"posCompanyId":"demo-company"}`, 201)
	s.adminCall(t, admin, "POST", "/admin/v1/pos-systems/pax/locations", `{"posLocationId":"LOC123","posCompanyId":"demo-company"}`, 201)
	s.adminCall(t, admin, "POST", "/admin/v1/pos-systems/pax/companies/demo-company/coupons", `{"code":"10OFFmq8kl8","email":"john.doe@example.com"}`, 201)
	secret = s.adminCall(t, admin, "POST", "/admin/v1/clients", `{"clientId":"pax-pos","posSystemId":"pax","scopes":["pos_integration"]}`, 201)["clientSecret"].(string)
	pax = s.token(t, "pax-pos", secret, "pos_integration")
	return restricted, pax
}

const dOTHER1 = `{"rewardProvider":"TwoReward","code":"OTHER1","name":null,"title":null,"pictureUrl":null,"availableUntil":null,"status":"Issued","info":null}`

func TestCouponSearch(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok := s.posToken(t)
		admin := s.adminToken(t)
		search := func(query, body string) response {
			t.Helper()
			return s.do(t, postJSON(tok, searchPath+query, body))
		}

		t.Run("by e-mail, any case: the four states", func(t *testing.T) {
			for _, email := range []string{"john.doe@example.com", "JOHN.Doe@Example.COM", "  john.doe@example.com "} {
				mustBody(t, search("", `{"email":"`+email+`"}`), 200, searchBody(johnsFour, 1, 20, 4, "Accepted"))
			}
		})
		t.Run("by phone written several ways", func(t *testing.T) {
			for _, phone := range []string{"+15555551234", "15555551234", "+1 (555) 555-1234", "1-555-555-1234", "1.555.555.1234"} {
				mustBody(t, search("", `{"phone":"`+phone+`"}`), 200, searchBody(johnsFour, 1, 20, 4, "Accepted"))
			}
			mustBody(t, search("", `{"phone":"555-555-9876"}`), 200, searchBody("", 1, 20, 0, "Accepted")) // no country code: other digits
			mustBody(t, search("", `{"phone":"1 555 555 9876"}`), 200, searchBody(dJANE, 1, 20, 1, "Accepted"))
		})
		t.Run("by code, any case", func(t *testing.T) {
			mustBody(t, search("", `{"code":"SL75EV"}`), 200, searchBody(dSl75Ev, 1, 20, 1, "Accepted"))
			mustBody(t, search("", `{"code":"10offMQ8KL8"}`), 200, searchBody(d10OFF, 1, 20, 1, "Accepted"))
			mustBody(t, search("", `{"code":"summer20AB"}`), 200, searchBody(dSUMMER, 1, 20, 1, "Accepted"))
			mustBody(t, search("", `{"code":"NOPE"}`), 200, searchBody("", 1, 20, 0, "Accepted"))
		})
		t.Run("combinations", func(t *testing.T) {
			mustBody(t, search("", `{"code":"10OFFmq8kl8","email":"john.doe@example.com"}`), 200, searchBody(d10OFF, 1, 20, 1, "Accepted"))
			mustBody(t, search("", `{"code":"10OFFmq8kl8","email":"jane.roe@example.com"}`), 200, searchBody("", 1, 20, 0, "Accepted"))
			mustBody(t, search("", `{"code":"JANE15off","phone":"+15555551234"}`), 200, searchBody("", 1, 20, 0, "Accepted"))
			mustBody(t, search("", `{"email":"john.doe@example.com","phone":"+1 555 555 1234"}`), 200, searchBody(johnsFour, 1, 20, 4, "Accepted"))
			mustBody(t, search("", `{"email":"john.doe@example.com","phone":"+1 555 555 9876"}`), 200, searchBody("", 1, 20, 0, "Accepted"))
			mustBody(t, search("", `{"code":"5offrd2x9q","email":"JOHN.DOE@example.com","phone":"15555551234","posLocationId":"LOC456"}`), 200,
				searchBody(d5OFF, 1, 20, 1, "Accepted"))
			mustBody(t, search("", `{"code":"Sl75Ev","email":null,"phone":"","posLocationId":null}`), 200, searchBody(dSl75Ev, 1, 20, 1, "Accepted"))
		})
		t.Run("location filter", func(t *testing.T) {
			mustBody(t, search("", `{"email":"john.doe@example.com","posLocationId":"LOC123"}`), 200, searchBody(johnsFour, 1, 20, 4, "Accepted"))
			mustBody(t, search("", `{"email":"john.doe@example.com","posLocationId":"LOC456"}`), 200,
				searchBody(d5OFF+","+dFREE+","+dSUMMER, 1, 20, 3, "Accepted"))
			mustBody(t, search("", `{"code":"10OFFmq8kl8","posLocationId":"LOC456"}`), 200, searchBody("", 1, 20, 0, "Accepted"))
			mustBody(t, search("", `{"code":"Sl75Ev","posLocationId":"LOC456"}`), 200, searchBody(dSl75Ev, 1, 20, 1, "Accepted"))
			mustProblem(t, search("", `{"code":"Sl75Ev","posLocationId":"LOC999"}`), 404, "Location 'LOC999' is not registered.", nil)
			mustProblem(t, search("", `{"code":"Sl75Ev","posLocationId":" LOC123"}`), 404, "Location ' LOC123' is not registered.", nil)
		})
		t.Run("paging edges and totals", func(t *testing.T) {
			body := `{"email":"john.doe@example.com"}`
			mustBody(t, search("?pageSize=2", body), 200, searchBody(d10OFF+","+d5OFF, 1, 2, 4, "Accepted"))
			mustBody(t, search("?page=2&pageSize=2", body), 200, searchBody(dFREE+","+dSUMMER, 2, 2, 4, "Accepted"))
			mustBody(t, search("?page=3&pageSize=2", body), 200, searchBody("", 3, 2, 4, "Accepted"))
			mustBody(t, search("?page=2&pageSize=3", body), 200, searchBody(dSUMMER, 2, 3, 4, "Accepted"))
			mustBody(t, search("?page=2147483647&pageSize=100", body), 200, searchBody("", 2147483647, 100, 4, "Accepted"))
			mustBody(t, search("?pageSize=1", body), 200, searchBody(d10OFF, 1, 1, 4, "Accepted"))
			mustBody(t, search("?page=4&pageSize=1", body), 200, searchBody(dSUMMER, 4, 1, 4, "Accepted"))
			pageMsg := map[string][]string{"page": {"The page query parameter must be one integer from 1 to 2147483647."}}
			sizeMsg := map[string][]string{"pageSize": {"The pageSize query parameter must be one integer from 1 to 100."}}
			for query, errs := range map[string]map[string][]string{
				"?page=0": pageMsg, "?page=-1": pageMsg, "?page=x": pageMsg, "?page=1.5": pageMsg, "?page=2147483648": pageMsg, "?page=1&page=2": pageMsg,
				"?pageSize=0": sizeMsg, "?pageSize=101": sizeMsg, "?pageSize=": sizeMsg, "?pageSize=ten": sizeMsg,
			} {
				mustProblem(t, search(query, body), 400, "*", errs)
			}
		})
		t.Run("computed Expired follows the clock", func(t *testing.T) {
			until := s.clock.Now().Add(time.Hour).Format(time.RFC3339)
			s.adminCall(t, admin, "POST", demoAdmin+"/coupons", `{"code":"SOON-1","userId":"1002","availableUntil":"`+until+`"}`, 201)
			want := func(status string) string {
				return searchBody(`{"rewardProvider":"TwoReward","code":"SOON-1","name":null,"title":null,"pictureUrl":null,"availableUntil":"`+until+`","status":"`+status+`","info":null}`, 1, 20, 1, "Accepted")
			}
			mustBody(t, search("", `{"code":"soon-1"}`), 200, want("Issued"))
			// Tokens live an hour on the same clock: fetch new ones.
			s.clock.Advance(time.Hour)
			tok, admin = s.posToken(t), s.adminToken(t)
			mustBody(t, search("", `{"code":"soon-1"}`), 200, want("Issued")) // at availableUntil it is still available
			s.clock.Advance(time.Second)
			mustBody(t, search("", `{"code":"soon-1"}`), 200, want("Expired"))
			mustProblem(t, s.do(t, req{Method: "POST", Path: demoAdmin + "/coupons/SOON-1/redeem", Token: admin}), 409,
				`coupon "SOON-1" is Expired; only an Issued coupon can be redeemed`, nil)
		})
		t.Run("no search field", func(t *testing.T) {
			need := map[string][]string{"$": {"At least one of code, email and phone is required."}}
			for _, body := range []string{`{}`, `{"posLocationId":"LOC123"}`, `{"code":"  ","email":null,"phone":""}`} {
				mustProblem(t, search("", body), 400, "At least one of code, email and phone is required.", need)
			}
			mustProblem(t, search("", `{"phone":"call me"}`), 400, "*", map[string][]string{"phone": {"The phone field must contain digits."}})
		})
		t.Run("unknown properties are rejected", func(t *testing.T) {
			mustProblem(t, search("", `{"code":"Sl75Ev","cashier":"ann"}`), 400, "The property 'cashier' is not allowed.",
				map[string][]string{"cashier": {"The property 'cashier' is not allowed."}})
			mustProblem(t, search("", `{"Code":"Sl75Ev"}`), 400, "*", map[string][]string{"Code": {"The property 'Code' is not allowed."}})
			r := s.do(t, req{Method: "POST", Path: searchPath, Token: tok, ContentType: "application/xml",
				Body: `<SearchUserCouponsDto><code>Sl75Ev</code><cashier>ann</cashier></SearchUserCouponsDto>`})
			mustProblem(t, r, 400, "*", map[string][]string{"cashier": {"The property 'cashier' is not allowed."}})
		})
		t.Run("wrong types and malformed bodies", func(t *testing.T) {
			mustProblem(t, search("", `{"code":5}`), 400, "*", map[string][]string{"code": {"The code field must be a string."}})
			mustProblem(t, search("", `{"email":["a@b"]}`), 400, "*", map[string][]string{"email": {"The email field must be a string."}})
			for _, body := range []string{`{"code":"A"`, `[]`, `{"code":"A","code":"B"}`, `{"code":"A"} {}`} {
				r := search("", body)
				mustProblem(t, r, 400, "*", r400Fields(t, r))
			}
			r := s.do(t, req{Method: "POST", Path: searchPath, Token: tok, ContentType: "application/json"})
			mustProblem(t, r, 400, "*", r400Fields(t, r))
		})
		t.Run("XML bodies", func(t *testing.T) {
			for _, ct := range []string{"application/xml", "text/xml", "application/vnd.pos+xml"} {
				r := s.do(t, req{Method: "POST", Path: searchPath + "?pageSize=1", Token: tok, ContentType: ct,
					Body: `<?xml version="1.0"?><SearchUserCouponsDto><email>John.Doe@example.com</email><posLocationId>LOC123</posLocationId></SearchUserCouponsDto>`})
				mustBody(t, r, 200, searchBody(d10OFF, 1, 1, 4, "Accepted"))
			}
			r := s.do(t, req{Method: "POST", Path: searchPath, Token: tok, ContentType: "application/xml",
				Body: `<SearchUserCouponsDto xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><code>Sl75Ev</code><email xsi:nil="true"/></SearchUserCouponsDto>`})
			mustBody(t, r, 200, searchBody(dSl75Ev, 1, 20, 1, "Accepted"))
			r = s.do(t, req{Method: "POST", Path: searchPath, Token: tok, ContentType: "application/xml", Body: `<a><code>x</a>`})
			mustProblem(t, r, 400, "*", r400Fields(t, r))
		})
		t.Run("response media types", func(t *testing.T) {
			for accept, want := range map[string]string{"text/plain": "text/plain; charset=utf-8", "text/json": "text/json; charset=utf-8", "": "application/json; charset=utf-8"} {
				q := postJSON(tok, searchPath, `{"code":"Sl75Ev"}`)
				q.Header = map[string]string{"Accept": accept}
				r := s.do(t, q)
				mustBody(t, r, 200, searchBody(dSl75Ev, 1, 20, 1, "Accepted"))
				if got := r.Header.Get("Content-Type"); got != want {
					t.Fatalf("Accept %q: Content-Type %q, want %q", accept, got, want)
				}
			}
		})
		t.Run("content type, size, method and credentials", func(t *testing.T) {
			mustProblem(t, s.do(t, req{Method: "POST", Path: searchPath, Token: tok, ContentType: "text/plain", Body: `{"code":"x"}`}), 415, "*", nil)
			mustProblem(t, search("", `{"code":"`+strings.Repeat("x", 70<<10)+`"}`), 413, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: searchPath, ContentType: "application/json", Body: `{"code":"x"}`}), 401, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: searchPath, Token: admin, ContentType: "application/json", Body: `{"code":"x"}`}), 403, "*", nil)
			mustProblem(t, s.do(t, req{Method: "GET", Path: searchPath, Token: tok, Undocumented: true}), 405, "*", nil)
		})
		t.Run("disabled location, company and feature", func(t *testing.T) {
			patch := func(path, body string) { t.Helper(); s.adminCall(t, admin, "PATCH", path, body, 200) }
			disabled := searchBody("", 1, 20, 0, "Disabled")
			patch("/admin/v1/pos-systems/clover/locations/LOC456", `{"status":"Disabled"}`)
			mustBody(t, search("", `{"code":"Sl75Ev","posLocationId":"LOC456"}`), 200, disabled)
			mustBody(t, search("", `{"code":"Sl75Ev","posLocationId":"LOC123"}`), 200, searchBody(dSl75Ev, 1, 20, 1, "Accepted"))
			patch("/admin/v1/pos-systems/clover/locations/LOC456", `{"status":"Active"}`)

			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"coupons":false}}`)
			mustBody(t, search("?page=2&pageSize=5", `{"code":"10OFFmq8kl8","posLocationId":"LOC123"}`), 200, searchBody("", 2, 5, 0, "Disabled"))
			mustBody(t, search("", `{"code":"10OFFmq8kl8"}`), 200, disabled)
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"coupons":true}}`)

			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Disabled"}`)
			mustBody(t, search("", `{"code":"10OFFmq8kl8","posLocationId":"LOC123"}`), 200, disabled)
			mustBody(t, search("", `{"code":"10OFFmq8kl8"}`), 200, disabled)
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Active"}`)
			mustBody(t, search("", `{"code":"10OFFmq8kl8"}`), 200, searchBody(d10OFF, 1, 20, 1, "Accepted"))
		})
		t.Run("other tenants", func(t *testing.T) {
			restricted, pax := tenants(t, s, admin)
			// Without a location every visible company is searched.
			mustBody(t, search("", `{"email":"john.doe@example.com"}`), 200,
				searchBody(d10OFF+","+d5OFF+","+dFREE+","+dOTHER1+","+dSUMMER, 1, 20, 5, "Accepted"))
			mustBody(t, search("", `{"email":"john.doe@example.com","posLocationId":"LOC123"}`), 200, searchBody(johnsFour, 1, 20, 4, "Accepted"))
			// The restricted client sees other-co only; demo-company is absent.
			rs := func(body string) response { return s.do(t, postJSON(restricted, searchPath, body)) }
			mustBody(t, rs(`{"email":"john.doe@example.com"}`), 200, searchBody(dOTHER1, 1, 20, 1, "Accepted"))
			mustBody(t, rs(`{"code":"10OFFmq8kl8"}`), 200, searchBody("", 1, 20, 0, "Accepted"))
			mustBody(t, rs(`{"code":"sl75ev"}`), 200, searchBody(`{"rewardProvider":"TwoReward","code":"Sl75Ev","name":"Other's","title":null,"pictureUrl":null,"availableUntil":null,"status":"Issued","info":null}`, 1, 20, 1, "Accepted"))
			mustProblem(t, rs(`{"code":"10OFFmq8kl8","posLocationId":"LOC123"}`), 404, "Location 'LOC123' is not registered.", nil)
			// pax sees its own coupon with the demo code, clover's token is refused on pax's path.
			r := s.do(t, postJSON(pax, "/pos/pax/coupon/couponCode/search", `{"email":"john.doe@example.com"}`))
			mustBody(t, r, 200, searchBody(`{"rewardProvider":"TwoReward","code":"10OFFmq8kl8","name":null,"title":null,"pictureUrl":null,"availableUntil":null,"status":"Issued","info":null}`, 1, 20, 1, "Accepted"))
			mustProblem(t, s.do(t, postJSON(tok, "/pos/pax/coupon/couponCode/search", `{"code":"x"}`)), 403, "*", nil)
			mustProblem(t, s.do(t, postJSON(pax, searchPath, `{"code":"x"}`)), 403, "*", nil)
		})
	})
}

func TestCouponLookup(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok := s.posToken(t)
		admin := s.adminToken(t)
		lookup := func(body string) response { t.Helper(); return s.do(t, postJSON(tok, lookupPath, body)) }
		found := func(coupons string) string { return `{"data":{"couponCodes":[` + coupons + `]}}` }

		t.Run("found, any case", func(t *testing.T) {
			mustBody(t, lookup(`{"posLocationId":"LOC123","code":"10offmq8kl8"}`), 200, found(d10OFF))
			mustBody(t, lookup(`{"posLocationId":"LOC456","code":"Sl75Ev"}`), 200, found(dSl75Ev))
			mustBody(t, lookup(`{"posLocationId":"LOC456","code":"summer20ab"}`), 200, found(dSUMMER))
			mustBody(t, lookup(`{"posLocationId":"LOC123","code":"5OFFRD2X9Q","cashier":"ignored"}`), 200, found(d5OFF))
		})
		t.Run("not usable here, or unknown", func(t *testing.T) {
			mustBody(t, lookup(`{"posLocationId":"LOC456","code":"10OFFmq8kl8"}`), 200, found(""))
			mustBody(t, lookup(`{"posLocationId":"LOC123","code":"NOPE"}`), 200, found(""))
		})
		t.Run("XML", func(t *testing.T) {
			r := s.do(t, req{Method: "POST", Path: lookupPath, Token: tok, ContentType: "text/xml",
				Body: `<CouponLookupDto><posLocationId>LOC123</posLocationId><code>SL75EV</code></CouponLookupDto>`})
			mustBody(t, r, 200, found(dSl75Ev))
		})
		t.Run("bad input", func(t *testing.T) {
			loc := map[string][]string{"posLocationId": {"The posLocationId field is required."}}
			code := map[string][]string{"code": {"The code field is required."}}
			mustProblem(t, lookup(`{"code":"Sl75Ev"}`), 400, "*", loc)
			mustProblem(t, lookup(`{"posLocationId":"","code":"Sl75Ev"}`), 400, "*", loc)
			mustProblem(t, lookup(`{"posLocationId":null,"code":"Sl75Ev"}`), 400, "*", loc)
			mustProblem(t, lookup(`{"posLocationId":"LOC123"}`), 400, "*", code)
			mustProblem(t, lookup(`{"posLocationId":"LOC123","code":" "}`), 400, "*", code)
			mustProblem(t, lookup(`{}`), 400, "*", map[string][]string{"posLocationId": loc["posLocationId"], "code": code["code"]})
			mustProblem(t, lookup(`{"posLocationId":1,"code":"x"}`), 400, "*", map[string][]string{"posLocationId": {"The posLocationId field must be a string."}})
			mustProblem(t, lookup(`{"posLocationId":"LOC123","code":"`+strings.Repeat("x", 70<<10)+`"}`), 413, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: lookupPath, Token: tok, ContentType: "application/x-www-form-urlencoded", Body: "code=x"}), 415, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: lookupPath, ContentType: "application/json", Body: `{}`}), 401, "*", nil)
		})
		t.Run("unknown location", func(t *testing.T) {
			mustProblem(t, lookup(`{"posLocationId":"LOC999","code":"Sl75Ev"}`), 404, "Location 'LOC999' is not registered.", nil)
		})
		t.Run("other tenants", func(t *testing.T) {
			restricted, pax := tenants(t, s, admin)
			mustProblem(t, s.do(t, postJSON(restricted, lookupPath, `{"posLocationId":"LOC123","code":"Sl75Ev"}`)), 404, "Location 'LOC123' is not registered.", nil)
			mustBody(t, s.do(t, postJSON(restricted, lookupPath, `{"posLocationId":"OTHER-1","code":"10OFFmq8kl8"}`)), 200, found(""))
			mustBody(t, s.do(t, postJSON(restricted, lookupPath, `{"posLocationId":"OTHER-1","code":"other1"}`)), 200, found(dOTHER1))
			mustBody(t, lookup(`{"posLocationId":"LOC123","code":"OTHER1"}`), 200, found(""))
			mustProblem(t, lookup(`{"posLocationId":"OTHER-9","code":"OTHER1"}`), 404, "*", nil)
			r := s.do(t, postJSON(pax, "/v2/pos/pax/coupon/couponCodes/lookup", `{"posLocationId":"LOC123","code":"10OFFmq8kl8"}`))
			mustBody(t, r, 200, found(`{"rewardProvider":"TwoReward","code":"10OFFmq8kl8","name":null,"title":null,"pictureUrl":null,"availableUntil":null,"status":"Issued","info":null}`))
			mustProblem(t, s.do(t, postJSON(pax, lookupPath, `{"posLocationId":"LOC123","code":"x"}`)), 403, "*", nil)
		})
		t.Run("disabled", func(t *testing.T) {
			s.adminCall(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"coupons":false}}`, 200)
			mustBody(t, lookup(`{"posLocationId":"LOC123","code":"10OFFmq8kl8"}`), 200, found(""))
			s.adminCall(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"coupons":true}}`, 200)
			s.adminCall(t, admin, "PATCH", "/admin/v1/pos-systems/clover/locations/LOC123", `{"status":"Disabled"}`, 200)
			mustBody(t, lookup(`{"posLocationId":"LOC123","code":"10OFFmq8kl8"}`), 200, found(""))
			s.adminCall(t, admin, "PATCH", "/admin/v1/pos-systems/clover/locations/LOC123", `{"status":"Active"}`, 200)
			mustBody(t, lookup(`{"posLocationId":"LOC123","code":"10OFFmq8kl8"}`), 200, found(d10OFF))
		})
	})
}

func TestLoyaltyUserLookup(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok := s.posToken(t)
		admin := s.adminToken(t)
		lookup := func(loc, keyword string) response {
			t.Helper()
			return s.do(t, postJSON(tok, usersPath, `{"posLocationId":"`+loc+`","keyword":"`+keyword+`"}`))
		}
		users := func(us ...string) string { return `{"data":{"users":[` + strings.Join(us, ",") + `]}}` }

		t.Run("matches", func(t *testing.T) {
			for keyword, want := range map[string]string{
				"doe":                  users(uJohn),
				"DOE":                  users(uJohn),
				"ohn":                  users(uJohn),
				"John.Doe@Example.com": users(uJohn),
				"example.com":          users(uJohn, uJane),
				"555":                  users(uJohn, uJane),
				"+1 (555) 555-9876":    users(uJane),
				"555-1234":             users(uJohn),
				"15555551234":          users(uJohn),
				"Female":               users(), // gender is not searched
				"xyz":                  users(),
				"  roe  ":              users(uJane),
			} {
				mustBody(t, lookup("LOC456", keyword), 200, want)
			}
		})
		t.Run("exact matches first", func(t *testing.T) {
			// Doel and Doering contain "doe"; only John's last name is it.
			s.adminCall(t, admin, "POST", demoAdmin+"/loyalty-users", `{"id":"a1","firstName":"Abe","lastName":"Doel"}`, 201)
			s.adminCall(t, admin, "POST", demoAdmin+"/loyalty-users", `{"id":"a2","firstName":"Ann","lastName":"Doering","email":"doe@example.com"}`, 201)
			abe := `{"id":"a1","firstName":"Abe","lastName":"Doel","gender":"","phone":"","email":"","stamps":0,"points":0}`
			ann := `{"id":"a2","firstName":"Ann","lastName":"Doering","gender":"","phone":"","email":"doe@example.com","stamps":0,"points":0}`
			mustBody(t, lookup("LOC123", "doe"), 200, users(uJohn, abe, ann))
			mustBody(t, lookup("LOC123", "doe@example.com"), 200, users(ann, uJohn)) // john.doe@example.com contains it
			mustBody(t, lookup("LOC123", "Doel"), 200, users(abe))
		})
		t.Run("XML", func(t *testing.T) {
			r := s.do(t, req{Method: "POST", Path: usersPath, Token: tok, ContentType: "application/xml",
				Body: `<LoyaltyUserLookupDto><posLocationId>LOC123</posLocationId><keyword>jane.roe</keyword></LoyaltyUserLookupDto>`})
			mustBody(t, r, 200, users(uJane))
		})
		t.Run("keyword too short or missing", func(t *testing.T) {
			short := map[string][]string{"keyword": {"The keyword field must be at least 3 characters long."}}
			for _, kw := range []string{"jo", "  jo  ", "é1"} {
				mustProblem(t, lookup("LOC123", kw), 400, "The keyword field must be at least 3 characters long.", short)
			}
			required := map[string][]string{"keyword": {"The keyword field is required."}}
			mustProblem(t, s.do(t, postJSON(tok, usersPath, `{"posLocationId":"LOC123"}`)), 400, "*", required)
			mustProblem(t, s.do(t, postJSON(tok, usersPath, `{"posLocationId":"LOC123","keyword":null}`)), 400, "*", required)
			mustProblem(t, s.do(t, postJSON(tok, usersPath, `{"keyword":"jo"}`)), 400, "*",
				map[string][]string{"posLocationId": {"The posLocationId field is required."}, "keyword": short["keyword"]})
			mustProblem(t, s.do(t, postJSON(tok, usersPath, `{"posLocationId":"LOC123","keyword":"do\u0000e"}`)), 400, "*",
				map[string][]string{"keyword": {"The keyword field must be text without control characters."}})
			mustProblem(t, s.do(t, postJSON(tok, usersPath, `{"posLocationId":"LOC123","keyword":["doe"]}`)), 400, "*",
				map[string][]string{"keyword": {"The keyword field must be a string."}})
			mustProblem(t, s.do(t, postJSON(tok, usersPath, `{"posLocationId":"LOC123","keyword":"`+strings.Repeat("d", 70<<10)+`"}`)), 413, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: usersPath, Token: tok, ContentType: "text/plain", Body: `{}`}), 415, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: usersPath, ContentType: "application/json", Body: `{}`}), 401, "*", nil)
		})
		t.Run("unknown location", func(t *testing.T) {
			mustProblem(t, lookup("LOC999", "doe"), 404, "Location 'LOC999' is not registered.", nil)
		})
		t.Run("other tenants", func(t *testing.T) {
			restricted, pax := tenants(t, s, admin)
			// other-co's John Doe never shows at demo-company's locations, and
			// the restricted client sees only him.
			mustBody(t, lookup("LOC123", "john.doe@example.com"), 200, users(uJohn))
			r := s.do(t, postJSON(restricted, usersPath, `{"posLocationId":"OTHER-1","keyword":"john"}`))
			mustBody(t, r, 200, users(`{"id":"o1","firstName":"John","lastName":"Doe","gender":"","phone":"15555551234","email":"john.doe@example.com","stamps":0,"points":0}`))
			mustProblem(t, s.do(t, postJSON(restricted, usersPath, `{"posLocationId":"LOC123","keyword":"john"}`)), 404, "Location 'LOC123' is not registered.", nil)
			mustBody(t, s.do(t, postJSON(pax, "/v2/pos/pax/loyaltyCard/users/lookup", `{"posLocationId":"LOC123","keyword":"john"}`)), 200, users())
			mustProblem(t, s.do(t, postJSON(pax, usersPath, `{"posLocationId":"LOC123","keyword":"john"}`)), 403, "*", nil)
		})
		t.Run("disabled", func(t *testing.T) {
			s.adminCall(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Disabled"}`, 200)
			mustBody(t, lookup("LOC123", "doe"), 200, users())
			s.adminCall(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Active","features":{"coupons":false}}`, 200)
			mustBody(t, lookup("LOC123", "doe"), 200, users())
			s.adminCall(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"coupons":true}}`, 200)
			mustBody(t, lookup("LOC123", "John"), 200, users(uJohn))
		})
	})
}

func TestCouponOperatorAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		tok := s.posToken(t)

		t.Run("issue, read, redeem, cancel", func(t *testing.T) {
			now := s.clock.Now().Format(time.RFC3339)
			r := s.do(t, postJSON(admin, demoAdmin+"/coupons", `{"code":"Ops-1","rewardProvider":"PJM","name":"Ops","pictureUrl":"https://x.example/p.png",`+
				`"availableUntil":"2099-01-01T00:00:00+01:00","info":[{"title":null,"items":{"k":"v"}}],"userId":"1001","email":"Owner@Example.com",`+
				`"phone":"+1 555 0100","locationIds":["LOC456","LOC123","LOC456"]}`))
			want := `{"data":{"posSystemId":"clover","posCompanyId":"demo-company","code":"Ops-1","rewardProvider":"PJM","name":"Ops","title":null,` +
				`"pictureUrl":"https://x.example/p.png","availableUntil":"2098-12-31T23:00:00Z","status":"Issued","info":[{"title":null,"items":{"k":"v"}}],` +
				`"userId":"1001","email":"Owner@Example.com","phone":"+1 555 0100","locationIds":["LOC123","LOC456"],"createdAt":"` + now + `","updatedAt":"` + now + `"}}`
			mustBody(t, r, 201, want)
			mustBody(t, s.do(t, req{Method: "GET", Path: demoAdmin + "/coupons/OPS-1", Token: admin}), 200, want)
			// Found by its own e-mail and phone.
			mustBody(t, s.do(t, postJSON(tok, searchPath, `{"email":"owner@example.com","phone":"15550100"}`)), 200,
				searchBody(`{"rewardProvider":"PJM","code":"Ops-1","name":"Ops","title":null,"pictureUrl":"https://x.example/p.png","availableUntil":"2098-12-31T23:00:00Z","status":"Issued","info":[{"title":null,"items":{"k":"v"}}]}`, 1, 20, 1, "Accepted"))

			s.clock.Advance(time.Minute)
			later := s.clock.Now().Format(time.RFC3339)
			d := s.adminCall(t, admin, "POST", demoAdmin+"/coupons/ops-1/redeem", "", 200)
			if d["status"] != "Redeemed" || d["updatedAt"] != later || d["createdAt"] != now {
				t.Fatalf("redeemed: %v", d)
			}
			mustProblem(t, s.do(t, req{Method: "POST", Path: demoAdmin + "/coupons/ops-1/redeem", Token: admin}), 409,
				`coupon "Ops-1" is Redeemed; only an Issued coupon can be redeemed`, nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: demoAdmin + "/coupons/ops-1/cancel", Token: admin}), 409,
				`coupon "Ops-1" is Redeemed; only an Issued coupon can be cancelled`, nil)
			if d := s.adminCall(t, admin, "POST", demoAdmin+"/coupons/JANE15OFF/cancel", "", 200); d["status"] != "Cancelled" {
				t.Fatalf("cancelled: %v", d)
			}
			mustProblem(t, s.do(t, req{Method: "POST", Path: demoAdmin + "/coupons/SUMMER20ab/cancel", Token: admin}), 409,
				`coupon "SUMMER20ab" is Expired; only an Issued coupon can be cancelled`, nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: demoAdmin + "/coupons/NOPE/redeem", Token: admin}), 404, `coupon "NOPE" not found`, nil)
			mustProblem(t, s.do(t, req{Method: "GET", Path: demoAdmin + "/coupons/NOPE", Token: admin}), 404, `coupon "NOPE" not found`, nil)
			mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/companies/nope/coupons/Sl75Ev", Token: admin}), 404, "*", nil)
		})
		t.Run("issue errors change nothing", func(t *testing.T) {
			for _, tc := range []struct {
				body   string
				status int
				detail string
				errs   map[string][]string
			}{
				{`{"code":"sl75EV"}`, 409, `coupon "sl75EV" already exists`, nil},
				{`{"code":"N-1","userId":"9999"}`, 404, `loyalty user "9999" not found`, nil},
				{`{"code":"N-1","locationIds":["LOC999"]}`, 404, `location "LOC999" of company "demo-company" not found`, nil},
				{`{"code":""}`, 400, "*", map[string][]string{"code": {"The code field is required."}}},
				{`{"code":"a/b","rewardProvider":"Acme","status":"Expired","pictureUrl":"ftp://x","email":"nobody","phone":"12"}`, 400, "*", map[string][]string{
					"code":           {"The code field must be 1-128 printable characters without '/', '\\', '?', '#', '%' or surrounding spaces."},
					"rewardProvider": {"The rewardProvider field must be one of TwoReward, PJM, Dummy."},
					"status":         {"The status field must be Issued, Redeemed or Cancelled (Expired is computed from availableUntil)."},
					"pictureUrl":     {"The pictureUrl field must be an absolute http or https URL of at most 2048 bytes."},
					"email":          {"The email field must be an e-mail address (name@domain) of at most 254 bytes."},
					"phone":          {"The phone field must be a phone number of at most 32 characters: digits, spaces and + - ( ) . /, with at least 3 digits."},
				}},
				{`{"code":"N-1","unknown":1}`, 400, "*", map[string][]string{"unknown": {"The property 'unknown' is not allowed."}}},
				{`{"code":"N-1","availableUntil":"soon"}`, 400, "*", map[string][]string{"availableUntil": {"The availableUntil field must be a date-time (ISO 8601)."}}},
			} {
				r := s.do(t, postJSON(admin, demoAdmin+"/coupons", tc.body))
				if tc.status == 400 {
					mustProblem(t, r, 400, "*", tc.errs)
				} else {
					mustProblem(t, r, tc.status, tc.detail, nil)
				}
			}
			mustProblem(t, s.do(t, req{Method: "GET", Path: demoAdmin + "/coupons/N-1", Token: admin}), 404, "*", nil)
			mustProblem(t, s.do(t, postJSON(admin, "/admin/v1/pos-systems/clover/companies/nope/coupons", `{"code":"N-1"}`)), 404, `company "nope" not found`, nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: demoAdmin + "/coupons", Token: admin, ContentType: "application/xml", Body: `<a><code>x</code></a>`}), 415, "*", nil)
			mustProblem(t, s.do(t, postJSON(tok, demoAdmin+"/coupons", `{"code":"N-1"}`)), 403, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: demoAdmin + "/coupons", ContentType: "application/json", Body: `{"code":"N-1"}`}), 401, "*", nil)
			mustProblem(t, s.do(t, postJSON(admin, demoAdmin+"/coupons", `{"code":"`+strings.Repeat("x", 70<<10)+`"}`)), 413, "*", nil)
		})
		t.Run("import, all or none", func(t *testing.T) {
			var items []string
			for i := range 250 {
				items = append(items, fmt.Sprintf(`{"code":"BULK-%03d","userId":"1002","locationIds":["LOC456"]}`, i))
			}
			mustBody(t, s.do(t, postJSON(admin, demoAdmin+"/coupons/import", `{"items":[`+strings.Join(items, ",")+`]}`)), 201, `{"data":{"createdCount":250}}`)
			r := s.do(t, postJSON(tok, searchPath+"?pageSize=1&page=250", `{"email":"jane.roe@example.com","posLocationId":"LOC456"}`))
			mustStatus(t, r, 200)
			if !strings.Contains(string(r.Body), `"code":"BULK-249"`) || !strings.Contains(string(r.Body), `"total":251`) {
				t.Fatalf("the last imported coupon: %s", r.Body)
			}
			mustBody(t, s.do(t, postJSON(admin, demoAdmin+"/coupons/import", `{"items":[]}`)), 201, `{"data":{"createdCount":0}}`)

			mustProblem(t, s.do(t, postJSON(admin, demoAdmin+"/coupons/import", `{"items":[{"code":"NEW-1"},{"code":"bulk-007"}]}`)), 409,
				`Item 2: coupon "bulk-007" already exists`, nil)
			mustProblem(t, s.do(t, postJSON(admin, demoAdmin+"/coupons/import", `{"items":[{"code":"NEW-1"},{"code":"NEW-2"},{"code":"new-1"}]}`)), 409,
				`Item 3: coupon "new-1" already exists`, nil)
			mustProblem(t, s.do(t, postJSON(admin, demoAdmin+"/coupons/import", `{"items":[{"code":"NEW-1"},{"code":"NEW-2","userId":"ghost"}]}`)), 404,
				`Item 2: loyalty user "ghost" not found`, nil)
			mustProblem(t, s.do(t, postJSON(admin, demoAdmin+"/coupons/import", `{"items":[{"code":"NEW-1"},{"code":""},{"code":"NEW-3","status":"Used"}]}`)), 400, "*",
				map[string][]string{"items[1].code": {"The code field is required."},
					"items[2].status": {"The status field must be Issued, Redeemed or Cancelled (Expired is computed from availableUntil)."}})
			mustProblem(t, s.do(t, postJSON(admin, demoAdmin+"/coupons/import", `{"items":[{"code":"NEW-1","cde":"x"}]}`)), 400, "*",
				map[string][]string{"items[0].cde": {"The property 'items[0].cde' is not allowed."}})
			var many strings.Builder
			many.WriteString(`{"items":[`)
			for i := range 10_001 {
				if i > 0 {
					many.WriteByte(',')
				}
				fmt.Fprintf(&many, `{"code":"M%d"}`, i)
			}
			many.WriteString(`]}`)
			mustProblem(t, s.do(t, postJSON(admin, demoAdmin+"/coupons/import", many.String())), 413,
				"An import holds at most 10000 coupons; send more in several requests.", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: demoAdmin + "/coupons/import", Token: admin, ContentType: "text/xml", Body: `<a/>`}), 415, "*", nil)
			mustProblem(t, s.do(t, req{Method: "GET", Path: demoAdmin + "/coupons/NEW-1", Token: admin}), 404, "*", nil)
			mustProblem(t, s.do(t, req{Method: "GET", Path: demoAdmin + "/coupons/M0", Token: admin}), 404, "*", nil)
		})
		t.Run("loyalty users", func(t *testing.T) {
			now := s.clock.Now().Format(time.RFC3339)
			path := demoAdmin + "/loyalty-users"
			want := `{"data":{"posSystemId":"clover","posCompanyId":"demo-company","id":"2001","firstName":"Eve","lastName":"Ng","gender":"",` +
				`"phone":"+44 20 7946 0000","email":"eve@example.org","stamps":1,"points":10,"createdAt":"` + now + `","updatedAt":"` + now + `"}}`
			mustBody(t, s.do(t, postJSON(admin, path, `{"id":"2001","firstName":"Eve","lastName":"Ng","phone":"+44 20 7946 0000","email":"eve@example.org","stamps":1,"points":10}`)), 201, want)
			mustBody(t, s.do(t, req{Method: "GET", Path: path + "/2001", Token: admin}), 200, want)
			if d := s.adminCall(t, admin, "POST", path, `{"firstName":"Gen"}`, 201); !strings.HasPrefix(d["id"].(string), "u-") {
				t.Fatalf("generated id: %v", d)
			}
			mustProblem(t, s.do(t, postJSON(admin, path, `{"id":"2001"}`)), 409, `loyalty user "2001" already exists`, nil)
			mustProblem(t, s.do(t, postJSON(admin, path, `{"id":"x","stamps":-1,"email":"bad"}`)), 400, "*", map[string][]string{
				"stamps": {"The stamps field must not be negative."},
				"email":  {"The email field must be an e-mail address (name@domain) of at most 254 bytes."}})
			mustProblem(t, s.do(t, postJSON(admin, "/admin/v1/pos-systems/clover/companies/nope/loyalty-users", `{"id":"x"}`)), 404, `company "nope" not found`, nil)

			d := s.adminCall(t, admin, "PATCH", path+"/2001", `{"lastName":"Nguyen","email":"EVE@example.org"}`, 200)
			if d["lastName"] != "Nguyen" || d["firstName"] != "Eve" || d["email"] != "EVE@example.org" || d["points"] != 10.0 {
				t.Fatalf("patched: %v", d)
			}
			mustBody(t, s.do(t, postJSON(tok, usersPath, `{"posLocationId":"LOC123","keyword":"nguyen"}`)), 200,
				`{"data":{"users":[{"id":"2001","firstName":"Eve","lastName":"Nguyen","gender":"","phone":"+44 20 7946 0000","email":"EVE@example.org","stamps":1,"points":10}]}}`)
			mustProblem(t, s.do(t, req{Method: "PATCH", Path: path + "/2001", Token: admin, ContentType: "application/json", Body: `{"phone":"none"}`}), 400, "*",
				map[string][]string{"phone": {"The phone field must be a phone number of at most 32 characters: digits, spaces and + - ( ) . /, with at least 3 digits."}})
			mustProblem(t, s.do(t, req{Method: "PATCH", Path: path + "/2001", Token: admin, ContentType: "application/json", Body: `{"points":5}`}), 400, "*",
				map[string][]string{"points": {"The property 'points' is not allowed."}})
			mustProblem(t, s.do(t, req{Method: "PATCH", Path: path + "/9999", Token: admin, ContentType: "application/json", Body: `{"gender":"x"}`}), 404, `loyalty user "9999" not found`, nil)

			d = s.adminCall(t, admin, "POST", path+"/2001/adjust", `{"stamps":4,"points":-10}`, 200)
			if d["stamps"] != 5.0 || d["points"] != 0.0 {
				t.Fatalf("adjusted: %v", d)
			}
			mustProblem(t, s.do(t, postJSON(admin, path+"/2001/adjust", `{"points":-1}`)), 409, "Adding -1 to 0 points would leave 0–2147483647.", nil)
			mustProblem(t, s.do(t, postJSON(admin, path+"/2001/adjust", `{"stamps":2147483647}`)), 409, "Adding 2147483647 to 5 stamps would leave 0–2147483647.", nil)
			mustProblem(t, s.do(t, postJSON(admin, path+"/2001/adjust", `{}`)), 400, "*", map[string][]string{"$": {"Give a non-zero stamps or points adjustment."}})
			mustProblem(t, s.do(t, postJSON(admin, path+"/2001/adjust", `{"points":2147483648}`)), 400, "*", map[string][]string{"points": {"The points field must be an integer."}})
			mustProblem(t, s.do(t, postJSON(admin, path+"/9999/adjust", `{"points":1}`)), 404, `loyalty user "9999" not found`, nil)
			if d := s.adminCall(t, admin, "GET", path+"/2001", "", 200); d["stamps"] != 5.0 || d["points"] != 0.0 {
				t.Fatalf("after refused adjustments: %v", d)
			}
			mustProblem(t, s.do(t, req{Method: "GET", Path: path + "/9999", Token: admin}), 404, "*", nil)
		})
	})
}

// TestCouponDemoReload shows that loading the demo data set again (a
// restart with --demo) leaves its users and coupons as they were, operator
// changes included.
func TestCouponDemoReload(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		s.adminCall(t, admin, "POST", demoAdmin+"/coupons/10OFFmq8kl8/redeem", "", 200)
		s.adminCall(t, admin, "POST", demoAdmin+"/loyalty-users/1001/adjust", `{"points":5}`, 200)
		s.restart(t)
		tok := s.posToken(t)
		redeemed := strings.Replace(d10OFF, `"status":"Issued"`, `"status":"Redeemed"`, 1)
		mustBody(t, s.do(t, postJSON(tok, searchPath, `{"email":"john.doe@example.com"}`)), 200,
			searchBody(redeemed+","+d5OFF+","+dFREE+","+dSUMMER, 1, 20, 4, "Accepted"))
		mustBody(t, s.do(t, postJSON(tok, usersPath, `{"posLocationId":"LOC123","keyword":"Doe"}`)), 200,
			`{"data":{"users":[`+strings.Replace(uJohn, `"points":120`, `"points":125`, 1)+`]}}`)
	})
}
