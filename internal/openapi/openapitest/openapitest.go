// Package openapitest checks real HTTP responses against posgate's OpenAPI
// document, so that every handler test also proves the document true.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/posgate/posgate/internal/openapi"
)

// Validator checks real responses against the document. The zero value is
// not usable; call New.
type Validator struct {
	// AllowUnknown lets responses to requests that match no operation of
	// the document (an unknown path, or a method the path does not have) pass
	// unchecked. It is off by default, so that a handler the document forgot
	// fails its tests; a test that probes unknown routes on purpose (404, 405)
	// turns it on.
	AllowUnknown bool

	router routers.Router
}

// load parses and validates the document once per test binary: it is
// immutable afterwards, and every test shares it.
var load = sync.OnceValues(func() (routers.Router, error) {
	// posgate answers text/json and text/plain with JSON; kin-openapi decodes
	// text/plain as a plain string and knows no text/json, so teach it.
	openapi3filter.RegisterBodyDecoder("text/json", openapi3filter.JSONBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/plain", openapi3filter.JSONBodyDecoder)
	// The carousel page, the receipt QR codes and the offline kit (a compact
	// JWS) are not JSON: their bodies are checked as strings.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/jose", openapi3filter.FileBodyDecoder)

	// The addresses do not matter: the router below matches paths only.
	data, err := openapi.Document("http://posgate.test", "http://posgate.test")
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("loading the document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the document is not valid OpenAPI: %w", err)
	}
	// Without servers the legacy router matches on the path alone, so test
	// servers on 127.0.0.1:port are routed like the real host.
	doc.Servers = nil
	return legacy.NewRouter(doc)
})

// options checks every documented status, header, content type and body;
// security is not re-checked (response validation never authenticates). The
// schema dumps are left out of the messages: Check prints the body instead.
var options = &openapi3filter.Options{
	IncludeResponseStatus: true,
	MultiError:            true,
	AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	SchemaValidationOptions: []openapi3.SchemaValidationOption{
		openapi3.DisableSchemaErrorDetails(),
		openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
	},
}

// New returns a Validator over the document, failing t if the document does
// not load or validate.
func New(t testing.TB) *Validator {
	t.Helper()
	router, err := load()
	if err != nil {
		t.Fatalf("openapitest: %v", err)
	}
	return &Validator{router: router}
}

// Check validates one exchange: it finds the operation by method and path
// (the host is ignored), then checks that the status is documented and that
// the Content-Type, the documented headers and the body match. body is the
// already-read response body. A mismatch fails t (without stopping it) with
// the request, the status and kin-openapi's reasons.
func (v *Validator) Check(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		if !v.AllowUnknown {
			t.Errorf("openapitest: %s %s: no operation in the document (%v); set AllowUnknown for a test that probes undocumented routes",
				req.Method, req.URL.Path, err)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: params,
			Route:      route,
			Options:    options,
		},
		Status:  resp.StatusCode,
		Header:  resp.Header,
		Options: options,
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(req.Context(), in); err != nil {
		t.Errorf("openapitest: %s %s (operation %s) answered %d %q: %v\nbody: %s",
			req.Method, req.URL.Path, route.Operation.OperationID, resp.StatusCode, resp.Header.Get("Content-Type"), err, body)
		return
	}
	if bad := strictNulls(route.Operation, resp, body); len(bad) > 0 {
		t.Errorf("openapitest: %s %s (operation %s) answered %d with null where the document does not admit it (OpenAPI 3.0.3: "+
			"nullable adds null only to a type of its own schema, and every allOf part must admit it): %s\nbody: %s",
			req.Method, req.URL.Path, route.Operation.OperationID, resp.StatusCode, strings.Join(bad, ", "), body)
	}
}

// strictNulls returns the JSON paths of the nulls in a JSON answer that
// the answer's schema does not admit as OpenAPI 3.0.3 reads "nullable".
// kin-openapi lets a null through as soon as the schema it meets says
// nullable, without looking at its allOf parts: "nullable: true" beside
// "allOf: [$ref X]" passes there and fails in stricter validators (and in
// every OpenAPI 3.1 conversion), where X must admit null too.
func strictNulls(op *openapi3.Operation, resp *http.Response, body []byte) []string {
	ref := op.Responses.Status(resp.StatusCode)
	if ref == nil {
		ref = op.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return nil
	}
	mt := ref.Value.Content.Get(resp.Header.Get("Content-Type"))
	if mt == nil || mt.Schema == nil {
		return nil
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var bad []string
	walkNulls(mt.Schema.Value, v, "$", &bad)
	return bad
}

// walkNulls records in bad the paths under path where v holds a null that
// s does not admit.
func walkNulls(s *openapi3.Schema, v any, path string, bad *[]string) {
	if s == nil {
		return
	}
	if v == nil {
		if !admitsNull(s) {
			*bad = append(*bad, path)
		}
		return
	}
	for _, part := range s.AllOf {
		walkNulls(part.Value, v, path, bad)
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for _, alt := range alts {
			if alt.Value != nil && alt.Value.VisitJSON(v) == nil {
				walkNulls(alt.Value, v, path, bad)
				break
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for k, pv := range v {
			if ps := s.Properties[k]; ps != nil {
				walkNulls(ps.Value, pv, path+"."+k, bad)
			} else if ap := s.AdditionalProperties.Schema; ap != nil {
				walkNulls(ap.Value, pv, path+"."+k, bad)
			}
		}
	case []any:
		if s.Items != nil {
			for i, item := range v {
				walkNulls(s.Items.Value, item, path+"["+strconv.Itoa(i)+"]", bad)
			}
		}
	}
}

// admitsNull reports whether s admits null under OpenAPI 3.0.3: a type of
// its own admits it only with nullable, an enum only when it lists null,
// every allOf part must admit it and one oneOf or anyOf part.
func admitsNull(s *openapi3.Schema) bool {
	if s == nil {
		return true
	}
	if s.Type != nil && !s.Type.IsEmpty() && !s.Nullable {
		return false
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, nil) {
		return false
	}
	for _, part := range s.AllOf {
		if !admitsNull(part.Value) {
			return false
		}
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		if len(alts) > 0 && !slices.ContainsFunc(alts, func(r *openapi3.SchemaRef) bool { return admitsNull(r.Value) }) {
			return false
		}
	}
	return true
}

// Transport wraps next (http.DefaultTransport when nil) so that every
// response that passes through is checked; the body is read and restored, so
// the caller reads it as usual.
func (v *Validator) Transport(t testing.TB, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{v: v, t: t, next: next}
}

type transport struct {
	v    *Validator
	t    testing.TB
	next http.RoundTripper
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tr.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("openapitest: reading the response to %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	tr.v.Check(tr.t, req, resp, body)
	return resp, nil
}

// Document returns the document as posgate serves it, with {base_url} and
// {auth_url} at example hosts, parsed; it fails t if the document does not
// load.
func Document(t testing.TB) *openapi3.T {
	t.Helper()
	data, err := openapi.Document("https://pos.example.com", "https://id.example.com")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
