package client_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/openapi/openapitest"
)

// methodOf names the client method of each operation whose name is not its
// operationId (without regard to case).
var methodOf = map[string]string{
	"searchCouponCodes":     "SearchCoupons",
	"createPosTransaction":  "CreateTransaction",
	"replayPosTransactions": "ReplayTransactions",
	"authorize":             "AuthorizeURL",
}

// notInClient lists the schemas of the document that no client type
// mirrors, with the reason; every other schema must be reached from a
// client method's request or answer and match its Go type.
var notInClient = map[string]string{
	"ProblemDetails":           "an error answer: client.Error carries its fields",
	"ValidationProblemDetails": "an error answer: client.Error carries its fields and errors",
	"OAuthError":               "an error answer of the token endpoint: client.Error carries it",
	"JsonNull":                 "the null of an object-or-null property (oneOf [X, JsonNull]): a nil pointer in the client",
	"TokenRequest":             "a form (application/x-www-form-urlencoded) that RequestToken and ExchangeCode build, not JSON",
}

// argumentBodies lists the operations whose client method takes the body's
// one property as an argument rather than as a struct: the schema must hold
// exactly these properties.
var argumentBodies = map[string][]string{
	"lookupSettings":           {"posCompanyId"}, // LookupSettings(ctx, posSystemID, posCompanyID)
	"recordCarouselImpression": {"slideId"},      // RecordCarouselImpression(ctx, pageURL, slideID)
}

// TestClientTypesMatchTheDocument walks every schema of the served OpenAPI
// document and requires, for each property, a field of the client type that
// mirrors it with the same JSON name and a type of the same kind. The types
// are found from the operations: an operation's JSON request body is the
// request argument of its client method, its JSON answer the method's
// result (the client answers an envelope's data). A schema no method
// reaches fails too, unless notInClient says why.
func TestClientTypesMatchTheDocument(t *testing.T) {
	doc := openapitest.Document(t)
	methods := map[string]reflect.Method{}
	for _, recv := range []reflect.Type{reflect.TypeFor[*client.Client](), reflect.TypeFor[*client.Admin]()} {
		for i := range recv.NumMethod() {
			m := recv.Method(i)
			methods[strings.ToLower(m.Name)] = m
		}
	}
	c := newChecker()
	for path, item := range doc.Paths.Map() {
		for verb, op := range item.Operations() {
			name := op.OperationID
			m, ok := methods[strings.ToLower(name)]
			if alias, aliased := methodOf[name]; aliased {
				m, ok = methods[strings.ToLower(alias)]
			}
			if !ok {
				t.Errorf("operation %s (%s %s) has no client method", name, verb, path)
				continue
			}
			if body := jsonSchema(op.RequestBody); body != nil {
				if props, ok := argumentBodies[name]; ok {
					var got []string
					for p := range body.Value.Properties {
						got = append(got, p)
					}
					sort.Strings(got)
					if !slices.Equal(got, props) {
						t.Errorf("operation %s: the body's properties are %v; %s takes %v as arguments", name, got, m.Name, props)
					}
					if ref, ok := strings.CutPrefix(body.Ref, "#/components/schemas/"); ok {
						c.visited[ref] = true
					}
				} else if in := requestType(m.Type); in == nil {
					t.Errorf("operation %s takes a JSON body, but %s has no struct argument", name, m.Name)
				} else {
					c.request = true
					c.check(name+" request", body, in)
					c.request = false
				}
			}
			for code, resp := range op.Responses.Map() {
				if !strings.HasPrefix(code, "2") || resp.Value == nil {
					continue
				}
				s := jsonContent(resp.Value.Content)
				if s == nil {
					continue
				}
				out := resultType(m.Type)
				if out == nil {
					t.Errorf("operation %s answers JSON (%s), but %s returns nothing to decode it into", name, code, m.Name)
					continue
				}
				c.check(name+" "+code, unwrap(c, s, out), out)
			}
		}
	}
	for _, e := range c.errs {
		t.Error(e)
	}
	var names []string
	for name := range doc.Components.Schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, skip := notInClient[name]; !skip && !c.visited[name] {
			t.Errorf("schema %s: no client type mirrors it (no client method's request or answer reaches it)", name)
		}
	}
	t.Logf("%d schemas, %d reached from the client's methods; %d properties compared", len(names), len(c.visited), c.properties)
}

