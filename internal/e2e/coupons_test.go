package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The demo coupons as a POS sees them (CouponCodeDisplayDto), by code.
var demoCouponJSON = map[string]string{
	"10OFFmq8kl8": `{"rewardProvider":"TwoReward","code":"10OFFmq8kl8","name":"10% off","title":"10% off your next purchase","pictureUrl":"https://example.com/demo/coupons/10off.png","availableUntil":"2099-12-31T23:59:59Z","status":"Issued","info":[{"title":"Terms","items":{"combinable":null,"minimumSpend":"20.00"}}],"promotionId":null}`,
	"5OFFcx21pq":  `{"rewardProvider":"Dummy","code":"5OFFcx21pq","name":"$5 off","title":"$5 off a purchase over $25","pictureUrl":null,"availableUntil":"2099-12-31T23:59:59Z","status":"Cancelled","info":null,"promotionId":null}`,
	"FREECOFFEE1": `{"rewardProvider":"TwoReward","code":"FREECOFFEE1","name":"Free coffee","title":"One free coffee","pictureUrl":null,"availableUntil":"2099-12-31T23:59:59Z","status":"Redeemed","info":null,"promotionId":null}`,
	"COOKIE1":     `{"rewardProvider":"TwoReward","code":"COOKIE1","name":"Cookie","title":"1 off a chocolate cookie","pictureUrl":null,"availableUntil":"2099-12-31T23:59:59Z","status":"Issued","info":null,"promotionId":"DEMO-COUPON-COOKIE"}`,
	"SUMMER24":    `{"rewardProvider":"TwoReward","code":"SUMMER24","name":"Summer sale","title":"15% off summer items","pictureUrl":null,"availableUntil":"2024-09-30T23:59:59Z","status":"Expired","info":null,"promotionId":null}`,
	"Sl75Ev":      `{"rewardProvider":"PJM","code":"Sl75Ev","name":"Free drink","title":"A free drink with any meal","pictureUrl":null,"availableUntil":null,"status":"Issued","info":null,"promotionId":null}`,
	"JANE2FOR1":   `{"rewardProvider":"TwoReward","code":"JANE2FOR1","name":"2 for 1","title":"Two coffees for the price of one","pictureUrl":null,"availableUntil":"2099-06-30T23:59:59Z","status":"Issued","info":null,"promotionId":null}`,
}

// The demo loyalty users as the loyalty-card user lookup shows them, by id.
var demoUserJSON = map[string]string{
	"john-doe":         `{"id":"john-doe","firstName":"John","lastName":"Doe","gender":"Male","phone":"+15555551234","email":"john.doe@example.com","stamps":3,"points":120}`,
	"jane-doe":         `{"id":"jane-doe","firstName":"Jane","lastName":"Doe","gender":"Female","phone":"+1 (555) 555-9876","email":"jane.doe@example.com","stamps":7,"points":45}`,
	"johnny-appleseed": `{"id":"johnny-appleseed","firstName":"Johnny","lastName":"Appleseed","gender":"Male","phone":"+1 555 555 0100","email":"johnny@example.org","stamps":0,"points":10}`,
	"mary-johnson":     `{"id":"mary-johnson","firstName":"Mary","lastName":"Johnson","gender":"Female","phone":"+44 20 7946 0958","email":"mary.johnson@example.com","stamps":9,"points":300}`,
	"ava-doerr":        `{"id":"ava-doerr","firstName":"Ava","lastName":"Doerr","gender":"","phone":"","email":"ava.doerr@example.net","stamps":1,"points":0}`,
}

// johnsCoupons are John Doe's coupons in the search's order (by code).
var johnsCoupons = []string{"10OFFmq8kl8", "5OFFcx21pq", "COOKIE1", "FREECOFFEE1", "SUMMER24"}

// searchBody is the coupon search's exact answer for the given coupons (JSON
// records), page and posStatus.
func searchBody(records []string, page, size, total int, status string) string {
	return `{"data":[` + strings.Join(records, ",") + `],"page":{"page":` + strconv.Itoa(page) + `,"pageSize":` + strconv.Itoa(size) +
		`,"total":` + strconv.Itoa(total) + `},"posStatus":"` + status + `"}`
}

// demoCoupons returns the display records of the named demo coupons.
func demoCoupons(codes ...string) []string {
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = demoCouponJSON[c]
	}
	return out
}

func lookupBody(records ...string) string {
	return `{"data":{"couponCodes":[` + strings.Join(records, ",") + `]}}`
}

func usersBody(ids ...string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = demoUserJSON[id]
	}
	return `{"data":{"users":[` + strings.Join(out, ",") + `]}}`
}

const (
	searchPath      = "/pos/clover/coupon/couponCode/search"
	lookupPath      = "/v2/pos/clover/coupon/couponCodes/lookup"
	usersPath       = "/v2/pos/clover/loyaltyCard/users/lookup"
	demoCompanyPath = "/admin/v1/pos-systems/clover/companies/demo-company"
)

func posJSON(token, path, body string) req {
	return req{Method: "POST", Path: path, Token: token, ContentType: "application/json", Body: body}
}

