package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The hand-built token is what jwt.Token produced before (same header and
// claims bytes) and its signature verifies with the jwt library.
func TestSignES256MatchesJWTLibrary(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, companies := range [][]string{nil, {"c1", "c\"2"}} {
		header, err := encodeHeader("kid-1")
		if err != nil {
			t.Fatal(err)
		}
		got, err := signES256(header, &issuedClaims{Issuer: "http://x", Audience: "posgate", Subject: "pos-1", ClientID: "pos-1",
			Scope: "pos_integration", IssuedAt: now.Unix(), NotBefore: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix(), ID: "jti-1",
			POSSystemID: "clover", CompanyIDs: companies}, key)
		if err != nil {
			t.Fatal(err)
		}
		old := &jwt.Token{
			Header: map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": "kid-1"},
			Method: jwt.SigningMethodES256,
			Claims: &claims{Issuer: "http://x", Audience: audience{"posgate"}, Subject: "pos-1", ClientID: "pos-1", Scope: "pos_integration",
				IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
				ID: "jti-1", POSSystemID: "clover", CompanyIDs: companies},
		}
		want, err := old.SigningString()
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.LastIndexByte(got, '.'); got[:i] != want {
			t.Errorf("signing input\n got %s\nwant %s", got[:i], want)
		}
		var c claims
		if _, err := jwt.NewParser(jwt.WithValidMethods([]string{"ES256"}), jwt.WithoutClaimsValidation()).ParseWithClaims(got, &c,
			func(*jwt.Token) (any, error) { return &key.PublicKey, nil }); err != nil {
			t.Errorf("the jwt library refuses the token: %v", err)
		}
	}
}
