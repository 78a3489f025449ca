package codec

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// StreamArray decodes a body of the form {"items":[ {...}, {...} ]} (JSON) or
// <Root><items>…</items><items>…</items></Root> (XML), where field names the
// array ("items"), one element at a time into a fresh T and calls fn(index,
// item) for each, without reading the whole body into memory: a promotion
// import of 100,000 items costs the memory of one.
//
// Other top-level properties are ignored unless opts.DisallowUnknown. Errors
// are those of Decode, with paths such as items[12].name; an error returned
// by fn is returned unchanged. A body error can come after fn has accepted
// earlier items (a syntax error at the very end of the body), so callers
// commit nothing before StreamArray returns nil.
func StreamArray[T any](r *http.Request, field string, opts Options, fn func(i int, item *T) error) error {
	return StreamReader(r.Body, r.Header.Get("Content-Type"), field, opts, fn)
}

// StreamReader is StreamArray for a body read from r in the format that
// contentType names (KindOf): the entry of the readers of imported files
// (internal/importfile), which have no request. A nil r reads as empty.
func StreamReader[T any](r io.Reader, contentType, field string, opts Options, fn func(i int, item *T) error) error {
	elem := schemaOf(reflect.TypeFor[T]())
	root := &node{kind: kindObject, fields: map[string]*node{field: {kind: kindArray, elem: elem}}}
	ct := contentType
	body := &bodyReader{r: r}
	switch KindOf(ct) {
	case JSON:
		return streamJSON(body, field, root, opts, fn)
	case XML:
		return streamXML(body, field, root, opts, fn)
	}
	return unsupported(ct)
}

// bodyReader remembers the last read error of the request body so that a
// failure can be told apart from a malformed body: the parsers wrap or
// rephrase read errors.
type bodyReader struct {
	r   io.Reader
	err error
}

// Read implements io.Reader.
func (b *bodyReader) Read(p []byte) (int, error) {
	if b.r == nil {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// jsonStream is the state of a JSON StreamArray.
type jsonStream struct {
	dec  *jsontext.Decoder
	body *bodyReader
	root *node
}

// fail turns an error met while streaming into a *posgate.Error.
func (s *jsonStream) fail(err error) error {
	if s.body.err != nil {
		return readError(s.body.err)
	}
	return decodeError(err, s.root, "")
}

// streamJSON walks the top-level object token by token and decodes the
// entries of field one by one.
func streamJSON[T any](body *bodyReader, field string, root *node, opts Options, fn func(int, *T) error) error {
	s := &jsonStream{dec: jsontext.NewDecoder(body), body: body, root: root}
	tok, err := s.dec.ReadToken()
	if err != nil {
		return s.fail(err)
	}
	if tok.Kind() != '{' {
		return fieldError("$", "The request body must be a JSON object.")
	}
	for s.dec.PeekKind() != '}' {
		tok, err := s.dec.ReadToken()
		if err != nil {
			return s.fail(err)
		}
		switch name := tok.String(); {
		case name == field:
			err = streamJSONItems(s, field, opts, fn)
		case opts.DisallowUnknown:
			return unknownProperty(name)
		default:
			if err = s.dec.SkipValue(); err != nil {
				err = s.fail(err)
			}
		}
		if err != nil {
			return err
		}
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return s.fail(err)
	}
	return s.end()
}

// end checks that only whitespace follows the top-level object, and words
// trailing data as Decode does (the decoder itself would accept a stream of
// values).
func (s *jsonStream) end() error {
	s.dec.PeekKind()
	rest := s.dec.UnreadBuffer()
	trailing := bytes.TrimLeft(rest, " \t\r\n")
	if len(trailing) == 0 {
		if _, err := s.dec.ReadToken(); err != io.EOF {
			return s.fail(err)
		}
		return nil
	}
	c, _ := utf8.DecodeRune(trailing)
	offset := s.dec.InputOffset() + int64(len(rest)-len(trailing))
	return fieldError("$", fmt.Sprintf("The request body is not valid JSON: invalid character %q after top-level value at byte offset %d.", c, offset))
}

// streamJSONItems decodes the array value that s is positioned at (null
// counts as empty).
func streamJSONItems[T any](s *jsonStream, field string, opts Options, fn func(int, *T) error) error {
	switch s.dec.PeekKind() {
	case '[', 'n':
	case 0:
		_, err := s.dec.ReadToken()
		return s.fail(err)
	default:
		return fieldError(field, typeMessage(field, s.root.fields[field]))
	}
	if tok, err := s.dec.ReadToken(); err != nil {
		return s.fail(err)
	} else if tok.Kind() == 'n' {
		return nil
	}
	for i := 0; s.dec.PeekKind() != ']'; i++ {
		item := new(T)
		if err := json.UnmarshalDecode(s.dec, item, opts.json()); err != nil {
			return s.fail(err)
		}
		if err := fn(i, item); err != nil {
			return err
		}
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return s.fail(err)
	}
	return nil
}

// streamXML reads the root element's children, converting each field
// element to JSON and decoding it into a fresh T.
func streamXML[T any](body *bodyReader, field string, root *node, opts Options, fn func(int, *T) error) error {
	x := newXMLReader(body, body, opts)
	if _, err := x.root(); err != nil {
		return err
	}
	elem := root.fields[field].elem
	var buf []byte
	for i := 0; ; {
		tok, err := x.token()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.CharData:
			if len(bytes.TrimSpace(tok)) > 0 {
				return rootTextError()
			}
		case xml.StartElement:
			switch name := tok.Name.Local; {
			case name == field:
				if buf, err = x.value(buf[:0], elem, tok); err != nil {
					return err
				}
				item := new(T)
				if err := json.Unmarshal(buf, item, opts.json()); err != nil {
					return decodeError(err, root, jsontext.Pointer("").AppendToken(field).AppendToken(strconv.Itoa(i)))
				}
				if err := fn(i, item); err != nil {
					return err
				}
				i++
			case opts.DisallowUnknown:
				return unknownProperty(name)
			default:
				if err := x.skip(); err != nil {
					return err
				}
			}
		case xml.EndElement:
			return x.end()
		}
	}
}
