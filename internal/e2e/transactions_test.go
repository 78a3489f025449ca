package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
)

// Transactions (docs/api.md §13) end to end, on both stores: every
// response is checked against the OpenAPI document by the harness.

// txEnv is a running server with a POS and an operator token (a test may
// replace them).
type txEnv struct {
	t          *testing.T
	s          *server
	pos, admin string
}

func newTxEnv(t *testing.T, dsn string) *txEnv {
	s := start(t, dsn)
	return &txEnv{t: t, s: s, pos: s.posToken(t), admin: s.adminToken(t)}
}

// posAPI and adminAPI are clients with the current tokens.
func (e *txEnv) posAPI() *api   { return e.s.api(e.t, e.pos) }
func (e *txEnv) adminAPI() *api { return e.s.api(e.t, e.admin) }

const companyPath = "/admin/v1/pos-systems/clover/companies/demo-company"

// session starts an interaction at a terminal of LOC123 and returns its id.
func (e *txEnv) session(terminal string) string {
	e.t.Helper()
	res, err := e.posAPI().StartInteraction(e.t.Context(), "clover", client.StartInteractionRequest{TerminalID: terminal, PosLocationID: "LOC123"})
	if err != nil || res.SessionID == nil {
		e.t.Fatalf("startInteraction: %+v %v", res, err)
	}
	return *res.SessionID
}

// date is the server's clock, as a transactionDate.
func (e *txEnv) date(d time.Duration) string {
	return e.s.clock.Now().Add(d).UTC().Format(time.RFC3339)
}

// post sends a JSON body to a POS route with token: through the client
// when the route is one of the transaction routes and the body is well
// formed (sendJSON), as raw HTTP otherwise.
func (e *txEnv) post(path, token, body string) response {
	e.t.Helper()
	a := e.s.api(e.t, token)
	switch path {
	case "/pos/clover/transaction":
		return sendJSON(a, e.s, token, path, body, func(ctx context.Context, v client.TransactionRequest) error {
			_, err := a.CreateTransaction(ctx, "clover", v)
			return err
		})
	case "/v2/pos/clover/transactions/batch":
		return sendJSON(a, e.s, token, path, body, func(ctx context.Context, v client.BatchRequest) error {
			_, err := a.ReplayTransactions(ctx, "clover", v)
			return err
		})
	case "/pos/clover/coupon/validate/byTransaction":
		return sendJSON(a, e.s, token, path, body, func(ctx context.Context, v client.ValidateCouponRequest) error {
			_, err := a.ValidateCouponByTransaction(ctx, "clover", v)
			return err
		})
	}
	return e.s.do(e.t, req{Method: "POST", Path: path, Token: token, ContentType: "application/json", Body: body})
}

func (e *txEnv) sale(body string) response {
	e.t.Helper()
	return e.post("/pos/clover/transaction", e.pos, body)
}

