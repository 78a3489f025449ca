package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/posgate/posgate/internal/demo"
)

// browser is one headless Chromium with helpers that fail the test.
type browser struct {
	t   *testing.T
	ctx context.Context
}

func newBrowser(t *testing.T, chrome string) *browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chrome),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-popup-blocking", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	return &browser{t: t, ctx: bctx}
}

func (b *browser) navigate(u string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(u)); err != nil {
		b.t.Fatalf("opening %s: %v", u, err)
	}
}

func (b *browser) eval(what, js string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitFor polls js until it answers "yes" or the time is up. A page that
// is being replaced (a form's post and its redirect) cannot answer for a
// moment: that counts as "not yet", not as a failure.
func (b *browser) waitFor(what string, limit time.Duration, js string) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
		if err == nil && v == "yes" {
			return
		}
		if err != nil && !navigating(err) {
			b.t.Fatalf("%s: %v", what, err)
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out waiting for %s (%v); page: %.2000s", what, err, b.eval("page text", `document.body ? document.body.innerText : ""`))
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// navigating reports whether err is Chromium's answer to an evaluation in
// a page that is being replaced.
func navigating(err error) bool {
	msg := err.Error()
	for _, s := range []string{"Inspected target navigated or closed", "Execution context was destroyed", "Cannot find context with specified id"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// status is the HTTP status of the page now shown.
func (b *browser) status() string {
	b.t.Helper()
	return b.eval("the status", `String(performance.getEntriesByType("navigation")[0].responseStatus)`)
}

// authBlock finds the "Authorize" dialog's block of one flow by its heading,
// e.g. "(OAuth2, implicit)".
func authBlock(heading string) string {
	return `[...document.querySelectorAll(".auth-container")].find(c => { const h = c.querySelector("h4"); return h && h.innerText.includes("` + heading + `") })`
}

// swaggerAuthorize opens /swagger, presses "Authorize" on the flow whose
// block heading holds heading, signs in as email in the window that opens
// and waits until the UI holds the token.
func (b *browser) swaggerAuthorize(base, heading, email, password string) {
	t := b.t
	t.Helper()
	b.navigate(base + "/swagger")
	b.waitFor("the Authorize button", 20*time.Second, `document.querySelector(".btn.authorize") ? "yes" : "no"`)
	b.eval("open the dialog", `document.querySelector(".btn.authorize").click(); ""`)
	block := authBlock(heading)
	b.waitFor("the dialog", 5*time.Second, `(`+block+`) ? "yes" : "no"`)
	// Preconfigured: the client id swagger-ui, the scope service_api.
	if got := b.eval("the flow's settings", `(function(){const c=`+block+`;`+
		`const id=c.querySelector("input[data-name=clientId]"); const sc=c.querySelector("input[data-value=service_api]");`+
		`return (id?id.value:"?")+"|"+(sc?String(sc.checked):"?")})()`); got != "swagger-ui|true" {
		t.Fatalf("%s: client id and scope %q", heading, got)
	}
	popup := chromedp.WaitNewTarget(b.ctx, func(i *target.Info) bool { return i.Type == "page" && i.OpenerID != "" })
	b.eval("press Authorize", `(function(){const c=`+block+`; c.querySelector("button.authorize").click(); return ""})()`)
	var id target.ID
	select {
	case id = <-popup:
	case <-time.After(15 * time.Second):
		t.Fatal("no sign-in window opened")
	}
	pctx, cancelPopup := chromedp.NewContext(b.ctx, chromedp.WithTargetID(id))
	defer cancelPopup()
	if err := chromedp.Do(pctx,
		chromedp.WaitVisible("#email"),
		chromedp.SendKeys("#email", email),
		chromedp.SendKeys("#password", password),
		chromedp.Click("#signin"),
	); err != nil {
		t.Fatalf("signing in in the popup: %v", err)
	}
	// The popup returns to oauth2-redirect.html, hands the token (or the
	// code, which the page exchanges with its verifier) over and closes.
	b.waitFor("the authorized state", 20*time.Second, `(function(){const c=`+block+`; return c && [...c.querySelectorAll("button")].some(b => b.innerText.trim() === "Logout") ? "yes" : "no"})()`)
	b.eval("close the dialog", `[...document.querySelectorAll(".auth-container button")].find(b => b.innerText.trim() === "Close").click(); ""`)
}

const startOp = `document.querySelector("#operations-POS-startInteraction")`

// tryStartInteraction runs "Try it out" on startInteraction (opening it
// the first time) and returns the answer's status and body as shown.
func (b *browser) tryStartInteraction(terminal, location string) (status, body string) {
	t := b.t
	t.Helper()
	if b.eval("is it open", startOp+`.querySelector("textarea.body-param__text") ? "yes" : "no"`) != "yes" {
		b.waitFor("startInteraction", 5*time.Second, startOp+` ? "yes" : "no"`)
		b.eval("expand it", `(function(){const o=`+startOp+`; (o.querySelector(".opblock-summary-control") || o.querySelector(".opblock-summary")).click(); return ""})()`)
		b.waitFor("Try it out", 5*time.Second, startOp+`.querySelector(".try-out__btn") ? "yes" : "no"`)
		b.eval("press Try it out", startOp+`.querySelector(".try-out__btn").click(); ""`)
		b.waitFor("the editable body", 5*time.Second, startOp+`.querySelector("textarea.body-param__text") ? "yes" : "no"`)
		// The request's media type offered first is plain JSON, not
		// application/*+json.
		if ct := b.eval("the default media type", `(function(){const s=`+startOp+`.querySelector(".body-param-content-type select, .content-type-wrapper select"); return s ? s.value : "no media type selector"})()`); ct != "application/json" {
			t.Fatalf("Try it out sends %q by default", ct)
		}
		if err := chromedp.Do(b.ctx, chromedp.SendKeys("#operations-POS-startInteraction input[placeholder='posSystemId']", "clover")); err != nil {
			t.Fatalf("typing the POS system: %v", err)
		}
	}
	// React's inputs take a value through the native setter and an input
	// event.
	want := `{"terminalId":"` + terminal + `","posLocationId":"` + location + `"}`
	b.eval("fill in the body", `(function(){
		const o=`+startOp+`;
		const set=(el,v)=>{const p=Object.getPrototypeOf(el);Object.getOwnPropertyDescriptor(p,"value").set.call(el,v);el.dispatchEvent(new Event("input",{bubbles:true}));el.dispatchEvent(new Event("change",{bubbles:true}));};
		const ct=o.querySelector(".body-param-content-type select, .content-type-wrapper select");
		if(ct){set(ct,"application/json");}
		set(o.querySelector("textarea.body-param__text"),'`+want+`');
		const clear=o.querySelector(".btn-clear"); if(clear){clear.click();}
		return ""})()`)
	if got := b.eval("the request", `(function(){const o=`+startOp+`; return o.querySelector("input[placeholder='posSystemId']").value + "|" + o.querySelector("textarea.body-param__text").value})()`); got != "clover|"+want {
		t.Fatalf("the request as filled in: %q", got)
	}
	time.Sleep(time.Second) // the UI's inputs are debounced
	b.eval("press Execute", startOp+`.querySelector(".btn.execute").click(); ""`)
	b.waitFor("the answer", 15*time.Second, `(function(){const c=`+startOp+`.querySelector(".live-responses-table tr.response .response-col_status"); return c && c.innerText.trim() !== "" ? "yes" : "no"})()`)
	return b.eval("the status", startOp+`.querySelector(".live-responses-table tr.response .response-col_status").innerText.trim()`),
		b.eval("the body", startOp+`.querySelector(".live-responses-table tr.response .response-col_description").innerText`)
}

// TestSwaggerUIInBrowser is what a new user does: open /swagger in
// headless Chromium, press "Authorize" on the authorization code flow
// (PKCE, preconfigured for the swagger-ui client), sign in in the window
// that opens, and "Try it out" on startInteraction, which answers 200 with
// the person's token. posgate serves every file itself: the page works with
// a Content-Security-Policy of 'self' and no network beyond it.
func TestSwaggerUIInBrowser(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		b := newBrowser(t, chrome)
		b.swaggerAuthorize(s.base, "(OAuth2, authorizationCode", demo.AdminEmail, demo.AdminPassword)
		status, body := b.tryStartInteraction("TERM-05", "LOC123")
		if !strings.HasPrefix(status, "200") || !strings.Contains(body, `"posStatus": "Accepted"`) {
			t.Fatalf("Try it out: status %q, body %s", status, body)
		}
	})
}

// TestSwaggerUIImplicitFlowOfALocationManager: the implicit flow in the
// Swagger UI, signed in as the demo's location manager of LOC123: "Try it
// out" at LOC123 answers 200, at LOC456 404 as if it did not exist.
func TestSwaggerUIImplicitFlowOfALocationManager(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		b := newBrowser(t, chrome)
		b.swaggerAuthorize(s.base, "(OAuth2, implicit)", demo.ManagerEmail, demo.ManagerPassword)
		if status, body := b.tryStartInteraction("TERM-05", "LOC123"); !strings.HasPrefix(status, "200") || !strings.Contains(body, `"posStatus": "Accepted"`) {
			t.Fatalf("at LOC123: status %q, body %s", status, body)
		}
		if status, body := b.tryStartInteraction("TERM-07", "LOC456"); !strings.HasPrefix(status, "404") || !strings.Contains(body, "Location 'LOC456' is not registered.") {
			t.Fatalf("at LOC456: status %q, body %s", status, body)
		}
	})
}

