// Package importfile reads the files and bodies of the imports
// (docs/api.md §9, §17): the JSON item decoders of the POS API's
// import bodies, shared by the HTTP adapter and the portal's uploads; the
// CSV files of the command line and the portal, converted to the same
// bodies; and the coupon files (JSON and CSV) of the command line, the
// portal and the operator API's bulk issue. Every JSON reader goes through
// the codec's (io.Reader, content type) entry, codec.StreamReader.
package importfile

import (
	"bufio"
	"io"
	"strings"

	"github.com/posgate/posgate/internal/codec"
)

// Stream decodes the items of a JSON file, either an array of items or an
// import body ({"items": [...]}), one at a time, as the POS API decodes a
// body (codec.StreamArray: the same messages, with paths such as
// items[3].name).
func Stream[T any](r io.Reader, fn func(i int, item *T) error) error {
	br := bufio.NewReader(r)
	var body io.Reader = br
	for {
		b, err := br.Peek(1)
		if err != nil {
			break
		}
		if b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r' || b[0] == 0xEF || b[0] == 0xBB || b[0] == 0xBF {
			br.ReadByte()
			continue
		}
		if b[0] == '[' {
			body = io.MultiReader(strings.NewReader(`{"items":`), br, strings.NewReader(`}`))
		}
		break
	}
	return codec.StreamReader(body, "application/json", "items", codec.Options{}, fn)
}
