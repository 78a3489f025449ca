package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/openapi"
)

// Messages of docs/api.md §14.
const (
	msgKeyInFlight = "A request with this Idempotency-Key is still being processed; retry after the seconds of Retry-After to get its answer."
	msgKeyReused   = "This Idempotency-Key was used for another request (method, target, Content-Type or body); send a new key with a new request."
	msgBadKey      = "The Idempotency-Key header must be 1-255 printable ASCII characters, bare or as a quoted string (RFC 8941)."
	msgKeyOnce     = "The Idempotency-Key header must be sent once."
)

// keyed is q with an Idempotency-Key.
func keyed(q req, key string) req {
	h := map[string]string{"Idempotency-Key": key}
	for k, v := range q.Header {
		h[k] = v
	}
	q.Header = h
	return q
}

// mustFirst checks a first answer: the status, and no Idempotent-Replayed.
func mustFirst(t *testing.T, r response, status int) response {
	t.Helper()
	mustStatus(t, r, status)
	if v, ok := r.Header["Idempotent-Replayed"]; ok {
		t.Fatalf("a first answer carries Idempotent-Replayed %q", v)
	}
	return r
}

// mustReplay checks that r replays first: same status, Content-Type and
// bytes, marked Idempotent-Replayed: true.
func mustReplay(t *testing.T, r, first response) {
	t.Helper()
	if r.Status != first.Status || string(r.Body) != string(first.Body) || r.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
		t.Fatalf("replay %d %q %s\nwant %d %q %s", r.Status, r.Header.Get("Content-Type"), r.Body, first.Status, first.Header.Get("Content-Type"), first.Body)
	}
	if got := r.Header.Values("Idempotent-Replayed"); len(got) != 1 || got[0] != "true" {
		t.Fatalf("replay's Idempotent-Replayed %q, want true", got)
	}
}

// sessionOf is the sessionId of a startInteraction answer.
func sessionOf(t *testing.T, r response) string {
	t.Helper()
	id, _ := r.JSON(t)["data"].(map[string]any)["sessionId"].(string)
	if id == "" {
		t.Fatalf("no sessionId in %s", r.Body)
	}
	return id
}

