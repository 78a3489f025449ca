package credential

import (
	"encoding/base64"
	"encoding/hex"
	"testing"
)

func TestSecrets(t *testing.T) {
	s1, err1 := GenerateSecret()
	s2, err2 := GenerateSecret()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	raw, err := base64.RawURLEncoding.DecodeString(s1)
	if err != nil || len(raw) != 32 || len(s1) != 43 || s1 == s2 {
		t.Errorf("secrets %q %q", s1, s2)
	}
	// SHA-256("abc"), FIPS 180-2 appendix B.1.
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	h := HashSecret("abc")
	if got := hex.EncodeToString(h); got != abc {
		t.Errorf("HashSecret(abc) = %s", got)
	}
	if !SecretMatches(h, "abc") || SecretMatches(h, "abd") || SecretMatches(h[:31], "abc") || SecretMatches(nil, "") {
		t.Error("SecretMatches answers wrongly")
	}
}
