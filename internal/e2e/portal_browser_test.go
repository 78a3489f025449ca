package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/posgate/posgate/internal/demo"
)

// The portal (docs/api.md §23) in headless Chromium. With
// POSGATE_SCREENSHOTS set to a directory (docs/img), the SQLite run of
// TestPortalInBrowser saves the README's screenshots there.

// screenshot saves the page as dir/name.png when dir is not empty.
func (b *browser) screenshot(dir, name string) {
	b.t.Helper()
	if dir == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// portalSignIn opens path of the portal, which leads to the sign-in page,
// signs in there and waits to be back at path.
func (b *browser) portalSignIn(base, path, email, password, shots string) {
	t := b.t
	t.Helper()
	b.navigate(base + path)
	b.waitFor("the sign-in form", 10*time.Second, `location.pathname === "/Account/Login" && document.querySelector("#signin") ? "yes" : "no"`)
	b.screenshot(shots, "portal-sign-in")
	if err := chromedp.Do(b.ctx, chromedp.SendKeys("#email", email), chromedp.SendKeys("#password", password), chromedp.Click("#signin")); err != nil {
		t.Fatalf("signing in: %v", err)
	}
	b.waitFor("the portal page", 15*time.Second, `location.pathname === "`+path+`" && document.readyState === "complete" && document.querySelector("#who") ? "yes" : "no"`)
}

// fill sets form fields by script (selector → value), which, unlike
// typing into nodes found earlier, cannot race a document being replaced.
func (b *browser) fill(fields ...string) {
	b.t.Helper()
	for i := 0; i+1 < len(fields); i += 2 {
		got := b.eval("fill "+fields[i], `(function(){const e=document.querySelector(`+strconv.Quote(fields[i])+`); if(!e){return "missing"} e.value=`+strconv.Quote(fields[i+1])+`; return e.value})()`)
		if got != fields[i+1] {
			b.t.Fatalf("filling %s with %q: %q", fields[i], fields[i+1], got)
		}
	}
}

// text is the page's text.
func (b *browser) text() string {
	b.t.Helper()
	return b.eval("the page text", `document.body ? document.body.innerText : ""`)
}

// submitForm clicks a submit button and waits for the answer's document.
func (b *browser) submitForm(button string) {
	b.t.Helper()
	// The mark is on the document: the upload form's script writes its
	// answer into the same window.
	b.eval("mark the page", `document.documentElement.dataset.submitted = "yes"; ""`)
	if got := b.eval("click "+button, `(function(){const e=document.querySelector(`+strconv.Quote(button)+`); if(!e){return "missing"} e.click(); return "ok"})()`); got != "ok" {
		b.t.Fatalf("clicking %s: %s", button, got)
	}
	b.waitFor("the answer", 15*time.Second, `document.documentElement && !document.documentElement.dataset.submitted && document.readyState === "complete" && document.querySelector("h1") ? "yes" : "no"`)
}

// shown is the message of the page's notice or error ("" for none).
func (b *browser) shown(id string) string {
	return b.eval(id, `(document.querySelector("#`+id+`") || {innerText: ""}).innerText.trim()`)
}

// TestPortalInBrowser is what the README shows a newcomer: open /portal,
// sign in, register a terminal, and the terminal works at the POS
// (startInteraction answers Accepted); disabled in the portal, it is
// answered Disabled. A form with a bad terminal changes nothing and says
// why. The audit log page shows the portal's change beside one made
// through the API and one through the CLI, with who and what.
func TestPortalInBrowser(t *testing.T) {
	chrome := chromium(t)
	bin, err := posgateBinary()
	if err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, dsn string) {
		shots := ""
		if dir := os.Getenv("POSGATE_SCREENSHOTS"); dir != "" && !strings.HasPrefix(dsn, "postgres") {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			shots = dir
		}
		s := start(t, dsn)
		pos := s.posToken(t)
		// A sale of the last hour, for the dashboard's chart.
		r := s.do(t, startReq(pos, "TERM-05", "LOC123"))
		session := mustInteraction(t, r, "TERM-05", "LOC123", "Accepted").SessionID
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/pos/clover/transaction", Token: pos, ContentType: "application/json",
			Body: `{"sessionId":"` + *session + `","transactionId":"SALE-P1","terminalId":"TERM-05","posLocationId":"LOC123","transactionType":"Sale",` +
				`"transactionAmount":12.5,"transactionDate":"` + s.clock.Now().UTC().Format(time.RFC3339) + `"}`}), 200)

		b := newBrowser(t, chrome)
		b.portalSignIn(s.base, "/portal", demo.AdminEmail, demo.AdminPassword, shots)
		b.waitFor("the charts", 5*time.Second, `document.querySelector(".chart svg rect.bar") ? "yes" : "no"`)
		for _, chart := range []string{"interactions", "transactions"} {
			bars := b.eval("the chart's bars", `[...document.querySelectorAll(".chart.`+chart+` svg rect.bar")].map(r => r.getAttribute("height")).join(",")`)
			if n := strings.Count(bars, ",") + 1; n != 24 || strings.HasSuffix(bars, ",0") {
				t.Fatalf("the %s chart's bars %s: want 24, the last (this hour's) not empty", chart, bars)
			}
		}
		if txt := b.text(); !strings.Contains(txt, "1 interactions and 1 transactions in the last 24 hours") || !strings.Contains(txt, "LOC456") {
			t.Fatalf("dashboard: %.1500s", txt)
		}
		b.screenshot(shots, "portal-dashboard")

		// A bad terminal id ('#' is not allowed): refused with the reason, nothing registered.
		b.navigate(s.base + "/portal/terminals")
		b.waitFor("the form", 5*time.Second, `document.querySelector("#register") ? "yes" : "no"`)
		b.fill("#location", "clover/LOC123", "#terminalId", "TERM#1")
		b.submitForm("#register")
		if st, e := b.status(), b.shown("error"); st != "400" || !strings.Contains(e, "terminalId") {
			t.Fatalf("a bad terminal id: %s %q", st, e)
		}
		if v := b.eval("the form keeps the input", `document.querySelector("#terminalId").value + "|" + document.querySelector("#location").value`); v != "TERM#1|clover/LOC123" {
			t.Fatalf("the form after the error: %q", v)
		}
		if r := s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/locations/LOC123/terminals", Token: s.adminToken(t)}); strings.Count(string(r.Body), `"terminalId"`) != 3 {
			t.Fatalf("LOC123's terminals after the refused form: %s", r.Body)
		}

		// Register TERM-P1 at LOC123.
		b.fill("#terminalId", "TERM-P1", "#name", "Portal till")
		b.submitForm("#register")
		if n := b.shown("notice"); n != "Terminal TERM-P1 registered at LOC123." {
			t.Fatalf("after registering: %q (error %q)", n, b.shown("error"))
		}
		if got := b.eval("the new row", `(document.querySelector("#terminal-LOC123-TERM-P1") || {innerText: ""}).innerText`); !strings.Contains(got, "Portal till") || !strings.Contains(got, "Active") {
			t.Fatalf("the new terminal's row: %q", got)
		}
		b.screenshot(shots, "portal-terminals")
		mustInteraction(t, s.do(t, startReq(pos, "TERM-P1", "LOC123")), "TERM-P1", "LOC123", "Accepted")

		// Disabled in the portal, the POS gets Disabled.
		b.submitForm("#terminal-LOC123-TERM-P1 button")
		if n := b.shown("notice"); n != "Terminal TERM-P1 is Disabled." {
			t.Fatalf("after disabling: %q", n)
		}
		mustInteraction(t, s.do(t, startReq(pos, "TERM-P1", "LOC123")), "TERM-P1", "LOC123", "Disabled")

		// A change through the API and one through the CLI.
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/admin/v1/pos-systems/clover/locations/LOC456/terminals", Token: s.adminToken(t),
			ContentType: "application/json", Body: `{"terminalId":"TERM-API"}`}), 201)
		// The CLI talks to the server through the operator API (docs/api.md
		// §10): its entry is an API one, told apart by its User-Agent.
		if out, err := exec.Command(bin, "terminal", "register", "TERM-CLI", "--pos", "clover", "--location", "LOC456",
			"--server", s.base, "--client-id", "demo-admin", "--client-secret", "demo-admin-secret").CombinedOutput(); err != nil {
			t.Fatalf("posgate terminal register: %v\n%s", err, out)
		}
		if r := s.do(t, req{Method: "GET", Path: "/admin/v1/audit?targetId=LOC456/TERM-CLI", Token: s.adminToken(t)}); r.Status != 200 ||
			!strings.Contains(string(r.Body), `"userAgent":"posgate-cli/`) {
			t.Fatalf("the CLI's entry: %d %s", r.Status, r.Body)
		}
		b.navigate(s.base + "/portal/audit?targetType=terminal")
		b.waitFor("the entries", 5*time.Second, `document.querySelector("#entries") ? "yes" : "no"`)
		rows := b.eval("the entries", `[...document.querySelectorAll("tr.entry")].map(r => r.dataset.channel + " " + r.dataset.action + " " + r.cells[2].innerText.trim() + " " + r.cells[4].innerText.trim()).join("\n")`)
		want := []string{
			"api terminal.create client demo-admin terminal LOC456/TERM-CLI",
			"api terminal.create client demo-admin terminal LOC456/TERM-API",
			"portal terminal.disable person admin@demo.posgate via portal terminal LOC123/TERM-P1",
			"portal terminal.create person admin@demo.posgate via portal terminal LOC123/TERM-P1",
		}
		if got := strings.Split(rows, "\n"); !slices.Equal(got, want) {
			t.Fatalf("the audit log's entries:\n%s\nwant:\n%s", rows, strings.Join(want, "\n"))
		}
		// Before and after, shown on demand.
		b.eval("open the first portal entry", `document.querySelectorAll("tr.entry")[2].querySelector("summary").click(); ""`)
		if got := b.eval("its before and after", `document.querySelectorAll("tr.entry")[2].querySelector(".diff").innerText`); !strings.Contains(got, `"status": "Active"`) || !strings.Contains(got, `"status": "Disabled"`) {
			t.Fatalf("before and after: %q", got)
		}
		b.screenshot(shots, "portal-audit")

		// A phone-sized screen: the same pages, nothing wider than it.
		if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch)); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/portal", "/portal/terminals", "/portal/people"} {
			b.navigate(s.base + path)
			b.waitFor("the page", 5*time.Second, `document.readyState === "complete" ? "yes" : "no"`)
			if w := b.eval("the page's width", `String(document.documentElement.scrollWidth)`); w != "390" {
				t.Fatalf("%s on a phone is %s px wide, want 390", path, w)
			}
			if path == "/portal/terminals" {
				b.screenshot(shots, "portal-terminals-phone")
			}
		}
	})
}

