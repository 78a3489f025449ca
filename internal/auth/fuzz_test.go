package auth

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/posgate/posgate"
)

// FuzzVerify feeds Verify any string as a token: it never panics, refuses
// with one of its fixed client-safe reasons (which go into the
// WWW-Authenticate header, so they hold no quote), and accepts only a token
// that speaks for the client it was issued to. Seeds: testdata/fuzz/FuzzVerify.
func FuzzVerify(f *testing.F) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(f, store, clock)
	tok, _, err := a.Issue(context.Background(), posClient, []string{posgate.ScopePOSIntegration})
	if err != nil {
		f.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	for _, seed := range []string{tok, parts[0] + "." + parts[1] + ".", parts[0] + ".." + parts[2], "a.b.c", "", "....",
		parts[0][:len(parts[0])-1] + "." + parts[1] + "." + parts[2], "eyJhbGciOiJub25lIn0.e30."} {
		f.Add(seed)
	}
	reasons := []string{msgMalformed, msgAlgorithm, msgType, msgUnknownKey, msgSignature, msgMissingClaim, msgIssuer,
		msgAudience, msgExpired, msgNotYetValid, msgCritical, msgRevoked}
	f.Fuzz(func(t *testing.T, token string) {
		p, err := a.Verify(context.Background(), token)
		if err == nil {
			if p.ClientID != posClient.ID || p.POSSystemID != posClient.POSSystemID || !slices.Equal(p.Scopes, []string{posgate.ScopePOSIntegration}) {
				t.Fatalf("accepted %q as %+v", token, p)
			}
			return
		}
		if p != nil || posgate.ErrorCode(err) != posgate.EUNAUTHORIZED || !slices.Contains(reasons, posgate.ErrorMessage(err)) {
			t.Fatalf("Verify(%q) = %+v, %v", token, p, err)
		}
	})
}
