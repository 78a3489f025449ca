package codec

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// maxXMLDepth caps element nesting; no request type comes close.
const maxXMLDepth = 64

// xsiNamespace is the namespace of the xsi:nil attribute.
const xsiNamespace = "http://www.w3.org/2001/XMLSchema-instance"

// decodeXML converts the XML body to JSON guided by root and decodes that.
func decodeXML(body []byte, dst any, root *node, opts Options) error {
	x := newXMLReader(bytes.NewReader(body), nil, opts)
	start, err := x.root()
	if err != nil {
		return err
	}
	b, err := x.value(nil, root, start)
	if err != nil {
		return err
	}
	if b[0] != '{' {
		return rootTextError()
	}
	if err := x.end(); err != nil {
		return err
	}
	if err := json.Unmarshal(b, dst, opts.json()); err != nil {
		return decodeError(err, root, "")
	}
	return nil
}

// rootTextError reports a root element with text (or xsi:nil) where the
// properties belong.
func rootTextError() error {
	return fieldError("$", "The root element must contain one child element per property.")
}

// xmlReader reads an XML body element by element and writes each element as
// the JSON its destination shape calls for. Everything it returns is
// already a *posgate.Error.
type xmlReader struct {
	dec      *xml.Decoder
	body     *bodyReader // nil when reading from memory
	disallow bool
	depth    int
	text     []byte // scratch for character data
}

// newXMLReader reads from r, which is body unless body is nil.
func newXMLReader(r io.Reader, body *bodyReader, opts Options) *xmlReader {
	return &xmlReader{dec: xml.NewDecoder(r), body: body, disallow: opts.DisallowUnknown}
}

// token returns the next token, rejecting declarations (no DTD, so no
// external entities and no entity expansion) and deep nesting. It returns
// io.EOF itself at the end of the body (the XML decoder reports an end inside
// an element as a syntax error, and a failed read as that failure).
func (x *xmlReader) token() (xml.Token, error) {
	tok, err := x.dec.Token()
	if err == io.EOF {
		return nil, io.EOF
	} else if err != nil {
		return nil, x.error(err)
	}
	switch tok.(type) {
	case xml.Directive:
		return nil, invalidXML("DOCTYPE and entity declarations are not allowed")
	case xml.StartElement:
		if x.depth++; x.depth > maxXMLDepth {
			return nil, invalidXML(fmt.Sprintf("elements are nested more than %d levels deep", maxXMLDepth))
		}
	case xml.EndElement:
		x.depth--
	}
	return tok, nil
}

// error turns an error of the XML decoder into a *posgate.Error.
func (x *xmlReader) error(err error) error {
	if x.body != nil && x.body.err != nil {
		return readError(x.body.err)
	}
	var syn *xml.SyntaxError
	if errors.As(err, &syn) {
		return invalidXML(fmt.Sprintf("%s (line %d)", syn.Msg, syn.Line))
	}
	return invalidXML(strings.TrimPrefix(err.Error(), "xml: "))
}

// invalidXML reports a body that is not well-formed (or not acceptable) XML.
func invalidXML(reason string) error {
	return fieldError("$", "The request body is not valid XML: "+reason+".")
}

// root skips the prolog and returns the root element's start tag.
func (x *xmlReader) root() (xml.StartElement, error) {
	empty := true
	for {
		tok, err := x.token()
		switch {
		case err == io.EOF && empty:
			return xml.StartElement{}, fieldError("$", "The request body is empty.")
		case err == io.EOF:
			return xml.StartElement{}, invalidXML("there is no root element")
		case err != nil:
			return xml.StartElement{}, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			return tok, nil
		case xml.CharData:
			// A byte order mark (as .NET's XmlWriter writes) is no text.
			if len(bytes.TrimSpace(bytes.TrimPrefix(tok, []byte("\uFEFF")))) > 0 {
				return xml.StartElement{}, invalidXML("there is text before the root element")
			}
		default:
			empty = false
		}
	}
}

// end checks that only comments, processing instructions and whitespace
// follow the root element.
func (x *xmlReader) end() error {
	for {
		tok, err := x.token()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.CharData:
			if len(bytes.TrimSpace(tok)) > 0 {
				return invalidXML("there is text after the root element")
			}
		case xml.StartElement:
			return invalidXML("there is more than one root element")
		}
	}
}

