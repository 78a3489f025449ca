package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/openapi/openapigen"
)

const (
	testBase = "https://pos.example.com"
	testAuth = "https://id.example.com"
)

// yamlSource is the template as written.
func yamlSource(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGeneratedJSONIsCurrent checks that the embedded openapi.json is what
// openapi.yaml gives today, so that a change to the YAML cannot reach the
// server without `go generate ./internal/openapi`.
func TestGeneratedJSONIsCurrent(t *testing.T) {
	want, err := openapigen.Convert(yamlSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(source, want) {
		t.Fatal("openapi.json is not what openapi.yaml gives: run go generate ./internal/openapi")
	}
}

// TestServerDoesNotLinkTheOpenAPILibrary keeps the reason for openapi.json:
// the OpenAPI library (and its YAML and JSON Schema packages) belongs to
// development and tests, not to the posgate binary (docs/decisions.md).
func TestServerDoesNotLinkTheOpenAPILibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/posgate/posgate/cmd/posgate").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/getkin/kin-openapi") || strings.HasPrefix(pkg, "github.com/santhosh-tekuri/jsonschema") {
			t.Errorf("cmd/posgate imports %s", pkg)
		}
	}
}

// load returns the substituted document, parsed and validated.
func load(t *testing.T) *openapi3.T {
	t.Helper()
	data, err := Document(testBase+"/", testAuth)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("loading: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return doc
}

func TestDocumentIsValidOpenAPI(t *testing.T) {
	doc := load(t)
	if doc.OpenAPI != "3.0.1" || doc.Info.Title != "posgate" || doc.Info.Version != "v1" {
		t.Errorf("openapi %q, title %q, version %q; want 3.0.1, posgate, v1", doc.OpenAPI, doc.Info.Title, doc.Info.Version)
	}
	var tags []string
	for _, tag := range doc.Tags {
		tags = append(tags, tag.Name)
	}
	if want := []string{"Identity", "POS", "Operator", "Health", "Content"}; !slices.Equal(tags, want) {
		t.Errorf("tags %v, want %v", tags, want)
	}
}

func TestEveryOperationIsDescribed(t *testing.T) {
	doc := load(t)
	known := map[string]bool{"Identity": true, "POS": true, "Operator": true, "Health": true, "Content": true}
	count := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			count++
			name := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s: no operationId", name)
			}
			// A summary names the operation; the description is what an
			// integrator reads to call it: what it does, who may, and
			// when it answers what.
			if d := strings.TrimSpace(op.Description); d == "" || d == strings.TrimSpace(op.Summary) {
				t.Errorf("%s: no description beside the summary", name)
			} else if l := strings.ToLower(d); !strings.Contains(l, "token") && !strings.Contains(l, "authenticat") && !strings.Contains(l, "authoris") {
				t.Errorf("%s: the description does not say who may call it (which token, a signed link, or no authentication)", name)
			}
			if len(op.Tags) != 1 || !known[op.Tags[0]] {
				t.Errorf("%s: tags %v, want one of Identity, POS, Operator, Health, Content", name, op.Tags)
			}
			if op.Security == nil {
				t.Errorf("%s: no security list (an open operation says security: [])", name)
			} else if len(*op.Security) > 0 && op.Responses.Status(http.StatusUnauthorized) == nil {
				t.Errorf("%s: secured but 401 is not documented", name)
			}
			if op.RequestBody != nil {
				for _, status := range []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType} {
					if strings.HasPrefix(path, "/connect/") {
						break // OAuth answers malformed requests with 400 invalid_request
					}
					if op.Responses.Status(status) == nil {
						t.Errorf("%s: takes a body but does not document %d", name, status)
					}
				}
			}
			// Operations that reach the store can fail; discovery, keys and
			// health answer from memory (readyz reports a failing store as 503).
			if (op.Tags[0] == "POS" || op.Tags[0] == "Operator" || path == "/connect/token") && op.Responses.Status(http.StatusInternalServerError) == nil {
				t.Errorf("%s: 500 is not documented", name)
			}
		}
	}
	if count != 113 {
		t.Errorf("%d operations, want 113", count)
	}
}

