package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
)

// With the lookup cache on (as posgate serve runs), a terminal disabled
// through this instance's operator API answers Disabled at once; one
// disabled behind its back (the CLI, another instance) does so within the
// cache's TTL, and not a request later.
func TestLookupCacheStaleness(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.CacheTTL = time.Second })
		tok, admin := s.posToken(t), s.adminToken(t)
		terminalURL := "/admin/v1/pos-systems/clover/locations/LOC123/terminals/TERM-05"

		mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Accepted") // cached now

		// Through the operator API: at once, both ways.
		mustStatus(t, s.call(t, admin, "POST", terminalURL+"/disable", ""), 200)
		mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Disabled")
		mustStatus(t, s.call(t, admin, "POST", terminalURL+"/enable", ""), 200)
		mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Accepted")

		// Behind its back: seen once the entry is a TTL old.
		disabled := posgate.StatusDisabled
		if _, err := s.openStore(t).UpdateTerminal(context.Background(), "clover", "LOC123", "TERM-05", posgate.TerminalUpdate{Status: &disabled}); err != nil {
			t.Fatal(err)
		}
		mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Accepted")
		s.clock.Advance(time.Second)
		mustInteraction(t, s.api(t, tok).start("TERM-05", "LOC123"), "TERM-05", "LOC123", "Disabled")

		// A terminal registered behind its back is usable at once: "not
		// found" is never cached.
		mustProblemStatus(t, s.api(t, tok).start("TERM-NEW", "LOC123"), 404)
		if err := s.openStore(t).CreateTerminal(context.Background(), &posgate.Terminal{POSSystemID: "clover", LocationID: "LOC123",
			ID: "TERM-NEW", Status: posgate.StatusActive}); err != nil {
			t.Fatal(err)
		}
		mustInteraction(t, s.api(t, tok).start("TERM-NEW", "LOC123"), "TERM-NEW", "LOC123", "Accepted")
	})
}

func mustProblemStatus(t *testing.T, r response, status int) {
	t.Helper()
	mustStatus(t, r, status)
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json; charset=utf-8" {
		t.Fatalf("content type %q, want a problem", ct)
	}
}
