package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
)

// importResult is the import's result, decoded strictly.
type importResult struct {
	Status       string          `json:"status"`
	CreatedCount int             `json:"createdCount"`
	UpdatedCount int             `json:"updatedCount"`
	Errors       []importError   `json:"errors"`
	Warnings     []importWarning `json:"warnings"`
}

type importError struct {
	EntityID     string `json:"entityId"`
	RowNumber    int    `json:"rowNumber"`
	ErrorMessage string `json:"errorMessage"`
	ErrorDetails string `json:"errorDetails"`
}

type importWarning struct {
	EntityID  string `json:"entityId"`
	RowNumber int    `json:"rowNumber"`
	Message   string `json:"message"`
	Details   string `json:"details"`
}

func importPath(company string) string {
	return "/pos/clover/company/" + company + "/import/promotions"
}

func importReq(tok, company, contentType, body string) req {
	return req{Method: "POST", Path: importPath(company), Token: tok, ContentType: contentType, Body: body}
}

// items wraps item objects as an import body.
func items(objs ...string) string { return `{"items":[` + strings.Join(objs, ",") + `]}` }

// mustImport checks a 200 answer and decodes its result strictly.
func mustImport(t *testing.T, r response) importResult {
	t.Helper()
	mustStatus(t, r, 200)
	var env struct {
		Data importResult `json:"data"`
	}
	dec := json.NewDecoder(strings.NewReader(string(r.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("import result %s: %v", r.Body, err)
	}
	return env.Data
}

// checkResult compares a result with the wanted one (nil lists as empty).
func checkResult(t *testing.T, got importResult, want importResult) {
	t.Helper()
	if want.Errors == nil {
		want.Errors = []importError{}
	}
	if want.Warnings == nil {
		want.Warnings = []importWarning{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("import result\n got %+v\nwant %+v", got, want)
	}
}

// company creates a company of clover with locations, through the operator
// API.
func (s *server) company(t *testing.T, admin, id string, locations ...string) {
	t.Helper()
	mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"`+id+`"}`), 201)
	for _, l := range locations {
		mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/clover/locations", `{"posLocationId":"`+l+`","posCompanyId":"`+id+`"}`), 201)
	}
}

// promotionIDs lists a company's promotion ids through the operator API.
func (s *server) promotionIDs(t *testing.T, admin, company, query string) []string {
	t.Helper()
	r := s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/"+company+"/promotions?pageSize=1000"+query, "")
	mustStatus(t, r, 200)
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Page struct{ Total int } `json:"page"`
	}
	if err := json.Unmarshal(r.Body, &page); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, p := range page.Data {
		out = append(out, p.ID)
	}
	return out
}

func TestPromotionImport(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok := s.posToken(t)
		admin := s.adminToken(t)
		const js, xs = "application/json", "application/xml"

		t.Run("create, update, mixed", func(t *testing.T) {
			s.company(t, admin, "cum", "CUM-1", "CUM-2")
			full := `{"id":"P1","name":"2 off coffee","useForAllCategories":false,"useForAllProducts":true,
				"locationIds":["CUM-1","CUM-2","CUM-1"],"categoryIds":["COFFEE"],"productIds":["SKU-1","SKU-2"],
				"promotionValidities":[{"startDate":"2030-05-01T00:00:00+02:00","endDate":"2030-05-31T23:59:59.5Z",
					"recurrence":{"daysOfWeek":["Sunday","Saturday"],"startDate":"2030-05-01T08:00:00","endDate":"2030-05-01T11:00:00.000"}}],
				"promotionResults":[{"promotionType":"Amount","value":2},{"promotionType":"Percentage","value":12.5}],
				"unknownProperty":{"is":"ignored"}}`
			r := s.request(t, importReq(tok, "cum", js, items(full, `{"id":"P2","name":"second"}`)))
			if string(r.Body) != `{"data":{"status":"Completed","createdCount":2,"updatedCount":0,"errors":[],"warnings":[]}}` {
				t.Fatalf("first import: %d %s", r.Status, r.Body)
			}
			created := s.clock.Now()
			r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/cum/promotions/P1", "")
			mustStatus(t, r, 200)
			stamp := created.Format("2006-01-02T15:04:05Z07:00")
			want := `{"data":{"posSystemId":"clover","posCompanyId":"cum","id":"P1","name":"2 off coffee","useForAllCategories":false,"useForAllProducts":true,` +
				`"locationIds":["CUM-1","CUM-2"],"categoryIds":["COFFEE"],"productIds":["SKU-1","SKU-2"],` +
				`"promotionValidities":[{"startDate":"2030-04-30T22:00:00Z","endDate":"2030-05-31T23:59:59.5Z",` +
				`"recurrence":{"daysOfWeek":["Sunday","Saturday"],"startDate":"2030-05-01T08:00:00","endDate":"2030-05-01T11:00:00"}}],` +
				`"promotionResults":[{"promotionType":"Amount","value":2,"buyQuantity":0,"getQuantity":0,"getProductIds":[],"maxApplications":0},` +
				`{"promotionType":"Percentage","value":12.5,"buyQuantity":0,"getQuantity":0,"getProductIds":[],"maxApplications":0}],` +
				`"priority":0,"stackable":false,"minQuantity":0,"minBasketAmount":0,"requiresCoupon":false,` +
				`"createdAt":"` + stamp + `","updatedAt":"` + stamp + `"}}`
			if string(r.Body) != want {
				t.Fatalf("stored P1:\n got %s\nwant %s", r.Body, want)
			}

			// Replace P1 (its lists are replaced, not merged), keep P2 as it
			// is, create P3, and fail P4.
			s.clock.Advance(60e9)
			r = s.request(t, importReq(tok, "cum", js, items(
				`{"id":"P1","name":"renamed","locationIds":["CUM-2"],"productIds":[]}`,
				`{"id":"P2","name":"second"}`,
				`{"id":"P3","name":"third","locationIds":["CUM-1"]}`,
				`{"id":"P4"}`)))
			checkResult(t, mustImport(t, r), importResult{Status: "CompletedWithErrors", CreatedCount: 1, UpdatedCount: 2,
				Errors: []importError{{"P4", 4, "The name field is required.", "name: missing or empty"}}})
			r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/cum/promotions/P1", "")
			p1 := r.JSON(t)["data"].(map[string]any)
			if p1["name"] != "renamed" || fmt.Sprint(p1["locationIds"]) != "[CUM-2]" || fmt.Sprint(p1["productIds"]) != "[]" ||
				fmt.Sprint(p1["promotionValidities"]) != "[]" || fmt.Sprint(p1["categoryIds"]) != "[]" || p1["createdAt"] != stamp || p1["updatedAt"] == stamp {
				t.Fatalf("P1 after its replacement: %s", r.Body)
			}
			p2 := s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/cum/promotions/P2", "").JSON(t)["data"].(map[string]any)
			if p2["updatedAt"] != stamp {
				t.Fatalf("unchanged P2 was rewritten: %v", p2)
			}
			if got := s.promotionIDs(t, admin, "cum", ""); fmt.Sprint(got) != "[P1 P2 P3]" {
				t.Fatalf("promotions %v", got)
			}
			if got := s.promotionIDs(t, admin, "cum", "&posLocationId=CUM-1"); fmt.Sprint(got) != "[P2 P3]" {
				t.Fatalf("promotions at CUM-1 after P1 left it: %v", got)
			}
			// Re-sending the same body creates nothing and updates each item once.
			r = s.request(t, importReq(tok, "cum", js, items(`{"id":"P2","name":"second"}`, `{"id":"P3","name":"third","locationIds":["CUM-1"]}`)))
			checkResult(t, mustImport(t, r), importResult{Status: "Completed", UpdatedCount: 2})
			// Accept: text/json gets the same JSON under that type.
			q := importReq(tok, "cum", "text/json; charset=utf-8", items(`{"id":"P2","name":"second"}`))
			q.Header = map[string]string{"Accept": "text/json"}
			r = s.do(t, q)
			if r.Header.Get("Content-Type") != "text/json; charset=utf-8" {
				t.Fatalf("content type %q", r.Header.Get("Content-Type"))
			}
			checkResult(t, mustImport(t, r), importResult{Status: "Completed", UpdatedCount: 1})
		})

		t.Run("each check", func(t *testing.T) {
			s.company(t, admin, "chk", "CHK-1")
			r := s.request(t, importReq(tok, "chk", js, items(
				`{"name":"no id"}`,
				`{"id":"a/b","name":"slash"}`,
				`{"id":"N1","name":""}`,
				`{"id":"N2","name":"`+strings.Repeat("n", 501)+`"}`,
				`{"id":"D1","name":"dates","promotionValidities":[{"startDate":"2030-02-01","endDate":"2030-01-31T23:59:59"}]}`,
				`{"id":"D2","name":"recurrence dates","promotionValidities":[{"recurrence":{"startDate":"2030-01-01T10:00:00Z","endDate":"2030-01-01T09:00:00Z"}}]}`,
				`{"id":"T1","name":"type","promotionResults":[{"promotionType":"Fixed","value":1}]}`,
				`{"id":"V1","name":"negative","promotionResults":[{"promotionType":"Amount","value":-0.5}]}`,
				`{"id":"V2","name":"percent","promotionResults":[{"promotionType":"Percentage","value":100.01}]}`,
				`{"id":"W1","name":"day","promotionValidities":[{"recurrence":{"daysOfWeek":["Monday","Mon"]}}]}`,
				`{"id":"L1","name":"locations","locationIds":["CHK-1","LOC123","NOPE","NOPE"]}`,
				`{"id":"OK","name":"fine","locationIds":["CHK-1"],"promotionResults":[{"promotionType":"Percentage","value":100},{"promotionType":"Amount"}]}`,
				`{"id":"M1","name":"","promotionResults":[{"promotionType":"Amount","value":-1}]}`,
				`{"id":"V3","name":"huge","promotionResults":[{"promotionType":"Amount","value":1e300},{"promotionType":"Amount","value":1e9}]}`,
			)))
			slashMsg := `The id field must be 1-128 printable characters without '/', '\', '?', '#', '%' or surrounding spaces.`
			checkResult(t, mustImport(t, r), importResult{Status: "CompletedWithErrors", CreatedCount: 1, Errors: []importError{
				{"", 1, "The id field is required.", "id: missing or empty"},
				{"a/b", 2, slashMsg, `id: "a/b"`},
				{"N1", 3, "The name field is required.", "name: missing or empty"},
				{"N2", 4, "The name field must be at most 500 bytes.", "name: 501 bytes"},
				{"D1", 5, "The endDate must not be before the startDate.", "promotionValidities[0]: endDate 2030-01-31T23:59:59 is before startDate 2030-02-01T00:00:00"},
				{"D2", 6, "The endDate must not be before the startDate.", "promotionValidities[0].recurrence: endDate 2030-01-01T09:00:00Z is before startDate 2030-01-01T10:00:00Z"},
				{"T1", 7, "The promotionType must be Amount, Percentage, FixedPrice or BuyXGetY.", `promotionResults[0].promotionType: "Fixed"`},
				{"V1", 8, "The value must not be negative.", "promotionResults[0].value: -0.5"},
				{"V2", 9, "A Percentage value must be between 0 and 100.", "promotionResults[0].value: 100.01"},
				{"W1", 10, "The daysOfWeek must be day names from Sunday to Saturday (Sunday, Monday, Tuesday, Wednesday, Thursday, Friday, Saturday).",
					`promotionValidities[0].recurrence.daysOfWeek[1]: "Mon"`},
				{"L1", 11, "The locationIds name locations that are not locations of company 'chk'.", `locationIds: "LOC123", "NOPE"`},
				{"M1", 13, "The name field is required.", "name: missing or empty"},
				{"M1", 13, "The value must not be negative.", "promotionResults[0].value: -1"},
				{"V3", 14, "An Amount value must be at most 1000000000.", "promotionResults[0].value: 1e+300"},
			}})
			if got := s.promotionIDs(t, admin, "chk", ""); fmt.Sprint(got) != "[OK]" {
				t.Fatalf("stored %v", got)
			}
			// Every item failing: Failed, nothing stored.
			r = s.request(t, importReq(tok, "chk", js, items(`{"id":"X"}`, `{"name":"y"}`)))
			checkResult(t, mustImport(t, r), importResult{Status: "Failed", Errors: []importError{
				{"X", 1, "The name field is required.", "name: missing or empty"},
				{"", 2, "The id field is required.", "id: missing or empty"},
			}})
			if got := s.promotionIDs(t, admin, "chk", ""); fmt.Sprint(got) != "[OK]" {
				t.Fatalf("stored after a failed import %v", got)
			}
		})

		t.Run("duplicate ids", func(t *testing.T) {
			s.company(t, admin, "dup")
			r := s.request(t, importReq(tok, "dup", js, items(
				`{"id":"A","name":"first A"}`, `{"id":"B"}`, `{"id":"A","name":"second A"}`, `{"id":"B","name":"valid B after a failed B"}`, `{"id":"A","name":"third A"}`)))
			checkResult(t, mustImport(t, r), importResult{Status: "CompletedWithErrors", CreatedCount: 1, Errors: []importError{
				{"B", 2, "The name field is required.", "name: missing or empty"},
				{"A", 3, "The id 'A' is given more than once in this request; only its first item (row 1) is imported.", `id: "A" also on row 1`},
				{"B", 4, "The id 'B' is given more than once in this request; only its first item (row 2) is imported.", `id: "B" also on row 2`},
				{"A", 5, "The id 'A' is given more than once in this request; only its first item (row 1) is imported.", `id: "A" also on row 1`},
			}})
			r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/dup/promotions/A", "")
			if r.JSON(t)["data"].(map[string]any)["name"] != "first A" {
				t.Fatalf("A: %s", r.Body)
			}
		})

		t.Run("warnings", func(t *testing.T) {
			s.company(t, admin, "wrn")
			body := items(`{"id":"W1","name":"w","categoryIds":["C1","C9","C9"],"productIds":["S1","S8","S9"]}`, `{"id":"W2","name":"fine","categoryIds":["C1"]}`)
			// No catalogue: no warnings.
			checkResult(t, mustImport(t, s.request(t, importReq(tok, "wrn", js, body))), importResult{Status: "Completed", CreatedCount: 2})
			r := s.call(t, admin, "PUT", "/admin/v1/pos-systems/clover/companies/wrn/catalogue", `{"categoryIds":["C2","C1","C2"],"productIds":["S1"]}`)
			if string(r.Body) != `{"data":{"posSystemId":"clover","posCompanyId":"wrn","categoryIds":["C1","C2"],"productIds":["S1"]}}` {
				t.Fatalf("PUT catalogue: %d %s", r.Status, r.Body)
			}
			checkResult(t, mustImport(t, s.request(t, importReq(tok, "wrn", js, body))), importResult{Status: "Completed", UpdatedCount: 2,
				Warnings: []importWarning{{"W1", 1, "The promotion names categories or products that are not in the catalogue of company 'wrn'; it is imported anyway.",
					`categoryIds: "C9"; productIds: "S8", "S9"`}}})
			// Only products in the catalogue: categories are not checked.
			mustStatus(t, s.call(t, admin, "PUT", "/admin/v1/pos-systems/clover/companies/wrn/catalogue", `{"productIds":["S1","S8","S9"]}`), 200)
			checkResult(t, mustImport(t, s.request(t, importReq(tok, "wrn", js, body))), importResult{Status: "Completed", UpdatedCount: 2})
		})

		t.Run("empty items", func(t *testing.T) {
			for _, body := range []string{`{"items":[]}`, `{"items":null}`, `{}`, `<PromotionImportDto/>`} {
				ct := js
				if body[0] == '<' {
					ct = xs
				}
				r := s.request(t, importReq(tok, "demo-company", ct, body))
				if string(r.Body) != `{"data":{"status":"Completed","createdCount":0,"updatedCount":0,"errors":[],"warnings":[]}}` {
					t.Fatalf("%s: %d %s", body, r.Status, r.Body)
				}
			}
		})

		t.Run("XML", func(t *testing.T) {
			s.company(t, admin, "xml", "XML-1", "XML-2")
			body := `<?xml version="1.0" encoding="utf-8"?><PromotionImportDto>` +
				`<items><id>X1</id><name>XML &amp; more</name><useForAllCategories>true</useForAllCategories>` +
				`<locationIds>XML-1</locationIds><locationIds>XML-2</locationIds><categoryIds>C1</categoryIds>` +
				`<promotionValidities><startDate>2030-01-01T00:00:00Z</startDate><recurrence><daysOfWeek>Monday</daysOfWeek>` +
				`<daysOfWeek>Friday</daysOfWeek></recurrence></promotionValidities>` +
				`<promotionResults><promotionType>Percentage</promotionType><value>10</value></promotionResults></items>` +
				`<items><id>X2</id><name>second</name><promotionResults><promotionType>Amount</promotionType><value>-1</value></promotionResults></items>` +
				`</PromotionImportDto>`
			checkResult(t, mustImport(t, s.request(t, importReq(tok, "xml", "text/xml; charset=utf-8", body))), importResult{Status: "CompletedWithErrors", CreatedCount: 1,
				Errors: []importError{{"X2", 2, "The value must not be negative.", "promotionResults[0].value: -1"}}})
			r := s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/xml/promotions/X1", "")
			p := r.JSON(t)["data"].(map[string]any)
			if p["name"] != "XML & more" || p["useForAllCategories"] != true || fmt.Sprint(p["locationIds"]) != "[XML-1 XML-2]" ||
				fmt.Sprint(p["promotionValidities"]) != "[map[endDate:<nil> recurrence:map[daysOfWeek:[Monday Friday] endDate:<nil> startDate:<nil>] startDate:2030-01-01T00:00:00Z]]" ||
				fmt.Sprint(p["promotionResults"]) != "[map[buyQuantity:0 getProductIds:[] getQuantity:0 maxApplications:0 promotionType:Percentage value:10]]" {
				t.Fatalf("X1 from XML: %s", r.Body)
			}
			// A malformed XML body stores nothing.
			r = s.request(t, importReq(tok, "xml", xs, `<PromotionImportDto><items><id>X3</id><name>n</name></items><items><id>X4</id>`))
			msg := "The request body is not valid XML: unexpected EOF (line 1)."
			mustProblem(t, r, 400, msg, map[string][]string{"$": {msg}})
			if got := s.promotionIDs(t, admin, "xml", ""); fmt.Sprint(got) != "[X1]" {
				t.Fatalf("stored after malformed XML: %v", got)
			}
		})

		t.Run("malformed bodies", func(t *testing.T) {
			s.company(t, admin, "bad")
			for _, tc := range []struct{ body, field, msg string }{
				{items(`{"id":"A","name":"a"}`, `{"id":"B","name":"b","promotionResults":[{"value":"2.5"}]}`), "items[1].promotionResults[0].value", "The items[1].promotionResults[0].value field must be a number."},
				{items(`{"id":7}`), "items[0].id", "The items[0].id field must be a string."},
				{items(`{"id":"A","name":"a","locationIds":"L1"}`), "items[0].locationIds", "The items[0].locationIds field must be an array."},
				{items(`{"id":"A","name":"a","useForAllProducts":"yes"}`), "items[0].useForAllProducts", "The items[0].useForAllProducts field must be a boolean."},
				{items(`{"id":"A","name":"a","promotionValidities":[{"startDate":"tomorrow"}]}`), "items[0].promotionValidities[0].startDate", "The items[0].promotionValidities[0].startDate field must be a date-time (ISO 8601)."},
				{items(`{"id":"A","name":"a","promotionValidities":[{"recurrence":"weekly"}]}`), "items[0].promotionValidities[0].recurrence", "The items[0].promotionValidities[0].recurrence field must be an object."},
				{items(`"A"`), "items[0]", "The items[0] field must be an object."},
				{items(`{"id":"A","id":"B","name":"a"}`), "items[0].id", "The property 'items[0].id' is given more than once."},
				{`{"items":{"id":"A"}}`, "items", "The items field must be an array."},
				{`[{"id":"A"}]`, "$", "The request body must be a JSON object."},
				{``, "$", "The request body is empty."},
			} {
				r := s.request(t, importReq(tok, "bad", js, tc.body))
				mustProblem(t, r, 400, tc.msg, map[string][]string{tc.field: {tc.msg}})
			}
			// Malformed JSON at the very end of a large body: nothing stored.
			var b strings.Builder
			b.WriteString(`{"items":[`)
			for i := range 20_000 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"id":"P%05d","name":"promotion %d","promotionResults":[{"promotionType":"Amount","value":1}]}`, i, i)
			}
			b.WriteString(`]`) // the closing brace is missing
			r := s.request(t, importReq(tok, "bad", js, b.String()))
			mustProblem(t, r, 400, "The request body is not valid JSON: unexpected end of input.", map[string][]string{"$": {"The request body is not valid JSON: unexpected end of input."}})
			r = s.request(t, importReq(tok, "bad", js, b.String()+`}x`))
			msg := fmt.Sprintf("The request body is not valid JSON: invalid character 'x' after top-level value at byte offset %d.", b.Len()+1)
			mustProblem(t, r, 400, msg, map[string][]string{"$": {msg}})
			if got := s.promotionIDs(t, admin, "bad", ""); len(got) != 0 {
				t.Fatalf("a malformed body stored %d promotions", len(got))
			}
			// The same body, well-formed, stores them all.
			checkResult(t, mustImport(t, s.request(t, importReq(tok, "bad", js, b.String()+`}`))), importResult{Status: "Completed", CreatedCount: 20_000})
			// Unsupported content type: 415 before anything else.
			mustProblem(t, s.request(t, importReq(tok, "bad", "text/plain", `{"items":[]}`)), 415, "*", nil)
			mustProblem(t, s.request(t, importReq(tok, "nope", "text/csv", `{"items":[]}`)), 415, "*", nil)
		})

		t.Run("too many items", func(t *testing.T) {
			s.company(t, admin, "many")
			var b strings.Builder
			b.WriteString(`{"items":[`)
			for i := range 100_001 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"id":"P%06d","name":"n"}`, i)
			}
			b.WriteString(`]}`)
			r := s.request(t, importReq(tok, "many", js, b.String()))
			mustProblem(t, r, 413, "The import holds more than 100000 items; send at most 100000 per request.", nil)
			if got := s.promotionIDs(t, admin, "many", ""); len(got) != 0 {
				t.Fatalf("an oversized import stored %d promotions", len(got))
			}
		})

		t.Run("tenants, switches and tokens", func(t *testing.T) {
			body := items(`{"id":"T1","name":"t"}`)
			mustProblem(t, s.request(t, importReq("", "demo-company", js, body)), 401, "*", nil)
			mustProblem(t, s.request(t, importReq(admin, "demo-company", js, body)), 403, "*", nil)
			mustProblem(t, s.request(t, importReq(tok, "nope", js, body)), 404, "Company 'nope' is not registered.", nil)

			s.company(t, admin, "restricted-co", "R-1")
			secret := s.call(t, admin, "POST", "/admin/v1/clients", `{"clientId":"only-restricted","posSystemId":"clover","scopes":["pos_integration"],"companyIds":["restricted-co"]}`).JSON(t)["data"].(map[string]any)["clientSecret"].(string)
			rt := s.token(t, "only-restricted", secret, "pos_integration")
			checkResult(t, mustImport(t, s.request(t, importReq(rt, "restricted-co", js, body))), importResult{Status: "Completed", CreatedCount: 1})
			// demo-company is as absent to that client as an unknown company.
			mustProblem(t, s.request(t, importReq(rt, "demo-company", js, body)), 404, "Company 'demo-company' is not registered.", nil)

			// A token of another POS system: 403, whatever the company.
			mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems", `{"id":"pax"}`), 201)
			mustStatus(t, s.call(t, admin, "POST", "/admin/v1/pos-systems/pax/companies", `{"posCompanyId":"demo-company"}`), 201)
			paxSecret := s.call(t, admin, "POST", "/admin/v1/clients", `{"clientId":"pax-importer","posSystemId":"pax","scopes":["pos_integration"]}`).JSON(t)["data"].(map[string]any)["clientSecret"].(string)
			pax := s.token(t, "pax-importer", paxSecret, "pos_integration")
			mustProblem(t, s.request(t, importReq(pax, "demo-company", js, body)), 403, "The access token belongs to POS system 'pax'; this path is of POS system 'clover'.", nil)
			// pax's own company of the same id is another company.
			r := s.call(t, pax, "POST", "/pos/pax/company/demo-company/import/promotions", body)
			checkResult(t, mustImport(t, r), importResult{Status: "Completed", CreatedCount: 1})
			if got := s.promotionIDs(t, admin, "demo-company", ""); strings.Contains(fmt.Sprint(got), "T1") {
				t.Fatalf("pax's import reached clover's demo-company: %v", got)
			}

			// The feature switch and the company's status.
			patch := func(body string) {
				t.Helper()
				mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/restricted-co", body), 200)
			}
			patch(`{"features":{"promotionImport":false}}`)
			mustProblem(t, s.request(t, importReq(rt, "restricted-co", js, body)), 403, "Promotion import is switched off for company 'restricted-co'.", nil)
			patch(`{"features":{"promotionImport":true},"status":"Disabled"}`)
			mustProblem(t, s.request(t, importReq(rt, "restricted-co", js, body)), 403, "Company 'restricted-co' is disabled: its promotions cannot be imported.", nil)
			patch(`{"status":"Active"}`)
			checkResult(t, mustImport(t, s.request(t, importReq(rt, "restricted-co", js, body))), importResult{Status: "Completed", UpdatedCount: 1})
		})
	})
}

