package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/demo"
)

const (
	clockPath   = "/admin/v1/sandbox/clock"
	advancePath = "/admin/v1/sandbox/clock/advance"
	// sandboxStartOver ends the detail of a transaction id's conflict on a
	// demo server.
	sandboxStartOver = "This is a sandbox: send a new transactionId, or run 'posgate demo reset' to start over from the demo data set."
)

// TestSandboxClock moves a demo server's sandbox clock through the operator
// API (docs/api.md §20) and checks that every rule about time follows it:
// a day later a coupon that ended within the day is Expired and cannot be
// redeemed, a token issued before is answered 401 while a new one works (its
// issuance and verification agree), and a session from startInteraction is
// gone. The clock only moves forward; bad input is 400.
func TestSandboxClock(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin, pos := s.adminToken(t), s.posToken(t)
		call := func(tok, method, path, body string) response {
			t.Helper()
			q := req{Method: method, Path: path, Token: tok, Body: body}
			if body != "" {
				q.ContentType = "application/json"
			}
			return s.do(t, q)
		}
		real := s.clock.Now().UTC()
		view := func(offset time.Duration) string {
			return `{"data":{"now":"` + real.Add(offset).Format(time.RFC3339) + `","realNow":"` + real.Format(time.RFC3339) +
				`","offsetSeconds":` + strconv.FormatInt(int64(offset/time.Second), 10) + `}}`
		}
		mustBody(t, call(admin, "GET", clockPath, ""), view(0))
		// A signed-in admin's token (the Swagger UI's implicit flow) reads
		// it as well.
		person := newAgent(t, s)
		person.signIn(t, demo.AdminEmail, demo.AdminPassword)
		mustBody(t, call(person.implicitToken(t, "admin"), "GET", clockPath, ""), view(0))

		// Before: a coupon valid for another hour, a working token and session.
		coupons := demoCompanyPath + "/coupons"
		until := real.Add(time.Hour).Format(time.RFC3339)
		mustStatus(t, call(admin, "POST", coupons, `{"code":"TODAY","availableUntil":"`+until+`"}`), 201)
		r := s.do(t, startReq(pos, "TERM-05", "LOC123"))
		mustStatus(t, r, 200)
		session := r.JSON(t)["data"].(map[string]any)["sessionId"].(string)
		mustStatus(t, call(admin, "GET", "/admin/v1/sessions/"+session, ""), 200)

		// A day later.
		mustBody(t, call(admin, "POST", advancePath, `{"seconds":86400}`), view(24*time.Hour))
		mustProblem(t, s.do(t, startReq(pos, "TERM-05", "LOC123")), 401, "*", nil)
		mustProblem(t, call(admin, "GET", clockPath, ""), 401, "*", nil)
		admin, pos = s.adminToken(t), s.posToken(t)
		mustBody(t, call(admin, "GET", clockPath, ""), view(24*time.Hour))
		mustStatus(t, s.do(t, startReq(pos, "TERM-05", "LOC123")), 200)
		mustProblem(t, call(admin, "POST", coupons+"/TODAY/redeem", ""), 409, `coupon "TODAY" is Expired; only an Issued coupon can be redeemed`, nil)
		if got := call(admin, "GET", coupons+"/TODAY", "").JSON(t)["data"].(map[string]any)["status"]; got != "Expired" {
			t.Fatalf("coupon status a day later: %v", got)
		}
		sale := `{"sessionId":"` + session + `","transactionId":"LATE-1","terminalId":"TERM-05","posLocationId":"LOC123","transactionType":"Sale",` +
			`"transactionAmount":5,"transactionDate":"` + real.Add(24*time.Hour-time.Minute).Format(time.RFC3339) + `"}`
		mustProblem(t, s.do(t, posJSON(pos, "/pos/clover/transaction", sale)), 404, "Session '"+session+"' is unknown or has expired.", nil)
		// What the store writes is dated by the sandbox clock too.
		created := call(admin, "POST", coupons, `{"code":"TOMORROW"}`).JSON(t)["data"].(map[string]any)["createdAt"]
		if created != real.Add(24*time.Hour).Format(time.RFC3339) {
			t.Fatalf("createdAt %v, want the sandbox time", created)
		}

		// Set: forward only, within a century of the real time.
		target := real.Add(48 * time.Hour)
		mustBody(t, call(admin, "PUT", clockPath, `{"now":"`+target.Format(time.RFC3339)+`"}`), view(48*time.Hour))
		admin = s.adminToken(t)
		mustProblem(t, call(admin, "PUT", clockPath, `{"now":"`+real.Format(time.RFC3339)+`"}`), 409,
			"The sandbox clock only moves forward: "+real.Format(time.RFC3339)+" is before its time, "+target.Format(time.RFC3339)+".", nil)
		hundred := map[string][]string{"now": {"The sandbox clock runs at most 100 years ahead of the real time."}}
		mustProblem(t, call(admin, "PUT", clockPath, `{"now":"`+real.AddDate(101, 0, 0).Format(time.RFC3339)+`"}`), 400, hundred["now"][0], hundred)
		nowMsg := map[string][]string{"now": {"The now field must be an RFC 3339 date-time (e.g. 2030-01-01T00:00:00Z)."}}
		mustProblem(t, call(admin, "PUT", clockPath, `{"now":"tomorrow"}`), 400, nowMsg["now"][0], nowMsg)
		mustProblem(t, call(admin, "PUT", clockPath, `{}`), 400, "The now field is required.", map[string][]string{"now": {"The now field is required."}})
		mustProblem(t, call(admin, "PUT", clockPath, `{"now":5}`), 400, "The now field must be a string.", map[string][]string{"now": {"The now field must be a string."}})
		mustProblem(t, call(admin, "PUT", clockPath, `{"now":"`+target.Format(time.RFC3339)+`","tz":"x"}`), 400, "The property 'tz' is not allowed.",
			map[string][]string{"tz": {"The property 'tz' is not allowed."}})
		secMsg := map[string][]string{"seconds": {"The seconds field must be an integer from 1 to 3153600000."}}
		for _, bad := range []string{"0", "-5", "3153600001"} {
			mustProblem(t, call(admin, "POST", advancePath, `{"seconds":`+bad+`}`), 400, secMsg["seconds"][0], secMsg)
		}
		mustProblem(t, call(admin, "POST", advancePath, `{}`), 400, "The seconds field is required.", map[string][]string{"seconds": {"The seconds field is required."}})
		mustProblem(t, call(admin, "POST", advancePath, `{"seconds":"60"}`), 400, "The seconds field must be an integer.", map[string][]string{"seconds": {"The seconds field must be an integer."}})
		mustProblem(t, call(admin, "POST", advancePath, `{"seconds":`+strconv.Itoa(100*365*86400-48*3600+1)+`}`), 400, "*",
			map[string][]string{"seconds": {"The sandbox clock runs at most 100 years ahead of the real time."}})
		mustBody(t, call(admin, "GET", clockPath, ""), view(48*time.Hour))

		// An advance with an Idempotency-Key is applied once.
		for range 2 {
			r := s.do(t, req{Method: "POST", Path: advancePath, Token: admin, ContentType: "application/json", Body: `{"seconds":60}`,
				Header: map[string]string{"Idempotency-Key": "advance-once"}})
			mustBody(t, r, view(48*time.Hour+time.Minute))
		}
		mustBody(t, call(admin, "GET", clockPath, ""), view(48*time.Hour+time.Minute))

		// Only an unrestricted operator.
		pos = s.posToken(t)
		mustProblem(t, call(pos, "GET", clockPath, ""), 403, "*", nil)
		mustProblem(t, call(pos, "POST", advancePath, `{"seconds":60}`), 403, "*", nil)
		mustProblem(t, call("", "GET", clockPath, ""), 401, "*", nil)
		mustBody(t, call(admin, "GET", clockPath, ""), view(48*time.Hour+time.Minute))
	})
}

