// Package encode writes posgate's JSON: the answers of the APIs, the
// answers the ledger stores to answer a repeated transaction with the same
// bytes, webhook payloads and audit records. One encoder for all of them,
// so that a stored answer replays byte for byte. It knows nothing of HTTP,
// so that the use cases and the stores share it.
package encode

import (
	"bytes"
	"encoding/json"
)

// JSON encodes v as JSON without HTML escaping: posgate's answers are not
// embedded in HTML, and URLs must reach POS clients with a plain "&", not
// "\u0026".
func JSON(v any) ([]byte, error) {
	return JSONInto(new(bytes.Buffer), v)
}

// JSONInto is JSON into buf, whose bytes it returns.
func JSONInto(buf *bytes.Buffer, v any) ([]byte, error) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