// TestCouponSearch covers the coupon search (docs/api.md §5.2) on the demo
// data set.
func TestCouponSearch(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		pos := s.posToken(t)
		search := func(query, body string) response {
			t.Helper()
			return s.pos(t, pos, searchPath+query, body)
		}
		all := searchBody(demoCoupons(johnsCoupons...), 1, 20, 5, "Accepted")

		t.Run("by e-mail, any case", func(t *testing.T) {
			mustBody(t, search("", `{"email":"john.doe@example.com"}`), all)
			mustBody(t, search("", `{"email":"JOHN.Doe@Example.COM","code":null,"phone":null,"posLocationId":null}`), all)
			mustBody(t, search("", `{"email":"jane.doe@example.com"}`), searchBody(demoCoupons("JANE2FOR1"), 1, 20, 1, "Accepted"))
			mustBody(t, search("", `{"email":"nobody@example.com"}`), searchBody(nil, 1, 20, 0, "Accepted"))
		})
		t.Run("by phone, written several ways", func(t *testing.T) {
			for _, phone := range []string{"+15555551234", "15555551234", "+1 (555) 555-1234", "1-555-555-1234", "+1.555.555.1234"} {
				mustBody(t, search("", `{"phone":"`+phone+`"}`), all)
			}
			mustBody(t, search("", `{"phone":"5555551234"}`), searchBody(nil, 1, 20, 0, "Accepted"))
		})
		t.Run("by code, any case", func(t *testing.T) {
			for _, code := range []string{"10OFFmq8kl8", "10offmq8kl8", "10OFFMQ8KL8"} {
				mustBody(t, search("", `{"code":"`+code+`"}`), searchBody(demoCoupons("10OFFmq8kl8"), 1, 20, 1, "Accepted"))
			}
			mustBody(t, search("", `{"code":"sl75ev"}`), searchBody(demoCoupons("Sl75Ev"), 1, 20, 1, "Accepted"))
			mustBody(t, search("", `{"code":"10OFF"}`), searchBody(nil, 1, 20, 0, "Accepted"))
		})
		t.Run("combinations", func(t *testing.T) {
			one := searchBody(demoCoupons("10OFFmq8kl8"), 1, 20, 1, "Accepted")
			none := searchBody(nil, 1, 20, 0, "Accepted")
			mustBody(t, search("", `{"code":"10offmq8kl8","email":"john.doe@example.com"}`), one)
			mustBody(t, search("", `{"code":"10offmq8kl8","phone":"+1 555 555 1234"}`), one)
			mustBody(t, search("", `{"code":"10offmq8kl8","email":"john.doe@example.com","phone":"15555551234","posLocationId":"LOC123"}`), one)
			mustBody(t, search("", `{"email":"john.doe@example.com","phone":"15555551234"}`), all)
			mustBody(t, search("", `{"code":"sl75ev","email":"john.doe@example.com"}`), none)
			mustBody(t, search("", `{"email":"john.doe@example.com","phone":"+1 (555) 555-9876"}`), none)
			mustBody(t, search("", `{"code":"10offmq8kl8","posLocationId":"LOC456"}`), none)
		})
		t.Run("location filter", func(t *testing.T) {
			mustBody(t, search("", `{"email":"john.doe@example.com","posLocationId":"LOC123"}`), all)
			mustBody(t, search("", `{"email":"john.doe@example.com","posLocationId":"LOC456"}`),
				searchBody(demoCoupons("5OFFcx21pq", "COOKIE1", "FREECOFFEE1", "SUMMER24"), 1, 20, 4, "Accepted"))
			mustBody(t, search("", `{"code":"Sl75Ev","posLocationId":"LOC123"}`), searchBody(demoCoupons("Sl75Ev"), 1, 20, 1, "Accepted"))
			mustBody(t, search("", `{"code":"Sl75Ev","posLocationId":"LOC456"}`), searchBody(demoCoupons("Sl75Ev"), 1, 20, 1, "Accepted"))
			mustBody(t, search("", `{"code":"JANE2FOR1","posLocationId":"LOC123"}`), searchBody(nil, 1, 20, 0, "Accepted"))
			mustProblem(t, search("", `{"code":"Sl75Ev","posLocationId":"NOPE"}`), 404, "Location 'NOPE' is not registered.", nil)
		})
		t.Run("paging", func(t *testing.T) {
			q := `{"email":"john.doe@example.com"}`
			mustBody(t, search("?pageSize=2", q), searchBody(demoCoupons(johnsCoupons[:2]...), 1, 2, 5, "Accepted"))
			mustBody(t, search("?page=2&pageSize=2", q), searchBody(demoCoupons(johnsCoupons[2:4]...), 2, 2, 5, "Accepted"))
			mustBody(t, search("?page=2&pageSize=3", q), searchBody(demoCoupons(johnsCoupons[3:]...), 2, 3, 5, "Accepted"))
			mustBody(t, search("?page=3&pageSize=2", q), searchBody(demoCoupons(johnsCoupons[4:]...), 3, 2, 5, "Accepted"))
			mustBody(t, search("?page=4&pageSize=2", q), searchBody(nil, 4, 2, 5, "Accepted"))
			mustBody(t, search("?page=21474836&pageSize=100", q), searchBody(nil, 21474836, 100, 5, "Accepted"))
			mustBody(t, search("?page=1&pageSize=1", q), searchBody(demoCoupons(johnsCoupons[0]), 1, 1, 5, "Accepted"))
			mustBody(t, search("?page=4&pageSize=1", q), searchBody(demoCoupons(johnsCoupons[3]), 4, 1, 5, "Accepted"))
			mustBody(t, search("?pageSize=100", q), searchBody(demoCoupons(johnsCoupons...), 1, 100, 5, "Accepted"))
			pageMsg := []string{"The page parameter must be an integer from 1 to 21474836."}
			sizeMsg := []string{"The pageSize parameter must be an integer from 1 to 100."}
			for _, bad := range []string{"0", "-1", "x", "1.5", "", "21474837", "99999999999999999999"} {
				mustProblem(t, search("?page="+bad, q), 400, pageMsg[0], map[string][]string{"page": pageMsg})
			}
			for _, bad := range []string{"0", "101", "abc", "-5", ""} {
				mustProblem(t, search("?pageSize="+bad, q), 400, sizeMsg[0], map[string][]string{"pageSize": sizeMsg})
			}
			mustProblem(t, search("?page=0&pageSize=0", q), 400, pageMsg[0]+" "+sizeMsg[0], map[string][]string{"page": pageMsg, "pageSize": sizeMsg})
		})
		t.Run("bad input", func(t *testing.T) {
			need := []string{"One of code, email and phone is required."}
			needAll := map[string][]string{"code": need, "email": need, "phone": need}
			for _, body := range []string{`{}`, `{"code":null,"email":null,"phone":null}`, `{"code":"","email":"","phone":""}`, `{"code":"  ","email":" "}`, `{"posLocationId":"LOC123"}`} {
				// detail says it once; errors names the three fields.
				mustProblem(t, search("", body), 400, need[0], needAll)
			}
			mustProblem(t, search("", `{"code":"x","foo":1}`), 400, "The property 'foo' is not allowed.", map[string][]string{"foo": {"The property 'foo' is not allowed."}})
			mustProblem(t, search("", `{"code":"x","Email":"a@b.c"}`), 400, "The property 'Email' is not allowed.", map[string][]string{"Email": {"The property 'Email' is not allowed."}})
			mustProblem(t, search("", `{"code":5}`), 400, "The code field must be a string.", map[string][]string{"code": {"The code field must be a string."}})
			mustProblem(t, search("", `{"phone":"abc"}`), 400, "The phone field must contain digits.", map[string][]string{"phone": {"The phone field must contain digits."}})
			mustProblem(t, search("", `{"code":"x","code":"y"}`), 400, "*", map[string][]string{"code": {"The property 'code' is given more than once."}})
			mustProblem(t, search("", `[{"code":"x"}]`), 400, "*", map[string][]string{"$": {"The request body must be a JSON object."}})
			mustProblem(t, search("", `{"code":"x"} {}`), 400, "*", map[string][]string{"$": {"The request body is not valid JSON: invalid character '{' after top-level value at byte offset 13."}})
		})
		t.Run("XML bodies", func(t *testing.T) {
			for _, ct := range []string{"application/xml", "text/xml", "application/problem+xml"} {
				r := s.do(t, req{Method: "POST", Path: searchPath, Token: pos, ContentType: ct,
					Body: `<SearchUserCouponsDto><email>John.Doe@example.com</email><posLocationId>LOC456</posLocationId></SearchUserCouponsDto>`})
				mustBody(t, r, searchBody(demoCoupons("5OFFcx21pq", "COOKIE1", "FREECOFFEE1", "SUMMER24"), 1, 20, 4, "Accepted"))
			}
			r := s.do(t, req{Method: "POST", Path: searchPath, Token: pos, ContentType: "application/xml",
				Body: `<SearchUserCouponsDto><code>x</code><foo>1</foo></SearchUserCouponsDto>`})
			mustProblem(t, r, 400, "The property 'foo' is not allowed.", map[string][]string{"foo": {"The property 'foo' is not allowed."}})
		})
		t.Run("response media types", func(t *testing.T) {
			for _, accept := range []string{"text/plain", "text/json", "application/json"} {
				q := posJSON(pos, searchPath, `{"code":"sl75ev"}`)
				q.Header = map[string]string{"Accept": accept}
				r := s.do(t, q)
				mustBody(t, r, searchBody(demoCoupons("Sl75Ev"), 1, 20, 1, "Accepted"))
				if ct := r.Header.Get("Content-Type"); ct != accept+"; charset=utf-8" {
					t.Fatalf("Accept %s: content type %q", accept, ct)
				}
			}
		})
		t.Run("401 403 413 415", func(t *testing.T) {
			mustProblem(t, s.call(t, "", "POST", searchPath, `{"code":"x"}`), 401, "*", nil)
			mustProblem(t, s.pos(t, "not-a-token", searchPath, `{"code":"x"}`), 401, "*", nil)
			mustProblem(t, s.pos(t, s.adminToken(t), searchPath, `{"code":"x"}`), 403, "*", nil)
			mustProblem(t, s.pos(t, pos, "/pos/pax/coupon/couponCode/search", `{"code":"x"}`), 403, "The access token belongs to POS system 'clover'; this path is of POS system 'pax'.", nil)
			mustProblem(t, search("", `{"code":"`+strings.Repeat("x", 70<<10)+`"}`), 413, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: searchPath, Token: pos, ContentType: "text/csv", Body: "code\nx"}), 415, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: searchPath, Token: pos, Body: `{"code":"x"}`}), 415, "*", nil)
		})
	})
}

