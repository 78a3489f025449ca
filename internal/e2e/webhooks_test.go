package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/webhook"
)

// Events and webhooks (docs/api.md §19) end to end, on both stores: a real
// receiver gets the signed events of a real checkout; every operator
// answer is checked against the OpenAPI document by the harness.

// hookReceiver is a real HTTP server that records the signed events it
// gets.
type hookReceiver struct {
	mu   sync.Mutex
	got  []hookRequest
	srv  *httptest.Server
	code int
}

type hookRequest struct {
	ID, Timestamp, Signature string
	Body                     []byte
	Type                     string
	Data                     map[string]any
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{code: http.StatusNoContent}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		json.Unmarshal(body, &ev)
		h.mu.Lock()
		h.got = append(h.got, hookRequest{ID: r.Header.Get("webhook-id"), Timestamp: r.Header.Get("webhook-timestamp"),
			Signature: r.Header.Get("webhook-signature"), Body: body, Type: ev.Type, Data: ev.Data})
		code := h.code
		h.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// wait returns the requests once there are n, failing after 30 s.
func (h *hookReceiver) wait(t *testing.T, n int) []hookRequest {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		h.mu.Lock()
		got := append([]hookRequest(nil), h.got...)
		h.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver got %d requests, want %d", len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func allowLoopback(c *app.Config) { c.WebhooksAllowLoopback = true }

var secretRE = regexp.MustCompile(`"secret":"whsec_[A-Za-z0-9+/]+=*"`)

func TestWebhooksCheckout(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, allowLoopback)
		e := &txEnv{t: t, s: s, pos: s.posToken(t), admin: s.adminToken(t)}
		h := newHookReceiver(t)

		// No endpoint yet: the settings lookup answers channel None.
		r := e.post(settingsPath, e.pos, `{"posCompanyId":"demo-company"}`)
		mustStatus(t, r, 200)
		if !strings.Contains(string(r.Body), `"notificationSettings":{"status":"Disabled","channel":"None","configuration":{"terminalEvents":"`) {
			t.Fatalf("settings before: %s", r.Body)
		}

		r = e.admin_("POST", "/webhooks", `{"url":"`+h.srv.URL+`/hook","eventTypes":["interaction.started","transaction.recorded","loyalty.balance_changed","coupon.redeemed"]}`)
		mustStatus(t, r, 201)
		var created struct {
			Data struct {
				ID, Secret string
			} `json:"data"`
		}
		json.Unmarshal(r.Body, &created)
		at := s.clock.Now().UTC().Format(time.RFC3339)
		want := `{"data":{"id":"` + created.Data.ID + `","posSystemId":"clover","posCompanyId":"demo-company","url":"` + h.srv.URL + `/hook",` +
			`"eventTypes":["interaction.started","transaction.recorded","loyalty.balance_changed","coupon.redeemed"],"enabled":true,` +
			`"disabledReason":"","previousSecretUntil":null,"createdAt":"` + at + `","updatedAt":"` + at + `","secret":"SECRET"}}`
		if got := secretRE.ReplaceAllString(string(r.Body), `"secret":"SECRET"`); got != want {
			t.Fatalf("created:\n got %s\nwant %s", got, want)
		}
		r = e.admin_("GET", "/webhooks", "")
		mustStatus(t, r, 200)
		if strings.Contains(string(r.Body), "whsec_") || !strings.Contains(string(r.Body), created.Data.ID) {
			t.Fatalf("list shows a secret or misses the endpoint: %s", r.Body)
		}
		r = e.post(settingsPath, e.pos, `{"posCompanyId":"demo-company"}`)
		if !strings.Contains(string(r.Body), `"notificationSettings":{"status":"Active","channel":"Webhook","configuration":{"terminalEvents":"`) {
			t.Fatalf("settings after: %s", r.Body)
		}

		// A checkout: the check-in, then the sale with the customer's card
		// and a coupon.
		sess := e.session("TERM-05")
		mustStatus(t, e.sale(`{"sessionId":"`+sess+`","transactionId":"W-1","terminalId":"TERM-05","posLocationId":"LOC123",
			"transactionType":"Sale","transactionAmount":12.34,"transactionDate":"`+e.date(-time.Minute)+`",
			"loyalty":{"cardNumber":"john-doe"},"couponCodes":["Sl75Ev"]}`), 200)
		got := h.wait(t, 4)
		var types []string
		for _, g := range got {
			ts, err := strconv.ParseInt(g.Timestamp, 10, 64)
			if err != nil || ts != s.clock.Now().Unix() {
				t.Fatalf("webhook-timestamp %q, want the server clock's %d", g.Timestamp, s.clock.Now().Unix())
			}
			if !webhook.Verify(created.Data.Secret, g.ID, ts, g.Body, g.Signature) {
				t.Fatalf("%s: signature %q does not verify with the endpoint's secret", g.Type, g.Signature)
			}
			types = append(types, g.Type)
		}
		// The check-in has no loyalty user, so it is in a queue of its own
		// and may reach the receiver before or after the sale's events;
		// the customer's three events arrive in their order (docs/api.md
		// §19).
		var checkIn, customer []int
		for i, typ := range types {
			if typ == "interaction.started" {
				checkIn = append(checkIn, i)
			} else {
				customer = append(customer, i)
			}
		}
		var inOrder []string
		for _, i := range customer {
			inOrder = append(inOrder, types[i])
		}
		if len(checkIn) != 1 || strings.Join(inOrder, " ") != "coupon.redeemed loyalty.balance_changed transaction.recorded" {
			t.Fatalf("events %v", types)
		}
		got = append([]hookRequest{got[checkIn[0]]}, got[customer[0]], got[customer[1]], got[customer[2]])
		if got[0].Data["sessionId"] != sess || got[2].Data["points"] != float64(132) || got[2].Data["sequence"] != float64(1) ||
			got[3].Data["transactionId"] != "W-1" {
			t.Fatalf("event data: %v / %v / %v", got[0].Data, got[2].Data, got[3].Data)
		}

		// The deliveries, newest first, all delivered at the first attempt.
		path := "/webhooks/" + created.Data.ID
		var page struct {
			Data struct {
				Deliveries []struct {
					ID             int64
					EventID        string
					Status         string
					Attempts       int
					LastStatusCode int
				}
				Page struct{ Total int }
			}
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			r = e.admin_("GET", path+"/deliveries?status=Delivered", "")
			mustStatus(t, r, 200)
			json.Unmarshal(r.Body, &page)
			if page.Data.Page.Total == 4 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if page.Data.Page.Total != 4 || page.Data.Deliveries[0].EventID != got[3].ID || page.Data.Deliveries[0].Attempts != 1 ||
			page.Data.Deliveries[0].LastStatusCode != 204 {
			t.Fatalf("deliveries: %s", r.Body)
		}

		// Rotation: both secrets sign for a day.
		r = e.admin_("POST", path+"/rotate-secret", "")
		mustStatus(t, r, 200)
		var rotated struct{ Data struct{ Secret string } }
		json.Unmarshal(r.Body, &rotated)
		if rotated.Data.Secret == created.Data.Secret || !strings.Contains(string(r.Body),
			`"previousSecretUntil":"`+s.clock.Now().Add(24*time.Hour).UTC().Format(time.RFC3339)+`"`) {
			t.Fatalf("rotated: %s", r.Body)
		}
		r = e.admin_("POST", path+"/test", "")
		mustStatus(t, r, 202)
		test := h.wait(t, 5)[4]
		ts, _ := strconv.ParseInt(test.Timestamp, 10, 64)
		if test.Type != "webhook.test" || len(strings.Fields(test.Signature)) != 2 ||
			!webhook.Verify(created.Data.Secret, test.ID, ts, test.Body, test.Signature) ||
			!webhook.Verify(rotated.Data.Secret, test.ID, ts, test.Body, test.Signature) {
			t.Fatalf("test event after rotation: %+v", test)
		}
		if !strings.Contains(string(r.Body), `"eventId":"`+test.ID+`"`) {
			t.Fatalf("test answer %s, event %s", r.Body, test.ID)
		}

		// Disabled: no new events; the lookup says None again.
		r = e.admin_("PATCH", path, `{"enabled":false}`)
		mustStatus(t, r, 200)
		r = e.admin_("GET", path, "")
		mustStatus(t, r, 200)
		until := s.clock.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		if want := `{"data":{"id":"` + created.Data.ID + `","posSystemId":"clover","posCompanyId":"demo-company","url":"` + h.srv.URL + `/hook",` +
			`"eventTypes":["interaction.started","transaction.recorded","loyalty.balance_changed","coupon.redeemed"],"enabled":false,` +
			`"disabledReason":"","previousSecretUntil":"` + until + `","createdAt":"` + at + `","updatedAt":"` + at + `"}}`; string(r.Body) != want {
			t.Fatalf("endpoint after disabling:\n got %s\nwant %s", r.Body, want)
		}
		e.session("TERM-05")
		r = e.post(settingsPath, e.pos, `{"posCompanyId":"demo-company"}`)
		if !strings.Contains(string(r.Body), `"channel":"None"`) {
			t.Fatalf("settings with the endpoint disabled: %s", r.Body)
		}
		r = e.admin_("GET", path+"/deliveries", "")
		json.Unmarshal(r.Body, &page)
		if page.Data.Page.Total != 5 {
			t.Fatalf("deliveries after disabling: %s", r.Body)
		}
		r = e.admin_("DELETE", path, "")
		mustStatus(t, r, 200)
		mustProblem(t, e.admin_("GET", path, ""), 404, `webhook endpoint "`+created.Data.ID+`" not found`, nil)
	})
}

