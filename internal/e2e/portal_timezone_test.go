package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/demo"
)

// TestPortalTimeZonesInBrowser: the portal's company and location pages
// set the time zone; a location without one shows its company's; an
// unknown zone is refused with the reason and changes nothing; a location
// added on the places page takes its zone from the form.
func TestPortalTimeZonesInBrowser(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		zoneOf := func(path string) string {
			t.Helper()
			r := s.do(t, req{Method: "GET", Path: path, Token: admin})
			mustStatus(t, r, 200)
			return r.JSON(t)["data"].(map[string]any)["timeZone"].(string)
		}
		b := newBrowser(t, chrome)
		b.portalSignIn(s.base, "/portal", demo.AdminEmail, demo.AdminPassword, "")

		// An unknown zone: refused, the form keeps it, nothing stored.
		b.navigate(s.base + "/portal/locations/clover/LOC456")
		b.waitFor("the settings", 5*time.Second, `document.querySelector("#location-settings") ? "yes" : "no"`)
		if z := b.shown("zone"); z != "UTC" {
			t.Fatalf("LOC456's zone before: %q", z)
		}
		b.fill("#timeZone", "Europe/Berlinn")
		b.submitForm("#location-settings button")
		if st, e := b.status(), b.shown("error"); st != "400" || !strings.Contains(e, `timeZone: The timeZone field must be an IANA time zone name such as Europe/Berlin or America/New_York (or empty for none); "Europe/Berlinn" is not one.`) {
			t.Fatalf("an unknown zone: %s %q", st, e)
		}
		if z := zoneOf("/admin/v1/pos-systems/clover/locations/LOC456"); z != "" {
			t.Fatalf("LOC456's zone after the refused form: %q", z)
		}

		// A known one.
		b.fill("#timeZone", "Europe/Berlin")
		b.submitForm("#location-settings button")
		if n := b.shown("notice"); n != "Location saved." {
			t.Fatalf("after saving: %q (error %q)", n, b.shown("error"))
		}
		if z, v := b.shown("zone"), b.eval("the field", `document.querySelector("#timeZone").value`); z != "Europe/Berlin" || v != "Europe/Berlin" {
			t.Fatalf("LOC456's page after saving: %q, field %q", z, v)
		}
		if z := zoneOf("/admin/v1/pos-systems/clover/locations/LOC456"); z != "Europe/Berlin" {
			t.Fatalf("LOC456's zone: %q", z)
		}

		// The company's zone, which LOC123 (none of its own) takes.
		b.navigate(s.base + "/portal/companies/clover/demo-company")
		b.waitFor("the settings", 5*time.Second, `document.querySelector("#company-form") ? "yes" : "no"`)
		b.fill("#timeZone", "America/New_York")
		b.submitForm("#company-form button")
		if n := b.shown("notice"); n != "Company saved." {
			t.Fatalf("after saving the company: %q (error %q)", n, b.shown("error"))
		}
		if z := zoneOf("/admin/v1/pos-systems/clover/companies/demo-company"); z != "America/New_York" {
			t.Fatalf("the company's zone: %q", z)
		}
		b.navigate(s.base + "/portal/locations/clover/LOC123")
		b.waitFor("the settings", 5*time.Second, `document.querySelector("#location-settings") ? "yes" : "no"`)
		if z, v := b.shown("zone"), b.eval("the field", `document.querySelector("#timeZone").value`); z != "America/New_York" || v != "" {
			t.Fatalf("LOC123 takes the company's zone: shown %q, its own %q", z, v)
		}

		// A new location with a zone, from the places page.
		b.navigate(s.base + "/portal/places")
		b.waitFor("the form", 5*time.Second, `document.querySelector("#location-form") ? "yes" : "no"`)
		b.fill("#lcompany", "clover/demo-company", "#lid", "LOC-TYO", "#lname", "Tokyo", "#lzone", "Asia/Tokyo")
		b.submitForm("#location-form button")
		if n := b.shown("notice"); n != "Location LOC-TYO registered." {
			t.Fatalf("after adding: %q (error %q)", n, b.shown("error"))
		}
		if got := b.eval("the new row", `(document.querySelector("#place-clover-LOC-TYO .zone") || {innerText: ""}).innerText`); got != "Asia/Tokyo" {
			t.Fatalf("the new location's zone cell: %q", got)
		}
		if z := zoneOf("/admin/v1/pos-systems/clover/locations/LOC-TYO"); z != "Asia/Tokyo" {
			t.Fatalf("LOC-TYO's zone: %q", z)
		}

		// The catalogue page says which times are local and which UTC.
		res := mustImport(t, s.request(t, importReq(s.posToken(t), "demo-company", "application/json", items(
			`{"id":"TZ-BREAKFAST","name":"Breakfast","productIds":["SKU-CROISSANT"],"promotionResults":[{"promotionType":"Percentage","value":10}],`+
				`"promotionValidities":[{"startDate":"2030-01-01","endDate":"2030-12-31T22:59:59Z","recurrence":{"daysOfWeek":["Saturday","Sunday"],`+
				`"startDate":"2030-01-05T07:00:00","endDate":"2030-01-05T11:00:00"}}]}`))))
		if res.Status != "Completed" {
			t.Fatalf("import %+v", res)
		}
		b.navigate(s.base + "/portal/catalogue")
		b.waitFor("the promotions", 5*time.Second, `document.querySelector("#promotions") ? "yes" : "no"`)
		want := "from 2030-01-01 00:00 local to 2030-12-31 22:59 UTC, Sunday, Saturday 07:00–11:00 local"
		if got := b.eval("the row", `[...document.querySelectorAll("#promotions tr")].filter(r => r.cells[0].innerText === "TZ-BREAKFAST").map(r => r.querySelector(".when").innerText).join("")`); got != want {
			t.Fatalf("the promotion's When: %q, want %q", got, want)
		}
	})
}
