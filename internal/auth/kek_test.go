package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func newKEKBytes(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, kekSize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func mustEncryption(t *testing.T, current []byte, previous ...[]byte) *KeyEncryption {
	t.Helper()
	e, err := NewKeyEncryption(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// forge tries what a thief with a copy of the database would: parse a
// stored private key and sign a token of the stored key id with it.
func forge(t *testing.T, stored []byte, kid string, now time.Time) (string, error) {
	t.Helper()
	k, err := x509.ParsePKCS8PrivateKey(stored)
	if err != nil {
		return "", err
	}
	return signToken(t, k.(*ecdsa.PrivateKey), map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": kid}, validClaims(now)), nil
}

// TestSealedKeysCannotMintTokens: with a key-encryption key the stored
// signing keys are sealed, the server still issues and verifies tokens,
// and the stored bytes no longer sign anything; without one, the same
// forgery works (so the test can tell).
func TestSealedKeysCannotMintTokens(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	store := newMemStore()
	plain := newTestAuth(t, store, clock)
	before := issue(t, plain)
	kid := kidOf(t, before)

	// The control: a plain stored key mints a token that verifies.
	forged, err := forge(t, store.keys[kid].PrivateKey, kid, clock.Now())
	if err != nil {
		t.Fatalf("forging with a plain key: %v", err)
	}
	if _, err := plain.Verify(ctx, forged); err != nil {
		t.Fatalf("the control forgery was refused (%v): the test below would prove nothing", err)
	}

	kek := newKEKBytes(t)
	sealed := newTestAuth(t, store, clock, func(c *Config) { c.KeyEncryption = mustEncryption(t, kek) })
	stored := store.keys[kid].PrivateKey
	if !IsSealed(stored) {
		t.Fatalf("the stored key was not sealed: % x", stored[:8])
	}
	if _, err := forge(t, stored, kid, clock.Now()); err == nil {
		t.Fatal("the sealed key parsed as a private key")
	}
	// Nor is the private scalar anywhere inside the sealed bytes.
	priv, err := x509.ParsePKCS8PrivateKey(store.privateKeyDER(t, sealed, kid))
	if err != nil {
		t.Fatal(err)
	}
	scalar, err := priv.(*ecdsa.PrivateKey).Bytes()
	if err != nil || bytes.Contains(stored, scalar) {
		t.Fatalf("the sealed form holds the private scalar (%v)", err)
	}
	// The tokens issued before stay good, new ones verify too.
	for _, tok := range []string{before, issue(t, sealed)} {
		if _, err := sealed.Verify(ctx, tok); err != nil {
			t.Fatalf("verify with sealed keys: %v", err)
		}
	}
	// A rotation under the KEK stores the new key sealed.
	k2, err := sealed.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !IsSealed(store.keys[k2.ID].PrivateKey) || bytes.Equal(store.keys[k2.ID].PrivateKey, k2.PrivateKey) {
		t.Fatal("a key rotated under the KEK was stored plain")
	}
	if kidOf(t, issue(t, sealed)) != k2.ID {
		t.Fatal("the rotated key does not sign")
	}

	// Without the KEK, or with another one, the keys do not load.
	for _, c := range []struct {
		kek  *KeyEncryption
		want string
	}{
		{nil, "it is encrypted with a key-encryption key and none was given"},
		{mustEncryption(t, newKEKBytes(t)), "it is encrypted with a key-encryption key this process was not given (fingerprint "},
	} {
		_, err := New(ctx, store, Config{Issuer: testIssuer, Now: clock.Now, Logger: plain.log, KeyEncryption: c.kek})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("New answered %v, want an error containing %q", err, c.want)
		}
	}
}

// privateKeyDER is the opened PKCS #8 key kid, as a's KEK opens it.
func (s *memStore) privateKeyDER(t *testing.T, a *Auth, kid string) []byte {
	t.Helper()
	der, err := a.kek.open(kid, s.keys[kid].PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestKEKRotation: keys sealed with the old KEK are sealed again with the
// new one by SealKeys (as `posgate keys rotate-kek` and a start with both
// KEKs do); afterwards the old KEK alone opens nothing.
func TestKEKRotation(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	store := newMemStore()
	oldKEK, newKEK := newKEKBytes(t), newKEKBytes(t)
	a := newTestAuth(t, store, clock, func(c *Config) { c.KeyEncryption = mustEncryption(t, oldKEK) })
	tok := issue(t, a)
	if _, err := a.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	both := mustEncryption(t, newKEK, oldKEK)
	n, err := SealKeys(ctx, store, both)
	if err != nil || n != 2 {
		t.Fatalf("SealKeys: %d, %v; want 2 keys sealed again", n, err)
	}
	if n, err := SealKeys(ctx, store, both); err != nil || n != 0 {
		t.Fatalf("SealKeys again: %d, %v; want 0 (idempotent)", n, err)
	}
	for id, k := range store.keys {
		if fp, _ := sealedWith(k.PrivateKey); fp != both.current.fingerprint {
			t.Fatalf("key %s is sealed with %x, not the new KEK", id, fp)
		}
	}
	b := newTestAuth(t, store, clock, func(c *Config) { c.KeyEncryption = mustEncryption(t, newKEK) })
	if _, err := b.Verify(ctx, tok); err != nil {
		t.Fatalf("a token of before the KEK rotation: %v", err)
	}
	_, err = New(ctx, store, Config{Issuer: testIssuer, Now: clock.Now, Logger: a.log, KeyEncryption: mustEncryption(t, oldKEK)})
	if err == nil || !strings.Contains(err.Error(), "this process was not given") {
		t.Fatalf("the retired KEK still loads the keys: %v", err)
	}
}

// TestSealedKeyIsBoundToItsID: a sealed key copied to another key id (the
// associated data) does not open, nor does an altered one.
func TestSealedKeyIsBoundToItsID(t *testing.T) {
	e := mustEncryption(t, newKEKBytes(t))
	sealed, err := e.seal("kid-a", []byte("0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	if der, err := e.open("kid-a", sealed); err != nil || string(der) != "0123456789" {
		t.Fatalf("open: %q %v", der, err)
	}
	if _, err := e.open("kid-b", sealed); err == nil || !strings.Contains(err.Error(), "moved from another key id") {
		t.Fatalf("open under another id: %v", err)
	}
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	if _, err := e.open("kid-a", altered); err == nil {
		t.Fatal("an altered sealed key opened")
	}
	if _, err := e.open("kid-a", sealed[:len(sealedMagic)+fingerprintSize+3]); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("a truncated sealed key: %v", err)
	}
}

func TestParseKEK(t *testing.T) {
	k := newKEKBytes(t)
	got, err := ParseKEK([]byte("  " + base64.StdEncoding.EncodeToString(k) + "\n"))
	if err != nil || !bytes.Equal(got, k) {
		t.Fatalf("ParseKEK: %x %v", got, err)
	}
	for text, want := range map[string]string{
		"":            "the key-encryption key is empty",
		"not base64!": "the key-encryption key is not base64 (make one with: openssl rand -base64 32)",
		base64.StdEncoding.EncodeToString(k[:16]): "the key-encryption key is 16 bytes, not 32 (make one with: openssl rand -base64 32)",
	} {
		if _, err := ParseKEK([]byte(text)); err == nil || err.Error() != want {
			t.Errorf("ParseKEK(%q): %v, want %q", text, err, want)
		}
	}
}