// TestPortalLocationManager: the demo's location manager of LOC123 sees
// only LOC123 (its terminals, its audit entries), no API clients, and
// gets 404 for another location and for the company, as if they did not
// exist; a terminal posted for LOC456 is refused the same way and made
// nowhere.
func TestPortalLocationManager(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		// An entry the manager must not see.
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/admin/v1/pos-systems/clover/locations/LOC456/terminals/TERM-07/disable", Token: admin}), 200)

		b := newBrowser(t, chrome)
		b.portalSignIn(s.base, "/portal/terminals", demo.ManagerEmail, demo.ManagerPassword, "")
		sections := b.eval("the locations", `[...document.querySelectorAll("section.location")].map(s => s.id).join(",")`)
		options := b.eval("the choices", `[...document.querySelectorAll("#location option")].map(o => o.value).join(",")`)
		if sections != "location-LOC123" || options != ",clover/LOC123" {
			t.Fatalf("the manager's terminals page: sections %q, choices %q", sections, options)
		}
		// The menus and forms offer only what a location manager may use:
		// nothing that belongs to a company as a whole, no company or
		// location to add, and only its own role to give.
		if nav := b.eval("the menu", `[...document.querySelectorAll("#nav a")].map(a => a.innerText.trim()).join(",")`); nav != "Dashboard,Places,Terminals,Transactions,People,Audit log" {
			t.Fatalf("the manager's menu: %q", nav)
		}
		b.navigate(s.base + "/portal/places")
		if forms := b.eval("the places forms", `[...document.querySelectorAll("main form.form")].map(f => f.id).join(",")`); forms != "" {
			t.Fatalf("the manager's places page offers forms %q", forms)
		}
		b.navigate(s.base + "/portal/people")
		if roles := b.eval("the roles", `[...document.querySelectorAll("#role option")].map(o => o.value).join(",")`); roles != "location-manager" {
			t.Fatalf("the manager may give the roles %q", roles)
		}
		b.navigate(s.base + "/portal/coupons")
		if got := b.eval("the coupons page", `(document.querySelector("#no-companies") || {innerText: "missing"}).innerText + "|" + document.querySelectorAll("main form").length`); got != "Your access is limited to some locations, and coupons belong to companies: there is nothing here for you.|0" {
			t.Fatalf("the manager's coupons page: %q", got)
		}
		// A company form made up all the same: refused in plain words.
		b.eval("make a form", `const f = document.createElement("form"); f.method = "post"; f.action = "/portal/companies";
			f.innerHTML = '<input type="hidden" name="csrf" value="' + document.querySelector("input[name=csrf]").value + '"><input name="posSystemId" value="clover"><input name="posCompanyId" value="mine"><button id="forged">x</button>'; document.body.append(f); ""`)
		b.submitForm("#forged")
		if st, e := b.status(), b.shown("error"); st != "403" || e != "Your access is limited to some locations: you cannot register companies." {
			t.Fatalf("a company made up by the manager: %s %q", st, e)
		}
		for path, status := range map[string]string{
			"/portal/locations/clover/LOC456":       "404",
			"/portal/locations/clover/NOPE":         "404",
			"/portal/companies/clover/demo-company": "404",
			"/portal/clients":                       "403",
			"/portal/locations/clover/LOC123":       "200",
		} {
			b.navigate(s.base + path)
			if st := b.status(); st != status {
				t.Errorf("%s: %s, want %s (%q)", path, st, status, b.shown("error"))
			}
		}
		b.navigate(s.base + "/portal/locations/clover/LOC456")
		if e := b.shown("error"); e != `location "LOC456" not found` {
			t.Errorf("LOC456's page says %q", e)
		}

		// A form tampered with to name LOC456.
		b.navigate(s.base + "/portal/terminals")
		b.eval("name LOC456", `const o = document.createElement("option"); o.value = "clover/LOC456"; document.querySelector("#location").append(o); ""`)
		b.fill("#location", "clover/LOC456", "#terminalId", "TERM-X")
		b.submitForm("#register")
		if st, e := b.status(), b.shown("error"); st != "404" || e != `location "LOC456" not found` {
			t.Fatalf("a terminal at LOC456: %s %q", st, e)
		}
		mustStatus(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/locations/LOC456/terminals/TERM-X", Token: admin}), 404)

		// Its own location: registered, and the audit log shows that and
		// nothing of LOC456.
		b.fill("#location", "clover/LOC123", "#terminalId", "TERM-M1")
		b.submitForm("#register")
		if n := b.shown("notice"); n != "Terminal TERM-M1 registered at LOC123." {
			t.Fatalf("the manager's terminal: %q %q", n, b.shown("error"))
		}
		b.navigate(s.base + "/portal/audit")
		rows := b.eval("the entries", `[...document.querySelectorAll("tr.entry")].map(r => r.dataset.channel + " " + r.dataset.action + " " + r.cells[4].innerText.trim()).join("\n")`)
		if rows != "portal terminal.create terminal LOC123/TERM-M1" {
			t.Fatalf("the manager's audit log:\n%s", rows)
		}
	})
}

