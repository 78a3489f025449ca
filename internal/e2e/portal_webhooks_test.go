package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/webhook"
)

// TestPortalWebhooks: the webhooks page (docs/api.md §23) with a real
// receiver. An endpoint without event types is refused and nothing made;
// one added shows its secret once, and its test event arrives signed with
// it; a rotated secret signs the next test event; disabled, the API shows
// it so. A receiver answering 410 Gone has posgate disable its endpoint,
// and the dashboard's failing webhooks panel links to its dead delivery,
// which the deliveries page shows with its answer and redelivers.
func TestPortalWebhooks(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		shots := ""
		if dir := os.Getenv("POSGATE_SCREENSHOTS"); dir != "" && !strings.HasPrefix(dsn, "postgres") {
			shots = dir
		}
		s := start(t, dsn, allowLoopback)
		admin := s.adminToken(t)
		h := newHookReceiver(t)

		b := newBrowser(t, chrome)
		b.portalSignIn(s.base, "/portal/webhooks", demo.AdminEmail, demo.AdminPassword, "")
		if c := b.eval("the company", `document.querySelector("#company").value`); c != "clover/demo-company" {
			t.Fatalf("the chosen company: %q", c)
		}

		// No event type: refused, the URL kept, nothing made.
		b.fill("#url", h.srv.URL+"/hook")
		b.submitForm("#add-endpoint")
		if st, e := b.status(), b.shown("error"); st != "400" || !strings.Contains(e, "eventTypes") || !strings.Contains(e, "At least one event type is required") {
			t.Fatalf("an endpoint without event types: %s %q", st, e)
		}
		if v := b.eval("the kept url", `document.querySelector("#url").value`); v != h.srv.URL+"/hook" {
			t.Fatalf("the form after the error: %q", v)
		}
		if r := s.do(t, req{Method: "GET", Path: companyPath + "/webhooks", Token: admin}); string(r.Body) != `{"data":[]}` {
			t.Fatalf("endpoints after the refused form: %s", r.Body)
		}

		// Added: the secret shown once.
		b.eval("tick two types", `document.querySelector("input[value='interaction.started']").checked = true; document.querySelector("input[value='coupon.redeemed']").checked = true; ""`)
		b.submitForm("#add-endpoint")
		if st, n := b.status(), b.shown("notice"); st != "201" || !strings.Contains(n, "added. Copy its secret now") {
			t.Fatalf("adding: %s %q (error %q)", st, n, b.shown("error"))
		}
		secret := b.eval("the secret", `document.querySelector("#created-secret").innerText`)
		if !strings.HasPrefix(secret, "whsec_") {
			t.Fatalf("the secret shown: %q", secret)
		}
		r := s.do(t, req{Method: "GET", Path: companyPath + "/webhooks", Token: admin})
		var list struct {
			Data []struct {
				ID, URL    string
				EventTypes []string
				Enabled    bool
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &list); err != nil || len(list.Data) != 1 || list.Data[0].URL != h.srv.URL+"/hook" || !list.Data[0].Enabled ||
			strings.Join(list.Data[0].EventTypes, ",") != "interaction.started,coupon.redeemed" {
			t.Fatalf("endpoints after adding: %s", r.Body)
		}
		id := list.Data[0].ID
		if row := b.eval("the row", `document.querySelector("#endpoint-`+id+`").innerText`); !strings.Contains(row, "Enabled") || !strings.Contains(row, "interaction.started, coupon.redeemed") {
			t.Fatalf("the endpoint's row: %q", row)
		}
		// Shown once: the page again has no secret.
		b.navigate(s.base + "/portal/webhooks")
		if got := b.eval("a secret", `String(!!document.querySelector("#created-secret")) + document.body.innerHTML.includes("whsec_")`); got != "falsefalse" {
			t.Fatalf("the secret is shown again: %s", got)
		}

		// A test event arrives signed with the secret.
		verify := func(n int, secret string) {
			t.Helper()
			got := h.wait(t, n)[n-1]
			ts, _ := strconv.ParseInt(got.Timestamp, 10, 64)
			if got.Type != "webhook.test" || got.Data["endpointId"] != id || !webhook.Verify(secret, got.ID, ts, got.Body, got.Signature) {
				t.Fatalf("test event %d: %s %v, signature %q not by %q", n, got.Type, got.Data, got.Signature, secret)
			}
		}
		b.submitForm("#endpoint-" + id + " button.test")
		if n := b.shown("notice"); !strings.HasPrefix(n, "Test event ") || !strings.HasSuffix(n, " queued for "+id+".") {
			t.Fatalf("after the test: %q (error %q)", n, b.shown("error"))
		}
		verify(1, secret)
		// The deliveries page shows it delivered, with the answer's code.
		b.reloadUntil(s.base+"/portal/webhooks?company=clover/demo-company&endpoint="+id, "the delivered test event",
			`[...document.querySelectorAll("tr.delivery")].map(r => r.dataset.status + " " + r.cells[2].innerText + " " + r.cells[4].innerText + " " + r.cells[5].innerText.trim()).join("|")`,
			"Delivered webhook.test 1 204")

		// Rotated: a new secret, shown once, signs the next test event.
		b.submitForm("#endpoint-" + id + " button.rotate")
		rotated := b.eval("the new secret", `(document.querySelector("#created-secret") || {innerText: ""}).innerText`)
		if n := b.shown("notice"); !strings.Contains(n, "has a new secret") || !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
			t.Fatalf("after rotating: %q, secret %q (error %q)", n, rotated, b.shown("error"))
		}
		b.submitForm("#endpoint-" + id + " button.test")
		verify(2, rotated)

		// Disabled: the row and the API say so.
		b.navigate(s.base + "/portal/webhooks")
		b.submitForm("#endpoint-" + id + " button.toggle")
		if n := b.shown("notice"); n != "Endpoint "+id+" is disabled." {
			t.Fatalf("after disabling: %q (error %q)", n, b.shown("error"))
		}
		if row := b.eval("the row", `document.querySelector("#endpoint-`+id+`").innerText`); !strings.Contains(row, "Disabled") {
			t.Fatalf("the disabled endpoint's row: %q", row)
		}
		if r := s.do(t, req{Method: "GET", Path: companyPath + "/webhooks/" + id, Token: admin}); !strings.Contains(string(r.Body), `"enabled":false,"disabledReason":""`) {
			t.Fatalf("the disabled endpoint: %s", r.Body)
		}
		if shots != "" {
			b.navigate(s.base + "/portal/webhooks?company=clover/demo-company&endpoint=" + id)
			b.screenshot(shots, "portal-webhooks")
		}

		// The dashboard: nothing failing yet.
		b.navigate(s.base + "/portal")
		if got := b.eval("the panel", `document.querySelector("#failing-webhooks").innerText`); !strings.Contains(got, "None: every endpoint you reach delivers.") {
			t.Fatalf("the failing webhooks panel: %q", got)
		}

		// A receiver answering 410 Gone: its endpoint disabled by posgate,
		// its delivery dead, and both on the dashboard.
		gone := newHookReceiver(t)
		gone.code = http.StatusGone
		r = s.do(t, req{Method: "POST", Path: companyPath + "/webhooks", Token: admin, ContentType: "application/json",
			Body: `{"url":"` + gone.srv.URL + `/gone","eventTypes":["coupon.issued"]}`})
		mustStatus(t, r, 201)
		var made struct {
			Data struct{ ID string } `json:"data"`
		}
		json.Unmarshal(r.Body, &made)
		goneID := made.Data.ID
		mustStatus(t, s.do(t, req{Method: "POST", Path: companyPath + "/webhooks/" + goneID + "/test", Token: admin}), 202)
		gone.wait(t, 1)
		b.reloadUntil(s.base+"/portal", "the failing endpoint",
			`[...document.querySelectorAll("#failing-webhooks li.failing")].map(l => l.dataset.endpoint + ": " + l.innerText).join("|")`,
			goneID+": "+goneID+" "+gone.srv.URL+"/gone (clover/demo-company) · 1 dead deliveries · disabled by posgate: The endpoint answered 410 Gone.")
		b.submitForm(`#failing-webhooks li.failing a`)
		if got := b.eval("the dead delivery", `[...document.querySelectorAll("tr.delivery")].map(r => r.dataset.status + " " + r.cells[4].innerText + " " + r.cells[5].innerText.trim()).join("|")`); got != "Dead 1 410 The endpoint answered 410 Gone: it is disabled." {
			t.Fatalf("the deliveries of the failing endpoint: %q", got)
		}
		// Enabled again and redelivered: the receiver, answering now, gets it.
		gone.mu.Lock()
		gone.code = http.StatusNoContent
		gone.mu.Unlock()
		b.navigate(s.base + "/portal/webhooks")
		b.submitForm("#endpoint-" + goneID + " button.toggle")
		b.navigate(s.base + "/portal/webhooks?company=clover/demo-company&endpoint=" + goneID)
		b.submitForm("tr.delivery button.redeliver")
		if n := b.shown("notice"); n != "1 dead deliveries of "+goneID+" are pending again." {
			t.Fatalf("after redelivering: %q (error %q)", n, b.shown("error"))
		}
		gone.wait(t, 2)
		b.reloadUntil(s.base+"/portal", "no failing endpoint", `document.querySelector("#failing-webhooks").innerText.replace(/\s+/g, " ").trim()`,
			"Failing webhooks None: every endpoint you reach delivers.")

		// Removed.
		b.navigate(s.base + "/portal/webhooks")
		b.submitForm("#endpoint-" + goneID + " button.remove")
		if n := b.shown("notice"); n != "Endpoint "+goneID+" removed." {
			t.Fatalf("after removing: %q", n)
		}
		mustStatus(t, s.do(t, req{Method: "GET", Path: companyPath + "/webhooks/" + goneID, Token: admin}), 404)

		// The audit log has the portal's changes.
		b.navigate(s.base + "/portal/audit?targetType=webhook-endpoint")
		rows := b.eval("the entries", `[...document.querySelectorAll("tr.entry")].filter(r => r.dataset.channel === "portal").map(r => r.dataset.action).join(",")`)
		if want := "webhook-endpoint.delete,webhook-endpoint.redeliver,webhook-endpoint.update,webhook-endpoint.update,webhook-endpoint.test,webhook-endpoint.rotate-secret,webhook-endpoint.test,webhook-endpoint.create"; rows != want {
			t.Fatalf("the portal's webhook entries: %s, want %s", rows, want)
		}
	})
}