// admin_ calls the operator API under demo-company: the routes of the
// transaction tests go through the client (their JSON bodies by sendJSON), any
// other request as raw HTTP.
func (e *txEnv) admin_(method, path, body string) response {
	e.t.Helper()
	a, ctx := e.adminAPI(), e.t.Context()
	const sys, co = "clover", "demo-company"
	seg := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case method == "GET" && len(seg) == 2 && seg[0] == "coupons":
		_, err := a.Admin.GetCoupon(ctx, sys, co, seg[1])
		return a.answer(err)
	case method == "GET" && path == "/loyalty-program":
		_, err := a.Admin.GetLoyaltyProgram(ctx, sys, co)
		return a.answer(err)
	case method == "GET" && len(seg) == 2 && seg[0] == "loyalty-users":
		_, err := a.Admin.GetLoyaltyUser(ctx, sys, co, seg[1])
		return a.answer(err)
	case method == "GET" && len(seg) == 2 && seg[0] == "transactions" && !strings.Contains(path, "?"):
		_, err := a.Admin.GetTransaction(ctx, sys, co, seg[1])
		return a.answer(err)
	case method == "GET" && strings.HasPrefix(path, "/transactions") && len(seg) == 1:
		if q, ok := transactionQuery(path); ok {
			_, err := a.Admin.ListTransactions(ctx, sys, co, q)
			return a.answer(err)
		}
	case method == "POST" && path == "/coupons":
		return sendJSON(a, e.s, e.admin, companyPath+path, body, func(ctx context.Context, v client.CreateCouponRequest) error {
			_, err := a.Admin.CreateCoupon(ctx, sys, co, v)
			return err
		})
	case method == "POST" && path == "/loyalty-users":
		return sendJSON(a, e.s, e.admin, companyPath+path, body, func(ctx context.Context, v client.CreateLoyaltyUserRequest) error {
			_, err := a.Admin.CreateLoyaltyUser(ctx, sys, co, v)
			return err
		})
	case method == "POST" && len(seg) == 3 && seg[0] == "transactions" && seg[2] == "refund":
		return sendJSON(a, e.s, e.admin, companyPath+path, body, func(ctx context.Context, v client.RefundTransactionRequest) error {
			_, err := a.Admin.RefundTransaction(ctx, sys, co, seg[1], v)
			return err
		})
	case method == "PATCH" && len(seg) == 2 && seg[0] == "loyalty-users":
		if v, ok := decodeExact[client.UpdateLoyaltyUserRequest](body); ok {
			_, err := a.Admin.UpdateLoyaltyUser(ctx, sys, co, seg[1], v)
			return a.answer(err)
		}
	case method == "PUT" && path == "/loyalty-program":
		if v, ok := decodeExact[client.PutLoyaltyProgramRequest](body); ok {
			_, err := a.Admin.PutLoyaltyProgram(ctx, sys, co, v)
			return a.answer(err)
		}
	}
	q := req{Method: method, Path: companyPath + path, Token: e.admin}
	if body != "" {
		q.ContentType, q.Body = "application/json", body
	}
	return e.s.do(e.t, q)
}

// transactionQuery reads the query of a transaction list path into the
// client's TransactionQuery, when the client would send it unchanged.
func transactionQuery(path string) (client.TransactionQuery, bool) {
	var q client.TransactionQuery
	_, raw, _ := strings.Cut(path, "?")
	vals, err := url.ParseQuery(raw)
	if err != nil || strings.TrimSuffix(strings.SplitN(path, "?", 2)[0], "/") != "/transactions" {
		return q, false
	}
	q.PosLocationID, q.UserID, q.Day = vals.Get("posLocationId"), vals.Get("userId"), vals.Get("day")
	q.Page, _ = strconv.Atoi(vals.Get("page"))
	q.PageSize, _ = strconv.Atoi(vals.Get("pageSize"))
	want := url.Values{}
	for k, v := range map[string]string{"posLocationId": q.PosLocationID, "userId": q.UserID, "day": q.Day} {
		if v != "" {
			want.Set(k, v)
		}
	}
	if q.Page != 0 {
		want.Set("page", strconv.Itoa(q.Page))
	}
	if q.PageSize != 0 {
		want.Set("pageSize", strconv.Itoa(q.PageSize))
	}
	return q, want.Encode() == vals.Encode()
}

// balance is a loyalty user's points and stamps, through the operator API.
func (e *txEnv) balance(user string) (points, stamps int) {
	e.t.Helper()
	u, err := e.adminAPI().Admin.GetLoyaltyUser(e.t.Context(), "clover", "demo-company", user)
	if err != nil {
		e.t.Fatal(err)
	}
	return u.Points, u.Stamps
}

