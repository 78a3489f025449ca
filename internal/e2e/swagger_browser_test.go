package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/posgate/posgate/internal/demo"
)

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
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
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
		defer cancelAlloc()
		bctx, cancelBrowser := chromedp.NewContext(actx)
		defer cancelBrowser()

		eval := func(what, js string) string {
			t.Helper()
			v, err := chromedp.Run(bctx, chromedp.Evaluate[string](js))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return v
		}
		waitFor := func(what string, limit time.Duration, js string) {
			t.Helper()
			deadline := time.Now().Add(limit)
			for eval(what, js) != "yes" {
				if time.Now().After(deadline) {
					t.Fatalf("timed out waiting for %s; page: %.2000s", what, eval("page text", `document.body ? document.body.innerText : ""`))
				}
				time.Sleep(150 * time.Millisecond)
			}
		}

		if err := chromedp.Do(bctx, chromedp.Navigate(s.base+"/swagger")); err != nil {
			t.Fatal(err)
		}
		waitFor("the Authorize button", 20*time.Second, `document.querySelector(".btn.authorize") ? "yes" : "no"`)
		eval("open the dialog", `document.querySelector(".btn.authorize").click(); ""`)
		waitFor("the dialog", 5*time.Second, `document.querySelectorAll(".auth-container").length > 0 ? "yes" : "no"`)
		// The code flow's block: client id prefilled, service_api chosen.
		const codeBlock = `[...document.querySelectorAll(".auth-container")].find(c => c.innerText.includes("authorizationCode"))`
		if got := eval("the code flow block", `(function(){const c=`+codeBlock+`; if(!c) return "none";`+
			`const id=c.querySelector("input[data-name=clientId]"); const sc=c.querySelector("input#service_api-authorizationCode-checkbox-ImplicitAuth, input[id^='service_api']");`+
			`return (id?id.value:"?")+"|"+(sc?String(sc.checked):"?")})()`); got != "swagger-ui|true" {
			t.Fatalf("the code flow's client id and scope: %q; inputs %s", got, eval("inputs", `(function(){const c=`+codeBlock+`; return [...c.querySelectorAll("input")].map(i=>i.outerHTML).join("\n")})()`))
		}

		popup := chromedp.WaitNewTarget(bctx, func(i *target.Info) bool { return i.Type == "page" && i.OpenerID != "" })
		eval("press Authorize", `(function(){const c=`+codeBlock+`; c.querySelector("button.authorize").click(); return ""})()`)
		var id target.ID
		select {
		case id = <-popup:
		case <-time.After(15 * time.Second):
			t.Fatal("no sign-in window opened")
		}
		pctx, cancelPopup := chromedp.NewContext(bctx, chromedp.WithTargetID(id))
		defer cancelPopup()
		if err := chromedp.Do(pctx,
			chromedp.WaitVisible("#email"),
			chromedp.SendKeys("#email", demo.AdminEmail),
			chromedp.SendKeys("#password", demo.AdminPassword),
			chromedp.Click("#signin"),
		); err != nil {
			t.Fatalf("signing in in the popup: %v", err)
		}
		// The popup returns to oauth2-redirect.html, hands the code to the
		// page and closes; the page exchanges it (with the verifier).
		defer func() {
			if t.Failed() {
				t.Logf("operation: %s", eval("op", `(function(){const o=document.querySelector("#operations-POS-startInteraction"); return o ? o.innerText.slice(0, 3000) : "none"})()`))
				t.Logf("dialog: %s", eval("dialog", `(function(){const c=`+codeBlock+`; return c ? c.innerText : "none"})()`))
				t.Logf("popup: %v", func() string {
					v, _ := chromedp.Run(pctx, chromedp.Evaluate[string](`location.href + " " + document.body.innerText`))
					return v
				}())
			}
		}()
		waitFor("the authorized state", 20*time.Second, `(function(){const c=`+codeBlock+`; return c && [...c.querySelectorAll("button")].some(b => b.innerText.trim() === "Logout") ? "yes" : "no"})()`)
		eval("close the dialog", `[...document.querySelectorAll(".auth-container button")].find(b => b.innerText.trim() === "Close").click(); ""`)

		const op = `document.querySelector("#operations-POS-startInteraction")`
		waitFor("startInteraction", 5*time.Second, ``+op+` ? "yes" : "no"`)
		eval("expand it", `(function(){const o=`+op+`; (o.querySelector(".opblock-summary-control") || o.querySelector(".opblock-summary")).click(); return ""})()`)
		waitFor("Try it out", 5*time.Second, op+`.querySelector(".try-out__btn") ? "yes" : "no"`)
		eval("press Try it out", op+`.querySelector(".try-out__btn").click(); ""`)
		waitFor("the editable body", 5*time.Second, op+`.querySelector("textarea.body-param__text") ? "yes" : "no"`)
		// React's inputs take a value through the native setter and an
		// input event.
		eval("fill in the request", `(function(){
			const o=`+op+`;
			const set=(el,v)=>{const p=Object.getPrototypeOf(el);Object.getOwnPropertyDescriptor(p,"value").set.call(el,v);el.dispatchEvent(new Event("input",{bubbles:true}));el.dispatchEvent(new Event("change",{bubbles:true}));};
			const ct=o.querySelector(".body-param-content-type select, .content-type-wrapper select");
			if(ct){set(ct,"application/json");}
			set(o.querySelector("textarea.body-param__text"),'{"terminalId":"TERM-05","posLocationId":"LOC123"}');
			return ""})()`)
		if err := chromedp.Do(bctx, chromedp.SendKeys("#operations-POS-startInteraction input[placeholder='posSystemId']", "clover")); err != nil {
			t.Fatalf("typing the POS system: %v", err)
		}
		if got := eval("the request", `(function(){const o=`+op+`; return o.querySelector("input[placeholder='posSystemId']").value + "|" + o.querySelector("textarea.body-param__text").value})()`); got != `clover|{"terminalId":"TERM-05","posLocationId":"LOC123"}` {
			t.Fatalf("the request as filled in: %q", got)
		}
		time.Sleep(time.Second) // the UI's inputs are debounced
		eval("press Execute", op+`.querySelector(".btn.execute").click(); ""`)
		waitFor("the answer", 15*time.Second, `(function(){const c=`+op+`.querySelector(".live-responses-table tr.response .response-col_status"); return c && c.innerText.trim() !== "" ? "yes" : "no"})()`)
		status := eval("the status", op+`.querySelector(".live-responses-table tr.response .response-col_status").innerText.trim()`)
		body := eval("the body", op+`.querySelector(".live-responses-table tr.response .response-col_description").innerText`)
		if !strings.HasPrefix(status, "200") || !strings.Contains(body, `"posStatus": "Accepted"`) {
			t.Fatalf("Try it out: status %q, body %s", status, body)
		}
	})
}
