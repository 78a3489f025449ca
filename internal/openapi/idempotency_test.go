package openapi_test

import (
	"slices"
	"testing"

	"github.com/posgate/posgate/internal/openapi/openapitest"
	"github.com/posgate/posgate/internal/service"
)

// TestIdempotencyKeyOnEveryPost keeps the Idempotency-Key parameter equal
// to what the service accepts, and on every POST of the POS and operator
// APIs (the routes that take it), with the answers it adds: 400 for a bad
// key, 409 while the key's request runs, 422 for a reused key.
func TestIdempotencyKeyOnEveryPost(t *testing.T) {
	doc := openapitest.Document(t)
	ref := doc.Components.Parameters["IdempotencyKey"]
	if ref == nil {
		t.Fatal("the document has no IdempotencyKey parameter")
	}
	p := ref.Value
	if p.Name != service.IdempotencyKeyHeader || p.In != "header" || p.Required ||
		p.Schema.Value.MinLength != 1 || maxLen(p.Schema.Value) != service.MaxIdempotencyKeyLen {
		t.Errorf("IdempotencyKey is %s in %s (required %v), length %d-%d; posgate takes an optional %s header of 1-%d characters",
			p.Name, p.In, p.Required, p.Schema.Value.MinLength, maxLen(p.Schema.Value), service.IdempotencyKeyHeader, service.MaxIdempotencyKeyLen)
	}
	posts := 0
	for path, item := range doc.Paths.Map() {
		op := item.Post
		if op == nil || !slices.Contains(op.Tags, "POS") && !slices.Contains(op.Tags, "Operator") {
			continue
		}
		posts++
		has := false
		for _, prm := range op.Parameters {
			has = has || prm.Value.Name == service.IdempotencyKeyHeader && prm.Value.In == "header"
		}
		if !has {
			t.Errorf("POST %s does not take the Idempotency-Key header", path)
		}
		for _, code := range []int{400, 409, 422} {
			if op.Responses.Status(code) == nil {
				t.Errorf("POST %s does not document %d", path, code)
			}
		}
	}
	if posts < 20 {
		t.Fatalf("only %d POST operations of the POS and operator APIs", posts)
	}
}