// TestWebhooksLoopbackOnly: --webhooks-allow-loopback adds loopback
// receivers and nothing else: link-local (the metadata service), private
// space and their NAT64 and 6to4 forms stay refused.
func TestWebhooksLoopbackOnly(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, allowLoopback)
		e := &txEnv{t: t, s: s, pos: s.posToken(t), admin: s.adminToken(t)}
		const msg = "The url must reach a public address: private, loopback, link-local and other special-purpose addresses are refused."
		for _, u := range []string{"http://169.254.169.254/latest/meta-data", "http://10.0.0.7/hook", "http://[fd00:ec2::254]/",
			"http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::1]/", "http://198.18.0.1/", "http://100.100.100.200/"} {
			mustProblem(t, e.admin_("POST", "/webhooks", `{"url":"`+u+`","eventTypes":["coupon.issued"]}`), 400, "*",
				map[string][]string{"url": {msg}})
		}
		mustStatus(t, e.admin_("POST", "/webhooks", `{"url":"http://127.0.0.1:9/hook","eventTypes":["coupon.issued"],"enabled":false}`), 201)
	})
}

func TestWebhooksOperatorErrors(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn) // private addresses refused
		e := &txEnv{t: t, s: s, pos: s.posToken(t), admin: s.adminToken(t)}
		bad := func(body string, errs map[string][]string) {
			t.Helper()
			mustProblem(t, e.admin_("POST", "/webhooks", body), 400, "*", errs)
		}
		bad(`{"url":"http://127.0.0.1:9/hook","eventTypes":["coupon.issued"]}`,
			map[string][]string{"url": {"The url must reach a public address: private, loopback, link-local and other special-purpose addresses are refused."}})
		bad(`{"url":"http://169.254.169.254/","eventTypes":["coupon.issued"]}`,
			map[string][]string{"url": {"The url must reach a public address: private, loopback, link-local and other special-purpose addresses are refused."}})
		bad(`{"url":"ftp://example.com/","eventTypes":["coupon.issued","coupon.issued"]}`, map[string][]string{
			"url": {"The url must be an absolute http or https URL."}, "eventTypes": {"Event type 'coupon.issued' is given twice."}})
		bad(`{"url":"https://u:p@example.com/","eventTypes":["nope"]}`, map[string][]string{
			"url":        {"The url must not carry credentials."},
			"eventTypes": {"Unknown event type 'nope' (known: interaction.started, transaction.recorded, transaction.refunded, coupon.redeemed, coupon.issued, loyalty.balance_changed, promotions.imported, catalogue.imported, coupon.offline_conflict)."}})
		bad(`{"eventTypes":[]}`, map[string][]string{"url": {"The url field is required."},
			"eventTypes": {"At least one event type is required (known: interaction.started, transaction.recorded, transaction.refunded, coupon.redeemed, coupon.issued, loyalty.balance_changed, promotions.imported, catalogue.imported, coupon.offline_conflict)."}})
		mustStatus(t, e.admin_("POST", "/webhooks", `{"url":"https://93.184.216.34/hook","eventTypes":["coupon.issued"],"extra":1}`), 400)
		mustStatus(t, e.admin_("POST", "/webhooks", `{"url":1,"eventTypes":["coupon.issued"]}`), 400)

		// A public address is accepted (the sender will never reach it
		// here; it is never called in this test).
		r := e.admin_("POST", "/webhooks", `{"url":"https://93.184.216.34/hook","eventTypes":["coupon.issued"],"enabled":false}`)
		mustStatus(t, r, 201)
		var ep struct{ Data struct{ ID string } }
		json.Unmarshal(r.Body, &ep)
		path := "/webhooks/" + ep.Data.ID
		mustProblem(t, e.admin_("PATCH", path, `{"url":"http://localhost/hook"}`), 400, "*",
			map[string][]string{"url": {"The url must reach a public address: private, loopback, link-local and other special-purpose addresses are refused."}})
		mustProblem(t, e.admin_("GET", "/webhooks/wh_nope", ""), 404, `webhook endpoint "wh_nope" not found`, nil)
		mustProblem(t, e.admin_("POST", path+"/deliveries/1/redeliver", ""), 404, `dead webhook delivery "1" not found`, nil)
		mustProblem(t, e.admin_("POST", path+"/deliveries/x/redeliver", ""), 404, `dead webhook delivery "x" not found`, nil)
		mustProblem(t, e.admin_("GET", path+"/deliveries?status=Lost", ""), 400, "*",
			map[string][]string{"status": {"The status must be Pending, Delivered or Dead."}})
		r = e.admin_("POST", path+"/deliveries/redeliver", "")
		mustStatus(t, r, 200)
		if string(r.Body) != `{"data":{"redelivered":0}}` {
			t.Fatalf("redeliver: %s", r.Body)
		}
		// Another company's path does not reach the endpoint.
		mustStatus(t, s.do(t, req{Method: "POST", Path: "/admin/v1/pos-systems/clover/companies", Token: e.admin, ContentType: "application/json",
			Body: `{"posCompanyId":"other-co","name":"Other"}`}), 201)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/companies/other-co/webhooks/" + ep.Data.ID, Token: e.admin}),
			404, `webhook endpoint "`+ep.Data.ID+`" not found`, nil)
		mustProblem(t, s.do(t, req{Method: "GET", Path: "/admin/v1/pos-systems/clover/companies/nope/webhooks", Token: e.admin}), 404, "*", nil)
		// Ten endpoints at most.
		for i := 2; i <= 10; i++ {
			mustStatus(t, e.admin_("POST", "/webhooks", `{"url":"https://93.184.216.34/`+strconv.Itoa(i)+`","eventTypes":["coupon.issued"]}`), 201)
		}
		mustProblem(t, e.admin_("POST", "/webhooks", `{"url":"https://93.184.216.34/11","eventTypes":["coupon.issued"]}`), 409,
			"Company 'demo-company' has 10 webhook endpoints already, the most it may have.", nil)
		// A POS token is not an operator's.
		mustStatus(t, s.do(t, req{Method: "GET", Path: companyPath + "/webhooks", Token: e.pos}), 403)
	})
}

