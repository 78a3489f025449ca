package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/demo"
)

func carouselReq(token, terminal, location string) req {
	return req{Method: "POST", Path: "/v2/pos/clover/carousel", Token: token, ContentType: "application/json",
		Body: `{"posLocationId":"` + location + `","terminalId":"` + terminal + `"}`}
}

// mustBody fails the test unless r is a 200 whose body is exactly want.
func mustBody(t *testing.T, r response, want string) {
	t.Helper()
	mustStatus(t, r, 200)
	if string(r.Body) != want {
		t.Fatalf("body\n got %s\nwant %s", r.Body, want)
	}
}

// carouselURL calls the carousel endpoint and returns the URL of an Accepted
// answer.
func (s *server) carouselURL(t *testing.T, token, terminal, location string) string {
	t.Helper()
	r := s.request(t, carouselReq(token, terminal, location))
	mustStatus(t, r, 200)
	var env struct {
		Data struct {
			URL       string `json:"url"`
			PosStatus string `json:"posStatus"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || env.Data.PosStatus != "Accepted" || env.Data.URL == "" {
		t.Fatalf("carousel answer %s (%v)", r.Body, err)
	}
	return env.Data.URL
}

// pathOf strips the server's base URL from an absolute URL it returned.
func (s *server) pathOf(t *testing.T, u string) string {
	t.Helper()
	if !strings.HasPrefix(u, s.base+"/") {
		t.Fatalf("URL %q is not on the server's base URL %s", u, s.base)
	}
	return strings.TrimPrefix(u, s.base)
}

// contentPath turns a carousel page path into the path of one of the page's
// data routes, with the same signed query.
func contentPath(page, route string) string {
	_, query, _ := strings.Cut(page, "?")
	return "/carousel/" + route + "?" + query
}

// withQuery returns path with one query parameter replaced.
func withQuery(t *testing.T, path, name, value string) string {
	t.Helper()
	p, query, _ := strings.Cut(path, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	if value == "" {
		q.Del(name)
	} else {
		q.Set(name, value)
	}
	return p + "?" + q.Encode()
}

// expectedContent is the carousel content JSON for the demo company's
// slides as the store holds them.
// promotionText is how the carousel words a promotion's results.
func promotionText(p *posgate.Promotion) string {
	var parts []string
	for _, r := range p.Results {
		switch r.PromotionType {
		case posgate.PromotionPercentage:
			parts = append(parts, strconv.FormatFloat(r.Value, 'f', -1, 64)+"% off")
		case posgate.PromotionFixedPrice: // "for 3.00"
			parts = append(parts, "for "+strconv.FormatFloat(r.Value, 'f', 2, 64))
		case posgate.PromotionBuyXGetY: // "buy 1, get 1 free", "buy 2, get 1 50% off"
			off := "free"
			if r.Value != 100 {
				off = strconv.FormatFloat(r.Value, 'f', -1, 64) + "% off"
			}
			parts = append(parts, "buy "+strconv.Itoa(r.BuyQuantity)+", get "+strconv.Itoa(r.GetQuantity)+" "+off)
		default:
			parts = append(parts, strconv.FormatFloat(r.Value, 'f', 2, 64)+" off")
		}
	}
	return strings.Join(parts, ", ")
}

func expectedContent(t *testing.T, srv *server, st posgate.Store, status string, poll int) string {
	t.Helper()
	type slide struct {
		SlideID         string `json:"slideId"`
		ImageURL        string `json:"imageUrl"`
		Title           string `json:"title"`
		Text            string `json:"text"`
		DurationSeconds int    `json:"durationSeconds"`
	}
	out := []slide{}
	if status == "Accepted" {
		slides, err := st.ListSlides(context.Background(), "clover", demo.CompanyID)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range slides {
			out = append(out, slide{s.ID, s.ImageURL, s.Title, s.Text, s.DurationSeconds})
		}
		// The company's promotions valid at LOC123 now follow the
		// operator's slides, as text slides, in the carousel's order
		// (the store conformance suite checks that order).
		promos, err := st.ListCarouselPromotions(context.Background(), "clover", demo.CompanyID, "LOC123", srv.clock.Now(), posgate.MaxCarouselPromotions)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range promos {
			out = append(out, slide{SlideID: "promotion:" + p.ID, Title: p.Name, Text: promotionText(p), DurationSeconds: 8})
		}
	}
	b, err := json.Marshal(map[string]any{"data": map[string]any{"posStatus": status, "pollSeconds": poll, "slides": out}})
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json sorts map keys; the server writes struct order.
	var v struct {
		Data struct {
			PosStatus   string  `json:"posStatus"`
			PollSeconds int     `json:"pollSeconds"`
			Slides      []slide `json:"slides"`
		} `json:"data"`
	}
	json.Unmarshal(b, &v)
	b, _ = json.Marshal(v)
	return string(b)
}

func TestCarousel(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.CarouselPoll = 2 * time.Second })
		tok := s.posToken(t)
		admin := s.adminToken(t)
		st := s.openStore(t)
		patch := func(path, body string) {
			t.Helper()
			mustStatus(t, s.call(t, admin, "PATCH", path, body), 200)
		}

		t.Run("accepted: a signed page URL that serves the page and the slides", func(t *testing.T) {
			page := s.pathOf(t, s.carouselURL(t, tok, "TERM-05", "LOC123"))
			q, _ := url.ParseQuery(strings.SplitN(page, "?", 2)[1])
			exp := s.clock.Now().Add(24 * time.Hour).Unix()
			if !strings.HasPrefix(page, "/carousel?") || q.Get("pos") != "clover" || q.Get("company") != "demo-company" ||
				q.Get("location") != "LOC123" || q.Get("terminal") != "TERM-05" || q.Get("expires") != strconv.FormatInt(exp, 10) || len(q.Get("sig")) != 43 {
				t.Fatalf("carousel URL %s", page)
			}
			r := s.call(t, "", "GET", page, "")
			mustStatus(t, r, 200)
			if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Fatalf("page content type %q", ct)
			}
			csp := r.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "script-src 'sha256-") || !strings.Contains(csp, "connect-src 'self'") || r.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Fatalf("page headers %v", r.Header)
			}
			if !strings.Contains(string(r.Body), "<script>") || strings.Contains(string(r.Body), "http://") || strings.Contains(string(r.Body), "https://") {
				t.Fatal("the page is not self-contained")
			}
			content := s.call(t, "", "GET", contentPath(page, "content"), "")
			mustBody(t, content, expectedContent(t, s, st, "Accepted", 2))
			// The demo's always-valid promotion is on the carousel.
			if !strings.Contains(string(content.Body), `{"slideId":"promotion:DEMO-COFFEE-2OFF","imageUrl":"","title":"2 off any large coffee","text":"2.00 off","durationSeconds":8}`) {
				t.Fatalf("promotion slide missing: %s", content.Body)
			}
		})
		t.Run("XML body", func(t *testing.T) {
			r := s.do(t, req{Method: "POST", Path: "/v2/pos/clover/carousel", Token: tok, ContentType: "application/xml",
				Body: `<CarouselDto><posLocationId>LOC123</posLocationId><terminalId>TERM-06</terminalId></CarouselDto>`})
			mustStatus(t, r, 200)
			if !strings.Contains(string(r.Body), `terminal=TERM-06`) || !strings.Contains(string(r.Body), `"posStatus":"Accepted"`) {
				t.Fatalf("body %s", r.Body)
			}
		})
		t.Run("missing, empty and mistyped fields", func(t *testing.T) {
			bad := func(body string, errs map[string][]string) {
				t.Helper()
				r := s.call(t, tok, "POST", "/v2/pos/clover/carousel", body)
				mustProblem(t, r, 400, "*", errs)
			}
			bad(`{}`, map[string][]string{"posLocationId": {"The posLocationId field is required."}, "terminalId": {"The terminalId field is required."}})
			bad(`{"posLocationId":"","terminalId":"TERM-05"}`, map[string][]string{"posLocationId": {"The posLocationId field is required."}})
			bad(`{"posLocationId":"LOC123","terminalId":null}`, map[string][]string{"terminalId": {"The terminalId field is required."}})
			bad(`{"posLocationId":123,"terminalId":"TERM-05"}`, map[string][]string{"posLocationId": {"The posLocationId field must be a string."}})
			r := s.call(t, tok, "POST", "/v2/pos/clover/carousel", `{"posLocationId":`)
			mustProblem(t, r, 400, "*", r400Fields(t, r))
			r = s.do(t, req{Method: "POST", Path: "/v2/pos/clover/carousel", Token: tok, ContentType: "text/plain", Body: `{}`})
			mustProblem(t, r, 415, "*", nil)
			r = s.call(t, tok, "POST", "/v2/pos/clover/carousel", `{"posLocationId":"LOC123","terminalId":"TERM-05","pad":"`+strings.Repeat("x", 70<<10)+`"}`)
			mustProblem(t, r, 413, "*", nil)
		})
		t.Run("unknown location, unregistered terminal", func(t *testing.T) {
			mustProblem(t, s.request(t, carouselReq(tok, "TERM-05", "LOC999")), 404, "Location 'LOC999' is not registered.", nil)
			mustProblem(t, s.request(t, carouselReq(tok, "TERM-404", "LOC123")), 404, "Terminal 'TERM-404' is not registered at location 'LOC123'.", nil)
			mustProblem(t, s.request(t, carouselReq(tok, "TERM-07", "LOC123")), 404, "Terminal 'TERM-07' is not registered at location 'LOC123'.", nil)
		})
		t.Run("no or foreign token", func(t *testing.T) {
			q := carouselReq("", "TERM-05", "LOC123")
			mustProblem(t, s.request(t, q), 401, "*", nil)
			mustProblem(t, s.request(t, carouselReq(admin, "TERM-05", "LOC123")), 403, "*", nil)
		})
		t.Run("disabled", func(t *testing.T) {
			const disabled = `{"data":{"url":"","posStatus":"Disabled"}}`
			mustBody(t, s.request(t, carouselReq(tok, "TERM-99", "LOC123")), disabled)
			page := s.pathOf(t, s.carouselURL(t, tok, "TERM-05", "LOC123"))
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"carousel":false}}`)
			mustBody(t, s.request(t, carouselReq(tok, "TERM-05", "LOC123")), disabled)
			// A page already open shows nothing and counts nothing.
			mustBody(t, s.call(t, "", "GET", contentPath(page, "content"), ""), expectedContent(t, s, st, "Disabled", 2))
			mustBody(t, s.call(t, "", "POST", contentPath(page, "impressions"), `{"slideId":"welcome"}`),
				`{"data":{"slideId":"welcome","recorded":false}}`)
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"carousel":true}}`)
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Disabled"}`)
			mustBody(t, s.request(t, carouselReq(tok, "TERM-05", "LOC123")), disabled)
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Active"}`)
			patch("/admin/v1/pos-systems/clover/locations/LOC456", `{"status":"Disabled"}`)
			mustBody(t, s.request(t, carouselReq(tok, "TERM-07", "LOC456")), disabled)
			patch("/admin/v1/pos-systems/clover/locations/LOC456", `{"status":"Active"}`)
			s.carouselURL(t, tok, "TERM-07", "LOC456")
			mustBody(t, s.call(t, "", "GET", contentPath(page, "content"), ""), expectedContent(t, s, st, "Accepted", 2))
		})
		t.Run("tampered links are refused", func(t *testing.T) {
			page := s.pathOf(t, s.carouselURL(t, tok, "TERM-05", "LOC123"))
			for name, p := range map[string]string{
				"other terminal":  withQuery(t, page, "terminal", "TERM-06"),
				"other location":  withQuery(t, page, "location", "LOC456"),
				"other company":   withQuery(t, page, "company", "other"),
				"later expiry":    withQuery(t, page, "expires", "99999999999"),
				"forged sig":      withQuery(t, page, "sig", strings.Repeat("A", 43)),
				"no sig":          withQuery(t, page, "sig", ""),
				"no terminal":     withQuery(t, page, "terminal", ""),
				"sig given twice": page + "&sig=x",
			} {
				r := s.call(t, "", "GET", p, "")
				mustStatus(t, r, 403)
				if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" || !strings.Contains(string(r.Body), "This carousel link is not valid.") {
					t.Fatalf("%s: %s %s", name, ct, r.Body)
				}
				mustProblem(t, s.call(t, "", "GET", contentPath(p, "content"), ""), 403, "This carousel link is not valid. Ask the POS for a new one.", nil)
				mustProblem(t, s.call(t, "", "POST", contentPath(p, "impressions"), `{"slideId":"welcome"}`),
					403, "This carousel link is not valid. Ask the POS for a new one.", nil)
			}
		})
		t.Run("another instance sharing the store verifies the link", func(t *testing.T) {
			page := s.pathOf(t, s.carouselURL(t, tok, "TERM-05", "LOC123"))
			other := start(t, dsn, func(c *app.Config) { c.Demo = false; c.Now = s.clock.Now; c.CarouselPoll = 2 * time.Second })
			mustStatus(t, other.call(t, "", "GET", page, ""), 200)
			mustBody(t, other.call(t, "", "GET", contentPath(page, "content"), ""), expectedContent(t, s, st, "Accepted", 2))
		})
		t.Run("operator changes reach the page", func(t *testing.T) {
			page := s.pathOf(t, s.carouselURL(t, tok, "TERM-05", "LOC123"))
			r := s.call(t, admin, "POST", "/admin/v1/pos-systems/clover/companies/demo-company/slides", `{"slideId":"first","position":1,"title":"Now first","durationSeconds":5}`)
			mustStatus(t, r, 201)
			body := string(s.call(t, "", "GET", contentPath(page, "content"), "").Body)
			if !strings.HasPrefix(body, `{"data":{"posStatus":"Accepted","pollSeconds":2,"slides":[{"slideId":"first","imageUrl":"","title":"Now first","text":"","durationSeconds":5},`) {
				t.Fatalf("content after adding a slide: %s", body)
			}
			mustStatus(t, s.call(t, admin, "DELETE", "/admin/v1/pos-systems/clover/companies/demo-company/slides/first", ""), 200)
			mustBody(t, s.call(t, "", "GET", contentPath(page, "content"), ""), expectedContent(t, s, st, "Accepted", 2))
		})
		t.Run("impressions", func(t *testing.T) {
			day := s.clock.Now().UTC().Format("2006-01-02")
			p5 := s.pathOf(t, s.carouselURL(t, tok, "TERM-05", "LOC123"))
			p7 := s.pathOf(t, s.carouselURL(t, tok, "TERM-07", "LOC456"))
			show := func(page, slide string) {
				t.Helper()
				mustBody(t, s.call(t, "", "POST", contentPath(page, "impressions"), `{"slideId":"`+slide+`"}`),
					`{"data":{"slideId":"`+slide+`","recorded":true}}`)
			}
			show(p5, "welcome")
			show(p5, "welcome")
			show(p5, "coffee")
			show(p7, "loyalty")
			mustProblem(t, s.call(t, "", "POST", contentPath(p5, "impressions"), `{"slideId":"nope"}`),
				404, "Slide 'nope' is not in this carousel.", nil)
			r := s.call(t, "", "POST", contentPath(p5, "impressions"), `{}`)
			mustProblem(t, r, 400, "*", map[string][]string{"slideId": {"The slideId field is required."}})
			r = s.call(t, "", "POST", contentPath(p5, "impressions"), `{"slideId":"welcome","x":1}`)
			mustProblem(t, r, 400, "*", r400Fields(t, r))
			r = s.do(t, req{Method: "POST", Path: contentPath(p5, "impressions"), ContentType: "application/xml", Body: `<a><slideId>welcome</slideId></a>`})
			mustProblem(t, r, 415, "*", nil)

			report := "/admin/v1/pos-systems/clover/companies/demo-company/impressions"
			mustBody(t, s.call(t, admin, "GET", report+"?from="+day+"&to="+day, ""),
				`{"data":{"posSystemId":"clover","posCompanyId":"demo-company","from":"`+day+`","to":"`+day+`","impressions":4,"terminals":[`+
					`{"posLocationId":"LOC123","terminalId":"TERM-05","impressions":3,"slides":[{"slideId":"coffee","impressions":1},{"slideId":"welcome","impressions":2}]},`+
					`{"posLocationId":"LOC456","terminalId":"TERM-07","impressions":1,"slides":[{"slideId":"loyalty","impressions":1}]}]}}`)
			mustBody(t, s.call(t, admin, "GET", report+"?posLocationId=LOC456", ""),
				`{"data":{"posSystemId":"clover","posCompanyId":"demo-company","from":"`+s.clock.Now().AddDate(0, 0, -29).UTC().Format("2006-01-02")+`","to":"`+day+`","impressions":1,"terminals":[`+
					`{"posLocationId":"LOC456","terminalId":"TERM-07","impressions":1,"slides":[{"slideId":"loyalty","impressions":1}]}]}}`)
			tomorrow := s.clock.Now().AddDate(0, 0, 1).UTC().Format("2006-01-02")
			mustBody(t, s.call(t, admin, "GET", report+"?from="+tomorrow+"&to="+tomorrow, ""),
				`{"data":{"posSystemId":"clover","posCompanyId":"demo-company","from":"`+tomorrow+`","to":"`+tomorrow+`","impressions":0,"terminals":[]}}`)
			mustProblem(t, s.call(t, admin, "GET", report+"?from=2030-02-02&to=2030-02-01", ""), 400, "*",
				map[string][]string{"from": {"The from date must not be after the to date."}})
			mustProblem(t, s.call(t, admin, "GET", report+"?from=2030-02-31", ""), 400, "*",
				map[string][]string{"from": {"The from field must be a date written YYYY-MM-DD."}})
			mustProblem(t, s.call(t, admin, "GET", report+"?from=2020-01-01&to=2030-01-01", ""), 400, "*",
				map[string][]string{"from": {"A report covers at most 366 days."}})
			mustProblem(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/nope/impressions", ""), 404, `company "nope" not found`, nil)
			mustProblem(t, s.call(t, tok, "GET", report, ""), 403, "*", nil)
		})
		t.Run("external carousel template", func(t *testing.T) {
			put := func(body string) response {
				return s.call(t, admin, "PUT", "/admin/v1/pos-systems/clover/companies/demo-company/carousel", body)
			}
			r := put(`{"urlTemplate":"https://ads.example.com/screens/{posCompanyId}/{posLocationId}?t={terminalId}&pos={posSystemId}"}`)
			mustStatus(t, r, 200)
			mustBody(t, s.request(t, carouselReq(tok, "TERM-05", "LOC123")),
				`{"data":{"url":"https://ads.example.com/screens/demo-company/LOC123?t=TERM-05&pos=clover","posStatus":"Accepted"}}`)
			mustProblem(t, put(`{"urlTemplate":"https://ads.example.com/{store}"}`), 400, "*",
				map[string][]string{"urlTemplate": {"The urlTemplate field may only hold the placeholders {posSystemId} {posCompanyId} {posLocationId} {terminalId}."}})
			mustProblem(t, put(`{"urlTemplate":"ftp://ads.example.com/{terminalId}"}`), 400, "*",
				map[string][]string{"urlTemplate": {"The urlTemplate field must be an absolute http or https URL."}})
			mustProblem(t, put(`{}`), 400, "*", map[string][]string{"urlTemplate": {`The urlTemplate field is required ("" to use posgate's own carousel page).`}})
			mustProblem(t, s.call(t, admin, "PUT", "/admin/v1/pos-systems/clover/companies/nope/carousel", `{"urlTemplate":""}`),
				404, `company "nope" not found`, nil)
			mustStatus(t, put(`{"urlTemplate":""}`), 200)
			r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/demo-company/carousel", "")
			mustBody(t, r, `{"data":{"posSystemId":"clover","posCompanyId":"demo-company","urlTemplate":"","updatedAt":"`+s.clock.Now().UTC().Format(time.RFC3339)+`"}}`)
			if u := s.carouselURL(t, tok, "TERM-05", "LOC123"); !strings.HasPrefix(u, s.base+"/carousel?") {
				t.Fatalf("after clearing the template: %s", u)
			}
		})
		t.Run("another company's location is absent", func(t *testing.T) {
			rt := restrictedClient(t, s, admin)
			mustProblem(t, s.request(t, carouselReq(rt, "TERM-05", "LOC123")), 404, "Location 'LOC123' is not registered.", nil)
		})
		t.Run("expired links are refused", func(t *testing.T) { // last: it moves the clock past the tokens' lifetime
			page := s.pathOf(t, s.carouselURL(t, tok, "TERM-06", "LOC123"))
			s.clock.Advance(24*time.Hour - time.Second)
			mustStatus(t, s.call(t, "", "GET", page, ""), 200)
			s.clock.Advance(time.Second)
			r := s.call(t, "", "GET", page, "")
			mustStatus(t, r, 403)
			if !strings.Contains(string(r.Body), "This carousel link has expired.") || strings.Contains(string(r.Body), "slideId") {
				t.Fatalf("expired page: %s", r.Body)
			}
			mustProblem(t, s.call(t, "", "GET", contentPath(page, "content"), ""), 403, "This carousel link has expired. Ask the POS for a new one.", nil)
			// A new link works again.
			mustStatus(t, s.call(t, "", "GET", s.pathOf(t, s.carouselURL(t, s.posToken(t), "TERM-06", "LOC123")), ""), 200)
		})
	})
}