// TestCouponLookup covers the coupon lookup v2 (docs/api.md §5.3).
func TestCouponLookup(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		pos := s.posToken(t)
		lookup := func(body string) response {
			t.Helper()
			return s.pos(t, pos, lookupPath, body)
		}
		for _, code := range []string{"10OFFmq8kl8", "10offmq8kl8", "10OFFMQ8KL8"} {
			mustBody(t, lookup(`{"posLocationId":"LOC123","code":"`+code+`"}`), lookupBody(demoCouponJSON["10OFFmq8kl8"]))
		}
		// Usable only at LOC123; usable everywhere; only at LOC456.
		mustBody(t, lookup(`{"posLocationId":"LOC456","code":"10OFFmq8kl8"}`), lookupBody())
		mustBody(t, lookup(`{"posLocationId":"LOC456","code":"sl75EV"}`), lookupBody(demoCouponJSON["Sl75Ev"]))
		mustBody(t, lookup(`{"posLocationId":"LOC123","code":"Sl75Ev"}`), lookupBody(demoCouponJSON["Sl75Ev"]))
		mustBody(t, lookup(`{"posLocationId":"LOC123","code":"JANE2FOR1"}`), lookupBody())
		mustBody(t, lookup(`{"posLocationId":"LOC456","code":"jane2for1"}`), lookupBody(demoCouponJSON["JANE2FOR1"]))
		// Every state is reported, Expired computed.
		for _, code := range []string{"5OFFcx21pq", "FREECOFFEE1", "SUMMER24"} {
			mustBody(t, lookup(`{"posLocationId":"LOC123","code":"`+code+`"}`), lookupBody(demoCouponJSON[code]))
		}
		mustBody(t, lookup(`{"posLocationId":"LOC123","code":"NOPE"}`), lookupBody())
		// Unknown properties are ignored here (only the coupon search refuses
		// them: docs/api.md §2.2).
		mustBody(t, lookup(`{"posLocationId":"LOC123","code":"sl75ev","extra":true}`), lookupBody(demoCouponJSON["Sl75Ev"]))
		r := s.do(t, req{Method: "POST", Path: lookupPath, Token: pos, ContentType: "text/xml",
			Body: `<LookupCouponCodesDto><posLocationId>LOC123</posLocationId><code>sl75ev</code></LookupCouponCodesDto>`})
		mustBody(t, r, lookupBody(demoCouponJSON["Sl75Ev"]))

		locReq := map[string][]string{"posLocationId": {"The posLocationId field is required."}}
		codeReq := map[string][]string{"code": {"The code field is required."}}
		mustProblem(t, lookup(`{"code":"Sl75Ev"}`), 400, "The posLocationId field is required.", locReq)
		mustProblem(t, lookup(`{"posLocationId":"","code":"Sl75Ev"}`), 400, "The posLocationId field is required.", locReq)
		mustProblem(t, lookup(`{"posLocationId":null,"code":"Sl75Ev"}`), 400, "The posLocationId field is required.", locReq)
		mustProblem(t, lookup(`{"posLocationId":"LOC123"}`), 400, "The code field is required.", codeReq)
		mustProblem(t, lookup(`{"posLocationId":"LOC123","code":""}`), 400, "The code field is required.", codeReq)
		mustProblem(t, lookup(`{}`), 400, "*", map[string][]string{"posLocationId": locReq["posLocationId"], "code": codeReq["code"]})
		mustProblem(t, lookup(`{"posLocationId":123,"code":"x"}`), 400, "*", map[string][]string{"posLocationId": {"The posLocationId field must be a string."}})
		mustProblem(t, lookup(`{"posLocationId":"NOPE","code":"Sl75Ev"}`), 404, "Location 'NOPE' is not registered.", nil)
		mustProblem(t, s.call(t, "", "POST", lookupPath, `{}`), 401, "*", nil)
		mustProblem(t, s.pos(t, s.adminToken(t), lookupPath, `{"posLocationId":"LOC123","code":"x"}`), 403, "*", nil)
		mustProblem(t, lookup(`{"posLocationId":"LOC123","code":"`+strings.Repeat("x", 70<<10)+`"}`), 413, "*", nil)
		mustProblem(t, s.do(t, req{Method: "POST", Path: lookupPath, Token: pos, ContentType: "text/plain", Body: `{}`}), 415, "*", nil)
	})
}