// TestClientDriftIsCaught shows that the check fails, naming the schema and
// the property, for a field renamed (the property missing) or retyped in a
// Go type, and for a required request property that the client would leave
// out when it is zero.
func TestClientDriftIsCaught(t *testing.T) {
	schema := openapi3.NewSchemaRef("#/components/schemas/Thing", &openapi3.Schema{
		Type:     &openapi3.Types{"object"},
		Required: []string{"amount"},
		Properties: openapi3.Schemas{
			"code":   openapi3.NewStringSchema().NewRef(),
			"amount": openapi3.NewFloat64Schema().NewRef(),
			"tags":   openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()).NewRef(),
		},
	})
	type good struct {
		Code   string   `json:"code"`
		Amount *float64 `json:"amount,omitempty"`
		Tags   []string `json:"tags"`
	}
	type renamed struct {
		Code   string   `json:"kode"`
		Amount float64  `json:"amount"`
		Tags   []string `json:"tags"`
	}
	type dropsZero struct {
		Code   string   `json:"code"`
		Amount float64  `json:"amount,omitempty"`
		Tags   []string `json:"tags"`
	}
	type retyped struct {
		Code   string `json:"code"`
		Amount string `json:"amount"`
		Tags   []int  `json:"tags"`
	}
	for _, tc := range []struct {
		name    string
		typ     reflect.Type
		request bool
		want    []string
	}{
		{"matching", reflect.TypeFor[good](), false, nil},
		{"matching request", reflect.TypeFor[good](), true, nil},
		{"an answer may leave out a zero", reflect.TypeFor[dropsZero](), false, nil},
		{"a request may not", reflect.TypeFor[dropsZero](), true, []string{
			`schema Thing, property amount: required, but client_test.dropsZero.Amount (omitempty) never sends its zero value`}},
		{"renamed", reflect.TypeFor[renamed](), false, []string{
			`schema Thing, property code: no field of client_test.renamed has the JSON name "code"`}},
		{"retyped", reflect.TypeFor[retyped](), false, []string{
			`schema Thing, property amount: string (client_test.retyped.Amount) does not hold a number`,
			`schema Thing, property tags[]: int (client_test.retyped.Tags) does not hold a string`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newChecker()
			c.request = tc.request
			c.check("test", schema, tc.typ)
			slices.Sort(c.errs)
			if !slices.Equal(c.errs, tc.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(c.errs, "\n"), strings.Join(tc.want, "\n"))
			}
			if !c.visited["Thing"] {
				t.Error("the schema was not marked visited")
			}
		})
	}
}

// checker compares schemas with Go types, collecting every mismatch.
type checker struct {
	errs    []string
	visited map[string]bool
	done    map[string]bool // schema name + Go type already compared
	// properties counts the properties compared with a Go field.
	properties int
	// request is set while a request body is compared: a required
	// property must then be sent even when it is its Go zero value.
	request bool
}

func newChecker() *checker {
	return &checker{visited: map[string]bool{}, done: map[string]bool{}}
}

var (
	rawMessage = reflect.TypeFor[json.RawMessage]()
	timeType   = reflect.TypeFor[time.Time]()
	anyType    = reflect.TypeFor[any]()
)

// check compares schema s, at path where (a schema name and property
// path), with Go type t.
func (c *checker) check(where string, s *openapi3.SchemaRef, t reflect.Type) {
	c.checkVia(where, s, t, t.String())
}

// checkVia is check, naming the Go field (or type) via which t was reached.
func (c *checker) checkVia(where string, s *openapi3.SchemaRef, t reflect.Type, via string) {
	if s == nil || s.Value == nil {
		return
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		key := fmt.Sprint(name, "\x00", t, "\x00", c.request)
		if c.done[key] {
			return
		}
		c.done[key], c.visited[name], where = true, true, name
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	v := s.Value
	for _, sub := range v.AllOf {
		c.checkVia(where, sub, t, via)
	}
	if len(v.OneOf) == 2 && v.OneOf[1].Ref == "#/components/schemas/JsonNull" {
		// An object or null: a pointer to the object's type.
		c.checkVia(where, v.OneOf[0], t, via)
		return
	}
	if len(v.OneOf) > 0 || len(v.AnyOf) > 0 || t == rawMessage || t == anyType {
		return // a union, or a Go type that holds any JSON
	}
	fail := func(what string) {
		c.errs = append(c.errs, fmt.Sprintf("%s: %s (%s) does not hold %s", loc(where), t, via, what))
	}
	switch {
	case v.Type.Is("string"):
		if t.Kind() != reflect.String && !(t == timeType && (v.Format == "date-time" || v.Format == "date")) {
			fail("a string")
		}
	case v.Type.Is("integer"):
		if !slices.Contains([]reflect.Kind{reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64}, t.Kind()) {
			fail("an integer")
		}
	case v.Type.Is("number"):
		if t.Kind() != reflect.Float64 && t.Kind() != reflect.Float32 {
			fail("a number")
		}
	case v.Type.Is("boolean"):
		if t.Kind() != reflect.Bool {
			fail("a boolean")
		}
	case v.Type.Is("array"):
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			fail("an array")
			return
		}
		c.checkVia(where+"[]", v.Items, t.Elem(), via)
	case v.Type.Is("object") || len(v.Properties) > 0:
		c.object(where, v, t)
	}
}