// TestSandboxClockOnlyInDemoMode: outside demo mode the sandbox routes are
// unknown routes, answered as any other.
func TestSandboxClockOnlyInDemoMode(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.Demo = false })
		for _, q := range []req{{Method: "GET", Path: clockPath}, {Method: "PUT", Path: clockPath}, {Method: "POST", Path: advancePath}} {
			q.Body, q.ContentType = `{"seconds":60}`, "application/json"
			r := s.do(t, q)
			mustProblem(t, r, 404, "No such route: "+q.Method+" "+q.Path+".", nil)
			if !strings.Contains(string(r.Body), "No such route") {
				t.Fatalf("%s %s: %s", q.Method, q.Path, r.Body)
			}
		}
	})
}

// TestSandboxConflictSaysHowToStartOver: the README's checkout sent twice
// (a new session, the same transactionId) is a 409 whose detail, on a demo
// server, says how to start over; the problem keeps its shape. Outside
// demo mode the detail is the conflict alone.
func TestSandboxConflictSaysHowToStartOver(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		checkout := func() response {
			t.Helper()
			pos := s.posToken(t)
			r := s.do(t, startReq(pos, "TERM-05", "LOC123"))
			mustStatus(t, r, 200)
			session := r.JSON(t)["data"].(map[string]any)["sessionId"].(string)
			return s.do(t, posJSON(pos, "/pos/clover/transaction", `{"sessionId":"`+session+`","transactionId":"CHK-1001",`+
				`"terminalId":"TERM-05","posLocationId":"LOC123","transactionType":"Sale","transactionAmount":25,`+
				`"transactionDate":"`+s.clock.Now().Format(time.RFC3339)+`"}`))
		}
		mustStatus(t, checkout(), 200)
		mustProblem(t, checkout(), 409, "Transaction 'CHK-1001' is already recorded with other content. "+sandboxStartOver, nil)

		s.cfg.Demo = false
		s.restart(t)
		mustProblem(t, checkout(), 409, "Transaction 'CHK-1001' is already recorded with other content.", nil)
	})
}

// TestDemoResetRestartsTheSandboxClock: a reset of the demo data made by
// another process on a running demo server's store brings the server's
// sandbox clock back to the real time within a second or two; a token
// issued at the later sandbox time is then refused (its iat is ahead), a
// new one works.
func TestDemoResetRestartsTheSandboxClock(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		clockView := func(tok string) response {
			return s.do(t, req{Method: "GET", Path: clockPath, Token: tok})
		}
		mustStatus(t, s.do(t, req{Method: "POST", Path: advancePath, Token: admin, ContentType: "application/json", Body: `{"seconds":86400}`}), 200)
		later := s.adminToken(t)
		if off := clockView(later).JSON(t)["data"].(map[string]any)["offsetSeconds"]; off != 86400.0 {
			t.Fatalf("offset after advancing a day: %v", off)
		}

		if err := demo.Reset(context.Background(), s.openStore(t)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			r := clockView(s.adminToken(t))
			mustStatus(t, r, 200)
			if r.JSON(t)["data"].(map[string]any)["offsetSeconds"] == 0.0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the sandbox clock after the reset: %s", r.Body)
			}
			time.Sleep(100 * time.Millisecond)
		}
		mustProblem(t, clockView(later), 401, "*", nil)
	})
}
