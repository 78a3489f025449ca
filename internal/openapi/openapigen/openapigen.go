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
	"errors"
	"fmt"
	"io"

	"github.com/getkin/kin-openapi/openapi3"
)

// Convert parses the YAML template, adds what every operation may answer
// under load, and returns the document as indented JSON with
// application/json first among the media types of every content map
// (jsonFirst); the {base_url} and {auth_url} placeholders stay for the
// server to fill in.
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
	if b, err = jsonFirst(b); err != nil {
		return nil, fmt.Errorf("openapigen: ordering the media types: %w", err)
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

// jsonFirst returns the JSON document doc with the member "application/json"
// moved to the front of every object that is the value of a "content" member
// (the media-type maps of request bodies, responses, parameters and headers);
// everything else keeps its order. The OpenAPI library writes a map's keys
// sorted, which puts "application/*+json" first, and Swagger UI offers the
// first media type of a request body as the default of "Try it out": it must
// be the plain application/json a newcomer expects.
func jsonFirst(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out bytes.Buffer
	if err := copyValue(dec, &out, false); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("data after the document")
	}
	return out.Bytes(), nil
}

// copyValue copies the next JSON value of dec to out; media says that the
// value is a content map, whose application/json member goes first.
func copyValue(dec *json.Decoder, out *bytes.Buffer, media bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('['):
		out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := copyValue(dec, out, false); err != nil {
				return err
			}
		}
		out.WriteByte(']')
		_, err = dec.Token()
		return err
	case json.Delim('{'):
		var members [][]byte
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			var m bytes.Buffer
			k, _ := json.Marshal(key)
			m.Write(k)
			m.WriteByte(':')
			if err := copyValue(dec, &m, key == "content"); err != nil {
				return err
			}
			if media && key == "application/json" {
				members = append([][]byte{m.Bytes()}, members...)
			} else {
				members = append(members, m.Bytes())
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		out.WriteByte('{')
		out.Write(bytes.Join(members, []byte{','}))
		out.WriteByte('}')
		return nil
	default:
		b, err := json.Marshal(tok)
		out.Write(b)
		return err
	}
}