// object compares an object schema with a struct (its properties) or a
// map (its additional properties).
func (c *checker) object(where string, v *openapi3.Schema, t reflect.Type) {
	if t.Kind() == reflect.Map {
		if len(v.Properties) > 0 {
			c.errs = append(c.errs, fmt.Sprintf("%s: a map (%s) where the document names properties", loc(where), t))
			return
		}
		if ap := v.AdditionalProperties.Schema; ap != nil {
			c.check(where+"{}", ap, t.Elem())
		}
		return
	}
	if t.Kind() != reflect.Struct {
		if len(v.Properties) > 0 || v.AdditionalProperties.Schema != nil {
			c.errs = append(c.errs, fmt.Sprintf("%s: %s is not a struct or a map", loc(where), t))
		}
		return
	}
	fields := jsonFields(t)
	names := make([]string, 0, len(v.Properties))
	for name := range v.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f, ok := fields[name]
		if !ok {
			c.errs = append(c.errs, fmt.Sprintf("%s: no field of %s has the JSON name %q", loc(where+"."+name), t, name))
			continue
		}
		c.properties++
		if _, opts, _ := strings.Cut(f.Tag.Get("json"), ","); c.request && slices.Contains(v.Required, name) &&
			slices.Contains(strings.Split(opts, ","), "omitempty") &&
			slices.Contains([]reflect.Kind{reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64}, f.Type.Kind()) {
			c.errs = append(c.errs, fmt.Sprintf("%s: required, but %s.%s (omitempty) never sends its zero value", loc(where+"."+name), t, f.Name))
		}
		c.checkVia(where+"."+name, v.Properties[name], f.Type, t.String()+"."+f.Name)
	}
}

// loc words a place of the document: "schema S" or "schema S, property
// a.b[]".
func loc(where string) string {
	if schema, prop, ok := strings.Cut(where, "."); ok {
		return "schema " + schema + ", property " + prop
	}
	return "schema " + where
}

// jsonFields maps the JSON names of a struct's fields (embedded ones
// included, as encoding/json sees them) to the fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// unwrap is the schema of what the client returns for answer s: the
// envelope's data when the Go type is not the envelope itself.
func unwrap(c *checker, s *openapi3.SchemaRef, out reflect.Type) *openapi3.SchemaRef {
	for out.Kind() == reflect.Pointer {
		out = out.Elem()
	}
	data := s.Value.Properties["data"]
	if data == nil {
		return s
	}
	if out.Kind() == reflect.Struct {
		if _, whole := jsonFields(out)["data"]; whole {
			return s
		}
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		c.visited[name] = true
		for prop := range s.Value.Properties {
			if prop != "data" {
				c.errs = append(c.errs, fmt.Sprintf("schema %s, property %s: the client answers the envelope's data alone (%s), and this property is lost", name, prop, out))
			}
		}
	}
	return data
}

// jsonSchema is a request body's JSON schema, nil when it has none.
func jsonSchema(b *openapi3.RequestBodyRef) *openapi3.SchemaRef {
	if b == nil || b.Value == nil {
		return nil
	}
	return jsonContent(b.Value.Content)
}

func jsonContent(content openapi3.Content) *openapi3.SchemaRef {
	if mt := content.Get("application/json"); mt != nil {
		return mt.Schema
	}
	return nil
}

// requestType is the first struct argument of a method after its
// context: the request body.
func requestType(m reflect.Type) reflect.Type {
	for i := 1; i < m.NumIn(); i++ {
		t := m.In(i)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Struct && t.PkgPath() == "github.com/posgate/posgate/client" {
			return m.In(i)
		}
	}
	return nil
}

// resultType is a method's first result when it is not the error.
func resultType(m reflect.Type) reflect.Type {
	if m.NumOut() < 2 {
		return nil
	}
	return m.Out(0)
}
