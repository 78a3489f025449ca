package auth

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// The token encoder. Issuing is on the hot path of the token endpoint, so it
// builds the compact JWS itself instead of going through jwt.Token: the
// header of a key never changes and is encoded once, the claims are one
// struct marshalled without reflection on maps or custom marshalers, and the
// whole token is built in one buffer. Verification still goes through the
// jwt parser, which the tests use to check every issued token.

// tokenHeader is the JOSE header of every access token, in the order
// jwt.Token wrote it (keys sorted).
type tokenHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

// encodeHeader returns the base64url JOSE header of the key kid.
func encodeHeader(kid string) (string, error) {
	b, err := json.Marshal(tokenHeader{Alg: algES256, Kid: kid, Typ: "at+jwt"})
	if err != nil {
		return "", fmt.Errorf("auth: token header: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// issuedClaims is claims as Issue writes them: times as integers (seconds),
// one audience as a plain string.
type issuedClaims struct {
	Issuer      string   `json:"iss"`
	Audience    string   `json:"aud"`
	Subject     string   `json:"sub"`
	ClientID    string   `json:"client_id"`
	Scope       string   `json:"scope"`
	IssuedAt    int64    `json:"iat"`
	NotBefore   int64    `json:"nbf"`
	ExpiresAt   int64    `json:"exp"`
	ID          string   `json:"jti"`
	POSSystemID string   `json:"pos_system_id,omitempty"`
	CompanyIDs  []string `json:"pos_company_ids,omitempty"`
	LocationIDs []string `json:"pos_location_ids,omitempty"`
	PersonID    string   `json:"person_id,omitempty"`
}

// signES256 returns header.claims.signature: ES256 (RFC 7518 §3.4), the
// signature being R and S as 32 big-endian bytes each.
func signES256(header string, c *issuedClaims, key *ecdsa.PrivateKey) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("auth: token claims: %w", err)
	}
	return signPayload(header, payload, key)
}

// signPayload returns header.payload.signature, payload encoded: the
// compact JWS (RFC 7515) of payload by ES256.
func signPayload(header string, payload []byte, key *ecdsa.PrivateKey) (string, error) {
	enc := base64.RawURLEncoding
	n := len(header) + 1 + enc.EncodedLen(len(payload))
	buf := make([]byte, n, n+1+enc.EncodedLen(64))
	copy(buf, header)
	buf[len(header)] = '.'
	enc.Encode(buf[len(header)+1:], payload)
	digest := sha256.Sum256(buf)
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		return "", fmt.Errorf("auth: sign token: %w", err)
	}
	var sig [64]byte
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	buf = append(buf, '.')
	buf = buf[:len(buf)+enc.EncodedLen(64)]
	enc.Encode(buf[n+1:], sig[:])
	return string(buf), nil
}