// TestLoyaltyUserLookup covers the loyalty-card user lookup
// (docs/api.md §6.1).
func TestLoyaltyUserLookup(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		pos := s.posToken(t)
		lookup := func(keyword string) response {
			t.Helper()
			return s.pos(t, pos, usersPath, `{"posLocationId":"LOC123","keyword":"`+keyword+`"}`)
		}
		// Exact matches first (by last name, first name), then the users
		// with a name word, e-mail or domain that starts with the keyword.
		mustBody(t, lookup("doe"), usersBody("jane-doe", "john-doe", "ava-doerr"))
		mustBody(t, lookup("DOE"), usersBody("jane-doe", "john-doe", "ava-doerr"))
		mustBody(t, lookup("Döe"), usersBody("jane-doe", "john-doe", "ava-doerr")) // accents ignored
		mustBody(t, lookup("john"), usersBody("john-doe", "johnny-appleseed", "mary-johnson"))
		mustBody(t, lookup("  John  "), usersBody("john-doe", "johnny-appleseed", "mary-johnson"))
		mustBody(t, lookup("ohn"), usersBody()) // the inside of a word is no match
		mustBody(t, lookup("oerr"), usersBody())
		mustBody(t, lookup("JOHN.DOE@EXAMPLE.COM"), usersBody("john-doe"))
		mustBody(t, lookup("mary.j"), usersBody("mary-johnson"))
		mustBody(t, lookup("example.com"), usersBody("jane-doe", "john-doe", "mary-johnson"))
		mustBody(t, lookup("exam"), usersBody("johnny-appleseed", "jane-doe", "john-doe", "ava-doerr", "mary-johnson")) // the domain's start
		mustBody(t, lookup("ample.com"), usersBody())
		// Phones: the whole number, its end, its start with or without the
		// country code; not the inside of the digits.
		mustBody(t, lookup("+1 (555) 555-1234"), usersBody("john-doe"))
		mustBody(t, lookup("555-1234"), usersBody("john-doe"))
		mustBody(t, lookup("555 555"), usersBody("johnny-appleseed", "jane-doe", "john-doe"))
		mustBody(t, lookup("0958"), usersBody("mary-johnson"))
		mustBody(t, lookup("2079"), usersBody("mary-johnson"))
		mustBody(t, lookup("+44 20 79"), usersBody("mary-johnson"))
		mustBody(t, lookup("7946"), usersBody())
		mustBody(t, lookup("555"), usersBody()) // three digits: no phone keyword
		mustBody(t, lookup("zzz"), usersBody())
		// Unknown properties are ignored; XML works.
		mustBody(t, s.pos(t, pos, usersPath, `{"posLocationId":"LOC456","keyword":"ava","x":1}`), usersBody("ava-doerr"))
		r := s.do(t, req{Method: "POST", Path: usersPath, Token: pos, ContentType: "application/xml",
			Body: `<LookupLoyaltyUsersDto><posLocationId>LOC123</posLocationId><keyword>mary</keyword></LookupLoyaltyUsersDto>`})
		mustBody(t, r, usersBody("mary-johnson"))

		short := map[string][]string{"keyword": {"The keyword field must be at least 3 characters long."}}
		for _, k := range []string{"", "jo", "  jo  ", "é1"} {
			mustProblem(t, lookup(k), 400, short["keyword"][0], short)
		}
		mustProblem(t, s.pos(t, pos, usersPath, `{"posLocationId":"LOC123"}`), 400, "The keyword field is required.",
			map[string][]string{"keyword": {"The keyword field is required."}})
		mustProblem(t, s.pos(t, pos, usersPath, `{"keyword":"john"}`), 400, "The posLocationId field is required.",
			map[string][]string{"posLocationId": {"The posLocationId field is required."}})
		mustProblem(t, s.pos(t, pos, usersPath, `{"posLocationId":"LOC123","keyword":7}`), 400, "*",
			map[string][]string{"keyword": {"The keyword field must be a string."}})
		mustProblem(t, s.pos(t, pos, usersPath, `{"posLocationId":"NOPE","keyword":"john"}`), 404, "Location 'NOPE' is not registered.", nil)
		mustProblem(t, s.call(t, "", "POST", usersPath, `{}`), 401, "*", nil)
		mustProblem(t, s.pos(t, s.adminToken(t), usersPath, `{"posLocationId":"LOC123","keyword":"john"}`), 403, "*", nil)
		mustProblem(t, lookup(strings.Repeat("x", 70<<10)), 413, "*", nil)
		mustProblem(t, s.do(t, req{Method: "POST", Path: usersPath, Token: pos, ContentType: "application/x-www-form-urlencoded", Body: "keyword=john"}), 415, "*", nil)

		// At most 50, exact matches first even when more match.
		admin := s.adminToken(t)
		for i := range 60 {
			mustStatus(t, s.call(t, admin, "POST", demoCompanyPath+"/loyalty-users", `{"id":"many-`+strconv.Itoa(i)+`","firstName":"Manyfold","lastName":"M`+strconv.Itoa(100+i)+`"}`), 201)
		}
		mustStatus(t, s.call(t, admin, "POST", demoCompanyPath+"/loyalty-users", `{"id":"zz-many","firstName":"Many","lastName":"Zz"}`), 201)
		r = lookup("many")
		mustStatus(t, r, 200)
		users := r.JSON(t)["data"].(map[string]any)["users"].([]any)
		if len(users) != 50 || users[0].(map[string]any)["id"] != "zz-many" {
			t.Fatalf("%d users, first %v; want 50 with the exact match zz-many first", len(users), users[0])
		}
	})
}