var (
	txIDRE   = regexp.MustCompile(`"id":"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"`)
	cfsRE    = regexp.MustCompile(`"cfsCarouselUrl":"http://[^"]+/carousel\?[^"]+"`)
	qrRE     = regexp.MustCompile(`"imageUrl":"http://[^"]+/receipt/qr\.png\?[^"]+"`)
	vdateRE  = regexp.MustCompile(`"validationDate":"[^"]+"`)
	sessRE   = regexp.MustCompile(`"(sessionId|externalSessionId)":"[0-9a-f-]{36}"`)
	receipt1 = `"receipt":{"primaryText":"Thank you for shopping at Demo Store Downtown!","secondaryText":"Scan the code for 10% off your next visit.","imageUrl":"QR","posStatus":"Accepted","loyaltyText":`
)

// masked is a body with its ids, session ids and signed URLs replaced, so
// that the rest can be compared exactly.
func masked(b []byte) string {
	s := txIDRE.ReplaceAllString(string(b), `"id":"ID"`)
	s = cfsRE.ReplaceAllString(s, `"cfsCarouselUrl":"CFS"`)
	s = qrRE.ReplaceAllString(s, `"imageUrl":"QR"`)
	s = vdateRE.ReplaceAllString(s, `"validationDate":"DATE"`)
	return sessRE.ReplaceAllString(s, `"$1":"SESSION"`)
}

func mustTxBody(t *testing.T, r response, status int, want string) {
	t.Helper()
	mustStatus(t, r, status)
	if got := masked(r.Body); got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
}

