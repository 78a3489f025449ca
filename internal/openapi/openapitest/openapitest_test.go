package openapitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// recorder is a testing.TB that keeps the failures instead of failing, so
// that the tests can assert that the Validator catches a bad response.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

const (
	jsonCT    = "application/json; charset=utf-8"
	problemCT = "application/problem+json; charset=utf-8"
	session   = "5f0c2b1e-8a43-4f6e-9b7a-2d3c4e5f6a7b"
)

// answers maps a case name, sent as the posSystemId of a startInteraction
// request, to the status, headers and body the fake server answers.
var answers = map[string]struct {
	status  int
	headers map[string]string
	body    string
}{
	"good":            {200, map[string]string{"Content-Type": jsonCT}, `{"data":{"terminalId":"T-01","posLocationId":"295","sessionId":"` + session + `","posStatus":"Accepted"}}`},
	"good-disabled":   {200, map[string]string{"Content-Type": jsonCT}, `{"data":{"terminalId":"T-01","posLocationId":"295","sessionId":null,"posStatus":"Disabled"}}`},
	"good-text-plain": {200, map[string]string{"Content-Type": "text/plain; charset=utf-8"}, `{"data":{"terminalId":"T-01","posLocationId":"295","sessionId":"` + session + `","posStatus":"Accepted"}}`},
	"good-text-json":  {200, map[string]string{"Content-Type": "text/json; charset=utf-8"}, `{"data":{"terminalId":"T-01","posLocationId":"295","sessionId":"` + session + `","posStatus":"Accepted"}}`},
	"good-401": {401, map[string]string{"Content-Type": problemCT, "WWW-Authenticate": `Bearer error="invalid_token"`},
		`{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.2","title":"Unauthorized","status":401,"detail":"The access token expired.","traceId":"abc"}`},
	"good-400": {400, map[string]string{"Content-Type": problemCT},
		`{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.1","title":"Bad Request","status":400,"detail":"One or more validation errors occurred.","traceId":"abc","errors":{"terminalId":["The terminalId field is required."]}}`},
	"missing-status": {200, map[string]string{"Content-Type": jsonCT}, `{"data":{"terminalId":"T-01","posLocationId":"295","sessionId":"` + session + `"}}`},
	"extra-property": {200, map[string]string{"Content-Type": jsonCT}, `{"data":{"terminalId":"T-01","posLocationId":"295","sessionId":"` + session + `","posStatus":"Accepted","shop":"x"}}`},
	"wrong-type":     {200, map[string]string{"Content-Type": jsonCT}, `{"data":{"terminalId":"T-01","posLocationId":295,"sessionId":"` + session + `","posStatus":"Accepted"}}`},
	"not-a-uuid":     {200, map[string]string{"Content-Type": jsonCT}, `{"data":{"terminalId":"T-01","posLocationId":"295","sessionId":"session-1","posStatus":"Accepted"}}`},
	"unknown-status": {200, map[string]string{"Content-Type": jsonCT}, `{"data":{"terminalId":"T-01","posLocationId":"295","sessionId":null,"posStatus":"Maybe"}}`},
	"wrong-content":  {200, map[string]string{"Content-Type": "text/html; charset=utf-8"}, `{"data":{"terminalId":"T-01","posLocationId":"295","sessionId":"` + session + `","posStatus":"Accepted"}}`},
	"undocumented":   {202, map[string]string{"Content-Type": jsonCT}, `{}`},
	"401-no-challenge": {401, map[string]string{"Content-Type": problemCT},
		`{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.2","title":"Unauthorized","status":401,"detail":"The access token expired.","traceId":"abc"}`},
	"problem-as-json": {404, map[string]string{"Content-Type": jsonCT},
		`{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.5","title":"Not Found","status":404,"detail":"Unknown location.","traceId":"abc"}`},
	"problem-no-trace": {404, map[string]string{"Content-Type": problemCT},
		`{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.5","title":"Not Found","status":404,"detail":"Unknown location."}`},
}

