package e2e

import (
	"strings"
	"testing"
	"time"
)

const settingsPath = "/v2/pos/clover/settings/lookup"

// settingsBody is the settings lookup's exact answer. flags are the
// companySettings in the answer's order: isCheckInMenuEnabled,
// isTransactionsEnabled, isPosRulesEnabled, isReceiptPromotionEnabled,
// isCouponsEnabled, isProductsImportEnabled, isCarouselEnabled,
// isPromotionImportEnabled.
func settingsBody(base, company, status string, flags [8]bool) string {
	names := []string{"isCheckInMenuEnabled", "isTransactionsEnabled", "isPosRulesEnabled", "isReceiptPromotionEnabled",
		"isCouponsEnabled", "isProductsImportEnabled", "isCarouselEnabled", "isPromotionImportEnabled"}
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + n + `":`)
		if flags[i] {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	}
	configuration := `{}`
	if status == "Active" {
		configuration = `{"terminalEvents":"` + base + `/pos/clover/location/{posLocationId}/terminal/{terminalId}/events"}`
	}
	return `{"data":{"posCompanyId":"` + company + `","accountStatus":"` + status + `","companySettings":{` + b.String() +
		`},"notificationSettings":{"status":"Disabled","channel":"None","configuration":` + configuration + `}}}`
}

// allServed is the companySettings of an active company with every switch
// on: everything but POS rules, which posgate does not serve.
var allServed = [8]bool{true, true, false, true, true, true, true, true}