// TestPortalWebhooksLocationManager: a location manager reaches no
// company whole, so the webhooks page offers none, and another company's
// endpoint actions are refused as absent.
func TestPortalWebhooksLocationManager(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, allowLoopback)
		admin := s.adminToken(t)
		r := s.do(t, req{Method: "POST", Path: companyPath + "/webhooks", Token: admin, ContentType: "application/json",
			Body: `{"url":"http://127.0.0.1:9/hook","eventTypes":["coupon.issued"]}`})
		mustStatus(t, r, 201)
		var made struct {
			Data struct{ ID string } `json:"data"`
		}
		json.Unmarshal(r.Body, &made)

		b := newBrowser(t, chrome)
		b.portalSignIn(s.base, "/portal/webhooks", demo.ManagerEmail, demo.ManagerPassword, "")
		if e := b.shown("error"); e != "You reach no company whole: webhook endpoints belong to companies." || b.eval("a form", `String(!!document.querySelector("#webhook-form"))`) != "false" {
			t.Fatalf("the manager's webhooks page: %q", e)
		}
		b.navigate(s.base + "/portal/webhooks?company=clover/demo-company")
		if st := b.status(); st != "404" {
			t.Fatalf("another company's endpoints: %s %q", st, b.shown("error"))
		}
		// A form made up to disable the company's endpoint.
		b.navigate(s.base + "/portal")
		b.eval("make a form", `const f = document.createElement("form"); f.method = "post"; f.action = "/portal/webhooks/clover/demo-company/`+made.Data.ID+`/disable";
			f.innerHTML = '<input type="hidden" name="csrf" value="' + document.querySelector("input[name=csrf]").value + '"><button id="forged">x</button>'; document.body.append(f); ""`)
		b.submitForm("#forged")
		if st := b.status(); st != "404" {
			t.Fatalf("disabling another company's endpoint: %s %q", st, b.shown("error"))
		}
		if r := s.do(t, req{Method: "GET", Path: companyPath + "/webhooks/" + made.Data.ID, Token: admin}); !strings.Contains(string(r.Body), `"enabled":true`) {
			t.Fatalf("the endpoint after the refused form: %s", r.Body)
		}
		b.navigate(s.base + "/portal")
		if got := b.eval("the dashboard's panel", `(document.querySelector("#failing-webhooks") || {innerText: "missing"}).innerText`); !strings.Contains(got, "None: every endpoint you reach delivers.") {
			t.Fatalf("the manager's failing webhooks panel: %q", got)
		}
	})
}

// reloadUntil opens u until js gives want, failing after 30 s.
func (b *browser) reloadUntil(u, what, js, want string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b.navigate(u)
		got := b.eval(what, js)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: %q, want %q", what, got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