// TestCouponTenancy checks that another company's coupons and users are
// never visible to a client restricted away from it, and what disabled
// companies, locations and the coupons switch do.
func TestCouponTenancy(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		pos := s.posToken(t)
		admin := s.adminToken(t)
		call := func(method, path, body string) response {
			t.Helper()
			return s.admin(t, admin, method, path, body)
		}
		other := restrictedClient(t, s, admin) // other-co with OTHER-1, and a client that sees only it
		otherPath := "/admin/v1/pos-systems/clover/companies/other-co"
		mustStatus(t, call("POST", otherPath+"/loyalty-users", `{"id":"other-john","firstName":"John","lastName":"Other","email":"john.doe@example.com","phone":"+15555551234"}`), 201)
		mustStatus(t, call("POST", otherPath+"/coupons", `{"code":"10offmq8kl8","userId":"other-john","name":"Other's"}`), 201)
		mustStatus(t, call("POST", otherPath+"/coupons", `{"code":"OTHER-ONLY","email":"john.doe@example.com"}`), 201)
		otherSame := `{"rewardProvider":"TwoReward","code":"10offmq8kl8","name":"Other's","title":null,"pictureUrl":null,"availableUntil":null,"status":"Issued","info":null,"promotionId":null}`
		otherOnly := `{"rewardProvider":"TwoReward","code":"OTHER-ONLY","name":null,"title":null,"pictureUrl":null,"availableUntil":null,"status":"Issued","info":null,"promotionId":null}`
		otherJohn := `{"id":"other-john","firstName":"John","lastName":"Other","gender":"","phone":"+15555551234","email":"john.doe@example.com","stamps":0,"points":0}`

		t.Run("restricted client", func(t *testing.T) {
			mustBody(t, s.pos(t, other, searchPath, `{"email":"john.doe@example.com"}`), searchBody([]string{otherSame, otherOnly}, 1, 20, 2, "Accepted"))
			mustBody(t, s.pos(t, other, searchPath, `{"code":"Sl75Ev"}`), searchBody(nil, 1, 20, 0, "Accepted"))
			mustBody(t, s.pos(t, other, searchPath, `{"code":"10OFFMQ8KL8","posLocationId":"OTHER-1"}`), searchBody([]string{otherSame}, 1, 20, 1, "Accepted"))
			for _, path := range []string{searchPath, lookupPath} {
				mustProblem(t, s.pos(t, other, path, `{"code":"Sl75Ev","posLocationId":"LOC123"}`), 404, "Location 'LOC123' is not registered.", nil)
			}
			mustProblem(t, s.pos(t, other, usersPath, `{"keyword":"john","posLocationId":"LOC123"}`), 404, "Location 'LOC123' is not registered.", nil)
			mustBody(t, s.pos(t, other, lookupPath, `{"code":"sl75ev","posLocationId":"OTHER-1"}`), lookupBody())
			mustBody(t, s.pos(t, other, lookupPath, `{"code":"10OFFmq8kl8","posLocationId":"OTHER-1"}`), lookupBody(otherSame))
			mustBody(t, s.pos(t, other, usersPath, `{"keyword":"john","posLocationId":"OTHER-1"}`), `{"data":{"users":[`+otherJohn+`]}}`)
			mustBody(t, s.pos(t, other, usersPath, `{"keyword":"oth","posLocationId":"OTHER-1"}`), `{"data":{"users":[`+otherJohn+`]}}`)
		})
		t.Run("unrestricted client", func(t *testing.T) {
			// Without a location every company it may see is searched, ordered by code, then company.
			mustBody(t, s.pos(t, pos, searchPath, `{"code":"10OFFmq8kl8"}`), searchBody([]string{demoCouponJSON["10OFFmq8kl8"], otherSame}, 1, 20, 2, "Accepted"))
			// With one, only that location's company.
			mustBody(t, s.pos(t, pos, searchPath, `{"email":"john.doe@example.com","posLocationId":"LOC123"}`), searchBody(demoCoupons(johnsCoupons...), 1, 20, 5, "Accepted"))
			mustBody(t, s.pos(t, pos, lookupPath, `{"code":"other-only","posLocationId":"LOC123"}`), lookupBody())
			mustBody(t, s.pos(t, pos, usersPath, `{"keyword":"other","posLocationId":"LOC123"}`), usersBody())
			mustBody(t, s.pos(t, pos, usersPath, `{"keyword":"+1 555 555 1234","posLocationId":"LOC123"}`), usersBody("john-doe"))
		})
		t.Run("coupons switched off", func(t *testing.T) {
			mustStatus(t, call("PATCH", demoCompanyPath, `{"features":{"coupons":false}}`), 200)
			mustBody(t, s.pos(t, pos, searchPath, `{"email":"john.doe@example.com","posLocationId":"LOC123"}`), searchBody(nil, 1, 20, 0, "Disabled"))
			mustBody(t, s.pos(t, pos, searchPath+"?page=2&pageSize=5", `{"code":"sl75ev","posLocationId":"LOC456"}`), searchBody(nil, 2, 5, 0, "Disabled"))
			mustBody(t, s.pos(t, pos, searchPath, `{"email":"john.doe@example.com"}`), searchBody([]string{otherSame, otherOnly}, 1, 20, 2, "Accepted"))
			mustBody(t, s.pos(t, pos, lookupPath, `{"code":"sl75ev","posLocationId":"LOC123"}`), lookupBody())
			mustBody(t, s.pos(t, pos, usersPath, `{"keyword":"john","posLocationId":"LOC123"}`), usersBody())
			// Bad input is still bad input.
			mustProblem(t, s.pos(t, pos, searchPath, `{"posLocationId":"LOC123"}`), 400, "*", map[string][]string{"code": {"One of code, email and phone is required."}, "email": {"One of code, email and phone is required."}, "phone": {"One of code, email and phone is required."}})
			mustStatus(t, call("PATCH", demoCompanyPath, `{"features":{"coupons":true}}`), 200)
			mustBody(t, s.pos(t, pos, lookupPath, `{"code":"sl75ev","posLocationId":"LOC123"}`), lookupBody(demoCouponJSON["Sl75Ev"]))
		})
		t.Run("disabled location", func(t *testing.T) {
			mustStatus(t, call("PATCH", "/admin/v1/pos-systems/clover/locations/LOC123", `{"status":"Disabled"}`), 200)
			mustBody(t, s.pos(t, pos, searchPath, `{"code":"sl75ev","posLocationId":"LOC123"}`), searchBody(nil, 1, 20, 0, "Disabled"))
			mustBody(t, s.pos(t, pos, searchPath, `{"code":"sl75ev","posLocationId":"LOC456"}`), searchBody(demoCoupons("Sl75Ev"), 1, 20, 1, "Accepted"))
			mustBody(t, s.pos(t, pos, lookupPath, `{"code":"sl75ev","posLocationId":"LOC123"}`), lookupBody())
			mustBody(t, s.pos(t, pos, usersPath, `{"keyword":"john","posLocationId":"LOC123"}`), usersBody())
			mustBody(t, s.pos(t, pos, usersPath, `{"keyword":"ava","posLocationId":"LOC456"}`), usersBody("ava-doerr"))
			mustStatus(t, call("PATCH", "/admin/v1/pos-systems/clover/locations/LOC123", `{"status":"Active"}`), 200)
		})
		t.Run("disabled company", func(t *testing.T) {
			mustStatus(t, call("PATCH", demoCompanyPath, `{"status":"Disabled"}`), 200)
			mustBody(t, s.pos(t, pos, searchPath, `{"code":"sl75ev","posLocationId":"LOC456"}`), searchBody(nil, 1, 20, 0, "Disabled"))
			mustBody(t, s.pos(t, pos, searchPath, `{"code":"sl75ev"}`), searchBody(nil, 1, 20, 0, "Accepted"))
			mustBody(t, s.pos(t, pos, lookupPath, `{"code":"sl75ev","posLocationId":"LOC456"}`), lookupBody())
			mustBody(t, s.pos(t, pos, usersPath, `{"keyword":"ava","posLocationId":"LOC456"}`), usersBody())
			mustStatus(t, call("PATCH", demoCompanyPath, `{"status":"Active"}`), 200)
			mustBody(t, s.pos(t, pos, searchPath, `{"code":"sl75ev"}`), searchBody(demoCoupons("Sl75Ev"), 1, 20, 1, "Accepted"))
		})
	})
}