// TestPortalFormsRefused: a portal form posted without its CSRF token, or
// from a page of another origin (with a valid token copied into it), is
// refused with 403 and changes nothing; so is a post of someone not signed
// in, who is sent to sign in. A link from another origin carrying a notice
// shows none.
func TestPortalFormsRefused(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		absent := func(id string) {
			t.Helper()
			mustStatus(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/locations/LOC123/terminals/" + id, Token: admin}), 404)
		}
		// Not signed in: to the sign-in page, nothing made.
		a := newAgent(t, s)
		r := a.post(t, "/portal/terminals", map[string][]string{"location": {"clover/LOC123"}, "terminalId": {"TERM-N"}}, s.base)
		if r.Status != 303 || r.Header.Get("Location") != "/Account/Login?ReturnUrl=%2Fportal" {
			t.Fatalf("a post without a session: %d %q", r.Status, r.Header.Get("Location"))
		}
		absent("TERM-N")

		b := newBrowser(t, chrome)
		b.portalSignIn(s.base, "/portal/terminals", demo.AdminEmail, demo.AdminPassword, "")
		// Without the CSRF token.
		b.eval("remove the token", `document.querySelector("#register-terminal input[name=csrf]").remove(); ""`)
		b.fill("#location", "clover/LOC123", "#terminalId", "TERM-C")
		b.submitForm("#register")
		if st, e := b.status(), b.shown("error"); st != "403" || e != "The form's CSRF token is missing or wrong; reload the page and try again." {
			t.Fatalf("without the CSRF token: %s %q", st, e)
		}
		absent("TERM-C")

		// From another origin (another port of 127.0.0.1: the same site, so
		// the SameSite=Lax cookies go along), with the right token.
		b.navigate(s.base + "/portal/terminals")
		token := b.eval("the token", `document.querySelector("input[name=csrf]").value`)
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(`<!doctype html><form id="f" method="post" action="` + s.base + `/portal/terminals">` +
				`<input name="csrf" value="` + token + `"><input name="location" value="clover/LOC123"><input name="terminalId" value="TERM-O">` +
				`</form><script>document.getElementById("f").submit()</script>`))
		}))
		defer evil.Close()
		b.navigate(evil.URL)
		b.waitFor("the refusal", 10*time.Second, `location.href.startsWith("`+s.base+`/portal/terminals") && document.querySelector("h1") ? "yes" : "no"`)
		if st, e := b.status(), b.shown("error"); st != "403" || e != "The form was sent from another site (Origin)." {
			t.Fatalf("from another origin: %s %q", st, e)
		}
		absent("TERM-O")

		// A link from another origin cannot make the portal say its words.
		lure := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(`<!doctype html><a id="l" href="` + s.base + `/portal/terminals?done=Your+session+expired%2C+call+us">go</a>` +
				`<script>document.getElementById("l").click()</script>`))
		}))
		defer lure.Close()
		b.navigate(lure.URL)
		b.waitFor("the terminals page", 10*time.Second, `location.href.startsWith("`+s.base+`/portal/terminals") && document.readyState === "complete" && document.querySelector("h1") ? "yes" : "no"`)
		if n := b.shown("notice"); n != "" {
			t.Fatalf("a notice from another origin's link: %q", n)
		}
	})
}

