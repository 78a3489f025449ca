// Package openapitest checks real HTTP responses against posgate's OpenAPI
// document, so that every handler test also proves the document true.
package openapitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
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
	// The carousel page and the receipt QR codes are not JSON: their bodies
	// are checked as opaque strings.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)

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
	}
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