func server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/pos/"), "/startInteraction")
		a, ok := answers[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for k, v := range a.headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// exchange sends one request through a checking transport and returns the
// failures it recorded and the body the caller read.
func exchange(t *testing.T, v *Validator, method, url string) ([]string, string) {
	t.Helper()
	rec := &recorder{}
	client := &http.Client{Transport: v.Transport(rec, nil)}
	req, err := http.NewRequest(method, url, strings.NewReader(`{"terminalId":"T-01","posLocationId":"295"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.errors, string(body)
}

func TestCheckStartInteraction(t *testing.T) {
	srv := server(t)
	v := New(t)
	cases := []struct {
		name string
		want string // a fragment of the one failure; "" when the response is good
	}{
		{"good", ""},
		{"good-disabled", ""},
		{"good-text-plain", ""},
		{"good-text-json", ""},
		{"good-401", ""},
		{"good-400", ""},
		{"missing-status", `property "posStatus" is missing`},
		{"extra-property", `property "shop" is unsupported`},
		{"wrong-type", `value must be a string`},
		{"not-a-uuid", `string doesn't match the format "uuid"`},
		{"unknown-status", `value is not one of the allowed values ["Accepted","Disabled","NotAvailable","Rejected","Error"]`},
		{"wrong-content", `response header Content-Type has unexpected value: "text/html; charset=utf-8"`},
		{"undocumented", `status is not supported`},
		{"401-no-challenge", `response header "WWW-Authenticate" missing`},
		{"problem-as-json", `response header Content-Type has unexpected value: "application/json; charset=utf-8"`},
		{"problem-no-trace", `property "traceId" is missing`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			failures, body := exchange(t, v, http.MethodPost, srv.URL+"/pos/"+c.name+"/startInteraction")
			if body != answers[c.name].body {
				t.Errorf("the caller read %q, want %q", body, answers[c.name].body)
			}
			switch {
			case c.want == "" && len(failures) != 0:
				t.Errorf("a good response failed: %v", failures)
			case c.want != "" && len(failures) != 1:
				t.Errorf("%d failures, want 1 naming %q: %v", len(failures), c.want, failures)
			case c.want != "" && !strings.Contains(failures[0], c.want):
				t.Errorf("failure %q does not say %q", failures[0], c.want)
			case c.want != "" && !strings.Contains(failures[0], "POST /pos/"+c.name+"/startInteraction (operation startInteraction) answered"):
				t.Errorf("failure %q does not name the exchange", failures[0])
			}
		})
	}
}

func TestCheckUnknownRoutes(t *testing.T) {
	srv := server(t)
	for _, c := range []struct {
		method, path, want string
	}{
		{http.MethodGet, "/nope", "GET /nope: no operation in the document (no matching operation was found)"},
		{http.MethodGet, "/pos/good/startInteraction", "GET /pos/good/startInteraction: no operation in the document (no matching operation was found)"},
	} {
		v := New(t)
		failures, _ := exchange(t, v, c.method, srv.URL+c.path)
		if len(failures) != 1 || !strings.HasPrefix(failures[0], "openapitest: "+c.want) {
			t.Errorf("%s %s: failures %q, want one starting %q", c.method, c.path, failures, c.want)
		}
		v.AllowUnknown = true
		if failures, _ := exchange(t, v, c.method, srv.URL+c.path); len(failures) != 0 {
			t.Errorf("%s %s with AllowUnknown: failures %q", c.method, c.path, failures)
		}
	}
}

// TestCheckDirect calls Check without the transport, as a handler test that
// reads the response itself would.
func TestCheckDirect(t *testing.T) {
	v := New(t)
	req := httptest.NewRequest(http.MethodGet, "http://anyhost:1234/readyz", nil)
	header := http.Header{"Content-Type": {jsonCT}}
	for _, c := range []struct {
		status int
		body   string
		fails  bool
	}{
		{200, `{"status":"ready"}`, false},
		{503, `{"status":"unavailable"}`, false},
		{200, `{"status":"fine"}`, true},
		{500, `{"status":"unavailable"}`, true},
	} {
		rec := &recorder{}
		v.Check(rec, req, &http.Response{StatusCode: c.status, Header: header}, []byte(c.body))
		if got := len(rec.errors) != 0; got != c.fails {
			t.Errorf("%d %s: failed %v, want %v: %v", c.status, c.body, got, c.fails, rec.errors)
		}
	}
}

// TestStrictNulls: a null passes only where OpenAPI 3.0.3 admits it:
// "nullable" beside "allOf: [$ref X]" is not enough when X does not admit
// null (kin-openapi lets it through; stricter validators do not).
func TestStrictNulls(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData([]byte(`{"openapi":"3.0.1","info":{"title":"t","version":"1"},"paths":{},
"components":{"schemas":{
 "X":{"type":"object","properties":{"n":{"type":"integer"}}},
 "Null":{"type":"object","nullable":true,"enum":[null]},
 "T":{"type":"object","properties":{
  "viaAllOf":{"type":"object","nullable":true,"allOf":[{"$ref":"#/components/schemas/X"}]},
  "viaOneOf":{"oneOf":[{"$ref":"#/components/schemas/X"},{"$ref":"#/components/schemas/Null"}]},
  "plain":{"type":"string","nullable":true},
  "strict":{"type":"string"},
  "list":{"type":"array","items":{"type":"object","nullable":true,"allOf":[{"$ref":"#/components/schemas/X"}]}}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas["T"].Value
	for body, want := range map[string]string{
		`{"viaAllOf":null}`:                  "$.viaAllOf",
		`{"viaAllOf":{"n":1}}`:               "",
		`{"viaOneOf":null}`:                  "",
		`{"viaOneOf":{"n":1}}`:               "",
		`{"plain":null}`:                     "",
		`{"strict":null}`:                    "$.strict",
		`{"list":[{"n":1},null]}`:            "$.list[1]",
		`{"list":[],"viaOneOf":null}`:        "",
		`{"viaAllOf":null,"plain":"a"}`:      "$.viaAllOf",
		`{"viaOneOf":{"n":1},"strict":"ok"}`: "",
	} {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		var bad []string
		walkNulls(s, v, "$", &bad)
		if got := strings.Join(bad, ","); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}