// TestPortalCouponsAndLoyaltyInBrowser: a CSV file of coupons uploaded in
// the portal (sent by the page's script, with its progress bar) issues
// them all; one with a bad row issues none and names the row; a coupon
// found by its code is redeemed; a loyalty user's points are adjusted, and
// a bad number changes nothing.
func TestPortalCouponsAndLoyaltyInBrowser(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		dir := t.TempDir()
		good, bad := filepath.Join(dir, "good.csv"), filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(good, []byte("code,rewardProvider,title\nUP1,PJM,One\nUP2,Dummy,Two\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bad, []byte("code,rewardProvider\nUP3,PJM\nUP4,Nope\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		b := newBrowser(t, chrome)
		b.portalSignIn(s.base, "/portal/coupons", demo.AdminEmail, demo.AdminPassword, "")
		upload := func(file string) {
			t.Helper()
			b.waitFor("the upload form", 5*time.Second, `document.readyState === "complete" && document.querySelector("#coupon-upload") && !document.querySelector("#error") ? "yes" : "no"`)
			if err := chromedp.Do(b.ctx, chromedp.SetUploadFiles("#file", []string{file})); err != nil {
				t.Fatal(err)
			}
			b.submitForm("#coupon-upload button")
		}
		upload(bad)
		if e := b.shown("error"); !strings.Contains(e, "items[1].rewardProvider") {
			t.Fatalf("a bad file: %q", e)
		}
		coupon := "/admin/v1/pos-systems/clover/companies/demo-company/coupons/"
		mustStatus(t, s.do(t, req{Method: "GET", Path: coupon + "UP3", Token: s.adminToken(t)}), 404)
		b.navigate(s.base + "/portal/coupons")
		upload(good)
		if n := b.shown("notice"); n != "2 coupons issued from the file." {
			t.Fatalf("after the upload: %q %q", n, b.shown("error"))
		}
		if v := b.eval("the progress", `String(document.querySelector("#upload-progress") ? document.querySelector("#upload-progress").value : -1)`); v != "0" {
			t.Fatalf("a fresh page's progress bar: %s", v)
		}
		mustStatus(t, s.do(t, req{Method: "GET", Path: coupon + "UP2", Token: s.adminToken(t)}), 200)

		// Find UP1 and redeem it.
		b.navigate(s.base + "/portal/coupons?company=clover/demo-company&code=UP1")
		b.submitForm("#redeem")
		if n := b.shown("notice"); n != "Coupon UP1 is Redeemed." {
			t.Fatalf("after redeeming: %q", n)
		}

		// Loyalty: +5 points; "x" stamps is refused and changes nothing.
		b.navigate(s.base + "/portal/loyalty-users?company=clover/demo-company&user=john-doe")
		b.waitFor("john-doe", 5*time.Second, `document.querySelector("#points") ? "yes" : "no"`)
		before := b.eval("the points", `document.querySelector("#points").innerText`)
		b.fill("#pointsDelta", "5", "#stampsDelta", "x")
		b.submitForm("#adjust button")
		if st, e := b.status(), b.shown("error"); st != "400" || !strings.Contains(e, "stampsDelta") || b.eval("the points", `document.querySelector("#points").innerText`) != before {
			t.Fatalf("a bad adjustment: %s %q", st, e)
		}
		b.eval("clear the stamps", `document.querySelector("#stampsDelta").value = ""; ""`)
		b.submitForm("#adjust button")
		if n, p := b.shown("notice"), b.eval("the points", `document.querySelector("#points").innerText`); n != "Loyalty user john-doe adjusted." || p != "125" || before != "120" {
			t.Fatalf("after adjusting: %q, points %s (before %s)", n, p, before)
		}
	})
}