// restrictedClient creates a company other-co with a location and a client
// restricted to it, and returns that client's POS token.
func restrictedClient(t *testing.T, s *server, admin string) string {
	t.Helper()
	post := func(path, body string) map[string]any {
		t.Helper()
		r := s.call(t, admin, "POST", path, body)
		mustStatus(t, r, 201)
		return r.JSON(t)["data"].(map[string]any)
	}
	post("/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"other-co"}`)
	post("/admin/v1/pos-systems/clover/locations", `{"posLocationId":"OTHER-1","posCompanyId":"other-co"}`)
	post("/admin/v1/pos-systems/clover/locations/OTHER-1/terminals", `{"terminalId":"T1"}`)
	secret := post("/admin/v1/clients", `{"clientId":"only-other","posSystemId":"clover","scopes":["pos_integration"],"companyIds":["other-co"]}`)["clientSecret"].(string)
	return s.token(t, "only-other", secret, "pos_integration")
}

func receiptPath(location string) string { return "/pos/clover/receipt/promotion/location/" + location }

// decodeQR decodes a PNG QR code and checks its size.
func decodeQR(t *testing.T, b []byte, size int) string {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if got := img.Bounds(); got != image.Rect(0, 0, size, size) {
		t.Fatalf("QR image is %v, want %d × %d", got, size, size)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("QR code does not decode: %v", err)
	}
	return res.GetText()
}

func TestReceiptPromotion(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok := s.posToken(t)
		admin := s.adminToken(t)
		patch := func(path, body string) {
			t.Helper()
			mustStatus(t, s.call(t, admin, "PATCH", path, body), 200)
		}
		type result struct {
			PrimaryText   string `json:"primaryText"`
			SecondaryText string `json:"secondaryText"`
			ImageURL      string `json:"imageUrl"`
			PosStatus     string `json:"posStatus"`
		}
		get := func(location string) result {
			t.Helper()
			r := s.call(t, tok, "GET", receiptPath(location), "")
			mustStatus(t, r, 200)
			var env struct {
				Data result `json:"data"`
			}
			dec := json.NewDecoder(bytes.NewReader(r.Body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&env); err != nil {
				t.Fatalf("%s: %v", r.Body, err)
			}
			return env.Data
		}

		t.Run("accepted, with a QR code of the target", func(t *testing.T) {
			got := get("LOC123")
			if got.PrimaryText != "Thank you for shopping at Demo Store Downtown!" || got.SecondaryText != "Scan the code for 10% off your next visit." ||
				got.PosStatus != "Accepted" || !strings.HasPrefix(got.ImageURL, s.base+"/receipt/qr.png?") {
				t.Fatalf("receipt promotion %+v", got)
			}
			img := s.pathOf(t, got.ImageURL)
			r := s.call(t, "", "GET", img, "")
			mustStatus(t, r, 200)
			if r.Header.Get("Content-Type") != "image/png" || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || r.Header.Get("ETag") == "" {
				t.Fatalf("QR headers %v", r.Header)
			}
			if text := decodeQR(t, r.Body, 384); text != demo.ReceiptTarget {
				t.Fatalf("QR decodes to %q, want %q", text, demo.ReceiptTarget)
			}
			r80 := s.call(t, "", "GET", img+"&size=80mm", "")
			mustStatus(t, r80, 200)
			if text := decodeQR(t, r80.Body, 576); text != demo.ReceiptTarget {
				t.Fatalf("80 mm QR decodes to %q", text)
			}
			if r80.Header.Get("ETag") == r.Header.Get("ETag") {
				t.Fatal("58 mm and 80 mm images share an ETag")
			}
			r304 := s.do(t, req{Method: "GET", Path: img, Header: map[string]string{"If-None-Match": r.Header.Get("ETag")}})
			if r304.Status != 304 || len(r304.Body) != 0 || r304.Header.Get("ETag") != r.Header.Get("ETag") {
				t.Fatalf("If-None-Match: %d %v", r304.Status, r304.Header)
			}
			mustProblem(t, s.call(t, "", "GET", img+"&size=A4", ""), 400, "The size parameter must be 58mm or 80mm.",
				map[string][]string{"size": {"The size parameter must be 58mm or 80mm."}})
			forged := withQuery(t, img, "d", "aHR0cHM6Ly9ldmlsLmV4YW1wbGUv") // https://evil.example/
			mustProblem(t, s.call(t, "", "GET", forged, ""), 403, "This QR code link is not valid.", nil)
			mustProblem(t, s.call(t, "", "GET", withQuery(t, img, "sig", ""), ""), 403, "This QR code link is not valid.", nil)
		})
		t.Run("nothing configured", func(t *testing.T) {
			mustBody(t, s.call(t, tok, "GET", receiptPath("LOC456"), ""),
				`{"data":{"primaryText":"","secondaryText":"","imageUrl":"","posStatus":"NotAvailable"}}`)
		})
		t.Run("company default and location override", func(t *testing.T) {
			put := func(path, body string) response {
				return s.call(t, admin, "PUT", path, body)
			}
			company := "/admin/v1/pos-systems/clover/companies/demo-company/receipt-promotion"
			r := put(company, `{"primaryText":"Company-wide","secondaryText":"","targetUrl":"https://example.com/all?a=1&b=2"}`)
			mustStatus(t, r, 200)
			def := get("LOC456")
			if def.PrimaryText != "Company-wide" || def.SecondaryText != "" || def.PosStatus != "Accepted" {
				t.Fatalf("LOC456 with a company default: %+v", def)
			}
			if got := decodeQR(t, s.call(t, "", "GET", s.pathOf(t, def.ImageURL), "").Body, 384); got != "https://example.com/all?a=1&b=2" {
				t.Fatalf("default QR decodes to %q", got)
			}
			if own := get("LOC123"); own.PrimaryText != "Thank you for shopping at Demo Store Downtown!" {
				t.Fatalf("LOC123 lost its own promotion: %+v", own)
			}
			loc := "/admin/v1/pos-systems/clover/locations/LOC123/receipt-promotion"
			mustStatus(t, s.call(t, admin, "DELETE", loc, ""), 200)
			if got := get("LOC123"); got.PrimaryText != "Company-wide" {
				t.Fatalf("LOC123 after removing its own: %+v", got)
			}
			mustProblem(t, s.call(t, admin, "GET", loc, ""), 404, `receipt promotion of location "LOC123" not found`, nil)
			mustStatus(t, put(loc, `{"primaryText":"Thank you for shopping at Demo Store Downtown!","secondaryText":"Scan the code for 10% off your next visit.","targetUrl":"`+demo.ReceiptTarget+`"}`), 200)
			mustStatus(t, s.call(t, admin, "DELETE", company, ""), 200)
			mustBody(t, s.call(t, tok, "GET", receiptPath("LOC456"), ""),
				`{"data":{"primaryText":"","secondaryText":"","imageUrl":"","posStatus":"NotAvailable"}}`)
		})
		t.Run("disabled", func(t *testing.T) {
			const disabled = `{"data":{"primaryText":"","secondaryText":"","imageUrl":"","posStatus":"Disabled"}}`
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"receiptPromotion":false}}`)
			mustBody(t, s.call(t, tok, "GET", receiptPath("LOC123"), ""), disabled)
			mustBody(t, s.call(t, tok, "GET", receiptPath("LOC456"), ""), disabled)
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"features":{"receiptPromotion":true}}`)
			patch("/admin/v1/pos-systems/clover/locations/LOC123", `{"status":"Disabled"}`)
			mustBody(t, s.call(t, tok, "GET", receiptPath("LOC123"), ""), disabled)
			patch("/admin/v1/pos-systems/clover/locations/LOC123", `{"status":"Active"}`)
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Disabled"}`)
			mustBody(t, s.call(t, tok, "GET", receiptPath("LOC123"), ""), disabled)
			patch("/admin/v1/pos-systems/clover/companies/demo-company", `{"status":"Active"}`)
			if got := get("LOC123"); got.PosStatus != "Accepted" {
				t.Fatalf("after re-enabling: %+v", got)
			}
		})
		t.Run("errors", func(t *testing.T) {
			mustProblem(t, s.call(t, tok, "GET", receiptPath("LOC999"), ""), 404, "Location 'LOC999' is not registered.", nil)
			mustProblem(t, s.call(t, tok, "GET", receiptPath("loc123"), ""), 404, "Location 'loc123' is not registered.", nil)
			mustProblem(t, s.call(t, "", "GET", receiptPath("LOC123"), ""), 401, "*", nil)
			mustProblem(t, s.call(t, admin, "GET", receiptPath("LOC123"), ""), 403, "*", nil)
			mustProblem(t, s.do(t, req{Method: "POST", Path: receiptPath("LOC123"), Token: tok, Undocumented: true}), 405, "*", nil)
			rt := restrictedClient(t, s, admin)
			mustProblem(t, s.call(t, rt, "GET", receiptPath("LOC123"), ""), 404, "Location 'LOC123' is not registered.", nil)
			mustBody(t, s.call(t, rt, "GET", receiptPath("OTHER-1"), ""),
				`{"data":{"primaryText":"","secondaryText":"","imageUrl":"","posStatus":"NotAvailable"}}`)
		})
	})
}