func TestPromotionImportBodyCap(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.MaxImportBodyBytes = 8192 })
		tok := s.posToken(t)
		admin := s.adminToken(t)
		var objs []string
		for i := range 100 {
			objs = append(objs, fmt.Sprintf(`{"id":"P%03d","name":"promotion"}`, i))
		}
		body := items(objs...) // 3 KB
		checkResult(t, mustImport(t, s.request(t, importReq(tok, "demo-company", "application/json", body))), importResult{Status: "Completed", CreatedCount: 100})
		more := strings.ReplaceAll(body, `"promotion"`, `"`+strings.Repeat("changed ", 8)+`"`) // 8.8 KB
		if len(more) <= 8192 {
			t.Fatalf("the oversized body has %d bytes", len(more))
		}
		r := s.request(t, importReq(tok, "demo-company", "application/json", more))
		mustProblem(t, r, 413, "The request body is larger than 8192 bytes.", nil)
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/demo-company/promotions/P000", "")
		if r.JSON(t)["data"].(map[string]any)["name"] != "promotion" {
			t.Fatalf("an oversized body changed P000: %s", r.Body)
		}
		// The ordinary routes keep their own cap.
		mustProblem(t, s.do(t, startReq(tok, strings.Repeat("T", 70_000), "LOC123")), 413, "*", nil)
	})
}

func TestPromotionOperatorAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok := s.posToken(t)
		admin := s.adminToken(t)
		s.company(t, admin, "other", "OTHER-1")
		s.company(t, admin, "ops", "OPS-1", "OPS-2")
		checkResult(t, mustImport(t, s.request(t, importReq(tok, "ops", "application/json", items(
			`{"id":"A","name":"everywhere, always"}`,
			`{"id":"B","name":"OPS-1 in May","locationIds":["OPS-1"],"promotionValidities":[{"startDate":"2030-05-01","endDate":"2030-05-31T23:59:59Z"}]}`,
			`{"id":"C","name":"OPS-2 weekend mornings","locationIds":["OPS-2"],"promotionValidities":[{"startDate":"2030-05-01",
				"recurrence":{"daysOfWeek":["Saturday","Sunday"],"startDate":"2030-05-04T08:00:00Z","endDate":"2030-05-04T11:00:00Z"}}]}`,
			`{"id":"D","name":"both, until April","locationIds":["OPS-1","OPS-2"],"promotionValidities":[{"endDate":"2030-04-30T23:59:59Z"}]}`,
			`{"id":"E","name":"everywhere in June","promotionValidities":[{"startDate":"2030-06-01"}]}`)))),
			importResult{Status: "Completed", CreatedCount: 5})
		base := "/admin/v1/pos-systems/clover/companies/ops/promotions"
		get := func(query string) response { return s.call(t, admin, "GET", base+query, "") }

		// Paging.
		r := get("?page=2&pageSize=2")
		mustStatus(t, r, 200)
		var page struct {
			Data []map[string]any `json:"data"`
			Page map[string]int   `json:"page"`
		}
		if err := json.Unmarshal(r.Body, &page); err != nil || len(page.Data) != 2 || page.Data[0]["id"] != "C" || page.Data[1]["id"] != "D" ||
			!reflect.DeepEqual(page.Page, map[string]int{"page": 2, "pageSize": 2, "total": 5}) {
			t.Fatalf("page 2: %s", r.Body)
		}
		if got := s.promotionIDs(t, admin, "ops", ""); fmt.Sprint(got) != "[A B C D E]" {
			t.Fatalf("all: %v", got)
		}
		r = get("?page=9")
		if !strings.Contains(string(r.Body), `"data":[],"page":{"page":9,"pageSize":100,"total":5}`) {
			t.Fatalf("a page past the end: %s", r.Body)
		}

		// Valid at a time and location. 2030-05-04 is a Saturday.
		for _, tc := range []struct{ query, want string }{
			{"&validAt=2030-05-04T09:00:00Z&posLocationId=OPS-2", "[A C]"},
			{"&validAt=2030-05-04T12:00:00Z&posLocationId=OPS-2", "[A]"},
			{"&validAt=2030-05-06T09:00:00Z&posLocationId=OPS-2", "[A]"}, // a Monday
			{"&validAt=2030-05-04T09:00:00Z&posLocationId=OPS-1", "[A B]"},
			{"&validAt=2030-04-15T09:00:00Z&posLocationId=OPS-1", "[A D]"},
			{"&validAt=2030-06-01T00:00:00Z&posLocationId=OPS-1", "[A E]"},
			{"&validAt=2030-05-04T09:00:00", "[A B C]"}, // any location; no offset: UTC
			{"&validAt=2030-05-04T11:00:00%2B02:00", "[A B C]"},
		} {
			if got := s.promotionIDs(t, admin, "ops", tc.query); fmt.Sprint(got) != tc.want {
				t.Errorf("%s: %v, want %s", tc.query, got, tc.want)
			}
		}
		// posLocationId alone: valid now (the server's clock, 2030 is far).
		if got := s.promotionIDs(t, admin, "ops", "&posLocationId=OPS-1"); fmt.Sprint(got) != "[A D]" {
			t.Errorf("at OPS-1 now: %v", got)
		}
		r = get("?validAt=2030-05-04T09:00:00Z&posLocationId=OPS-2&pageSize=1&page=2")
		if !strings.Contains(string(r.Body), `"id":"C"`) || !strings.HasSuffix(string(r.Body), `"page":{"page":2,"pageSize":1,"total":2}}`) {
			t.Fatalf("a page of a filtered list: %s", r.Body)
		}

		// One promotion.
		r = s.call(t, admin, "GET", base+"/C", "")
		if c := r.JSON(t)["data"].(map[string]any); c["name"] != "OPS-2 weekend mornings" {
			t.Fatalf("C: %s", r.Body)
		}

		// Errors.
		msg := "The validAt parameter must be a date-time (ISO 8601), e.g. 2030-05-01T12:00:00Z."
		mustProblem(t, get("?validAt=soon"), 400, msg, map[string][]string{"validAt": {msg}})
		msg = "The pageSize parameter must be an integer from 1 to 1000."
		mustProblem(t, get("?pageSize=1001"), 400, msg, map[string][]string{"pageSize": {msg}})
		msg = "The page parameter must be an integer from 1 to 1073741824."
		mustProblem(t, get("?page=0"), 400, msg, map[string][]string{"page": {msg}})
		mustProblem(t, get("?posLocationId=OTHER-1"), 404, "Location 'OTHER-1' is not a location of company 'ops'.", nil)
		mustProblem(t, get("?posLocationId=NOPE"), 404, "Location 'NOPE' is not a location of company 'ops'.", nil)
		mustProblem(t, s.call(t, admin, "GET", base+"/Z", ""), 404, `promotion "Z" not found`, nil)
		mustProblem(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/nope/promotions", ""), 404, `company "nope" not found`, nil)
		mustProblem(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/pax/companies/demo-company/promotions", ""), 404, `company "demo-company" not found`, nil)
		mustProblem(t, s.call(t, tok, "GET", base, ""), 403, "*", nil)
		mustProblem(t, s.call(t, "", "GET", base, ""), 401, "*", nil)
		if got := s.promotionIDs(t, admin, "other", ""); len(got) != 0 {
			t.Fatalf("another company's list: %v", got)
		}

		// The catalogue.
		cat := "/admin/v1/pos-systems/clover/companies/other/catalogue"
		r = s.call(t, admin, "GET", cat, "")
		if string(r.Body) != `{"data":{"posSystemId":"clover","posCompanyId":"other","categoryIds":[],"productIds":[]}}` {
			t.Fatalf("new catalogue: %s", r.Body)
		}
		put := func(body, ct string) response {
			return s.do(t, req{Method: "PUT", Path: cat, Token: admin, ContentType: ct, Body: body})
		}
		msg = "Catalogue ids must be valid text of 1-128 bytes."
		mustProblem(t, put(`{"categoryIds":["ok",""],"productIds":["`+strings.Repeat("x", 129)+`"]}`, "application/json"), 400, msg, // said once in detail
			map[string][]string{"categoryIds[1]": {msg}, "productIds[0]": {msg}})
		msg = "The property 'categories' is not allowed."
		mustProblem(t, put(`{"categories":["a"]}`, "application/json"), 400, msg, map[string][]string{"categories": {msg}})
		mustProblem(t, put(`<c><categoryIds>a</categoryIds></c>`, "application/xml"), 415, "Send the body as application/json.", nil)
		mustProblem(t, s.call(t, admin, "PUT", "/admin/v1/pos-systems/clover/companies/nope/catalogue", `{}`),
			404, `company "nope" not found`, nil)
		mustProblem(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/nope/catalogue", ""), 404, `company "nope" not found`, nil)
		mustProblem(t, put(`{"categoryIds":["`+strings.Repeat("a", 70_000)+`"]}`, "application/json"), 413, "*", nil)
		mustStatus(t, put(`{"categoryIds":["b","a"]}`, "application/json"), 200)
		r = s.call(t, admin, "GET", cat, "")
		if string(r.Body) != `{"data":{"posSystemId":"clover","posCompanyId":"other","categoryIds":["a","b"],"productIds":[]}}` {
			t.Fatalf("catalogue after PUT: %s", r.Body)
		}
		// ops's catalogue is its own.
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/ops/catalogue", "")
		if !strings.Contains(string(r.Body), `"categoryIds":[]`) {
			t.Fatalf("ops's catalogue: %s", r.Body)
		}
	})
}