// TestCouponOperatorAPI covers the operator routes of coupons and loyalty
// users, and the computed Expired status on the server's clock.
func TestCouponOperatorAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		pos := s.posToken(t)
		call := func(method, path, body string) response {
			t.Helper()
			return s.admin(t, admin, method, path, body)
		}
		coupons := demoCompanyPath + "/coupons"
		users := demoCompanyPath + "/loyalty-users"
		now := s.clock.Now().UTC().Format(time.RFC3339)
		until := s.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		couponJSON := func(code, status, stored, created, updated string) string {
			return `{"data":{"posSystemId":"clover","posCompanyId":"demo-company","code":"` + code + `","rewardProvider":"PJM","name":"Soon gone","title":null,` +
				`"pictureUrl":null,"availableUntil":"` + until + `","info":[{"title":null,"items":null}],"userId":"john-doe","email":"","phone":"","promotionId":"",` +
				`"createdAt":"` + created + `","updatedAt":"` + updated + `","status":"` + status + `","storedStatus":"` + stored + `","locationIds":["LOC123","LOC456"]}}`
		}
		display := func(code, status string) string {
			return `{"rewardProvider":"PJM","code":"` + code + `","name":"Soon gone","title":null,"pictureUrl":null,"availableUntil":"` + until +
				`","status":"` + status + `","info":[{"title":null,"items":null}],"promotionId":null}`
		}

		t.Run("coupon lifecycle and computed Expired", func(t *testing.T) {
			body := `{"code":"SOON1","rewardProvider":"PJM","name":"Soon gone","availableUntil":"` + until + `","info":[{"title":null,"items":null}],"userId":"john-doe","locationIds":["LOC456","LOC123","LOC456"]}`
			mustCreated(t, call("POST", coupons, body), couponJSON("SOON1", "Issued", "Issued", now, now))
			mustBody(t, call("GET", coupons+"/soon1", ""), couponJSON("SOON1", "Issued", "Issued", now, now))
			mustBody(t, s.pos(t, pos, lookupPath, `{"posLocationId":"LOC456","code":"soon1"}`), lookupBody(display("SOON1", "Issued")))
			mustStatus(t, call("POST", coupons, strings.Replace(body, "SOON1", "SOON2", 1)), 201)
			mustStatus(t, call("POST", coupons, strings.Replace(body, "SOON1", "SOON3", 1)), 201)

			s.clock.Advance(time.Minute)
			later := s.clock.Now().UTC().Format(time.RFC3339)
			mustBody(t, call("POST", coupons+"/soon2/redeem", ""), couponJSON("SOON2", "Redeemed", "Redeemed", now, later))
			mustProblem(t, call("POST", coupons+"/soon2/redeem", ""), 409, `coupon "SOON2" is Redeemed; only an Issued coupon can be redeemed`, nil)
			mustProblem(t, call("POST", coupons+"/soon2/cancel", ""), 409, `coupon "SOON2" is Redeemed; only an Issued coupon can be cancelled`, nil)
			mustBody(t, call("POST", coupons+"/SOON3/cancel", ""), couponJSON("SOON3", "Cancelled", "Cancelled", now, later))
			mustProblem(t, call("POST", coupons+"/nope/cancel", ""), 404, `coupon "nope" not found`, nil)
			mustProblem(t, call("POST", coupons+"/nope/redeem", ""), 404, `coupon "nope" not found`, nil)

			// Past availableUntil an Issued coupon is Expired, to POS systems and operators, and final.
			s.clock.Advance(time.Hour)
			admin, pos = s.adminToken(t), s.posToken(t) // the old ones have expired too
			mustBody(t, call("GET", coupons+"/SOON1", ""), couponJSON("SOON1", "Expired", "Issued", now, now))
			mustBody(t, s.pos(t, pos, searchPath, `{"code":"soon1"}`), searchBody([]string{display("SOON1", "Expired")}, 1, 20, 1, "Accepted"))
			mustBody(t, s.pos(t, pos, searchPath, `{"email":"john.doe@example.com","posLocationId":"LOC456"}`),
				searchBody(append(demoCoupons("5OFFcx21pq", "COOKIE1", "FREECOFFEE1"), display("SOON1", "Expired"), display("SOON2", "Redeemed"), display("SOON3", "Cancelled"), demoCouponJSON["SUMMER24"]), 1, 20, 7, "Accepted"))
			mustProblem(t, call("POST", coupons+"/SOON1/redeem", ""), 409, `coupon "SOON1" is Expired; only an Issued coupon can be redeemed`, nil)
			mustProblem(t, call("POST", coupons+"/SOON1/cancel", ""), 409, `coupon "SOON1" is Expired; only an Issued coupon can be cancelled`, nil)
		})
		t.Run("coupon errors", func(t *testing.T) {
			mustProblem(t, call("POST", coupons, `{"code":"sl75EV"}`), 409, `coupon "sl75EV" already exists`, nil)
			mustProblem(t, call("POST", coupons, `{"code":"N1","locationIds":["NOPE"]}`), 404, `location "NOPE" of company "demo-company" not found`, nil)
			mustProblem(t, call("POST", coupons, `{"code":"N1","userId":"nobody"}`), 404, `loyalty user "nobody" not found`, nil)
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/companies/nope/coupons", `{"code":"N1"}`), 404, `company "nope" not found`, nil)
			mustProblem(t, call("GET", coupons+"/N1", ""), 404, `coupon "N1" not found`, nil)
			mustProblem(t, call("POST", coupons, `{"code":"N1","status":"Expired"}`), 400, "*",
				map[string][]string{"status": {"The status field must be Issued, Redeemed or Cancelled (Expired is computed from availableUntil)."}})
			mustProblem(t, call("POST", coupons, `{"code":"N1","rewardProvider":"Acme"}`), 400, "*",
				map[string][]string{"rewardProvider": {"The rewardProvider field must be one of TwoReward, PJM, Dummy."}})
			mustProblem(t, call("POST", coupons, `{"code":"N1","pictureUrl":"ftp://x"}`), 400, "*",
				map[string][]string{"pictureUrl": {"The pictureUrl field must be an absolute http or https URL of at most 2048 bytes."}})
			mustProblem(t, call("POST", coupons, `{"code":"N1","availableUntil":"tomorrow"}`), 400, "*",
				map[string][]string{"availableUntil": {"The availableUntil field must be a date-time (ISO 8601)."}})
			mustProblem(t, call("POST", coupons, `{"code":"N1","color":"red"}`), 400, "The property 'color' is not allowed.", map[string][]string{"color": {"The property 'color' is not allowed."}})
			mustProblem(t, s.do(t, req{Method: "POST", Path: coupons, Token: admin, ContentType: "application/xml", Body: `<c><code>N1</code></c>`}), 415, "Send the body as application/json.", nil)
			mustProblem(t, call("POST", coupons, `{"code":"`+strings.Repeat("x", 70<<10)+`"}`), 413, "*", nil)
			mustProblem(t, s.call(t, "", "GET", coupons+"/Sl75Ev", ""), 401, "*", nil)
			mustProblem(t, s.call(t, pos, "GET", coupons+"/Sl75Ev", ""), 403, "*", nil)
			mustProblem(t, s.call(t, pos, "POST", coupons+"/Sl75Ev/cancel", ""), 403, "*", nil)
		})
		t.Run("bulk issue", func(t *testing.T) {
			imp := coupons + "/import"
			mustCreated(t, call("POST", imp, `{"items":[{"code":"BULK1"},{"code":"BULK2","email":"Bulk@Example.com","locationIds":["LOC456"]}]}`), `{"data":{"createdCount":2}}`)
			mustBody(t, s.pos(t, pos, searchPath, `{"email":"bulk@example.COM"}`),
				searchBody([]string{`{"rewardProvider":"TwoReward","code":"BULK2","name":null,"title":null,"pictureUrl":null,"availableUntil":null,"status":"Issued","info":null,"promotionId":null}`}, 1, 20, 1, "Accepted"))
			// All or nothing: BULK3 is not stored when a later item fails.
			mustProblem(t, call("POST", imp, `{"items":[{"code":"BULK3"},{"code":"bulk1"}]}`), 409, `Item 2: coupon "bulk1" already exists`, nil)
			mustProblem(t, call("POST", imp, `{"items":[{"code":"BULK3"},{"code":"BULK4","rewardProvider":"X"}]}`), 400, "*",
				map[string][]string{"items[1].rewardProvider": {"The rewardProvider field must be one of TwoReward, PJM, Dummy."}})
			// Every bad item is named, not only the first.
			mustProblem(t, call("POST", imp, `{"items":[{"code":"BULK3","status":"Used"},{"code":"BULK4"},{"code":"","rewardProvider":"X"}]}`), 400,
				"The status field must be Issued, Redeemed or Cancelled (Expired is computed from availableUntil). The code field is required. The rewardProvider field must be one of TwoReward, PJM, Dummy.",
				map[string][]string{"items[0].status": {"The status field must be Issued, Redeemed or Cancelled (Expired is computed from availableUntil)."},
					"items[2].code": {"The code field is required."}, "items[2].rewardProvider": {"The rewardProvider field must be one of TwoReward, PJM, Dummy."}})
			mustProblem(t, call("POST", imp, `{"items":[{"code":"BULK3"},{"code":"BULK4","bad":1}]}`), 400, "*",
				map[string][]string{"items[1].bad": {"The property 'items[1].bad' is not allowed."}})
			mustProblem(t, call("POST", imp, `{"items":[{"code":"BULK3"},{"code":"BULK4","locationIds":["NOPE"]}]}`), 404, `Item 2: location "NOPE" of company "demo-company" not found`, nil)
			mustProblem(t, call("POST", imp, `{"items":[]}`), 400, "*", map[string][]string{"items": {"The items field must hold at least one coupon."}})
			mustProblem(t, call("GET", coupons+"/BULK3", ""), 404, `coupon "BULK3" not found`, nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: imp, Token: admin, ContentType: "text/xml", Body: `<x/>`}), 415, "Send the body as application/json.", nil)
			mustProblem(t, s.call(t, pos, "POST", imp, `{"items":[]}`), 403, "*", nil)
			// A batch may exceed the ordinary body cap (64 KiB), not 100,000 items.
			var b strings.Builder
			b.WriteString(`{"items":[`)
			for i := range 4000 {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`{"code":"MANY-` + strconv.Itoa(i) + `"}`)
			}
			b.WriteString(`]}`)
			if b.Len() <= 64<<10 {
				t.Fatalf("batch of %d bytes does not exceed the ordinary cap", b.Len())
			}
			mustCreated(t, call("POST", imp, b.String()), `{"data":{"createdCount":4000}}`)
			mustProblem(t, call("POST", imp, `{"items":[`+strings.Repeat(`{"code":"x"},`, 100_000)+`{"code":"y"}]}`), 413,
				"A batch holds at most 100000 coupons; split the file.", nil)
		})
		t.Run("loyalty users", func(t *testing.T) {
			userJSON := func(first string, stamps, points int, created, updated string) string {
				return `{"data":{"posSystemId":"clover","posCompanyId":"demo-company","id":"u-1","firstName":"` + first + `","lastName":"Tester","gender":"X",` +
					`"phone":"+1 555 000 1111","email":"u1@example.com","stamps":` + strconv.Itoa(stamps) + `,"points":` + strconv.Itoa(points) +
					`,"createdAt":"` + created + `","updatedAt":"` + updated + `"}}`
			}
			created := s.clock.Now().UTC().Format(time.RFC3339)
			mustCreated(t, call("POST", users, `{"id":"u-1","firstName":"Una","lastName":"Tester","gender":"X","phone":"+1 555 000 1111","email":"u1@example.com","stamps":2}`),
				userJSON("Una", 2, 0, created, created))
			mustBody(t, call("GET", users+"/u-1", ""), userJSON("Una", 2, 0, created, created))
			s.clock.Advance(time.Minute)
			updated := s.clock.Now().UTC().Format(time.RFC3339)
			mustBody(t, call("PATCH", users+"/u-1", `{"firstName":"Uma","stampsDelta":-2,"pointsDelta":15}`), userJSON("Uma", 0, 15, created, updated))
			mustProblem(t, call("PATCH", users+"/u-1", `{"firstName":"Ida","stampsDelta":-1,"pointsDelta":50}`), 409, "Loyalty user u-1 has 0 stamps: taking 1 would leave -1, below 0. Nothing was changed.", nil)
			mustBody(t, call("GET", users+"/u-1", ""), userJSON("Uma", 0, 15, created, updated))
			mustBody(t, s.pos(t, pos, usersPath, `{"posLocationId":"LOC123","keyword":"5550001111"}`),
				`{"data":{"users":[{"id":"u-1","firstName":"Uma","lastName":"Tester","gender":"X","phone":"+1 555 000 1111","email":"u1@example.com","stamps":0,"points":15}]}}`)
			// The search follows the rename.
			mustBody(t, s.pos(t, pos, usersPath, `{"posLocationId":"LOC123","keyword":"uma"}`),
				`{"data":{"users":[{"id":"u-1","firstName":"Uma","lastName":"Tester","gender":"X","phone":"+1 555 000 1111","email":"u1@example.com","stamps":0,"points":15}]}}`)
			mustBody(t, s.pos(t, pos, usersPath, `{"posLocationId":"LOC123","keyword":"una"}`), `{"data":{"users":[]}}`)
			mustProblem(t, call("POST", users, `{"id":"john-doe"}`), 409, `loyalty user "john-doe" already exists`, nil)
			mustProblem(t, call("GET", users+"/nobody", ""), 404, `loyalty user "nobody" not found`, nil)
			mustProblem(t, call("PATCH", users+"/nobody", `{"pointsDelta":1}`), 404, `loyalty user "nobody" not found`, nil)
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/companies/nope/loyalty-users", `{"id":"x"}`), 404, `company "nope" not found`, nil)
			mustProblem(t, call("POST", users, `{"id":"u-2","stamps":-1}`), 400, "*", map[string][]string{"stamps": {"The stamps field must not be negative."}})
			mustProblem(t, call("POST", users, `{"id":"u-2","email":"not-an-email"}`), 400, "*",
				map[string][]string{"email": {"The email field must be an e-mail address (name@domain) of at most 254 bytes."}})
			mustProblem(t, call("PATCH", users+"/u-1", `{"phone":"call me"}`), 400, "*",
				map[string][]string{"phone": {"The phone field must be a phone number of at most 32 characters: digits, spaces and + - ( ) . /, with at least 3 digits."}})
			mustProblem(t, call("PATCH", users+"/u-1", `{"points":5}`), 400, "The property 'points' is not allowed.", map[string][]string{"points": {"The property 'points' is not allowed."}})
			mustProblem(t, call("PATCH", users+"/u-1", `{"pointsDelta":"5"}`), 400, "*", map[string][]string{"pointsDelta": {"The pointsDelta field must be an integer."}})
			mustProblem(t, call("PATCH", users+"/u-1", `{"pointsDelta":`+strings.Repeat("9", 12)+`}`), 400, "*", map[string][]string{"pointsDelta": {"The pointsDelta field must be an integer."}})
			mustProblem(t, s.do(t, req{Method: "PATCH", Path: users + "/u-1", Token: admin, ContentType: "text/xml", Body: `<x/>`}), 415, "Send the body as application/json.", nil)
			mustProblem(t, call("POST", users, `{"id":"`+strings.Repeat("x", 70<<10)+`"}`), 413, "*", nil)
			mustProblem(t, s.call(t, pos, "GET", users+"/u-1", ""), 403, "*", nil)
			mustProblem(t, s.call(t, "", "GET", users+"/u-1", ""), 401, "*", nil)
		})
		// Last: the restarted server belongs to this subtest.
		t.Run("demo data survives a reload", func(t *testing.T) {
			mustStatus(t, call("POST", coupons+"/10OFFmq8kl8/redeem", ""), 200)
			mustStatus(t, call("PATCH", users+"/jane-doe", `{"pointsDelta":5}`), 200)
			s.restart(t) // loads the demo data set again
			admin, pos = s.adminToken(t), s.posToken(t)
			mustBody(t, s.pos(t, pos, lookupPath, `{"posLocationId":"LOC123","code":"10OFFmq8kl8"}`),
				lookupBody(strings.Replace(demoCouponJSON["10OFFmq8kl8"], `"status":"Issued"`, `"status":"Redeemed"`, 1)))
			mustBody(t, s.pos(t, pos, usersPath, `{"posLocationId":"LOC123","keyword":"jane"}`),
				strings.Replace(usersBody("jane-doe"), `"points":45`, `"points":50`, 1))
			mustBody(t, s.pos(t, pos, lookupPath, `{"posLocationId":"LOC123","code":"Sl75Ev"}`), lookupBody(demoCouponJSON["Sl75Ev"]))
		})
	})
}