// TestSettingsLookup covers the settings lookup (docs/api.md §15.1), POST
// and GET.
func TestSettingsLookup(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		pos := s.posToken(t)
		admin := s.adminToken(t)
		lookup := func(body string) response {
			t.Helper()
			return s.pos(t, pos, settingsPath, body)
		}
		get := func(token, query string) response {
			t.Helper()
			return s.call(t, token, "GET", settingsPath+query, "")
		}
		patch := func(path, body string) {
			t.Helper()
			mustStatus(t, s.call(t, admin, "PATCH", path, body), 200)
		}
		demo := settingsBody(s.base, "demo-company", "Active", allServed)
		notFound := func(company string) string { return settingsBody(s.base, company, "AccountNotFound", [8]bool{}) }

		t.Run("an active company, POST and GET", func(t *testing.T) {
			mustBody(t, lookup(`{"posCompanyId":"demo-company"}`), demo)
			mustBody(t, get(pos, "?posCompanyId=demo-company"), demo)
			// Unknown properties and parameters are ignored.
			mustBody(t, lookup(`{"posCompanyId":"demo-company","posLocationId":"LOC123"}`), demo)
			mustBody(t, get(pos, "?posCompanyId=demo-company&x=1"), demo)
			for _, ct := range []string{"application/xml", "text/xml"} {
				mustBody(t, s.do(t, req{Method: "POST", Path: settingsPath, Token: pos, ContentType: ct,
					Body: `<SettingsLookupDto><posCompanyId>demo-company</posCompanyId></SettingsLookupDto>`}), demo)
			}
			q := req{Method: "GET", Path: settingsPath + "?posCompanyId=demo-company", Token: pos, Header: map[string]string{"Accept": "text/plain"}}
			r := s.do(t, q)
			mustBody(t, r, demo)
			if ct := r.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Fatalf("content type %q", ct)
			}
		})
		t.Run("unknown companies", func(t *testing.T) {
			mustBody(t, lookup(`{"posCompanyId":"nope"}`), notFound("nope"))
			mustBody(t, get(pos, "?posCompanyId=nope"), notFound("nope"))
			// Ids are case-sensitive.
			mustBody(t, get(pos, "?posCompanyId=Demo-Company"), notFound("Demo-Company"))
			// A company of another POS system is not this one's.
			mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems", `{"id":"pax","name":"PAX"}`), 201)
			mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/pax/companies", `{"posCompanyId":"pax-only"}`), 201)
			mustBody(t, lookup(`{"posCompanyId":"pax-only"}`), notFound("pax-only"))
		})
		t.Run("restricted client", func(t *testing.T) {
			other := restrictedClient(t, s, admin) // sees other-co only
			mustBody(t, s.pos(t, other, settingsPath, `{"posCompanyId":"demo-company"}`), notFound("demo-company"))
			mustBody(t, get(other, "?posCompanyId=demo-company"), notFound("demo-company"))
			mustBody(t, get(other, "?posCompanyId=other-co"), settingsBody(s.base, "other-co", "Active", allServed))
			mustBody(t, get(pos, "?posCompanyId=other-co"), settingsBody(s.base, "other-co", "Active", allServed))
		})
		t.Run("feature switches", func(t *testing.T) {
			patch(demoCompanyPath, `{"features":{"transactions":false,"carousel":false}}`)
			mustBody(t, get(pos, "?posCompanyId=demo-company"), settingsBody(s.base, "demo-company", "Active", [8]bool{false, false, false, true, true, true, false, true}))
			patch(demoCompanyPath, `{"features":{"transactions":true,"carousel":true,"coupons":false,"receiptPromotion":false,"promotionImport":false}}`)
			mustBody(t, get(pos, "?posCompanyId=demo-company"), settingsBody(s.base, "demo-company", "Active", [8]bool{true, true, false, false, false, true, true, false}))
			// productsImport alone, off and on: isProductsImportEnabled follows it.
			patch(demoCompanyPath, `{"features":{"coupons":true,"receiptPromotion":true,"promotionImport":true,"productsImport":false}}`)
			mustBody(t, get(pos, "?posCompanyId=demo-company"), settingsBody(s.base, "demo-company", "Active", [8]bool{true, true, false, true, true, false, true, true}))
			patch(demoCompanyPath, `{"features":{"productsImport":true}}`)
			mustBody(t, get(pos, "?posCompanyId=demo-company"), demo)
		})
		t.Run("disabled company", func(t *testing.T) {
			patch(demoCompanyPath, `{"status":"Disabled"}`)
			mustBody(t, lookup(`{"posCompanyId":"demo-company"}`), settingsBody(s.base, "demo-company", "Disabled", [8]bool{}))
			mustBody(t, get(pos, "?posCompanyId=demo-company"), settingsBody(s.base, "demo-company", "Disabled", [8]bool{}))
			patch(demoCompanyPath, `{"status":"Active"}`)
			mustBody(t, get(pos, "?posCompanyId=demo-company"), demo)
		})
		t.Run("bad input", func(t *testing.T) {
			required := map[string][]string{"posCompanyId": {"The posCompanyId field is required."}}
			badID := "The posCompanyId field must be 1-128 printable characters without '/', '\\', '?', '#', '%' or surrounding spaces."
			for _, body := range []string{`{}`, `{"posCompanyId":null}`, `{"posCompanyId":""}`, `{"company":"demo-company"}`} {
				mustProblem(t, lookup(body), 400, required["posCompanyId"][0], required)
			}
			for _, query := range []string{"", "?posCompanyId=", "?posCompanyID=demo-company"} {
				mustProblem(t, get(pos, query), 400, required["posCompanyId"][0], required)
			}
			for _, id := range []string{"a/b", " demo-company", strings.Repeat("x", 129), "tab\there"} {
				mustProblem(t, s.pos(t, pos, settingsPath, `{"posCompanyId":"`+strings.ReplaceAll(id, "\t", `\t`)+`"}`), 400, badID,
					map[string][]string{"posCompanyId": {badID}})
			}
			mustProblem(t, get(pos, "?posCompanyId=a%2Fb"), 400, badID, map[string][]string{"posCompanyId": {badID}})
			twice := "The posCompanyId parameter is given more than once."
			mustProblem(t, get(pos, "?posCompanyId=demo-company&posCompanyId=other-co"), 400, twice, map[string][]string{"posCompanyId": {twice}})
			mustProblem(t, lookup(`{"posCompanyId":7}`), 400, "The posCompanyId field must be a string.",
				map[string][]string{"posCompanyId": {"The posCompanyId field must be a string."}})
			mustProblem(t, lookup(`{"posCompanyId":"a","posCompanyId":"b"}`), 400, "*",
				map[string][]string{"posCompanyId": {"The property 'posCompanyId' is given more than once."}})
			mustProblem(t, lookup(`["demo-company"]`), 400, "*", map[string][]string{"$": {"The request body must be a JSON object."}})
			mustProblem(t, s.do(t, req{Method: "POST", Path: settingsPath, Token: pos, ContentType: "application/xml",
				Body: `<!DOCTYPE x [<!ENTITY e "demo-company">]><x><posCompanyId>&e;</posCompanyId></x>`}), 400, "*",
				map[string][]string{"$": {"The request body is not valid XML: DOCTYPE and entity declarations are not allowed."}})
			mustProblem(t, lookup(`{"posCompanyId":"`+strings.Repeat("x", 70<<10)+`"}`), 413, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: settingsPath, Token: pos, ContentType: "text/plain", Body: `{"posCompanyId":"demo-company"}`}), 415, "*", nil)
		})
		t.Run("401 403 405", func(t *testing.T) {
			mustProblem(t, s.call(t, "", "POST", settingsPath, `{"posCompanyId":"demo-company"}`), 401, "*", nil)
			mustProblem(t, get("", "?posCompanyId=demo-company"), 401, "*", nil)
			mustProblem(t, get("not-a-token", "?posCompanyId=demo-company"), 401, "*", nil)
			mustProblem(t, get(admin, "?posCompanyId=demo-company"), 403, "*", nil)
			mustProblem(t, s.pos(t, admin, settingsPath, `{"posCompanyId":"demo-company"}`), 403, "*", nil)
			mustProblem(t, s.call(t, pos, "GET", "/v2/pos/pax/settings/lookup?posCompanyId=pax-only", ""), 403,
				"The access token belongs to POS system 'clover'; this path is of POS system 'pax'.", nil)
			// Authentication comes before the body and the query.
			mustProblem(t, get(admin, ""), 403, "*", nil)
			r := s.do(t, req{Method: "PUT", Path: settingsPath, Token: pos, Undocumented: true})
			mustProblem(t, r, 405, "*", nil)
			if r.Header.Get("Allow") != "GET, POST" {
				t.Fatalf("Allow %q", r.Header.Get("Allow"))
			}
		})
	})
}

