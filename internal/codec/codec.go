// Package codec turns request bodies into Go structs with the rules of
// docs/api.md §2.1–§2.4, for JSON and XML alike, so that every handler
// rejects the same mistakes with the same integrator-facing messages.
//
// Destination structs describe the body with `json` tags only. XML bodies are
// read with those tags as the schema: the root element (any name) holds one
// child element per property, an array repeats its element once per entry, a
// nested object is a nested element; `xsi:nil="true"` is null; attributes
// other than xsi:nil are ignored. An XML body is converted to the equivalent
// JSON guided by the destination type and then decoded by the JSON path, so
// both formats share one set of rules and messages.
//
// Date-times (time.Time) are read by internal/codec/datetime: RFC 3339
// ("2024-05-01T10:00:00+02:00", fractional seconds allowed), the same
// without a zone offset (read as UTC, as .NET-based POS systems often send
// it) and a bare date ("2024-05-01", midnight UTC). Every decoded time is
// in UTC.
package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/datetime"
)

// Options tunes decoding per endpoint, because the interface forbids unknown
// properties on some request types only.
type Options struct {
	// DisallowUnknown rejects unknown properties (the coupon search's rule,
	// docs/api.md §2.2); otherwise unknown properties are ignored.
	DisallowUnknown bool
}

// Kind is the body format a Content-Type selects; it lets the HTTP layer
// answer 415 before reading a body it cannot decode.
type Kind int

// Body formats. Unsupported is the zero value so that a forgotten check fails
// closed.
const (
	Unsupported Kind = iota
	JSON
	XML
)

// KindOf classifies a Content-Type header value per docs/api.md §2.1:
// application/json, text/json and application/*+json are JSON;
// application/xml, text/xml and application/*+xml are XML. The media type is
// case-insensitive; a charset parameter other than utf-8 makes it
// Unsupported, as does anything unparsable or empty.
func KindOf(contentType string) Kind {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return Unsupported
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return Unsupported
	}
	switch {
	case mt == "application/json" || mt == "text/json" || isSuffixed(mt, "+json"):
		return JSON
	case mt == "application/xml" || mt == "text/xml" || isSuffixed(mt, "+xml"):
		return XML
	}
	return Unsupported
}

// isSuffixed reports whether mt is application/<something><suffix>.
func isSuffixed(mt, suffix string) bool {
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && len(sub) > len(suffix) && strings.HasSuffix(sub, suffix)
}

// Decode reads r.Body according to r's Content-Type into dst, a non-nil
// pointer to a struct. Errors are *posgate.Error: EUNSUPPORTED for a content
// type outside docs/api.md §2.1, ETOOLARGE when the body exceeds the caller's
// http.MaxBytesReader, EINVALID with Fields (property path → messages)
// otherwise. A dst of the wrong kind is a programming error and yields a
// plain error (EINTERNAL). The body is read whole: its size is the caller's
// cap; large bodies go through StreamArray.
func Decode(r *http.Request, dst any, opts Options) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("codec: Decode needs a non-nil pointer to a struct, got %T", dst)
	}
	root := schemaOf(rv.Elem().Type())
	ct := r.Header.Get("Content-Type")
	kind := KindOf(ct)
	if kind == Unsupported {
		return unsupported(ct)
	}
	b, err := readBody(r)
	rest := bytes.TrimLeft(b, " \t\r\n")
	switch {
	case err != nil:
		return readError(err)
	case len(rest) == 0:
		return emptyBody()
	case kind == XML:
		return decodeXML(b, dst, root, opts)
	case rest[0] != '{':
		// Say what is wrong with the first value: its syntax, or its kind.
		if _, err := jsontext.NewDecoder(bytes.NewReader(b)).ReadToken(); err != nil {
			return decodeError(err, root, "")
		}
		return fieldError("$", "The request body must be a JSON object.")
	}
	if err := json.Unmarshal(b, dst, opts.json()); err != nil {
		return decodeError(err, root, "")
	}
	return nil
}

// readBody reads the whole body; a request without one reads as empty.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	if n := r.ContentLength; n > 0 && n <= maxSizedRead {
		// One buffer of the declared size (and a byte to see that the body
		// ends there) instead of io.ReadAll's 512 bytes grown by doubling:
		// the doublings were the largest allocation of a basket
		// evaluation's decode. A body longer than declared is read on, and
		// the server's own checks (MaxBytesReader) still apply.
		b := make([]byte, 0, n+1)
		for {
			m, err := r.Body.Read(b[len(b):cap(b)])
			b = b[:len(b)+m]
			if err == io.EOF {
				return b, nil
			} else if err != nil {
				return b, err
			}
			if len(b) == cap(b) {
				rest, err := io.ReadAll(r.Body)
				return append(b, rest...), err
			}
		}
	}
	return io.ReadAll(r.Body)
}

