package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// signingKey returns the server's current signing key from its store, so a
// test can mint tokens that differ from real ones in one claim only.
func (s *server) signingKey(t *testing.T) (string, *ecdsa.PrivateKey) {
	t.Helper()
	keys, err := s.openStore(t).ListSigningKeys(context.Background())
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys: %v (%d)", err, len(keys))
	}
	k := keys[len(keys)-1]
	priv, err := x509.ParsePKCS8PrivateKey(k.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return k.ID, priv.(*ecdsa.PrivateKey)
}

// mint signs claims like the server's, with changes applied.
func (s *server) mint(t *testing.T, kid string, key *ecdsa.PrivateKey, change func(h, c map[string]any)) string {
	t.Helper()
	now := s.clock.Now()
	c := jwt.MapClaims{
		"iss": s.base, "aud": "posgate", "sub": "demo-pos", "client_id": "demo-pos", "scope": "pos_integration",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": uuid.NewString(), "pos_system_id": "clover",
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = kid
	tok.Header["typ"] = "at+jwt"
	if change != nil {
		change(tok.Header, c)
	}
	out, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func b64(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func mustUnauthorized(t *testing.T, r response) {
	t.Helper()
	mustProblem(t, r, 401, "*", nil)
	if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), `Bearer realm="posgate", error="invalid_token", error_description="`) {
		t.Fatalf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
	}
}

func TestBearerAuthentication(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		good := s.posToken(t)
		mustStatus(t, s.do(t, startReq(good, "TERM-05", "LOC123")), 200)
		kid, key := s.signingKey(t)
		call := func(tok string) response { return s.do(t, startReq(tok, "TERM-05", "LOC123")) }

		t.Run("none", func(t *testing.T) {
			r := call("")
			mustProblem(t, r, 401, "No access token: send Authorization: Bearer <ACCESS_TOKEN>.", nil)
			if r.Header.Get("WWW-Authenticate") != `Bearer realm="posgate"` {
				t.Fatalf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
			}
		})
		t.Run("not bearer", func(t *testing.T) {
			r := s.do(t, req{Method: "POST", Path: "/pos/clover/startInteraction", ContentType: "application/json",
				Body: `{"terminalId":"TERM-05","posLocationId":"LOC123"}`, Header: map[string]string{"Authorization": "Basic ZGVtby1wb3M6eA=="}})
			mustUnauthorized(t, r)
		})
		t.Run("malformed", func(t *testing.T) { mustUnauthorized(t, call("not.a.jwt")) })
		t.Run("garbage", func(t *testing.T) { mustUnauthorized(t, call("abc")) })
		t.Run("bad signature", func(t *testing.T) {
			parts := strings.Split(good, ".")
			sig := []byte(parts[2])
			sig[5] ^= 'A' ^ 'B'
			if sig[5] == parts[2][5] {
				sig[5] = 'C'
			}
			mustUnauthorized(t, call(parts[0]+"."+parts[1]+"."+string(sig)))
		})
		t.Run("signed by another key", func(t *testing.T) {
			other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			mustUnauthorized(t, call(s.mint(t, kid, other, nil)))
		})
		t.Run("alg none", func(t *testing.T) {
			parts := strings.Split(good, ".")
			mustUnauthorized(t, call(b64(map[string]any{"alg": "none", "typ": "at+jwt", "kid": kid})+"."+parts[1]+"."))
		})
		t.Run("HS256 with the public key", func(t *testing.T) {
			der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
			pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
			_, claims := claimsOf(t, good)
			tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(claims))
			tok.Header["kid"] = kid
			tok.Header["typ"] = "at+jwt"
			for _, secret := range [][]byte{pemKey, der} {
				str, err := tok.SignedString(secret)
				if err != nil {
					t.Fatal(err)
				}
				mustUnauthorized(t, call(str))
			}
		})
		t.Run("minted control is accepted", func(t *testing.T) {
			// Shows the cases below fail for their one change only.
			mustStatus(t, call(s.mint(t, kid, key, nil)), 200)
		})
		t.Run("expired", func(t *testing.T) {
			tok := s.mint(t, kid, key, func(_, c map[string]any) {
				c["iat"] = s.clock.Now().Add(-2 * time.Hour).Unix()
				c["nbf"] = c["iat"]
				c["exp"] = s.clock.Now().Add(-time.Hour).Unix()
			})
			mustUnauthorized(t, call(tok))
		})
		t.Run("wrong aud", func(t *testing.T) {
			mustUnauthorized(t, call(s.mint(t, kid, key, func(_, c map[string]any) { c["aud"] = "someone-else" })))
		})
		t.Run("wrong iss", func(t *testing.T) {
			mustUnauthorized(t, call(s.mint(t, kid, key, func(_, c map[string]any) { c["iss"] = "https://evil.example" })))
		})
		t.Run("wrong typ", func(t *testing.T) {
			mustUnauthorized(t, call(s.mint(t, kid, key, func(h, _ map[string]any) { h["typ"] = "JWT" })))
		})
		t.Run("crit header", func(t *testing.T) {
			// RFC 7515 §4.1.11: posgate understands no extension, so any
			// "crit" makes the token invalid.
			r := call(s.mint(t, kid, key, func(h, _ map[string]any) { h["crit"] = []string{"x-unknown"} }))
			mustProblem(t, r, 401, "The access token names critical header extensions that are not understood.", nil)
		})
		t.Run("unknown kid", func(t *testing.T) {
			mustUnauthorized(t, call(s.mint(t, "no-such-kid", key, nil)))
		})
		t.Run("wrong scope", func(t *testing.T) {
			r := call(s.adminToken(t))
			mustProblem(t, r, 403, "The access token lacks the scope this operation needs (pos_integration or service_api).", nil)
		})
		t.Run("other POS system", func(t *testing.T) {
			r := s.call(t, good, "POST", "/pos/pax/startInteraction", `{"terminalId":"TERM-05","posLocationId":"LOC123"}`)
			mustProblem(t, r, 403, "The access token belongs to POS system 'clover'; this path is of POS system 'pax'.", nil)
		})
		t.Run("expired by the clock", func(t *testing.T) {
			s.clock.Advance(2 * time.Hour)
			defer s.clock.Advance(-2 * time.Hour)
			mustUnauthorized(t, call(good))
		})
	})
}