func activePath(location string) string { return "/pos/clover/coupon/active/locationId/" + location }

// TestActiveCoupons covers the active coupons of a location (docs/api.md
// §15.2).
func TestActiveCoupons(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		pos := s.posToken(t)
		admin := s.adminToken(t)
		list := func(token, location, query string) response {
			t.Helper()
			return s.call(t, token, "GET", activePath(location)+query, "")
		}
		call := func(method, path, body string) {
			t.Helper()
			q := req{Method: method, Path: path, Token: admin, Body: body}
			if body != "" {
				q.ContentType = "application/json"
			}
			if r := s.request(t, q); r.Status != 200 && r.Status != 201 {
				t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
			}
		}
		open := func(code, until string) string {
			return `{"rewardProvider":"TwoReward","code":"` + code + `","name":null,"title":null,"pictureUrl":null,"availableUntil":` + until + `,"status":"Issued","info":null,"promotionId":null}`
		}
		sl75 := demoCouponJSON["Sl75Ev"]

		// The demo's only coupon without an owner is Sl75Ev, usable everywhere.
		mustBody(t, list(pos, "LOC123", ""), searchBody([]string{sl75}, 1, 20, 1, "Accepted"))
		mustBody(t, list(pos, "LOC456", ""), searchBody([]string{sl75}, 1, 20, 1, "Accepted"))

		coupons := demoCompanyPath + "/coupons"
		soon := s.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		call("POST", coupons, `{"code":"ACT-B"}`)
		call("POST", coupons, `{"code":"act-a","locationIds":["LOC456"]}`)
		call("POST", coupons, `{"code":"ACT-SOON","availableUntil":"`+soon+`"}`)
		call("POST", coupons, `{"code":"ACT-OLD","availableUntil":"2020-01-01T00:00:00Z"}`)
		call("POST", coupons, `{"code":"ACT-RED","status":"Redeemed"}`)
		call("POST", coupons, `{"code":"ACT-GONE"}`)
		call("POST", coupons+"/act-gone/cancel", "")
		call("POST", coupons, `{"code":"ACT-USER","userId":"jane-doe"}`)
		call("POST", coupons, `{"code":"ACT-MAIL","email":"guest@example.com"}`)
		call("POST", coupons, `{"code":"ACT-TEL","phone":"+1 555 0100"}`)
		actB, actA, actSoon := open("ACT-B", "null"), open("act-a", "null"), open("ACT-SOON", `"`+soon+`"`)
		at123 := []string{actB, actSoon, sl75}
		at456 := []string{actA, actB, actSoon, sl75}

		t.Run("owned, expired, redeemed, cancelled and other locations' coupons are left out", func(t *testing.T) {
			mustBody(t, list(pos, "LOC123", ""), searchBody(at123, 1, 20, 3, "Accepted"))
			mustBody(t, list(pos, "LOC456", ""), searchBody(at456, 1, 20, 4, "Accepted"))
			// Query parameters other than the page are ignored.
			mustBody(t, list(pos, "LOC456", "?posCompanyId=x"), searchBody(at456, 1, 20, 4, "Accepted"))
		})
		t.Run("paging", func(t *testing.T) {
			mustBody(t, list(pos, "LOC456", "?pageSize=2"), searchBody(at456[:2], 1, 2, 4, "Accepted"))
			mustBody(t, list(pos, "LOC456", "?page=2&pageSize=2"), searchBody(at456[2:], 2, 2, 4, "Accepted"))
			mustBody(t, list(pos, "LOC456", "?page=2&pageSize=3"), searchBody(at456[3:], 2, 3, 4, "Accepted"))
			mustBody(t, list(pos, "LOC456", "?page=3&pageSize=2"), searchBody(nil, 3, 2, 4, "Accepted"))
			mustBody(t, list(pos, "LOC456", "?page=21474836&pageSize=100"), searchBody(nil, 21474836, 100, 4, "Accepted"))
			mustBody(t, list(pos, "LOC456", "?page=4&pageSize=1"), searchBody(at456[3:], 4, 1, 4, "Accepted"))
			pageMsg := "The page parameter must be an integer from 1 to 21474836."
			sizeMsg := "The pageSize parameter must be an integer from 1 to 100."
			for _, bad := range []string{"0", "-1", "x", "1.5", "", "21474837"} {
				mustProblem(t, list(pos, "LOC456", "?page="+bad), 400, pageMsg, map[string][]string{"page": {pageMsg}})
			}
			for _, bad := range []string{"0", "101", "abc", ""} {
				mustProblem(t, list(pos, "LOC456", "?pageSize="+bad), 400, sizeMsg, map[string][]string{"pageSize": {sizeMsg}})
			}
			mustProblem(t, list(pos, "LOC456", "?page=0&pageSize=0"), 400, pageMsg+" "+sizeMsg, map[string][]string{"page": {pageMsg}, "pageSize": {sizeMsg}})
			// The query is checked before the location (docs/api.md §2.7).
			mustProblem(t, list(pos, "NOPE", "?page=0"), 400, pageMsg, map[string][]string{"page": {pageMsg}})
		})
		t.Run("another company's coupons", func(t *testing.T) {
			other := restrictedClient(t, s, admin) // other-co with OTHER-1, and a client that sees only it
			otherCoupons := "/admin/v1/pos-systems/clover/companies/other-co/coupons"
			call("POST", otherCoupons, `{"code":"ACT-C"}`)
			call("POST", otherCoupons, `{"code":"act-b"}`)
			mustBody(t, list(pos, "LOC123", ""), searchBody(at123, 1, 20, 3, "Accepted"))
			mustBody(t, list(pos, "OTHER-1", ""), searchBody([]string{open("act-b", "null"), open("ACT-C", "null")}, 1, 20, 2, "Accepted"))
			mustBody(t, list(other, "OTHER-1", ""), searchBody([]string{open("act-b", "null"), open("ACT-C", "null")}, 1, 20, 2, "Accepted"))
			mustProblem(t, list(other, "LOC123", ""), 404, "Location 'LOC123' is not registered.", nil)
			mustProblem(t, list(pos, "NOPE", ""), 404, "Location 'NOPE' is not registered.", nil)
			mustProblem(t, list(pos, "loc123", ""), 404, "Location 'loc123' is not registered.", nil)
		})
		t.Run("disabled", func(t *testing.T) {
			disabled := searchBody(nil, 1, 20, 0, "Disabled")
			call("PATCH", demoCompanyPath, `{"features":{"coupons":false}}`)
			mustBody(t, list(pos, "LOC123", ""), disabled)
			mustBody(t, list(pos, "LOC456", "?page=2&pageSize=5"), searchBody(nil, 2, 5, 0, "Disabled"))
			call("PATCH", demoCompanyPath, `{"features":{"coupons":true}}`)
			call("PATCH", "/admin/v1/pos-systems/clover/locations/LOC123", `{"status":"Disabled"}`)
			mustBody(t, list(pos, "LOC123", ""), disabled)
			mustBody(t, list(pos, "LOC456", ""), searchBody(at456, 1, 20, 4, "Accepted"))
			call("PATCH", "/admin/v1/pos-systems/clover/locations/LOC123", `{"status":"Active"}`)
			call("PATCH", demoCompanyPath, `{"status":"Disabled"}`)
			mustBody(t, list(pos, "LOC456", ""), disabled)
			call("PATCH", demoCompanyPath, `{"status":"Active"}`)
			mustBody(t, list(pos, "LOC123", ""), searchBody(at123, 1, 20, 3, "Accepted"))
		})
		t.Run("401 403 405", func(t *testing.T) {
			mustProblem(t, list("", "LOC123", ""), 401, "*", nil)
			mustProblem(t, list("not-a-token", "LOC123", ""), 401, "*", nil)
			mustProblem(t, list(admin, "LOC123", ""), 403, "*", nil)
			mustProblem(t, s.call(t, pos, "GET", "/pos/pax/coupon/active/locationId/LOC123", ""), 403, "The access token belongs to POS system 'clover'; this path is of POS system 'pax'.", nil)
			r := s.do(t, req{Method: "POST", Path: activePath("LOC123"), Token: pos, ContentType: "application/json", Body: `{}`, Undocumented: true})
			mustProblem(t, r, 405, "*", nil)
			if r.Header.Get("Allow") != "GET" {
				t.Fatalf("Allow %q", r.Header.Get("Allow"))
			}
		})
		// Last: it moves the clock past ACT-SOON's end.
		t.Run("a coupon leaves the list when it expires or is redeemed", func(t *testing.T) {
			s.clock.Advance(time.Hour)
			mustBody(t, list(s.posToken(t), "LOC123", ""), searchBody(at123, 1, 20, 3, "Accepted")) // availableUntil itself is still valid
			s.clock.Advance(time.Second)
			pos := s.posToken(t) // the old tokens have expired
			admin = s.adminToken(t)
			mustBody(t, list(pos, "LOC123", ""), searchBody([]string{actB, sl75}, 1, 20, 2, "Accepted"))
			call("POST", coupons+"/act-b/redeem", "")
			mustBody(t, list(pos, "LOC123", ""), searchBody([]string{sl75}, 1, 20, 1, "Accepted"))
		})
	})
}