// skip consumes the rest of the element whose start tag was just read.
func (x *xmlReader) skip() error {
	for depth := 1; depth > 0; {
		tok, err := x.token()
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	return nil
}

// value appends to b the JSON for the element whose start tag was just read,
// as shape n calls for, and consumes the element. Content that does not fit
// n becomes a JSON value of another kind so that the JSON decoder reports it
// with the same message as for a JSON body.
func (x *xmlReader) value(b []byte, n *node, start xml.StartElement) ([]byte, error) {
	if isNil(start) {
		return append(b, "null"...), x.skip()
	}
	if n.kind == kindObject || n.kind == kindMap {
		return x.object(b, n)
	}
	return x.scalar(b, n)
}

// isNil reports whether the element carries xsi:nil="true".
func isNil(start xml.StartElement) bool {
	for _, a := range start.Attr {
		if a.Name.Local == "nil" && (a.Name.Space == xsiNamespace || a.Name.Space == "xsi") {
			return a.Value == "true" || a.Value == "1"
		}
	}
	return false
}

// scalar writes the text of an element as a JSON string, number, boolean or
// null. An empty element is null ("" for a non-pointer string).
func (x *xmlReader) scalar(b []byte, n *node) ([]byte, error) {
	text, children := x.text[:0], false
	for done := false; !done; {
		tok, err := x.token()
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.CharData:
			text = append(text, tok...)
		case xml.StartElement:
			children = true
			if err := x.skip(); err != nil {
				return nil, err
			}
		case xml.EndElement:
			done = true
		}
	}
	x.text = text
	if children {
		return append(b, "{}"...), nil // not a scalar: a type error
	}
	if n.kind == kindString {
		if len(text) == 0 && n.nullable {
			return append(b, "null"...), nil
		}
		return appendString(b, text), nil
	}
	text = bytes.TrimSpace(text)
	switch {
	case len(text) == 0:
		return append(b, "null"...), nil
	case n.kind == kindBool && (string(text) == "true" || string(text) == "false"),
		(n.kind == kindInt || n.kind == kindFloat) && jsontext.Value(text).Kind() == '0' && jsontext.Value(text).IsValid():
		return append(b, text...), nil
	}
	return appendString(b, text), nil
}

// appendString appends s as a JSON string. The XML decoder has rejected
// invalid UTF-8, the only thing quoting can fail on.
func appendString[S ~[]byte | ~string](b []byte, s S) []byte {
	b, _ = jsontext.AppendQuote(b, s)
	return b
}

// member is one property of an object being written; the entries of an
// array property are gathered into one member wherever they appear.
type member struct {
	name  string
	array bool
	value []byte
}

// object writes the children of an element as a JSON object of shape n.
// Text beside the children makes it a JSON string (a type error); an empty
// element of a pointer shape is null.
func (x *xmlReader) object(b []byte, n *node) ([]byte, error) {
	var members []member
	text, children := false, false
	for done := false; !done; {
		tok, err := x.token()
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.CharData:
			text = text || len(bytes.TrimSpace(tok)) > 0
		case xml.StartElement:
			children = true
			if members, err = x.member(members, n, tok); err != nil {
				return nil, err
			}
		case xml.EndElement:
			done = true
		}
	}
	switch {
	case text:
		return append(b, `""`...), nil
	case !children && n.nullable:
		return append(b, "null"...), nil
	}
	b = append(b, '{')
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, m.name), ':')
		if m.array {
			b = append(append(append(b, '['), m.value...), ']')
		} else {
			b = append(b, m.value...)
		}
	}
	return append(b, '}'), nil
}

// member reads child element start of an object of shape n into members.
// An unknown child is dropped, or kept as null when unknown properties are
// disallowed so that the JSON decoder reports it in document order. A
// repeated non-array child stays repeated: the JSON decoder reports the
// duplicate.
func (x *xmlReader) member(members []member, n *node, start xml.StartElement) ([]member, error) {
	name := start.Name.Local
	f := n.elem
	if n.kind == kindObject {
		f = n.fields[name]
	}
	switch {
	case f == nil:
		if x.disallow {
			members = append(members, member{name: name, value: []byte("null")})
		}
		return members, x.skip()
	case f.kind == kindArray && n.kind == kindObject:
		for i := range members {
			if m := &members[i]; m.array && m.name == name {
				var err error
				m.value, err = x.value(append(m.value, ','), f.elem, start)
				return members, err
			}
		}
		v, err := x.value(nil, f.elem, start)
		return append(members, member{name: name, array: true, value: v}), err
	}
	v, err := x.value(nil, f, start)
	return append(members, member{name: name, value: v}), err
}