// TestSecurity checks each tag's operations against the schemes the
// interface and the contract require.
func TestSecurity(t *testing.T) {
	doc := load(t)
	want := map[string]openapi3.SecurityRequirements{
		"POS":      {{"BearerAuth": {}}, {"ImplicitAuth": {"service_api"}}},
		"Operator": {{"OperatorAuth": {"admin"}}, {"ImplicitAuth": {"admin"}}},
		"Health":   {},
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			w, ok := want[op.Tags[0]]
			if !ok {
				continue
			}
			if got, _ := json.Marshal(op.Security); string(got) != mustJSON(t, w) {
				t.Errorf("%s %s: security %s, want %s", method, path, got, mustJSON(t, w))
			}
		}
	}
	flows := doc.Components.SecuritySchemes
	if got := flows["ImplicitAuth"].Value.Flows.Implicit.AuthorizationURL; got != testAuth+"/connect/authorize" {
		t.Errorf("ImplicitAuth authorizationUrl %q", got)
	}
	if got := flows["OperatorAuth"].Value.Flows.ClientCredentials.TokenURL; got != testAuth+"/connect/token" {
		t.Errorf("OperatorAuth tokenUrl %q", got)
	}
	if b := flows["BearerAuth"].Value; b.Type != "http" || b.Scheme != "bearer" || b.BearerFormat != "JWT" {
		t.Errorf("BearerAuth %+v", b)
	}
}

// TestErrorsAreProblems checks that every 4xx and 5xx is an RFC 9457
// problem, except the token endpoint's RFC 6749 errors, readyz's 503 and the
// carousel page's HTML error pages (a customer screen shows them), and that
// every 401 carries a WWW-Authenticate header.
func TestErrorsAreProblems(t *testing.T) {
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for code, ref := range op.Responses.Map() {
				status, _ := strconv.Atoi(code)
				if status < 400 || path == "/readyz" || path == "/carousel" || path == "/connect/authorize" {
					continue
				}
				name := method + " " + path + " " + code
				want, schema := "application/problem+json", "ProblemDetails"
				if path == "/connect/token" {
					want, schema = "application/json", "OAuthError"
				} else if status == http.StatusBadRequest {
					schema = "ValidationProblemDetails"
				}
				var types []string
				for ct, mt := range ref.Value.Content {
					types = append(types, ct)
					if mt.Schema.Ref != "#/components/schemas/"+schema {
						t.Errorf("%s: schema %s, want %s", name, mt.Schema.Ref, schema)
					}
				}
				if !slices.Equal(types, []string{want}) {
					t.Errorf("%s: content types %v, want %s", name, types, want)
				}
				if h := ref.Value.Headers["WWW-Authenticate"]; status == http.StatusUnauthorized && (h == nil || !h.Value.Required) {
					t.Errorf("%s: WWW-Authenticate is not a required header", name)
				}
			}
		}
	}
}