// execSQL runs one statement on the server's database, beside the server:
// the tests use it to make the store fail for real.
func (s *server) execSQL(t *testing.T, stmt string) {
	t.Helper()
	ctx := context.Background()
	if app.IsPostgres(s.cfg.Database) {
		conn, err := pgx.Connect(ctx, s.cfg.Database)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		return
	}
	db, err := sql.Open("sqlite", s.cfg.Database+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// inFlight reports whether client's key is claimed by a request that runs,
// asking the server's own store: it claims the key with a record that has
// already expired, which the store hands back the live claim instead of, or
// stores where there is none (and which any real claim then replaces).
func (s *server) inFlight(t *testing.T, st posgate.Store, client, key string) bool {
	t.Helper()
	past := s.clock.Now().Add(-48 * time.Hour)
	held, err := st.ClaimIdempotencyKey(context.Background(), &posgate.IdempotencyRecord{ClientID: client, Key: key, ClaimID: "probe",
		RequestHash: make([]byte, 32), CreatedAt: past, LockedUntil: past, ExpiresAt: past}, past)
	if err != nil {
		t.Fatal(err)
	}
	return held != nil && !held.Done && held.ClaimID != "probe"
}

func TestIdempotencyKey(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin, pos := s.adminToken(t), s.posToken(t)
		coupons := demoCompanyPath + "/coupons"
		users := demoCompanyPath + "/loyalty-users"
		adminJSON := func(path, body string) req {
			return req{Method: "POST", Path: path, Token: admin, ContentType: "application/json", Body: body}
		}
		interaction := func(tok, body string) req {
			return req{Method: "POST", Path: "/pos/clover/startInteraction", Token: tok, ContentType: "application/json", Body: body}
		}
		const till = `{"terminalId":"TERM-05","posLocationId":"LOC123"}`

		t.Run("a retry gets the first answer, which ran once", func(t *testing.T) {
			body := `{"code":"IDEM-1","name":"Once"}`
			first := mustFirst(t, s.request(t, keyed(adminJSON(coupons, body), "k-replay")), 201)
			mustReplay(t, s.request(t, keyed(adminJSON(coupons, body), "k-replay")), first)
			// The same key as a Structured Field String is the same key.
			mustReplay(t, s.request(t, keyed(adminJSON(coupons, body), `"k-replay"`)), first)
			// Without the key the request runs, and finds the coupon made once.
			mustProblem(t, s.request(t, adminJSON(coupons, body)), 409, `coupon "IDEM-1" already exists`, nil)

			// A POS request, in XML: one session, replayed.
			xml := req{Method: "POST", Path: "/pos/clover/startInteraction", Token: pos, ContentType: "application/xml",
				Body: `<StartInteractionDto><terminalId>TERM-05</terminalId><posLocationId>LOC123</posLocationId></StartInteractionDto>`}
			firstPOS := mustFirst(t, s.request(t, keyed(xml, "pos-1")), 200)
			mustReplay(t, s.request(t, keyed(xml, "pos-1")), firstPOS)
			if other := sessionOf(t, mustFirst(t, s.do(t, xml), 200)); other == sessionOf(t, firstPOS) {
				t.Fatal("a request without a key was answered from the key's record")
			}

			// A POST without a body (redeem) is replayed too.
			mustStatus(t, s.request(t, adminJSON(coupons, `{"code":"IDEM-R"}`)), 201)
			redeem := req{Method: "POST", Path: coupons + "/IDEM-R/redeem", Token: admin}
			firstRedeem := mustFirst(t, s.request(t, keyed(redeem, "k-redeem")), 200)
			mustReplay(t, s.request(t, keyed(redeem, "k-redeem")), firstRedeem)
		})

		t.Run("a 4xx answer is stored and replayed as it was", func(t *testing.T) {
			q := keyed(adminJSON(coupons, `{"code":"sl75EV"}`), "k-4xx")
			first := mustFirst(t, s.request(t, q), 409)
			mustProblem(t, first, 409, `coupon "sl75EV" already exists`, nil)
			// The very bytes, trace id included: the request did not run again.
			mustReplay(t, s.request(t, q), first)

			bad := keyed(adminJSON(coupons, `{"code":"IDEM-400","status":"Expired"}`), "k-400")
			first = mustFirst(t, s.request(t, bad), 400)
			mustReplay(t, s.request(t, bad), first)
		})

		t.Run("the same key with another request is 422", func(t *testing.T) {
			mustFirst(t, s.request(t, keyed(adminJSON(coupons, `{"code":"IDEM-2"}`), "k-other")), 201)
			for name, q := range map[string]req{
				"other body":         adminJSON(coupons, `{"code":"IDEM-3"}`),
				"body with more":     adminJSON(coupons, `{"code":"IDEM-2"} `),
				"body with less":     adminJSON(coupons, `{"code":"IDEM-2`),
				"other path":         adminJSON(users, `{"code":"IDEM-2"}`),
				"other query":        adminJSON(coupons+"?x=1", `{"code":"IDEM-2"}`),
				"other content type": {Method: "POST", Path: coupons, Token: admin, ContentType: "application/json; charset=utf-8", Body: `{"code":"IDEM-2"}`},
			} {
				t.Run(name, func(t *testing.T) {
					mustProblem(t, s.request(t, keyed(q, "k-other")), 422, msgKeyReused, nil)
				})
			}
			mustProblem(t, s.call(t, admin, "GET", coupons+"/IDEM-3", ""), 404, `coupon "IDEM-3" not found`, nil)
		})

		t.Run("a retry while the first runs is 409 with Retry-After", func(t *testing.T) {
			st := s.openStore(t)
			body := `{"code":"IDEM-SLOW","name":"Slow"}`
			pr, pw := io.Pipe()
			hreq, err := http.NewRequest("POST", s.base+coupons, pr)
			if err != nil {
				t.Fatal(err)
			}
			hreq.Header.Set("Authorization", "Bearer "+admin)
			hreq.Header.Set("Content-Type", "application/json")
			hreq.Header.Set("Idempotency-Key", "k-slow")
			type result struct {
				status int
				body   []byte
				err    error
			}
			done := make(chan result, 1)
			go func() {
				resp, err := s.http.Do(hreq)
				if err != nil {
					done <- result{err: err}
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				done <- result{resp.StatusCode, b, err}
			}()
			// Half the body; the handler waits for the rest.
			if _, err := io.WriteString(pw, body[:10]); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for !s.inFlight(t, st, "demo-admin", "k-slow") {
				if time.Now().After(deadline) {
					t.Fatal("the first request never claimed its key")
				}
				time.Sleep(5 * time.Millisecond)
			}
			for _, retry := range []req{adminJSON(coupons, body), adminJSON(coupons, `{"code":"IDEM-SLOW-2"}`)} {
				r := s.request(t, keyed(retry, "k-slow"))
				mustProblem(t, r, 409, msgKeyInFlight, nil)
				if got := r.Header.Get("Retry-After"); got != "1" {
					t.Fatalf("Retry-After %q, want 1", got)
				}
			}
			if _, err := io.WriteString(pw, body[10:]); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			res := <-done
			if res.err != nil || res.status != 201 {
				t.Fatalf("the first request: %d %s %v", res.status, res.body, res.err)
			}
			replay := s.request(t, keyed(adminJSON(coupons, body), "k-slow"))
			mustReplay(t, replay, response{Status: 201, Header: replay.Header, Body: res.body})
		})

		t.Run("a 5xx answer is not stored: the retry runs", func(t *testing.T) {
			body := `{"id":"idem-5xx","firstName":"Five"}`
			if app.IsPostgres(dsn) {
				s.execSQL(t, `CREATE FUNCTION idem_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'broken store'; END $$`)
				s.execSQL(t, `CREATE TRIGGER idem_fail BEFORE INSERT ON loyalty_users FOR EACH ROW EXECUTE FUNCTION idem_fail()`)
			} else {
				s.execSQL(t, `CREATE TRIGGER idem_fail BEFORE INSERT ON loyalty_users BEGIN SELECT RAISE(ABORT, 'broken store'); END`)
			}
			mustProblem(t, mustFirst(t, s.request(t, keyed(adminJSON(users, body), "k-5xx")), 500), 500, "Internal error.", nil)
			if app.IsPostgres(dsn) {
				s.execSQL(t, `DROP TRIGGER idem_fail ON loyalty_users`)
			} else {
				s.execSQL(t, `DROP TRIGGER idem_fail`)
			}
			first := mustFirst(t, s.request(t, keyed(adminJSON(users, body), "k-5xx")), 201)
			mustReplay(t, s.request(t, keyed(adminJSON(users, body), "k-5xx")), first)
		})

		t.Run("keys are per client", func(t *testing.T) {
			r := s.request(t, adminJSON("/admin/v1/clients", `{"posSystemId":"clover","scopes":["pos_integration"]}`))
			mustStatus(t, r, 201)
			d := r.JSON(t)["data"].(map[string]any)
			other := s.token(t, d["clientId"].(string), d["clientSecret"].(string), "pos_integration")
			mine := mustFirst(t, s.request(t, keyed(interaction(pos, till), "shared")), 200)
			theirs := mustFirst(t, s.request(t, keyed(interaction(other, till), "shared")), 200)
			if sessionOf(t, mine) == sessionOf(t, theirs) {
				t.Fatal("another client's request with the same key was answered from the first client's record")
			}
			// Another body under the same text is no reuse for another client either.
			mustFirst(t, s.request(t, keyed(interaction(other, `{"terminalId":"TERM-06","posLocationId":"LOC123"}`), "only-mine")), 200)
			mustFirst(t, s.request(t, keyed(interaction(pos, till), "only-mine")), 200)
			mustReplay(t, s.request(t, keyed(interaction(pos, till), "shared")), mine)
		})

		t.Run("a key expires after 24 hours", func(t *testing.T) {
			first := mustFirst(t, s.request(t, keyed(interaction(pos, till), "k-day")), 200)
			s.clock.Advance(24*time.Hour - time.Second)
			tok := s.posToken(t)
			mustReplay(t, s.request(t, keyed(interaction(tok, till), "k-day")), first)
			s.clock.Advance(time.Second)
			again := mustFirst(t, s.request(t, keyed(interaction(tok, till), "k-day")), 200)
			if sessionOf(t, again) == sessionOf(t, first) {
				t.Fatal("an expired key was replayed")
			}
			// The new answer is the key's for the next 24 hours.
			mustReplay(t, s.request(t, keyed(interaction(tok, till), "k-day")), again)
			admin, pos = s.adminToken(t), s.posToken(t)
		})

		t.Run("50 concurrent requests with one key take effect once", func(t *testing.T) {
			const n = 50
			body := `{"code":"IDEM-RACE","name":"Race"}`
			results := make([]response, n)
			errs := make([]error, n)
			gate := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					hreq, err := http.NewRequest("POST", s.base+coupons, strings.NewReader(body))
					if err != nil {
						errs[i] = err
						return
					}
					hreq.Header.Set("Authorization", "Bearer "+admin)
					hreq.Header.Set("Content-Type", "application/json")
					hreq.Header.Set("Idempotency-Key", "k-race")
					<-gate
					resp, err := s.http.Do(hreq)
					if err != nil {
						errs[i] = err
						return
					}
					defer resp.Body.Close()
					b, err := io.ReadAll(resp.Body)
					results[i], errs[i] = response{Status: resp.StatusCode, Header: resp.Header, Body: b, Close: resp.Close}, err
				})
			}
			close(gate)
			wg.Wait()
			var first *response
			ran, replayed, busy := 0, 0, 0
			for i, r := range results {
				if errs[i] != nil {
					t.Fatalf("request %d: %v", i, errs[i])
				}
				switch {
				case r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "":
					ran++
					first = &results[i]
				case r.Status == 201:
					replayed++
				case r.Status == 409 && r.Header.Get("Retry-After") == "1":
					mustProblem(t, r, 409, msgKeyInFlight, nil)
					busy++
				default:
					t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
				}
			}
			if ran != 1 {
				t.Fatalf("%d requests ran (%d replayed, %d in flight), want 1", ran, replayed, busy)
			}
			for _, r := range results {
				if r.Status == 201 && string(r.Body) != string(first.Body) {
					t.Fatalf("a replay differs from the answer:\n%s\n%s", r.Body, first.Body)
				}
			}
			t.Logf("50 requests: 1 ran, %d replayed, %d found it in flight", replayed, busy)
			mustReplay(t, s.request(t, keyed(adminJSON(coupons, body), "k-race")), *first)
		})

		t.Run("a bad key is 400 and changes nothing", func(t *testing.T) {
			q := adminJSON(coupons, `{"code":"IDEM-BAD"}`)
			for name, key := range map[string]string{
				"empty":            "",
				"256 characters":   strings.Repeat("k", 256),
				"not ASCII":        "clé",
				"unclosed quote":   `"abc`,
				"quote inside":     `"a"b"`,
				"empty quoted":     `""`,
				"bad escape":       `"a\b"`,
				"257 quoted bytes": `"` + strings.Repeat("k", 256) + `"`,
			} {
				t.Run(name, func(t *testing.T) {
					mustProblem(t, s.request(t, keyed(q, key)), 400, msgBadKey, map[string][]string{"Idempotency-Key": {msgBadKey}})
				})
			}
			hreq, _ := http.NewRequest("POST", s.base+coupons, strings.NewReader(q.Body))
			hreq.Header.Set("Authorization", "Bearer "+admin)
			hreq.Header.Set("Content-Type", "application/json")
			hreq.Header.Add("Idempotency-Key", "a")
			hreq.Header.Add("Idempotency-Key", "b")
			resp, err := s.http.Do(hreq)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mustProblem(t, response{Status: resp.StatusCode, Header: resp.Header, Body: b}, 400, msgKeyOnce, map[string][]string{"Idempotency-Key": {msgKeyOnce}})
			mustProblem(t, s.call(t, admin, "GET", coupons+"/IDEM-BAD", ""), 404, `coupon "IDEM-BAD" not found`, nil)
			// 255 characters, and escapes in a quoted key, are fine.
			mustFirst(t, s.request(t, keyed(q, strings.Repeat("k", 255))), 201)
			first := mustFirst(t, s.request(t, keyed(adminJSON(coupons, `{"code":"IDEM-Q"}`), `"a \"quoted\" \\ key"`)), 201)
			mustReplay(t, s.request(t, keyed(adminJSON(coupons, `{"code":"IDEM-Q"}`), `a "quoted" \ key`)), first)
		})

		t.Run("promotion import: replayed, fingerprinted while streamed", func(t *testing.T) {
			body := items(`{"id":"IDEM-P1","name":"one"}`, `{"id":"IDEM-P2","name":"two"}`)
			q := keyed(importReq(pos, "demo-company", "application/json", body), "k-import")
			first := mustFirst(t, s.request(t, q), 200)
			mustReplay(t, s.request(t, q), first)
			mustProblem(t, s.request(t, keyed(importReq(pos, "demo-company", "application/json", items(`{"id":"IDEM-P1","name":"uno"}`)), "k-import")),
				422, msgKeyReused, nil)
			// An answer given before a body longer than the ordinary cap was
			// read (an unknown company) is not stored: fingerprinting it
			// would mean reading it all. The retry runs again.
			big := items(`{"id":"X","name":"` + strings.Repeat("x", 100<<10) + `"}`)
			for _, b := range []string{big, big + " "} {
				mustProblem(t, mustFirst(t, s.request(t, keyed(importReq(pos, "nope", "application/json", b), "k-big")), 404), 404,
					"Company 'nope' is not registered.", nil)
			}
		})

		t.Run("every POST of the POS and operator APIs takes the header", func(t *testing.T) {
			for _, op := range postOperations(t) {
				t.Run(op.id, func(t *testing.T) {
					tok := admin
					if op.tag == "POS" {
						tok = pos
					}
					r := s.do(t, req{Method: "POST", Path: op.path, Token: tok, ContentType: "application/json", Body: "{}",
						Header: map[string]string{"Idempotency-Key": ""}})
					mustProblem(t, r, 400, msgBadKey, map[string][]string{"Idempotency-Key": {msgBadKey}})
				})
			}
		})
	})
}