func TestTransactionSale(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		sess := e.session("TERM-05")
		body := `{"sessionId":"` + sess + `","transactionId":"T-1","terminalId":"TERM-05","posLocationId":"LOC123",
			"customer":{"id":"c-77","firstName":"John","lastName":"Doe","contacts":[{"email":"someone@else.example"}]},
			"salesPerson":{"id":"sp1","firstName":"Sam"},"purchaseName":"old","purchaseId":"p1","purchaseQuantity":"2","purchasePrice":"1.50",
			"transactionType":"Sale","transactionAmount":12.345,"transactionDate":"` + e.date(-time.Hour) + `",
			"products":[{"productId":"SKU-LATTE-L","productName":"Latte","manufacturer":"Demo","productCategory":"COFFEE","quantity":2,"price":4.5}],
			"loyalty":{"cardNumber":"john-doe"},
			"couponCodes":["10offMQ8KL8","FREECOFFEE1","5OFFcx21pq","SUMMER24","NOPE","JANE2FOR1","Sl75Ev","10OFFmq8kl8"]}`
		want := `{"data":{"id":"ID","transactionId":"T-1","sessionId":"SESSION","transactionType":"Sale","posStatus":"Accepted",` +
			`"loyalty":{"userId":"john-doe","pointsEarned":12,"stampsEarned":1,"points":132,"stamps":4},"coupons":[` +
			`{"code":"10OFFmq8kl8","status":"Redeemed","errorMessage":null},` +
			`{"code":"FREECOFFEE1","status":"Rejected","errorMessage":"Coupon 'FREECOFFEE1' has already been redeemed."},` +
			`{"code":"5OFFcx21pq","status":"Rejected","errorMessage":"Coupon '5OFFcx21pq' has been cancelled."},` +
			`{"code":"SUMMER24","status":"Rejected","errorMessage":"Coupon 'SUMMER24' expired at 2024-09-30T23:59:59Z."},` +
			`{"code":"NOPE","status":"Rejected","errorMessage":"Coupon 'NOPE' does not exist."},` +
			`{"code":"JANE2FOR1","status":"Rejected","errorMessage":"Coupon 'JANE2FOR1' cannot be used at location 'LOC123'."},` +
			`{"code":"Sl75Ev","status":"Redeemed","errorMessage":null},` +
			`{"code":"10OFFmq8kl8","status":"Rejected","errorMessage":"Coupon '10OFFmq8kl8' is given more than once in this transaction."}],` +
			// Two large lattes trigger the demo's 2.00 off every large coffee.
			`"promotions":[{"id":"DEMO-COFFEE-2OFF","name":"2 off any large coffee","promotionType":"Amount","value":2,"discount":4.00,"productIds":["SKU-LATTE-L"]}],` +
			`"cfsTemplate":{"cfsCarouselUrl":"CFS"},` + receipt1 + `"+12 points, balance 132"},` +
			// The POS's 12.34 is not the 9.00 - 4.00 of its lines: reported, and the sale recorded all the same.
			`"settlement":{"subtotal":9.00,"totalDiscount":4.00,"total":5.00,"difference":7.34,"mismatch":true}}}`
		first := e.sale(body)
		mustTxBody(t, first, 200, want)
		if first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatal("a first answer is marked replayed")
		}
		if !strings.Contains(string(first.Body), `"cfsCarouselUrl":"`+e.s.base+`/carousel?company=demo-company&`) {
			t.Fatalf("cfsCarouselUrl is not the terminal's carousel: %s", first.Body)
		}

		// The same request again, also in XML with the properties in another
		// order: the first answer, byte for byte, and nothing applied twice.
		again := e.sale(body)
		mustStatus(t, again, 200)
		if string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %s %v\nfirst: %s", again.Body, again.Header, first.Body)
		}
		xml := `<CreatePosTransactionDto><transactionId>T-1</transactionId><sessionId>` + sess + `</sessionId><terminalId>TERM-05</terminalId>
			<posLocationId>LOC123</posLocationId><customer><id>c-77</id><firstName>John</firstName><lastName>Doe</lastName>
			<contacts><email>someone@else.example</email></contacts></customer><salesPerson><id>sp1</id><firstName>Sam</firstName></salesPerson>
			<purchaseName>old</purchaseName><purchaseId>p1</purchaseId><purchaseQuantity>2</purchaseQuantity><purchasePrice>1.50</purchasePrice>
			<transactionType>Sale</transactionType><transactionAmount>12.3450</transactionAmount><transactionDate>` + e.date(-time.Hour) + `</transactionDate>
			<products><productId>SKU-LATTE-L</productId><productName>Latte</productName><manufacturer>Demo</manufacturer><productCategory>COFFEE</productCategory><quantity>2</quantity><price>4.50</price></products>
			<loyalty><cardNumber>john-doe</cardNumber></loyalty>
			<couponCodes>10offMQ8KL8</couponCodes><couponCodes>FREECOFFEE1</couponCodes><couponCodes>5OFFcx21pq</couponCodes><couponCodes>SUMMER24</couponCodes>
			<couponCodes>NOPE</couponCodes><couponCodes>JANE2FOR1</couponCodes><couponCodes>Sl75Ev</couponCodes><couponCodes>10OFFmq8kl8</couponCodes></CreatePosTransactionDto>`
		rx := e.s.do(t, req{Method: "POST", Path: "/pos/clover/transaction", Token: e.pos, ContentType: "application/xml", Body: xml})
		if rx.Status != 200 || string(rx.Body) != string(first.Body) || rx.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("XML replay: %d %s", rx.Status, rx.Body)
		}
		if p, s := e.balance("john-doe"); p != 132 || s != 4 {
			t.Fatalf("john-doe after a sale and two replays: %d points, %d stamps; want 132, 4", p, s)
		}

		// Other content under the same transaction id, and another
		// transaction on the same session: conflicts, nothing changed.
		mustProblem(t, e.sale(strings.Replace(body, "12.345", "12.35", 1)), 409, "Transaction 'T-1' is already recorded with other content. "+sandboxStartOver, nil)
		mustProblem(t, e.sale(strings.Replace(body, `"T-1"`, `"T-2"`, 1)), 409, "Session '"+sess+"' is already linked to transaction 'T-1'.", nil)
		if p, _ := e.balance("john-doe"); p != 132 {
			t.Fatalf("points after refused requests: %d", p)
		}

		// The operator sees the transaction, the coupon's redeemer and the
		// user's latest transactions.
		r := e.admin_("GET", "/coupons/10OFFMQ8KL8", "")
		mustStatus(t, r, 200)
		rb := r.JSON(t)["data"].(map[string]any)["redeemedBy"].(map[string]any)
		if rb["transactionId"] != "T-1" || rb["redeemedAt"] != e.s.clock.Now().Format(time.RFC3339) {
			t.Fatalf("redeemedBy: %v", rb)
		}
		r = e.admin_("GET", "/loyalty-users/john-doe", "")
		mustStatus(t, r, 200)
		if got := masked(r.Body); !strings.Contains(got, `"recentTransactions":[{"id":"ID","transactionId":"T-1","transactionType":"Sale","transactionAmount":12.34,"transactionDate":"`+e.date(-time.Hour)+`","pointsEarned":12,"stampsEarned":1}]`) {
			t.Fatalf("loyalty user view: %s", got)
		}
		r = e.admin_("GET", "/transactions/T-1", "")
		mustStatus(t, r, 200)
		d := r.JSON(t)["data"].(map[string]any)
		if d["transactionAmount"] != 12.34 || d["userId"] != "john-doe" || fmt.Sprint(d["redeemedCoupons"]) != "[10OFFmq8kl8 Sl75Ev]" ||
			d["sessionId"] != sess || d["pointsEarned"] != 12.0 {
			t.Fatalf("operator's transaction: %v", d)
		}
		if d["request"].(map[string]any)["purchasePrice"] != "1.50" || d["request"].(map[string]any)["customer"].(map[string]any)["id"] != "c-77" {
			t.Fatalf("stored request: %v", d["request"])
		}
		day := e.s.clock.Now().Add(-time.Hour).UTC().Format(time.DateOnly)
		for q, n := range map[string]int{"": 1, "?posLocationId=LOC123": 1, "?posLocationId=LOC456": 0, "?userId=john-doe": 1, "?userId=jane-doe": 0,
			"?day=" + day: 1, "?day=2001-01-01": 0, "?posLocationId=LOC123&userId=john-doe&day=" + day: 1,
			"?userId=john-doe&day=2001-01-01": 0, "?posLocationId=LOC456&userId=john-doe": 0} {
			r := e.admin_("GET", "/transactions"+q, "")
			mustStatus(t, r, 200)
			page := r.JSON(t)["data"].(map[string]any)["page"].(map[string]any)
			if page["total"] != float64(n) {
				t.Errorf("transactions%s: total %v, want %d", q, page["total"], n)
			}
		}
		mustProblem(t, e.admin_("GET", "/transactions?day=yesterday", ""), 400, "The day parameter must be a date (YYYY-MM-DD).",
			map[string][]string{"day": {"The day parameter must be a date (YYYY-MM-DD)."}})
		mustProblem(t, e.admin_("GET", "/transactions/NOPE", ""), 404, `transaction "NOPE" not found`, nil)
	})
}