// TestEnumsMatchTheDomain keeps the document's enums equal to the domain's
// values, so neither can grow alone.
func TestEnumsMatchTheDomain(t *testing.T) {
	doc := load(t)
	schemas := doc.Components.Schemas
	enum := func(name string) []string {
		var out []string
		for _, v := range schemas[name].Value.Enum {
			out = append(out, v.(string))
		}
		return out
	}
	if got, want := enum("PosResponseStatus"), []string{string(posgate.PosAccepted), string(posgate.PosDisabled),
		string(posgate.PosNotAvailable), string(posgate.PosRejected), string(posgate.PosError)}; !slices.Equal(got, want) {
		t.Errorf("PosResponseStatus %v, want %v", got, want)
	}
	if got, want := enum("Status"), []string{string(posgate.StatusActive), string(posgate.StatusDisabled)}; !slices.Equal(got, want) {
		t.Errorf("Status %v, want %v", got, want)
	}
	if got := enum("Scope"); !slices.Equal(got, posgate.KnownScopes) {
		t.Errorf("Scope %v, want %v", got, posgate.KnownScopes)
	}
	var providers, statuses []string
	for _, p := range posgate.RewardProviders {
		providers = append(providers, string(p))
	}
	for _, st := range posgate.CouponStatuses {
		statuses = append(statuses, string(st))
	}
	if got := enum("RewardProvider"); !slices.Equal(got, providers) {
		t.Errorf("RewardProvider %v, want %v", got, providers)
	}
	if got := enum("CouponCodeItemStatus"); !slices.Equal(got, statuses) {
		t.Errorf("CouponCodeItemStatus %v, want %v", got, statuses)
	}
	features, _ := json.Marshal(posgate.AllFeaturesOn())
	var fields map[string]bool
	if err := json.Unmarshal(features, &fields); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Features", "FeaturesUpdate"} {
		props := schemas[name].Value.Properties
		if len(props) != len(fields) {
			t.Errorf("%s has %d properties, posgate.Features %d", name, len(props), len(fields))
		}
		for f := range fields {
			if props[f] == nil {
				t.Errorf("%s lacks %q", name, f)
			}
		}
	}
}

