// Package openapigen turns posgate's OpenAPI template (openapi.yaml) into
// the JSON template that the server embeds (openapi.json). It runs at
// development time (go generate ./internal/openapi) and in tests, never in
// the server: the OpenAPI library and its YAML and JSON Schema packages
// cost the server about 5 MB of resident memory when linked in
// (docs/decisions.md, "The OpenAPI document is converted at build time").
package openapigen

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// Convert parses the YAML template, adds what every operation may answer
// under load, and returns the document as indented JSON; the {base_url} and
// {auth_url} placeholders stay for the server to fill in.
func Convert(yaml []byte) ([]byte, error) {
	doc, err := openapi3.NewLoader().LoadFromData(yaml)
	if err != nil {
		return nil, fmt.Errorf("openapigen: parsing openapi.yaml: %w", err)
	}
	addOverloadAnswers(doc)
	b, err := doc.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("openapigen: converting openapi.yaml to JSON: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, fmt.Errorf("openapigen: indenting: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

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
