package storekit

import (
	"encoding/json"
	"fmt"

	"github.com/posgate/posgate"
)

// ClaimAttempts bounds how often ClaimIdempotencyKey tries again when the
// record that refused its claim is gone before it could be read (released
// or swept in between): each attempt runs after another request changed the
// key, so a few suffice, and the loop cannot spin.
const ClaimAttempts = 5

// IdempotencyClaimLost is the ENOTFOUND error for a claim that no longer
// holds its key (its lease ran out and another request took the key over, or
// it was released).
func IdempotencyClaimLost(key string) *posgate.Error {
	return posgate.NotFound("idempotency key claim", key)
}

// EncodeHeader renders an answer's headers as the JSON object both stores
// keep them in; nil stays NULL ("").
func EncodeHeader(h map[string]string) (string, error) {
	if h == nil {
		return "", nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("encode answer header: %w", err)
	}
	return string(b), nil
}

// DecodeHeader reads back what EncodeHeader stored.
func DecodeHeader(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var h map[string]string
	if err := json.Unmarshal([]byte(s), &h); err != nil {
		return nil, fmt.Errorf("decode answer header: %w", err)
	}
	return h, nil
}
