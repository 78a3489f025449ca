// Package openapi holds posgate's OpenAPI 3.0.1 document (openapi.yaml,
// generated into openapi.json) and serves it as JSON with the service's and
// the identity provider's addresses filled in. The document is a template:
// the literal placeholders {base_url} and {auth_url} stand for those
// addresses, because they differ per deployment.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// Placeholders of the template, replaced by Document.
const (
	baseURLPlaceholder = "{base_url}"
	authURLPlaceholder = "{auth_url}"
)

//go:generate go run ./gen

// source is the JSON template, generated from openapi.yaml by
// internal/openapi/openapigen (TestGeneratedJSONIsCurrent fails when it is
// stale). The server embeds the JSON rather than converting the YAML, so
// that the OpenAPI library is not part of it.
//
//go:embed openapi.json
var source []byte

// template is source without the indentation kept for its readers, on
// first use: compacting it costs a millisecond that a cold start should not
// pay.
var template = sync.OnceValues(func() (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, source); err != nil {
		return "", fmt.Errorf("openapi: openapi.json: %w", err)
	}
	return b.String(), nil
})

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