// TestPromotionImportDeadline checks that the import route sets its own
// deadline (--import-timeout): a body still arriving after it is cut off,
// and nothing is stored.
func TestPromotionImportDeadline(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.ImportTimeout = 300 * time.Millisecond })
		tok := s.posToken(t)
		admin := s.adminToken(t)
		s.company(t, admin, "slow")
		// A raw connection, so that the test sees exactly what the server
		// does: net/http's client would wait for its body writer, blocked
		// on the part of the body held back, before reporting a dropped
		// connection.
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		first := `{"items":[{"id":"P1","name":"first"},`
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: posgate\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n",
			importPath("slow"), tok, len(first), first)
		started := time.Now()
		// The rest of the body is never sent: the server must give up on
		// it by itself, 300 ms after it began the request, by answering (a
		// 400 for the cut-off body) or by dropping the connection when its
		// write deadline has passed too. Waiting for that, rather than
		// sending the rest after a fixed pause, keeps the test exact on a
		// machine slow enough to begin the request late.
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			t.Fatalf("the server still waited for the body of an import %v after its 300 ms deadline", time.Since(started))
		case err == nil && resp.StatusCode == http.StatusOK:
			t.Fatalf("an import past its deadline succeeded (%v after it began)", time.Since(started))
		case err == nil:
			resp.Body.Close()
		}
		if got := s.promotionIDs(t, admin, "slow", ""); len(got) != 0 {
			t.Fatalf("an import cut off by its deadline stored %v", got)
		}
		// Within the deadline, the same route works.
		checkResult(t, mustImport(t, s.request(t, importReq(tok, "slow", "application/json", items(`{"id":"P1","name":"n"}`)))),
			importResult{Status: "Completed", CreatedCount: 1})
	})
}