// TestSignInFormInBrowser: in Chromium, the sign-in form refuses a post
// without its CSRF token and one from a page of another origin (which
// holds a valid token even), and five wrong passwords lock the account.
func TestSignInFormInBrowser(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		b := newBrowser(t, chrome)
		submit := func(email, password, prepare string) {
			t.Helper()
			b.navigate(s.base + "/Account/Login")
			b.waitFor("the form", 5*time.Second, `document.querySelector("#signin") ? "yes" : "no"`)
			if err := chromedp.Do(b.ctx, chromedp.SendKeys("#email", email), chromedp.SendKeys("#password", password)); err != nil {
				t.Fatal(err)
			}
			b.eval("prepare", prepare+`; window.submitted = true; ""`)
			if err := chromedp.Do(b.ctx, chromedp.Click("#signin")); err != nil {
				t.Fatal(err)
			}
			// The answer is a new document, without the mark.
			b.waitFor("the answer", 10*time.Second, `!window.submitted && document.readyState === "complete" && document.querySelector("h1") ? "yes" : "no"`)
		}
		shown := func() string {
			return b.eval("the error", `(document.querySelector("#error") || {innerText: ""}).innerText`)
		}

		// Without the CSRF token.
		submit(demo.ManagerEmail, demo.ManagerPassword, `document.querySelector("input[name=csrf]").remove()`)
		if st, e := b.status(), shown(); st != "403" || e != "The form's CSRF token is missing or wrong; reload the page and try again." {
			t.Fatalf("without the CSRF token: %s %q", st, e)
		}

		// From another origin (another port of 127.0.0.1: the same site, so
		// the SameSite=Lax cookies go along), with the right token copied.
		b.navigate(s.base + "/Account/Login")
		token := b.eval("the token", `document.querySelector("input[name=csrf]").value`)
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(`<!doctype html><form id="f" method="post" action="` + s.base + `/Account/Login">` +
				`<input name="csrf" value="` + token + `"><input name="email" value="` + demo.ManagerEmail + `">` +
				`<input name="password" value="` + demo.ManagerPassword + `"></form><script>document.getElementById("f").submit()</script>`))
		}))
		defer evil.Close()
		b.navigate(evil.URL)
		b.waitFor("the refusal", 10*time.Second, `location.href.startsWith("`+s.base+`/Account/Login") && document.querySelector("h1") ? "yes" : "no"`)
		if st, e := b.status(), shown(); st != "403" || e != "The form was sent from another site (Origin)." {
			t.Fatalf("from another origin: %s %q", st, e)
		}

		// Five wrong passwords, then even the right one is throttled.
		for i := range 5 {
			submit(demo.ManagerEmail, "not the password", "")
			if st, e := b.status(), shown(); st != "200" || e != "The e-mail address or the password is wrong." {
				t.Fatalf("wrong password %d: %s %q", i+1, st, e)
			}
		}
		submit(demo.ManagerEmail, demo.ManagerPassword, "")
		if st, e := b.status(), shown(); st != "429" || e != "Too many failed sign-ins; try again in 300 s." {
			t.Fatalf("after five wrong passwords: %s %q", st, e)
		}
	})
}
