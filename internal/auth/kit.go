package auth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/posgate/posgate"
)

// kitHeader is the JOSE header of an offline kit (docs/api.md §24.2).
type kitHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

// SignKit signs an offline kit's payload with the newest signing key, as a
// compact JWS whose "typ" is posgate.KitType: verifiable from the JWKS
// like an access token, and told apart from one by its type and audience.
func (a *Auth) SignKit(payload []byte) (string, error) {
	signer := a.keys.Load().signer
	h, err := json.Marshal(kitHeader{Alg: algES256, Kid: signer.kid, Typ: posgate.KitType})
	if err != nil {
		return "", fmt.Errorf("auth: kit header: %w", err)
	}
	return signPayload(base64.RawURLEncoding.EncodeToString(h), payload, signer.key)
}

// Issuer is the identity provider's issuer ("iss" of what it signs).
func (a *Auth) Issuer() string { return a.issuer }