// TestWebhookMetrics: after a sale whose event one endpoint takes and
// another refuses (503), the metrics listener shows one attempt delivered
// and one failed, the delivered one's lag, and the refused one still
// Pending in the outbox's backlog.
func TestWebhookMetrics(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, allowLoopback, func(c *app.Config) { c.MetricsListen = "127.0.0.1:0" })
		e := &txEnv{t: t, s: s, pos: s.posToken(t), admin: s.adminToken(t)}
		waitMetric(t, s, `posgate_webhook_deliveries_pending 0`)
		waitMetric(t, s, `posgate_webhook_attempts_total{outcome="delivered"} 0`)
		ok, refusing := newHookReceiver(t), newHookReceiver(t)
		refusing.code = http.StatusServiceUnavailable
		for _, h := range []*hookReceiver{ok, refusing} {
			mustStatus(t, e.admin_("POST", "/webhooks", `{"url":"`+h.srv.URL+`","eventTypes":["transaction.recorded"]}`), 201)
		}
		sess := e.session("TERM-05")
		mustStatus(t, e.sale(`{"sessionId":"`+sess+`","transactionId":"M-1","terminalId":"TERM-05","posLocationId":"LOC123",
			"transactionType":"Sale","transactionAmount":5.00,"transactionDate":"`+e.date(-time.Minute)+`"}`), 200)
		ok.wait(t, 1)
		refusing.wait(t, 1)
		for _, line := range []string{
			`posgate_webhook_attempts_total{outcome="delivered"} 1`,
			`posgate_webhook_attempts_total{outcome="failed"} 1`,
			`posgate_webhook_attempts_total{outcome="dead"} 0`,
			`posgate_webhook_delivery_lag_seconds_count 1`,
			`posgate_webhook_delivery_lag_seconds_bucket{le="+Inf"} 1`,
			`posgate_webhook_deliveries_pending 1`,
		} {
			waitMetric(t, s, line)
		}
	})
}
