package credential

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
)

// GenerateSecret returns a new client secret: 32 random bytes, base64url
// without padding. Its 256 bits of entropy are what lets HashSecret be fast.
func GenerateSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("auth: generate secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// HashSecret returns the SHA-256 of secret, the form in which secrets are
// stored. Secrets are high-entropy, so a slow password hash would add no
// safety and would cap token throughput.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// SecretMatches reports whether secret hashes to hash, in constant time so
// that response timing reveals nothing about the stored hash.
func SecretMatches(hash []byte, secret string) bool {
	return subtle.ConstantTimeCompare(hash, HashSecret(secret)) == 1
}