// maxSizedRead bounds the buffer readBody sizes by Content-Length, so that
// a declared length alone (a body that never comes) cannot make it allocate
// much; the routes' limits are checked before the body is read.
const maxSizedRead = 1 << 20

// Options for the JSON decoder. They are immutable; the two sets exist so
// that no decode has to join options again.
var (
	timeUnmarshalers = json.WithUnmarshalers(json.UnmarshalFromFunc(unmarshalTime))
	lenientJSON      = json.JoinOptions(json.RejectUnknownMembers(false), timeUnmarshalers)
	strictJSON       = json.JoinOptions(json.RejectUnknownMembers(true), timeUnmarshalers)
)

// json returns the JSON decoder options matching o.
func (o Options) json() json.Options {
	if o.DisallowUnknown {
		return strictJSON
	}
	return lenientJSON
}

// errNotDateTime is wrapped by the JSON decoder into a SemanticError whose
// path decodeError turns into the field's message; its text is never shown.
var errNotDateTime = errors.New("not an ISO 8601 date-time")

// unmarshalTime reads a JSON string or null into *t (see the package doc for
// the accepted forms).
func unmarshalTime(dec *jsontext.Decoder, t *time.Time) error {
	switch dec.PeekKind() {
	case 'n', '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Kind() == 'n' {
			*t = time.Time{}
			return nil
		}
		if *t, err = datetime.Parse(tok.String()); err != nil {
			return errNotDateTime
		}
		return nil
	}
	if _, err := dec.ReadValue(); err != nil {
		return err
	}
	return errNotDateTime
}

// CheckContentType returns the error Decode and StreamArray give for a
// Content-Type outside docs/api.md §2.1 (EUNSUPPORTED), nil for one they
// accept, so that a handler can refuse a body before other work.
func CheckContentType(contentType string) error {
	if KindOf(contentType) == Unsupported {
		return unsupported(contentType)
	}
	return nil
}

// decodeError turns an error of the JSON decoder into a *posgate.Error.
// Paths are resolved against root after prefix, the JSON pointer of the
// decoded value within the body.
func decodeError(err error, root *node, prefix jsontext.Pointer) error {
	if err == io.EOF {
		return emptyBody()
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		if syn.Err == jsontext.ErrDuplicateName {
			path, _ := resolve(root, prefix+syn.JSONPointer)
			return fieldError(path, fmt.Sprintf("The property '%s' is given more than once.", path))
		}
		if syn.Err == io.ErrUnexpectedEOF {
			return fieldError("$", "The request body is not valid JSON: unexpected end of input.")
		}
		return fieldError("$", fmt.Sprintf("The request body is not valid JSON: %v at byte offset %d.", syn.Err, syn.ByteOffset))
	}
	var sem *json.SemanticError
	if errors.As(err, &sem) {
		path, n := resolve(root, prefix+sem.JSONPointer)
		if sem.Err == json.ErrUnknownName {
			return unknownProperty(path)
		}
		if errors.Is(sem.Err, posgate.ErrAmountRoundsToZero) {
			return fieldError(path, fmt.Sprintf("The %s field must be 0 or at least 0.01 in magnitude: a number other than 0 that rounds to 0.00 at two decimals is refused.", path))
		}
		return fieldError(path, typeMessage(path, n))
	}
	return fmt.Errorf("codec: decode: %w", err)
}

// emptyBody reports a body with nothing but whitespace.
func emptyBody() error {
	return fieldError("$", "The request body is empty.")
}

// ReadError is the error of a body that could not be read (too large, or
// broken) for a caller that reads a body itself, so that it answers as
// Decode does.
func ReadError(err error) error { return readError(err) }

// readError reports a failure to read the body: too large, or broken.
func readError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return posgate.Errorf(posgate.ETOOLARGE, "The request body is larger than %d bytes.", tooLarge.Limit)
	}
	return fieldError("$", "The request body could not be read.")
}

// unsupported reports a Content-Type outside docs/api.md §2.1.
func unsupported(ct string) error {
	const accepted = "send application/json or application/xml (charset utf-8)"
	if ct == "" {
		return posgate.Errorf(posgate.EUNSUPPORTED, "The request has no Content-Type; %s.", accepted)
	}
	return posgate.Errorf(posgate.EUNSUPPORTED, "The content type %q is not supported; %s.", ct, accepted)
}

// unknownProperty reports a property the destination does not have.
func unknownProperty(path string) error {
	return fieldError(path, fmt.Sprintf("The property '%s' is not allowed.", path))
}

// fieldError is an EINVALID error with one message for one property path
// ("$" for the body as a whole). Both may quote the body (a parser's reason
// names the bytes it stumbled on), so bytes that are not UTF-8 become
// U+FFFD: the message is shown to the client and written to the log as text.
func fieldError(path, msg string) error {
	return posgate.ValidationError{strings.ToValidUTF8(path, "\uFFFD"): {strings.ToValidUTF8(msg, "\uFFFD")}}.Err()
}
