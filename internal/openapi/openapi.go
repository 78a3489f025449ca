// Package openapi holds posgate's OpenAPI 3.0.1 document (openapi.yaml) and
// serves it as JSON with the service's and the identity provider's addresses
// filled in. The YAML is a template: the literal placeholders {base_url} and
// {auth_url} stand for those addresses, because they differ per deployment.
package openapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// Placeholders of the template, replaced by Document.
const (
	baseURLPlaceholder = "{base_url}"
	authURLPlaceholder = "{auth_url}"
)

//go:embed openapi.yaml
var source []byte

// template converts the YAML to JSON on first use, not at start-up: parsing
// the document costs milliseconds that a cold start should not pay.
var template = sync.OnceValues(func() (string, error) {
	doc, err := openapi3.NewLoader().LoadFromData(source)
	if err != nil {
		return "", fmt.Errorf("openapi: parsing openapi.yaml: %w", err)
	}
	addOverloadAnswers(doc)
	b, err := doc.MarshalJSON()
	if err != nil {
		return "", fmt.Errorf("openapi: converting openapi.yaml to JSON: %w", err)
	}
	return string(b), nil
})

// addOverloadAnswers adds what every operation may answer under load
// (docs/api.md §16), once here rather than in each operation of the YAML:
// 503 when the request is shed (every route but the health routes, which
// are exempt), and on the routes that take an access token 429 when the
// client's rate limit is used up, and the RateLimit headers on every answer.
// An operation that documents these itself (the token endpoint) keeps its own.
func addOverloadAnswers(doc *openapi3.T) {
	ref := func(name string) *openapi3.ResponseRef {
		return &openapi3.ResponseRef{Ref: "#/components/responses/" + name}
	}
	for path, item := range doc.Paths.Map() {
		if path == "/healthz" || path == "/readyz" {
			continue
		}
		for _, op := range item.Operations() {
			if op.Responses.Value("503") == nil {
				op.Responses.Set("503", ref("ServiceUnavailable"))
			}
			if op.Security == nil || len(*op.Security) == 0 || op.Responses.Value("429") != nil {
				continue
			}
			op.Responses.Set("429", ref("TooManyRequests"))
			for _, r := range op.Responses.Map() {
				if r.Value == nil {
					continue // the two just added
				}
				if r.Value.Headers == nil {
					r.Value.Headers = openapi3.Headers{}
				}
				r.Value.Headers["RateLimit-Policy"] = &openapi3.HeaderRef{Ref: "#/components/headers/RateLimitPolicy"}
				r.Value.Headers["RateLimit"] = &openapi3.HeaderRef{Ref: "#/components/headers/RateLimit"}
			}
		}
	}
}

// maxCached bounds the cache so that a caller deriving the addresses from
// request headers cannot make it grow without limit; a deployment has one or
// two pairs.
const maxCached = 8

// cache holds the substituted documents, keyed by (baseURL, authURL).
var cache = struct {
	sync.Mutex
	docs map[[2]string][]byte
}{docs: map[[2]string][]byte{}}

// Document returns the OpenAPI document as JSON with {base_url} and
// {auth_url} replaced by baseURL and authURL, absolute http(s) URLs such as
// "https://pos.example.com" (a trailing slash is dropped, since paths are
// appended to them). The result is computed once per pair and cached, because
// it is served on every request for /swagger/v1/swagger.json; callers must
// not modify it.
func Document(baseURL, authURL string) ([]byte, error) {
	base, err := absolute("baseURL", baseURL)
	if err != nil {
		return nil, err
	}
	auth, err := absolute("authURL", authURL)
	if err != nil {
		return nil, err
	}
	key := [2]string{base, auth}
	cache.Lock()
	doc, ok := cache.docs[key]
	cache.Unlock()
	if ok {
		return doc, nil
	}
	tmpl, err := template()
	if err != nil {
		return nil, err
	}
	doc = []byte(strings.NewReplacer(baseURLPlaceholder, jsonText(base), authURLPlaceholder, jsonText(auth)).Replace(tmpl))
	cache.Lock()
	if len(cache.docs) < maxCached {
		cache.docs[key] = doc
	}
	cache.Unlock()
	return doc, nil
}

// absolute checks that s is an absolute http(s) URL and drops a trailing
// slash.
func absolute(name, s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("openapi: %s %q is not an absolute http(s) URL", name, s)
	}
	return strings.TrimRight(s, "/"), nil
}

// jsonText escapes s for use inside a JSON string, where the placeholders
// stand.
func jsonText(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b[1 : len(b)-1])
}
