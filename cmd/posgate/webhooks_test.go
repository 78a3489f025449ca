package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/posgate/posgate/internal/app"
)

// TestWebhookCommands runs every webhook command against a server, one that
// refuses loopback receivers and one that allows them
// (--webhooks-allow-loopback), whose answers the commands print.
func TestWebhookCommands(t *testing.T) {
	strict := startServer(t, filepath.Join(t.TempDir(), "strict.db"), false)
	senv := strict.env(t)
	mustCLI(t, senv, "pos-system", "create", "pax")
	mustCLI(t, senv, "company", "create", "acme", "--pos", "pax")
	if _, err := runCLI(t, senv, "webhook", "add", "--url", "http://127.0.0.1:9/h", "--events", "coupon.issued", "--pos", "pax", "--company", "acme"); err == nil ||
		!strings.Contains(describe(err), "The url must reach a public address") || !strings.Contains(describe(err), "(server "+strict.base+")") {
		t.Fatalf("webhook add on loopback to a server without --webhooks-allow-loopback: %v", err)
	}

	s := startServerWith(t, filepath.Join(t.TempDir(), "webhooks.db"), false, app.Config{WebhooksAllowLoopback: true})
	env := s.env(t)
	mustCLI(t, env, "pos-system", "create", "pax")
	mustCLI(t, env, "company", "create", "acme", "--pos", "pax")
	co := []string{"--pos", "pax", "--company", "acme"}
	cli := func(args ...string) string { return mustCLI(t, env, append(args, co...)...) }

	if _, err := runCLI(t, env, append([]string{"webhook", "add", "--url", "https://93.184.216.34/h", "--events", "coupon.issued,nope"}, co...)...); err == nil ||
		!strings.Contains(describe(err), "Unknown event type 'nope'") {
		t.Fatalf("webhook add with an unknown type: %v", err)
	}
	out := cli("webhook", "add", "--url", "http://127.0.0.1:9/h", "--events", "coupon.issued, transaction.recorded")
	m := regexp.MustCompile(`^registered webhook endpoint (wh_[a-z2-7]{16}) of pax/acme \(enabled\): http://127.0.0.1:9/h for coupon.issued, transaction.recorded\n` +
		`signing secret \(shown once\): whsec_[A-Za-z0-9+/]{32}\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("webhook add: %q", out)
	}
	id := m[1]
	if out := cli("webhook", "list"); !regexp.MustCompile(`^ID\s+ENABLED\s+URL\s+EVENTS\s+NOTE\n`+id+`\s+true\s+http://127.0.0.1:9/h\s+coupon.issued,transaction.recorded\s*\n$`).MatchString(out) ||
		strings.Contains(out, "whsec_") {
		t.Fatalf("webhook list:\n%s", out)
	}
	if out := cli("webhook", "update", id, "--disable", "--events", "coupon.issued"); out != "updated webhook endpoint "+id+" of pax/acme (disabled): http://127.0.0.1:9/h for coupon.issued\n" {
		t.Fatalf("webhook update: %q", out)
	}
	if out := cli("webhook", "rotate-secret", id); !regexp.MustCompile(`^new signing secret of ` + id + ` \(shown once\): whsec_\S+\nthe previous secret signs beside it until \S+Z\n$`).MatchString(out) {
		t.Fatalf("webhook rotate-secret: %q", out)
	}
	out = cli("webhook", "test", id)
	ev := regexp.MustCompile(`^test event (msg_[0-9a-f-]{36}) written for ` + id + `; a running posgate sends it\n$`).FindStringSubmatch(out)
	if ev == nil {
		t.Fatalf("webhook test: %q", out)
	}
	if out := cli("webhook", "deliveries", id); !regexp.MustCompile(`(?s)^ID\s+EVENT\s+TYPE\s+USER\s+STATUS.*\n1\s+` + ev[1] + `\s+webhook.test\s+Pending\s+0\s+-\s+0\s+\S+Z\s*\npage 1 of 1 deliveries\n$`).MatchString(out) {
		t.Fatalf("webhook deliveries:\n%s", out)
	}
	if out := cli("webhook", "redeliver", id); out != "0 dead deliveries of "+id+" are pending again\n" {
		t.Fatalf("webhook redeliver: %q", out)
	}
	if _, err := runCLI(t, env, append([]string{"webhook", "redeliver", id, "--delivery", "1"}, co...)...); err == nil || describe(err) != `dead webhook delivery "1" not found (server `+s.base+`)` {
		t.Fatalf("webhook redeliver of a pending delivery: %v", err)
	}
	if out := cli("webhook", "remove", id); !strings.HasPrefix(out, "removed webhook endpoint "+id) {
		t.Fatalf("webhook remove: %q", out)
	}
	if _, err := runCLI(t, env, append([]string{"webhook", "remove", id}, co...)...); err == nil || describe(err) != `webhook endpoint "`+id+`" not found (server `+s.base+`)` {
		t.Fatalf("webhook remove again: %v", err)
	}
}
