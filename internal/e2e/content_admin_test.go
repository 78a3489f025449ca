package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/demo"
)

// TestContentOperatorAPI covers the operator routes of slides, carousel
// settings and receipt promotions: success, validation, 404 and 409.
func TestContentOperatorAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		call := func(method, path, body string) response {
			t.Helper()
			return s.admin(t, admin, method, path, body)
		}
		now := s.clock.Now().UTC().Format(time.RFC3339)
		slides := "/admin/v1/pos-systems/clover/companies/demo-company/slides"
		slideJSON := func(id string, pos int, image, title, text string, secs int, created, updated string) string {
			return `{"posSystemId":"clover","posCompanyId":"demo-company","slideId":"` + id + `","position":` + itoa(pos) +
				`,"imageUrl":"` + image + `","title":"` + title + `","text":"` + text + `","durationSeconds":` + itoa(secs) +
				`,"createdAt":"` + created + `","updatedAt":"` + updated + `"}`
		}

		t.Run("slides", func(t *testing.T) {
			r := call("GET", slides, "")
			mustStatus(t, r, 200)
			for _, id := range []string{`"slideId":"welcome","position":1`, `"slideId":"coffee","position":2`, `"slideId":"loyalty","position":3`} {
				if !strings.Contains(string(r.Body), id) {
					t.Fatalf("demo slides: %s", r.Body)
				}
			}
			mustCreated(t, call("POST", slides, `{"slideId":"new","title":"New","text":"Fresh"}`),
				`{"data":`+slideJSON("new", 4, "", "New", "Fresh", 8, now, now)+`}`)
			mustBody(t, call("GET", slides+"/new", ""), `{"data":`+slideJSON("new", 4, "", "New", "Fresh", 8, now, now)+`}`)
			s.clock.Advance(time.Minute)
			later := s.clock.Now().UTC().Format(time.RFC3339)
			mustBody(t, call("PATCH", slides+"/new", `{"position":2,"imageUrl":"https://cdn.example.com/n.png","durationSeconds":15}`),
				`{"data":`+slideJSON("new", 2, "https://cdn.example.com/n.png", "New", "Fresh", 15, now, later)+`}`)
			r = call("POST", slides, `{"text":"Generated id","position":0}`)
			mustStatus(t, r, 201)
			id, _ := r.JSON(t)["data"].(map[string]any)["slideId"].(string)
			if !strings.HasPrefix(id, "slide-") || len(id) != 22 {
				t.Fatalf("generated slide id %q", id)
			}
			mustBody(t, call("DELETE", slides+"/new", ""), `{"data":`+slideJSON("new", 2, "https://cdn.example.com/n.png", "New", "Fresh", 15, now, later)+`}`)
			mustProblem(t, call("GET", slides+"/new", ""), 404, `slide "new" not found`, nil)
			mustProblem(t, call("DELETE", slides+"/new", ""), 404, `slide "new" not found`, nil)
			mustProblem(t, call("PATCH", slides+"/new", `{"title":"x"}`), 404, `slide "new" not found`, nil)
			mustProblem(t, call("POST", slides, `{"slideId":"welcome","title":"again"}`), 409, `slide "welcome" already exists`, nil)
			mustProblem(t, call("GET", "/admin/v1/pos-systems/clover/companies/nope/slides", ""), 404, `company "nope" not found`, nil)
			mustProblem(t, call("POST", "/admin/v1/pos-systems/clover/companies/nope/slides", `{"title":"x"}`), 404, `company "nope" not found`, nil)
		})
		t.Run("slide validation", func(t *testing.T) {
			bad := func(method, path, body string, errs map[string][]string) {
				t.Helper()
				mustProblem(t, call(method, path, body), 400, "*", errs)
			}
			bad("POST", slides, `{"title":"x","durationSeconds":4}`, map[string][]string{"durationSeconds": {"The durationSeconds field must be between 5 and 15."}})
			bad("POST", slides, `{"title":"x","durationSeconds":16}`, map[string][]string{"durationSeconds": {"The durationSeconds field must be between 5 and 15."}})
			bad("POST", slides, `{}`, map[string][]string{"imageUrl": {"A slide needs an imageUrl, a title or a text."}})
			bad("POST", slides, `{"imageUrl":"javascript:alert(1)"}`, map[string][]string{"imageUrl": {"The imageUrl field must be an absolute http or https URL (or a data:image URL)."}})
			bad("POST", slides, `{"imageUrl":"data:text/html,<b>x</b>"}`, map[string][]string{"imageUrl": {"A data: imageUrl must be a PNG, JPEG, GIF, WebP or SVG image."}})
			bad("POST", slides, `{"imageUrl":"data:image/png;base64,`+strings.Repeat("A", 17<<10)+`"}`, map[string][]string{"imageUrl": {"A data: imageUrl must be at most 16384 bytes; host larger images and give their http(s) URL."}})
			bad("POST", slides, `{"title":"`+strings.Repeat("x", 201)+`"}`, map[string][]string{"title": {"The title field must be valid text of at most 200 bytes."}})
			bad("POST", slides, `{"title":"x","position":10001}`, map[string][]string{"position": {"The position field must be between 1 and 10000 (0 or absent: after the last slide)."}})
			bad("POST", slides, `{"slideId":"a/b","title":"x"}`, map[string][]string{"slideId": {"The slideId field must be 1-128 printable characters without '/', '\\', '?', '#', '%' or surrounding spaces."}})
			bad("PATCH", slides+"/welcome", `{"position":0}`, map[string][]string{"position": {"The position field must be between 1 and 10000."}})
			bad("PATCH", slides+"/welcome", `{"imageUrl":"","title":"","text":""}`, map[string][]string{"imageUrl": {"A slide needs an imageUrl, a title or a text."}})
			r := call("POST", slides, `{"title":"x","durationSeconds":"8"}`)
			mustProblem(t, r, 400, "*", map[string][]string{"durationSeconds": {"The durationSeconds field must be an integer."}})
			r = call("POST", slides, `{"title":"x","colour":"red"}`)
			mustProblem(t, r, 400, "*", r400Fields(t, r))
			mustProblem(t, s.do(t, req{Method: "POST", Path: slides, Token: admin, ContentType: "application/xml", Body: `<a><title>x</title></a>`}), 415, "*", nil)
			mustProblem(t, call("POST", slides, `{"title":"`+strings.Repeat("x", 70<<10)+`"}`), 413, "*", nil)
			mustProblem(t, s.call(t, s.posToken(t), "GET", slides, ""), 403, "*", nil)
			mustProblem(t, s.call(t, "", "GET", slides, ""), 401, "*", nil)
			// Nothing of the above was stored.
			r = call("GET", slides, "")
			if n := strings.Count(string(r.Body), `"slideId"`); n != 4 {
				t.Fatalf("%d slides after the refused requests: %s", n, r.Body)
			}
		})
		t.Run("slide cap", func(t *testing.T) {
			st := s.openStore(t)
			existing, err := st.ListSlides(context.Background(), "clover", demo.CompanyID)
			if err != nil {
				t.Fatal(err)
			}
			for i := len(existing); i < 100; i++ {
				mustStatus(t, call("POST", slides, `{"title":"filler"}`), 201)
			}
			mustProblem(t, call("POST", slides, `{"title":"one too many"}`), 409, "Company 'demo-company' has 100 slides, the most allowed; remove one first.", nil)
		})
		t.Run("carousel settings", func(t *testing.T) {
			path := "/admin/v1/pos-systems/clover/companies/demo-company/carousel"
			mustBody(t, call("GET", path, ""), `{"data":{"posSystemId":"clover","posCompanyId":"demo-company","urlTemplate":"","updatedAt":null}}`)
			mustBody(t, call("PUT", path, `{"urlTemplate":"https://ads.example.com/{terminalId}"}`),
				`{"data":{"posSystemId":"clover","posCompanyId":"demo-company","urlTemplate":"https://ads.example.com/{terminalId}","updatedAt":"`+s.clock.Now().UTC().Format(time.RFC3339)+`"}}`)
			mustProblem(t, call("PUT", path, `{"urlTemplate":5}`), 400, "*", map[string][]string{"urlTemplate": {"The urlTemplate field must be a string."}})
			mustProblem(t, call("GET", "/admin/v1/pos-systems/clover/companies/nope/carousel", ""), 404, `company "nope" not found`, nil)
		})
		t.Run("receipt promotions", func(t *testing.T) {
			company := "/admin/v1/pos-systems/clover/companies/demo-company/receipt-promotion"
			loc := "/admin/v1/pos-systems/clover/locations/LOC456/receipt-promotion"
			mustProblem(t, call("GET", company, ""), 404, `receipt promotion of company "demo-company" not found`, nil)
			stamp := s.clock.Now().UTC().Format(time.RFC3339)
			r := call("PUT", loc, `{"primaryText":"Airport","secondaryText":"Safe travels","targetUrl":"https://example.com/fly"}`)
			mustStatus(t, r, 200)
			body := string(r.Body)
			prefix := `{"data":{"posSystemId":"clover","posCompanyId":"demo-company","posLocationId":"LOC456","primaryText":"Airport","secondaryText":"Safe travels","targetUrl":"https://example.com/fly","createdAt":"` + stamp + `","updatedAt":"` + stamp + `","imageUrl":"` + s.base + `/receipt/qr.png?d=`
			if !strings.HasPrefix(body, prefix) {
				t.Fatalf("PUT location promotion:\n got %s\nwant prefix %s", body, prefix)
			}
			if got := decodeQR(t, s.call(t, "", "GET", s.pathOf(t, r.JSON(t)["data"].(map[string]any)["imageUrl"].(string)), "").Body, 384); got != "https://example.com/fly" {
				t.Fatalf("QR of the operator's view decodes to %q", got)
			}
			mustBody(t, call("GET", loc, ""), body)
			r = call("GET", "/admin/v1/pos-systems/clover/companies/demo-company/receipt-promotions", "")
			mustStatus(t, r, 200)
			if got := string(r.Body); strings.Count(got, `"posLocationId"`) != 2 || strings.Index(got, `"LOC123"`) > strings.Index(got, `"LOC456"`) {
				t.Fatalf("list: %s", got)
			}
			bad := func(body string, errs map[string][]string) {
				t.Helper()
				mustProblem(t, call("PUT", company, body), 400, "*", errs)
			}
			bad(`{}`, map[string][]string{"primaryText": {"The primaryText field is required."}, "targetUrl": {"The targetUrl field is required."}})
			bad(`{"primaryText":"x","targetUrl":"example.com"}`, map[string][]string{"targetUrl": {"The targetUrl field must be an absolute http or https URL."}})
			bad(`{"primaryText":"x","targetUrl":"https://example.com/`+strings.Repeat("a", 500)+`"}`,
				map[string][]string{"targetUrl": {"The targetUrl field must be at most 500 bytes, so that its QR code stays scannable on a 58 mm receipt."}})
			bad(`{"primaryText":"x","secondaryText":"`+strings.Repeat("y", 501)+`","targetUrl":"https://example.com"}`,
				map[string][]string{"secondaryText": {"The secondaryText field must be valid text of at most 500 bytes."}})
			mustProblem(t, call("PUT", "/admin/v1/pos-systems/clover/locations/LOC999/receipt-promotion", `{"primaryText":"x","targetUrl":"https://example.com"}`), 404, `location "LOC999" not found`, nil)
			mustProblem(t, call("PUT", "/admin/v1/pos-systems/clover/companies/nope/receipt-promotion", `{"primaryText":"x","targetUrl":"https://example.com"}`), 404, `company "nope" not found`, nil)
			mustProblem(t, call("GET", "/admin/v1/pos-systems/clover/companies/nope/receipt-promotions", ""), 404, `company "nope" not found`, nil)
			mustStatus(t, call("DELETE", loc, ""), 200)
			mustProblem(t, call("DELETE", loc, ""), 404, `receipt promotion of location "LOC456" not found`, nil)
		})
	})
}