func TestDocumentSubstitutes(t *testing.T) {
	data, err := Document(testBase+"/", testAuth)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(data) {
		t.Fatal("not valid JSON")
	}
	for _, p := range []string{baseURLPlaceholder, authURLPlaceholder, "{base_url", "auth_url}"} {
		if strings.Contains(string(data), p) {
			t.Errorf("%s remains after substitution", p)
		}
	}
	var doc struct {
		Info    struct{ Description string }
		Servers []struct{ URL string }
		Paths   map[string]struct {
			Servers []struct{ URL string }
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != testBase {
		t.Errorf("servers %+v, want %s (trailing slash dropped)", doc.Servers, testBase)
	}
	for _, p := range []string{"/connect/token", "/connect/authorize", "/.well-known/openid-configuration", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration/jwks"} {
		if s := doc.Paths[p].Servers; len(s) != 1 || s[0].URL != testAuth {
			t.Errorf("%s servers %+v, want %s", p, s, testAuth)
		}
	}
	for _, want := range []string{testAuth + "/connect/token", testAuth + "/.well-known/openid-configuration/jwks"} {
		if !strings.Contains(doc.Info.Description, want) {
			t.Errorf("the description does not name %s", want)
		}
	}
}

func TestDocumentEscapesAndCaches(t *testing.T) {
	base := `http://a.example/x"y\z`
	first, err := Document(base, testAuth)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Servers []struct{ URL string } }
	if err := json.Unmarshal(first, &doc); err != nil {
		t.Fatalf("substituted document is not JSON: %v", err)
	}
	if doc.Servers[0].URL != base {
		t.Errorf("server %q, want %q", doc.Servers[0].URL, base)
	}
	second, err := Document(base, testAuth)
	if err != nil {
		t.Fatal(err)
	}
	if &first[0] != &second[0] {
		t.Error("the second call did not return the cached document")
	}
	other, err := Document(testBase, testAuth)
	if err != nil {
		t.Fatal(err)
	}
	if &other[0] == &first[0] {
		t.Error("another base URL returned the same document")
	}
}

func TestDocumentRejectsRelativeURLs(t *testing.T) {
	for _, c := range [][2]string{{"", testAuth}, {testBase, ""}, {"/api", testAuth}, {testBase, "ftp://id.example.com"}, {"pos.example.com", testAuth}} {
		if _, err := Document(c[0], c[1]); err == nil {
			t.Errorf("Document(%q, %q) succeeded", c[0], c[1])
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEveryOperationAnswersClientErrors stands in for the linter's
// operation-4xx-response rule, which internal/openapi/redocly.yaml turns
// off: every operation documents a 4xx, except the five that take no input
// and no credentials and so have no client error to answer.
func TestEveryOperationAnswersClientErrors(t *testing.T) {
	doc := load(t)
	inputless := map[string]bool{"getHealth": true, "getReadiness": true, "getDiscovery": true, "getAuthorizationServerMetadata": true, "getJwks": true}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			has4xx := false
			for code := range op.Responses.Map() {
				has4xx = has4xx || strings.HasPrefix(code, "4")
			}
			if has4xx == inputless[op.OperationID] {
				t.Errorf("%s %s (%s): documents a 4xx: %v; want %v", method, path, op.OperationID, has4xx, !inputless[op.OperationID])
			}
			if inputless[op.OperationID] && (len(op.Parameters) > 0 || op.RequestBody != nil || op.Security == nil || len(*op.Security) > 0) {
				t.Errorf("%s %s (%s) is listed as taking no input and no credentials, but does", method, path, op.OperationID)
			}
		}
	}
}

// TestCitesNoOutsideDocuments keeps the document in posgate's own words:
// the specifications posgate was built from are not in the repository, so
// a reader could not follow a reference to them.
func TestCitesNoOutsideDocuments(t *testing.T) {
	for _, name := range []string{"interface.md", "contract.md"} {
		if bytes.Contains(yamlSource(t), []byte(name)) {
			t.Errorf("openapi.yaml cites %s", name)
		}
	}
}

// TestOverloadAnswers: every operation but the health routes documents the
// 503 of load shedding with Retry-After; every operation that takes an
// access token, and the token endpoint, documents 429 with Retry-After; and
// every answer of an operation that takes an access token, but the 503 of
// a request shed before its token is read, may carry the RateLimit fields
// (docs/api.md §16).
func TestOverloadAnswers(t *testing.T) {
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			health := path == "/healthz" || path == "/readyz"
			if r := op.Responses.Status(http.StatusServiceUnavailable); health != (r == nil) && path != "/readyz" {
				t.Errorf("%s: 503 documented: %v", name, r != nil)
			} else if r != nil && !health && (r.Value.Headers["Retry-After"] == nil || !r.Value.Headers["Retry-After"].Value.Required) {
				t.Errorf("%s: 503 without a required Retry-After", name)
			}
			secured := op.Security != nil && len(*op.Security) > 0
			r := op.Responses.Status(http.StatusTooManyRequests)
			if secured != (r != nil) {
				t.Errorf("%s: secured %v, 429 documented %v", name, secured, r != nil)
				continue
			}
			if r != nil && (r.Value.Headers["Retry-After"] == nil || !r.Value.Headers["Retry-After"].Value.Required) {
				t.Errorf("%s: 429 without a required Retry-After", name)
			}
			if !secured || path == "/connect/token" {
				continue
			}
			for code, resp := range op.Responses.Map() {
				if code == "503" {
					continue // shed before the token is read
				}
				if resp.Value.Headers["RateLimit-Policy"] == nil || resp.Value.Headers["RateLimit"] == nil {
					t.Errorf("%s %s: the RateLimit fields are not documented", name, code)
				}
			}
		}
	}
}

// TestApplicationJSONIsTheFirstMediaType: Swagger UI's "Try it out" sends
// the first media type of a request body's content, so in the served
// document every content map that offers application/json lists it first
// (the OpenAPI library alone would put application/*+json there).
func TestApplicationJSONIsTheFirstMediaType(t *testing.T) {
	data, err := Document(testBase, testAuth)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var checked int
	// walk reads one value; path names it in failures, and content says it
	// is the value of a "content" member.
	var walk func(path string, content bool)
	walk = func(path string, content bool) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				walk(path+"/"+strconv.Itoa(i), false)
			}
			dec.Token()
		case json.Delim('{'):
			var keys []string
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k.(string))
				walk(path+"/"+k.(string), k == "content")
			}
			dec.Token()
			if content && slices.Contains(keys, "application/json") {
				checked++
				if keys[0] != "application/json" {
					t.Errorf("%s: the media types are %v: application/json is not first", path, keys)
				}
			}
		}
	}
	walk("", false)
	if checked < 50 {
		t.Fatalf("only %d content maps with application/json found", checked)
	}
}
