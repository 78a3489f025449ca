package codec

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// nodeKind is the JSON shape a Go type takes.
type nodeKind int

const (
	kindOther nodeKind = iota // anything codec has no rule for (e.g. interfaces)
	kindString
	kindBool
	kindInt
	kindFloat
	kindTime
	kindArray
	kindObject // struct: named properties
	kindMap    // string-keyed map: any property name
)

// node describes the JSON shape of a destination type. It is what XML is read
// with and what error paths are resolved against.
type node struct {
	kind     nodeKind
	nullable bool             // a pointer: null and empty XML elements are nil
	fields   map[string]*node // kindObject: JSON name → shape
	elem     *node            // kindArray entries, kindMap values
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	dateTimeType        = reflect.TypeFor[interface{ DateTime() }]()      // posgate.PromotionTime: a date-time read by its own method
	decimalType         = reflect.TypeFor[interface{ DecimalNumber() }]() // posgate.Decimal: a number kept as text
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	// numberType marks a type that reads a JSON number itself
	// (posgate.Amount, exact decimals): a number whatever its Go kind, so
	// that XML text is handed to it as a number and a wrong type is
	// reported as "must be a number".
	numberType = reflect.TypeFor[interface{ JSONNumber() }]()

	// schemas caches schemaOf per reflect.Type: the shape of a type never
	// changes, and building it costs reflection on every request otherwise.
	schemas sync.Map
)

// schemaOf returns the (cached) shape of t.
func schemaOf(t reflect.Type) *node {
	if n, ok := schemas.Load(t); ok {
		return n.(*node)
	}
	n, _ := schemas.LoadOrStore(t, build(t, map[reflect.Type]*node{}))
	return n.(*node)
}

// build derives the shape of t; seen holds the structs being built so that
// recursive types terminate.
func build(t reflect.Type, seen map[reflect.Type]*node) *node {
	if n := seen[t]; n != nil {
		return n
	}
	switch {
	case t == timeType || (t.Kind() != reflect.Pointer && t.Implements(dateTimeType)):
		return &node{kind: kindTime}
	case t.Kind() == reflect.Pointer:
		n := *build(t.Elem(), seen)
		n.nullable = true
		return &n
	case t.Implements(numberType):
		return &node{kind: kindFloat}
	case t.Implements(decimalType):
		return &node{kind: kindFloat} // read from a JSON number (XML text as one)
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		return &node{kind: kindString} // the JSON decoder reads it from a string
	}
	switch t.Kind() {
	case reflect.String:
		return &node{kind: kindString}
	case reflect.Bool:
		return &node{kind: kindBool}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &node{kind: kindInt}
	case reflect.Float32, reflect.Float64:
		return &node{kind: kindFloat}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &node{kind: kindString} // base64 in JSON
		}
		return &node{kind: kindArray, elem: build(t.Elem(), seen)}
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return &node{kind: kindMap, elem: build(t.Elem(), seen)}
		}
	case reflect.Struct:
		n := &node{kind: kindObject, fields: map[string]*node{}}
		seen[t] = n
		addFields(n, t, seen)
		return n
	}
	return &node{kind: kindOther}
}

// addFields adds the JSON properties of struct t to n the way the JSON
// decoder names them: the `json` tag name or the Go name, "-" skipped,
// untagged embedded structs inlined (their fields lose to t's own).
func addFields(n *node, t reflect.Type, seen map[reflect.Type]*node) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case sf.Anonymous && name == "" && ft.Kind() == reflect.Struct:
			embedded = append(embedded, ft)
		case sf.IsExported():
			if name == "" {
				name = sf.Name
			}
			n.fields[name] = build(sf.Type, seen)
		}
	}
	for _, et := range embedded {
		inner := &node{fields: map[string]*node{}}
		addFields(inner, et, seen)
		for name, f := range inner.fields {
			if _, ok := n.fields[name]; !ok {
				n.fields[name] = f
			}
		}
	}
}

// resolve renders a JSON pointer as the path integrators see in messages
// (items[3].promotionValidities[0].startDate; "$" for the root) and returns
// the shape found there (nil when unknown).
func resolve(root *node, ptr jsontext.Pointer) (string, *node) {
	var b strings.Builder
	n := root
	for tok := range ptr.Tokens() {
		if n != nil && n.kind == kindArray {
			b.WriteString("[" + tok + "]")
			n = n.elem
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
		switch {
		case n == nil:
		case n.kind == kindObject:
			n = n.fields[tok]
		case n.kind == kindMap:
			n = n.elem
		default:
			n = nil
		}
	}
	if b.Len() == 0 {
		return "$", root
	}
	return b.String(), n
}

// typeMessage says what the property at path must be.
func typeMessage(path string, n *node) string {
	what := "a valid value"
	if n != nil {
		switch n.kind {
		case kindString:
			what = "a string"
		case kindBool:
			what = "a boolean"
		case kindInt:
			what = "an integer"
		case kindFloat:
			what = "a number"
		case kindTime:
			what = "a date-time (ISO 8601)"
		case kindArray:
			what = "an array"
		case kindObject, kindMap:
			what = "an object"
		}
	}
	return fmt.Sprintf("The %s field must be %s.", path, what)
}
