package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
)

// rawDo sends a request head with the given headers and a few bytes of a
// body that never comes whole, over a connection of its own, and returns
// the answer and how long it took.
func rawDo(t *testing.T, s *server, method, path string, header map[string]string) (response, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", s.addrs.API.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, s.addrs.API)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n{\"items\":[")
	start := time.Now()
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: body}, time.Since(start)
}

// A Content-Length over the route's cap is answered 413 at once, before the
// body is read (not after the server's 60 s read timeout); a
// refused content type still comes first (docs/api.md §2.7, §2.8).
func TestDeclaredOversizedBody(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		pos, admin := s.posToken(t), s.adminToken(t)
		const huge = "1000000000000000000"
		company := "/admin/v1/pos-systems/clover/companies/demo-company"
		for _, tc := range []struct {
			name, method, path, token, contentType string
			status                                 int
			detail                                 string
		}{
			{"POS route", "POST", "/pos/clover/startInteraction", pos, "application/json", 413, "The request body is larger than 65536 bytes."},
			{"POS route, XML", "POST", "/v2/pos/clover/carousel", pos, "application/xml", 413, "The request body is larger than 65536 bytes."},
			{"POS route, refused content type first", "POST", "/pos/clover/startInteraction", pos, "text/plain", 415,
				`The content type "text/plain" is not supported; send application/json or application/xml (charset utf-8).`},
			{"operator route", "POST", "/admin/v1/pos-systems", admin, "application/json", 413, "The request body is larger than 65536 bytes."},
			{"operator route, refused content type first", "POST", "/admin/v1/pos-systems", admin, "application/xml", 415, "Send the body as application/json."},
			{"coupon import", "POST", company + "/coupons/import", admin, "application/json", 413, "The request body is larger than 33554432 bytes."},
			{"coupon import, refused content type first", "POST", company + "/coupons/import", admin, "text/csv", 415, "Send the body as application/json."},
			{"promotion import", "POST", "/pos/clover/company/demo-company/import/promotions", pos, "application/json", 413,
				"The request body is larger than 268435456 bytes."},
			{"promotion import, unknown company first", "POST", "/pos/clover/company/nope/import/promotions", pos, "application/json", 404,
				"Company 'nope' is not registered."},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r, took := rawDo(t, s, tc.method, tc.path, map[string]string{"Authorization": "Bearer " + tc.token,
					"Content-Type": tc.contentType, "Content-Length": huge})
				mustProblem(t, r, tc.status, tc.detail, nil)
				if took > 5*time.Second {
					t.Errorf("answered after %v", took)
				}
			})
		}
		t.Run("token endpoint", func(t *testing.T) {
			r, took := rawDo(t, s, "POST", "/connect/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Content-Length": huge})
			mustStatus(t, r, 400)
			if got := string(r.Body); got != `{"error":"invalid_request","error_description":"The request body is larger than 16 KiB."}` {
				t.Errorf("body %s", got)
			}
			if took > 5*time.Second {
				t.Errorf("answered after %v", took)
			}
		})
		// Nothing was created by any of them.
		r := s.call(t, admin, "GET", "/admin/v1/pos-systems", "")
		if mustStatus(t, r, 200); strings.Count(string(r.Body), `"id"`) != 1 {
			t.Errorf("POS systems: %s", r.Body)
		}
	})
}

// A location hidden from a restricted client and an unknown one answer the
// same 404 after the same store call (with the lookup cache on, as posgate
// serve runs), so in the same time (docs/api.md §3.7): the medians of the
// two, sent in turn, differ by at most a tenth (and 2 µs of jitter).
func TestHiddenLocationAnswersAsUnknown(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.CacheTTL = time.Hour })
		admin := s.adminToken(t)
		mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"other-co","name":"Other"}`), 201)
		r := s.call(t, admin, "POST", "/admin/v1/clients", `{"clientId":"restricted","posSystemId":"clover","scopes":["pos_integration"],"companyIds":["other-co"]}`)
		mustStatus(t, r, 201)
		tok := s.token(t, "restricted", r.JSON(t)["data"].(map[string]any)["clientSecret"].(string), "pos_integration")
		// demo-pos sees LOC123, so it is in the lookup cache.
		mustStatus(t, s.api(t, s.posToken(t)).start("TERM-05", "LOC123"), 200)

		const n = 1000
		times := map[string][]time.Duration{}
		for i := range 2 * n {
			loc := []string{"LOC123", "LOC-NOPE"}[i%2]
			start := time.Now()
			r := doTo(t, http.DefaultClient, s.base, startReq(tok, "TERM-05", loc))
			times[loc] = append(times[loc], time.Since(start))
			mustProblem(t, r, 404, "Location '"+loc+"' is not registered.", nil)
		}
		median := func(d []time.Duration) time.Duration {
			slices.Sort(d)
			return d[len(d)/2]
		}
		hidden, unknown := median(times["LOC123"]), median(times["LOC-NOPE"])
		t.Logf("median over %d requests: hidden %v, unknown %v", n, hidden, unknown)
		if diff := max(hidden-unknown, unknown-hidden); diff > min(hidden, unknown)/10+2*time.Microsecond {
			t.Errorf("a hidden location answers in %v, an unknown one in %v (medians of %d): the time tells them apart", hidden, unknown, n)
		}
	})
}

// The carousel shows at most 50 promotions however many apply: the
// location's own first, then those ending soonest (docs/api.md §7.2).
func TestCarouselPromotionBound(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok := s.posToken(t)
		end := s.clock.Now().Add(48 * time.Hour).UTC()
		var objs []string
		for i := range 200 {
			// Every location, ending a minute apart: 000 ends first.
			objs = append(objs, fmt.Sprintf(`{"id":"BULK-%03d","name":"Bulk %d","promotionResults":[{"promotionType":"Amount","value":1}],
				"promotionValidities":[{"endDate":%q}]}`, i, i, end.Add(time.Duration(i)*time.Minute).Format(time.RFC3339)))
		}
		objs = append(objs, `{"id":"ZZ-OWN","name":"Own","locationIds":["LOC123"]}`)
		res := mustImport(t, s.request(t, importReq(tok, "demo-company", "application/json", items(objs...))))
		if res.Status != "Completed" {
			t.Fatalf("import %+v", res)
		}
		page := s.pathOf(t, s.carouselURL(t, tok, "TERM-05", "LOC123"))
		r := s.call(t, "", "GET", contentPath(page, "content"), "")
		mustStatus(t, r, 200)
		var env struct {
			Data struct {
				Slides []struct {
					SlideID string `json:"slideId"`
				} `json:"slides"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &env); err != nil {
			t.Fatal(err)
		}
		var promos []string
		for _, sl := range env.Data.Slides {
			if id, ok := strings.CutPrefix(sl.SlideID, "promotion:"); ok {
				promos = append(promos, id)
			}
		}
		// The location's own first (ZZ-OWN, and the demo's weekend
		// breakfast at weekend mornings), then BULK-000… by end; the demo's
		// open-ended coffee promotion is past the bound.
		own := 1
		if promos[0] == "DEMO-WEEKEND-BREAKFAST" {
			own = 2
		}
		want := []string{"DEMO-WEEKEND-BREAKFAST", "ZZ-OWN"}[2-own:]
		for i := range 50 - own {
			want = append(want, fmt.Sprintf("BULK-%03d", i))
		}
		if !slices.Equal(promos, want) {
			t.Fatalf("%d promotion slides: %v", len(promos), promos)
		}
		if len(r.Body) > 64<<10 {
			t.Errorf("content of %d bytes", len(r.Body))
		}
	})
}