func TestTransactionSessionAndValidation(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		sess := e.session("TERM-05")
		dated := func(date, fields string) string {
			return `{"transactionId":"V-1","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":5,"transactionDate":"` + date + `"` + fields + `}`
		}
		tx := func(fields string) string { return dated(e.date(0), fields) }
		mustProblem(t, e.sale(tx(`,"sessionId":"00000000-0000-4000-8000-000000000000"`)), 404, "Session '00000000-0000-4000-8000-000000000000' is unknown or has expired.", nil)
		other := e.session("TERM-06")
		mustProblem(t, e.sale(tx(`,"sessionId":"`+other+`"`)), 400,
			"Session '"+other+"' was started at terminal 'TERM-06' of location 'LOC123', not at this transaction's terminal.",
			map[string][]string{"sessionId": {"Session '" + other + "' was started at terminal 'TERM-06' of location 'LOC123', not at this transaction's terminal."}})
		mustProblem(t, e.sale(tx(``)), 400, "The sessionId field is required.", map[string][]string{"sessionId": {"The sessionId field is required."}})
		mustProblem(t, e.sale(`{"sessionId":"`+sess+`","transactionAmount":"5.00","transactionDate":"soon","transactionType":"Sold"}`), 400,
			"The transactionAmount field must be a number.", map[string][]string{"transactionAmount": {"The transactionAmount field must be a number."}})
		mustProblem(t, e.sale(`{"sessionId":"`+sess+`","transactionType":"Sold","transactionAmount":1e10,"originalTransactionId":"X","couponCodes":[""]}`), 400, "*",
			map[string][]string{
				"transactionId":         {"The transactionId field is required."},
				"terminalId":            {"The terminalId field is required."},
				"posLocationId":         {"The posLocationId field is required."},
				"transactionType":       {"The transactionType field must be Undefined, Sale or Refund."},
				"transactionAmount":     {"The transactionAmount field must be a number from -1000000000.00 to 1000000000.00."},
				"transactionDate":       {"The transactionDate field is required."},
				"originalTransactionId": {"The originalTransactionId field is only for a refund (transactionType Refund or a negative transactionAmount)."},
				"couponCodes[0]":        {"A coupon code must be 1-128 bytes of text."},
			})
		mustProblem(t, e.sale(dated(e.date(6*time.Minute), `,"sessionId":"`+sess+`"`)), 400,
			"The transactionDate field must not be more than 5 minutes in the future.",
			map[string][]string{"transactionDate": {"The transactionDate field must not be more than 5 minutes in the future."}})
		mustProblem(t, e.sale(dated(e.date(-31*24*time.Hour), `,"sessionId":"`+sess+`"`)), 400,
			"The transactionDate field must not be older than 30 days.",
			map[string][]string{"transactionDate": {"The transactionDate field must not be older than 30 days."}})
		mustProblem(t, e.sale(`{"sessionId":"`+sess+`","transactionId":"R","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":-1,"transactionDate":"`+e.date(0)+`","couponCodes":["A"]}`), 400, "*",
			map[string][]string{"originalTransactionId": {"The originalTransactionId field is required for a refund."}, "couponCodes": {"A refund cannot redeem coupons."}})
		mustProblem(t, e.sale(strings.Replace(tx(`,"sessionId":"`+sess+`"`), `"LOC123"`, `"NOPE"`, 1)), 404, "Location 'NOPE' is not registered.", nil)
		mustProblem(t, e.sale(strings.Replace(tx(`,"sessionId":"`+sess+`"`), `"TERM-05"`, `"TERM-404"`, 1)), 404, "Terminal 'TERM-404' is not registered at location 'LOC123'.", nil)
		r := e.s.do(t, req{Method: "POST", Path: "/pos/clover/transaction", Token: e.pos, ContentType: "text/plain", Body: tx("")})
		mustProblem(t, r, 415, `The content type "text/plain" is not supported; send application/json or application/xml (charset utf-8).`, nil)
		huge := tx(`,"sessionId":"` + sess + `","purchaseName":"` + strings.Repeat("x", 70<<10) + `"`)
		mustProblem(t, e.sale(huge), 413, "The request body is larger than 65536 bytes.", nil)
		r = e.s.call(t, "", "POST", "/pos/clover/transaction", tx(""))
		mustStatus(t, r, 401)
		r = e.post("/pos/clover/transaction", e.admin, tx(""))
		mustStatus(t, r, 403)

		// None of that recorded anything; an expired session is refused.
		if r := e.admin_("GET", "/transactions", ""); !strings.Contains(string(r.Body), `"total":0`) {
			t.Fatalf("refused requests recorded something: %s", r.Body)
		}
		e.s.clock.Advance(25 * time.Hour)
		e.pos = e.s.posToken(t)
		mustProblem(t, e.sale(tx(`,"sessionId":"`+sess+`"`)), 404, "Session '"+sess+"' is unknown or has expired.", nil)
	})
}

