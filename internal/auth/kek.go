package auth

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/posgate/posgate"
)

// A signing key's private half is stored sealed when posgate is given a
// key-encryption key (KEK): AES-256-GCM under the KEK, with the key id as
// associated data, so that a copy of the database alone cannot mint
// tokens and a sealed key moved to another id does not open. The stored
// form is
//
//	"PGK1" | KEK fingerprint (8 bytes) | nonce (12 bytes) | ciphertext and tag
//
// A plain key is PKCS #8 DER, which begins with 0x30 (a SEQUENCE): the
// two never look alike. The fingerprint (the first 8 bytes of SHA-256 over
// a label and the KEK) names the KEK a key was sealed with, so that a
// missing or wrong KEK is reported as such rather than as a broken key,
// and a KEK rotation knows which keys still need sealing again.
var sealedMagic = []byte("PGK1")

const (
	kekSize         = 32 // AES-256
	fingerprintSize = 8
)

// KeyEncryption seals and opens signing keys. Current seals; Current and
// every Previous KEK open, so that instances keep reading the keys while a
// KEK rotation is rolled out.
type KeyEncryption struct {
	current  kek
	previous []kek
}

type kek struct {
	aead        cipher.AEAD
	fingerprint [fingerprintSize]byte
}

// ParseKEK reads a key-encryption key as it is kept in a file or an
// environment variable: 32 random bytes in standard base64 (as `openssl
// rand -base64 32` writes them), surrounding white space ignored.
func ParseKEK(text []byte) ([]byte, error) {
	s := strings.TrimSpace(string(text))
	if s == "" {
		return nil, errors.New("the key-encryption key is empty")
	}
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("the key-encryption key is not base64 (make one with: openssl rand -base64 32)")
	}
	if len(k) != kekSize {
		return nil, fmt.Errorf("the key-encryption key is %d bytes, not %d (make one with: openssl rand -base64 32)", len(k), kekSize)
	}
	return k, nil
}

// NewKeyEncryption seals with current and opens with current and every
// previous KEK (each 32 bytes, as ParseKEK returns them).
func NewKeyEncryption(current []byte, previous ...[]byte) (*KeyEncryption, error) {
	c, err := newKEK(current)
	if err != nil {
		return nil, err
	}
	e := &KeyEncryption{current: c}
	for _, p := range previous {
		k, err := newKEK(p)
		if err != nil {
			return nil, err
		}
		if k.fingerprint != c.fingerprint {
			e.previous = append(e.previous, k)
		}
	}
	return e, nil
}

func newKEK(key []byte) (kek, error) {
	if len(key) != kekSize {
		return kek{}, fmt.Errorf("auth: a key-encryption key is %d bytes, not %d", kekSize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return kek{}, fmt.Errorf("auth: key-encryption key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return kek{}, fmt.Errorf("auth: key-encryption key: %w", err)
	}
	sum := sha256.Sum256(append([]byte("posgate key-encryption key fingerprint\x00"), key...))
	k := kek{aead: aead}
	copy(k.fingerprint[:], sum[:])
	return k, nil
}

// Fingerprint names the sealing KEK (hex), for logs and the docs' rotation
// steps; it reveals nothing of the KEK.
func (e *KeyEncryption) Fingerprint() string { return hex.EncodeToString(e.current.fingerprint[:]) }

// IsSealed reports whether a stored private key is sealed with a KEK.
func IsSealed(stored []byte) bool { return bytes.HasPrefix(stored, sealedMagic) }

// seal encrypts a PKCS #8 key of key id kid under the current KEK.
func (e *KeyEncryption) seal(kid string, der []byte) ([]byte, error) {
	nonce := make([]byte, e.current.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("auth: seal signing key: %w", err)
	}
	out := make([]byte, 0, len(sealedMagic)+fingerprintSize+len(nonce)+len(der)+e.current.aead.Overhead())
	out = append(out, sealedMagic...)
	out = append(out, e.current.fingerprint[:]...)
	out = append(out, nonce...)
	return e.current.aead.Seal(out, nonce, der, []byte(kid)), nil
}

// sealedWith returns the fingerprint a sealed key names.
func sealedWith(stored []byte) ([fingerprintSize]byte, bool) {
	var fp [fingerprintSize]byte
	if !IsSealed(stored) || len(stored) < len(sealedMagic)+fingerprintSize {
		return fp, false
	}
	copy(fp[:], stored[len(sealedMagic):])
	return fp, true
}

// errNoKEK is the error of a sealed key met without a KEK.
var errNoKEK = errors.New("it is encrypted with a key-encryption key and none was given (--key-encryption-key-file or POSGATE_KEY_ENCRYPTION_KEY)")

// open returns the PKCS #8 key of a stored private key: sealed ones are
// opened (e may then not be nil), plain ones are returned as they are.
func (e *KeyEncryption) open(kid string, stored []byte) ([]byte, error) {
	if !IsSealed(stored) {
		return stored, nil
	}
	if e == nil {
		return nil, errNoKEK
	}
	fp, ok := sealedWith(stored)
	if !ok {
		return nil, errors.New("its sealed form is truncated")
	}
	for _, k := range append([]kek{e.current}, e.previous...) {
		if k.fingerprint != fp {
			continue
		}
		rest := stored[len(sealedMagic)+fingerprintSize:]
		n := k.aead.NonceSize()
		if len(rest) < n {
			return nil, errors.New("its sealed form is truncated")
		}
		der, err := k.aead.Open(nil, rest[:n], rest[n:], []byte(kid))
		if err != nil {
			return nil, errors.New("it does not open with its key-encryption key (altered, or moved from another key id)")
		}
		return der, nil
	}
	return nil, fmt.Errorf("it is encrypted with a key-encryption key this process was not given (fingerprint %x)", fp)
}

// KeyStore is what sealing the stored keys needs: posgate.Store has it.
type KeyStore interface {
	ListSigningKeys(ctx context.Context) ([]*posgate.SigningKey, error)
	ReplaceSigningKey(ctx context.Context, id string, old, next []byte) (bool, error)
}

// SealKeys makes every stored signing key sealed with e's current KEK:
// plain keys are sealed, keys sealed with a previous KEK are opened and
// sealed again, keys sealed with the current KEK are left as they are. It
// is idempotent and safe beside running instances (each key is replaced
// only if nobody changed it since it was read). A key sealed with a KEK e
// does not know is an error, and nothing after it is changed. It returns
// how many keys it rewrote.
func SealKeys(ctx context.Context, s KeyStore, e *KeyEncryption) (int, error) {
	keys, err := s.ListSigningKeys(ctx)
	if err != nil {
		return 0, fmt.Errorf("auth: list signing keys: %w", err)
	}
	n := 0
	for _, k := range keys {
		if fp, ok := sealedWith(k.PrivateKey); ok && fp == e.current.fingerprint {
			continue
		}
		der, err := e.open(k.ID, k.PrivateKey)
		if err != nil {
			return n, fmt.Errorf("auth: signing key %q: %w", k.ID, err)
		}
		sealed, err := e.seal(k.ID, der)
		if err != nil {
			return n, err
		}
		done, err := s.ReplaceSigningKey(ctx, k.ID, k.PrivateKey, sealed)
		if err != nil {
			return n, fmt.Errorf("auth: seal signing key %q: %w", k.ID, err)
		}
		if done {
			n++
		}
		// Not done: another instance sealed it (or a rotation deleted it)
		// between the read and the write; its own write stands.
	}
	return n, nil
}
