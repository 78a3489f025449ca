// Package webhook sends the events of the outbox to the companies' webhook
// endpoints (docs/api.md §19): signed per the Standard Webhooks
// specification, at least once, in order per loyalty user and endpoint,
// with exponential backoff, and never to a private or loopback address
// unless allowed.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/posgate/posgate/internal/webhook/endpoint"
)

// secretKey returns the HMAC key of a secret: the base64 after the prefix.
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, endpoint.SecretPrefix))
	if err != nil {
		return nil, fmt.Errorf("webhook: malformed secret: %w", err)
	}
	return key, nil
}

// Signature is one secret's signature of a message: "v1," and the base64
// HMAC-SHA256 of "id.timestamp.body".
func Signature(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// SignatureHeader is the webhook-signature header of a message: one
// signature per secret, separated by spaces (a rotated endpoint's receiver
// accepts either while it switches).
func SignatureHeader(secrets []string, id string, timestamp int64, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := Signature(s, id, timestamp, body)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// Verify reports whether header (webhook-signature) holds a valid "v1"
// signature of the message by secret, comparing in constant time. It is
// what a receiver does; posgate's tests and the README's receiver use it.
func Verify(secret, id string, timestamp int64, body []byte, header string) bool {
	want, err := Signature(secret, id, timestamp, body)
	if err != nil {
		return false
	}
	for _, sig := range strings.Fields(header) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}