// TestPortalContentInBrowser: the content page plays the company's slides
// in its preview, shows a new slide as it is typed, adds it, charts the
// impressions per slide, and shows each receipt promotion's QR code (an
// image the browser loads from posgate); a receipt promotion set for
// LOC456 appears with its own.
func TestPortalContentInBrowser(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		b := newBrowser(t, chrome)
		b.portalSignIn(s.base, "/portal/content", demo.AdminEmail, demo.AdminPassword, "")
		b.waitFor("the preview", 5*time.Second, `document.querySelector("#carousel-preview").dataset.current === "welcome" ? "yes" : "no"`)
		// The demo's slides are data: SVG images: each one shows, in the
		// preview and in the list (html/template would write "#ZgotmplZ").
		b.waitFor("the slide images", 5*time.Second, `(function(){const is=[...document.querySelectorAll("#carousel-preview img, img.thumb")];
			return is.length === 6 && is.every(i => i.getAttribute("src").startsWith("data:image/svg+xml;base64,") && i.complete && i.naturalWidth > 0) ? "yes" : "no"})()`)
		if got := b.eval("the bars", `String(document.querySelectorAll(".chart svg rect.bar").length)`); got != "3" {
			t.Fatalf("impressions chart: %s bars, want one per slide", got)
		}
		b.waitFor("the QR code", 5*time.Second, `(function(){const i=document.querySelector("#receipt-LOC123 img.qr"); return i && i.complete && i.naturalWidth > 0 ? "yes" : "no"})()`)

		b.fill("#slideId", "autumn", "#imageUrl", "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=", "#stitle", "Autumn sale")
		b.eval("type", `document.querySelector("#slide-form").dispatchEvent(new Event("input")); ""`)
		if got := b.eval("the live preview", `document.querySelector("#slide-new-preview b").textContent`); got != "Autumn sale" {
			t.Fatalf("the new slide's preview: %q", got)
		}
		b.submitForm("#slide-form button")
		if n := b.shown("notice"); n != "Slide autumn added." {
			t.Fatalf("after adding: %q %q", n, b.shown("error"))
		}
		if got := b.eval("the slides", `[...document.querySelectorAll("#carousel-preview .slide")].map(s => s.dataset.slideId).join(",")`); got != "welcome,coffee,loyalty,autumn" {
			t.Fatalf("the preview's slides: %q", got)
		}

		b.fill("#rlocation", "LOC456", "#primaryText", "See you again", "#targetUrl", "https://example.com/airport")
		b.submitForm("#receipt-form button")
		if n := b.shown("notice"); n != "Receipt promotion of LOC456 saved." {
			t.Fatalf("after the receipt promotion: %q %q", n, b.shown("error"))
		}
		b.waitFor("LOC456's QR code", 5*time.Second, `(function(){const i=document.querySelector("#receipt-LOC456 img.qr"); return i && i.complete && i.naturalWidth > 0 ? "yes" : "no"})()`)
		r := s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/locations/LOC456/receipt-promotion", Token: s.adminToken(t)})
		mustStatus(t, r, 200)
		if !strings.Contains(string(r.Body), `"primaryText":"See you again"`) {
			t.Fatalf("LOC456's receipt promotion: %s", r.Body)
		}
	})
}