// postOperation is a POST of the document, its path filled with demo ids.
type postOperation struct{ id, tag, path string }

// postOperations lists the document's POST operations of the POS and
// operator APIs, with the demo data's ids in their paths, so that a new
// route is covered without being listed.
func postOperations(t *testing.T) []postOperation {
	t.Helper()
	data, err := openapi.Document("http://posgate.test", "http://posgate.test")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]struct {
			Post *struct {
				OperationID string   `json:"operationId"`
				Tags        []string `json:"tags"`
			} `json:"post"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{"posSystemId": "clover", "posCompanyId": "demo-company", "posLocationId": "LOC123",
		"terminalId": "TERM-05", "clientId": "demo-pos", "code": "Sl75Ev", "userId": "john-doe", "slideId": "welcome",
		"transactionId": "T-ANY", "personId": "manager@demo.posgate", "endpointId": "wh_any", "deliveryId": "1"} // any id: an empty key is refused before the path's objects are looked up
	param := regexp.MustCompile(`\{([^}]+)\}`)
	var ops []postOperation
	for path, item := range doc.Paths {
		op := item.Post
		if op == nil || len(op.Tags) == 0 || (op.Tags[0] != "POS" && op.Tags[0] != "Operator") {
			continue
		}
		filled := param.ReplaceAllStringFunc(path, func(m string) string {
			id, ok := ids[m[1:len(m)-1]]
			if !ok {
				t.Fatalf("%s: no demo id for %s", path, m)
			}
			return id
		})
		ops = append(ops, postOperation{op.OperationID, op.Tags[0], filled})
	}
	if len(ops) < 20 {
		t.Fatalf("only %d POST operations found", len(ops))
	}
	return ops
}