func TestTransactionCustomerMatchingAndDisabled(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		sale := func(id, customer string) response {
			return e.sale(`{"sessionId":"` + e.session("TERM-05") + `","transactionId":"` + id + `","terminalId":"TERM-05","posLocationId":"LOC123",
				"transactionAmount":3.99,"transactionDate":"` + e.date(0) + `"` + customer + `}`)
		}
		loyalty := func(r response) string {
			mustStatus(t, r, 200)
			b, _ := json.Marshal(r.JSON(t)["data"].(map[string]any)["loyalty"])
			return string(b)
		}
		// The guide's contact shape, an e-mail in another case: John; 3.99 is
		// under the demo program's minimum for a stamp.
		if got := loyalty(sale("M-1", `,"customer":{"contacts":[{"type":"Phone","value":"n/a"},{"type":"Email","value":"JOHN.DOE@example.com"}]}`)); got != `{"points":123,"pointsEarned":3,"stamps":3,"stampsEarned":0,"userId":"john-doe"}` {
			t.Fatalf("by e-mail: %s", got)
		}
		if got := loyalty(sale("M-2", `,"customer":{"contacts":[{"phone":"+1 (555) 555-9876"}]}`)); got != `{"points":48,"pointsEarned":3,"stamps":7,"stampsEarned":0,"userId":"jane-doe"}` {
			t.Fatalf("by phone: %s", got)
		}
		if got := loyalty(sale("M-3", `,"loyalty":{"cardNumber":"nobody"},"customer":{"contacts":[{"email":"john.doe@example.com"}]}`)); got != `null` {
			t.Fatalf("unknown card: %s", got)
		}
		// Two users share an e-mail: ambiguous, no accrual.
		mustStatus(t, e.admin_("POST", "/loyalty-users", `{"id":"john-2","email":"john.doe@example.com"}`), 201)
		if got := loyalty(sale("M-4", `,"customer":{"contacts":[{"email":"john.doe@example.com"}]}`)); got != `null` {
			t.Fatalf("ambiguous e-mail: %s", got)
		}
		// autoEnroll creates the customer.
		r := e.admin_("PUT", "/loyalty-program", `{"pointsPerCurrencyUnit":2.5,"autoEnroll":true}`)
		mustStatus(t, r, 200)
		if got := loyalty(sale("M-5", `,"customer":{"firstName":"Ann","contacts":[{"email":"ann@example.com"}]}`)); !strings.Contains(got, `{"points":9,"pointsEarned":9,"stamps":1,"stampsEarned":1,"userId":"u-`) {
			t.Fatalf("enrolled: %s", got)
		}
		mustTxBody(t, e.admin_("GET", "/loyalty-program", ""), 200, `{"data":{"posSystemId":"clover","posCompanyId":"demo-company","pointsPerCurrencyUnit":2.50,`+
			`"stampsPerSale":1,"minimumAmountForStamp":0.00,"autoEnroll":true,"updatedAt":"`+e.s.clock.Now().Format(time.RFC3339)+`"}}`)

		// A disabled terminal, and the transactions switch off: Disabled,
		// nothing stored.
		r = e.sale(`{"sessionId":"x","transactionId":"D-1","terminalId":"TERM-99","posLocationId":"LOC123","transactionAmount":1,"transactionDate":"` + e.date(0) + `"}`)
		want := `{"data":{"id":null,"transactionId":"D-1","sessionId":"x","transactionType":"Undefined","posStatus":"Disabled","loyalty":null,"coupons":[],"promotions":[],` +
			`"cfsTemplate":{"cfsCarouselUrl":""},"receipt":{"primaryText":"","secondaryText":"","imageUrl":"","posStatus":"Disabled","loyaltyText":""}}}`
		mustTxBody(t, r, 200, want)
		off := false
		_, err := e.adminAPI().Admin.UpdateCompany(t.Context(), "clover", "demo-company", client.UpdateCompanyRequest{Features: &client.FeaturesUpdate{Transactions: &off}})
		e.adminAPI().ok(err)
		r = e.sale(`{"sessionId":"x","transactionId":"D-1","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":1,"transactionDate":"` + e.date(0) + `"}`)
		mustTxBody(t, r, 200, want)
		if r := e.admin_("GET", "/transactions/D-1", ""); r.Status != 404 {
			t.Fatalf("a Disabled transaction was stored: %s", r.Body)
		}
	})
}
