package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/auth"
)

// TestStolenDatabaseCannotMintTokens: a server that runs without a
// key-encryption key keeps its signing keys plain, and whoever copies the
// database mints tokens it accepts (the control); started again with a
// KEK, it seals the keys it has, rotates to sealed ones, and a copy of the
// database holds no key that signs anything. Without the KEK the server
// refuses to start.
func TestStolenDatabaseCannotMintTokens(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		// steal reads every stored key as a copy of the database has it and
		// tries to mint a POS token with it; it returns the tokens it made.
		steal := func(s *server) (tokens []string) {
			keys, err := s.openStore(t).ListSigningKeys(context.Background())
			if err != nil || len(keys) == 0 {
				t.Fatalf("keys: %v (%d)", err, len(keys))
			}
			for _, k := range keys {
				priv, err := x509.ParsePKCS8PrivateKey(k.PrivateKey)
				if err != nil {
					continue
				}
				tokens = append(tokens, s.mint(t, k.ID, priv.(*ecdsa.PrivateKey), nil))
			}
			return tokens
		}

		s := start(t, dsn)
		stolen := steal(s)
		if len(stolen) != 1 {
			t.Fatalf("a plain store gave %d usable keys, want 1: the control proves nothing", len(stolen))
		}
		mustStatus(t, s.api(t, stolen[0]).start("TERM-05", "LOC123"), 200)

		kek := make([]byte, 32)
		rand.Read(kek)
		enc, err := auth.NewKeyEncryption(kek)
		if err != nil {
			t.Fatal(err)
		}
		s.stop(t)
		s.cfg.KeyEncryption = enc
		s.cfg.Listen = s.addrs.API.String()
		s.run(t)
		// The key the thief took before stays what it was until it
		// retires: rotate, as docs/deployment.md says to.
		mustStatus(t, s.admin(t, s.adminToken(t), "POST", "/admin/v1/keys/rotate", ""), 201)
		if got := steal(s); len(got) != 0 {
			t.Fatalf("a copy of the sealed store still minted %d tokens", len(got))
		}
		mustStatus(t, s.api(t, s.posToken(t)).start("TERM-05", "LOC123"), 200)

		// Without the KEK the sealed keys are useless to the server too.
		s.stop(t)
		cfg := s.cfg
		cfg.KeyEncryption = nil
		err = app.Serve(context.Background(), cfg, func(app.Addrs) { t.Error("served without the key-encryption key") })
		if err == nil || !strings.Contains(err.Error(), "it is encrypted with a key-encryption key and none was given") {
			t.Fatalf("serve without the KEK: %v", err)
		}
	})
}
