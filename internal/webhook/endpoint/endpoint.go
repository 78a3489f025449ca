// Package endpoint holds the rules of a webhook endpoint that the use
// cases (internal/service) check when an operator registers or rotates
// one: the addresses deliveries may reach and the form of a signing
// secret. It knows nothing of HTTP; the sender (internal/webhook) applies
// the same address rule again at each connection.
package endpoint

import (
	"crypto/rand"
	"encoding/base64"
)

// SecretPrefix starts every signing secret, as the Standard Webhooks
// libraries expect ("whsec_" + base64 of the key).
const SecretPrefix = "whsec_"

// NewSecret returns a new signing secret: 24 random bytes (192 bits,
// within the 24–64 bytes the specification recommends).
func NewSecret() string {
	b := make([]byte, 24)
	rand.Read(b) // never fails (crypto/rand)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}