// TestDemoContentIsLoadedOnce checks that loading the demo data set again
// keeps an operator's changes to the demo slides and receipt promotion.
func TestDemoContentIsLoadedOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/demo-company/slides/welcome", `{"title":"Changed"}`), 200)
		mustStatus(t, s.call(t, admin, "PUT", "/admin/v1/pos-systems/clover/locations/LOC123/receipt-promotion", `{"primaryText":"Changed","targetUrl":"https://example.com/changed"}`), 200)
		s.restart(t) // loads the demo data set again
		st := s.openStore(t)
		ctx := context.Background()
		slides, err := st.ListSlides(ctx, "clover", demo.CompanyID)
		if err != nil || len(slides) != 3 || slides[0].ID != "welcome" || slides[0].Title != "Changed" {
			t.Fatalf("demo slides after reloading: %v %v", slides, err)
		}
		p, err := st.FindReceiptPromotion(ctx, "clover", demo.CompanyID, "LOC123")
		if err != nil || p.PrimaryText != "Changed" {
			t.Fatalf("LOC123's promotion after reloading: %+v %v", p, err)
		}
		if _, err := st.FindReceiptPromotion(ctx, "clover", demo.CompanyID, "LOC456"); err == nil {
			t.Fatal("the demo data set gave LOC456 a receipt promotion")
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

// mustCreated fails the test unless r is a 201 whose body is exactly want.
func mustCreated(t *testing.T, r response, want string) {
	t.Helper()
	mustStatus(t, r, 201)
	if string(r.Body) != want {
		t.Fatalf("body\n got %s\nwant %s", r.Body, want)
	}
}
