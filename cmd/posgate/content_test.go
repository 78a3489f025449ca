package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestContentCommands(t *testing.T) {
	env := startServer(t, filepath.Join(t.TempDir(), "content.db"), false).env(t)
	mustCLI(t, env, "pos-system", "create", "pax")
	mustCLI(t, env, "company", "create", "acme", "--pos", "pax")
	mustCLI(t, env, "location", "create", "S1", "--pos", "pax", "--company", "acme")
	mustCLI(t, env, "location", "create", "S2", "--pos", "pax", "--company", "acme")
	mustCLI(t, env, "company", "create", "other", "--pos", "pax")
	mustCLI(t, env, "location", "create", "O1", "--pos", "pax", "--company", "other")

	// Slides.
	if out := mustCLI(t, env, "slide", "add", "--pos", "pax", "--company", "acme", "--id", "hello", "--title", "Hello", "--duration", "5"); out != "added slide hello to pax/acme at position 1\n" {
		t.Fatalf("slide add: %q", out)
	}
	out := mustCLI(t, env, "slide", "add", "--pos", "pax", "--company", "acme", "--image", "https://cdn.example.com/a.png")
	if !regexp.MustCompile(`^added slide slide-[a-z2-7]{16} to pax/acme at position 2\n$`).MatchString(out) {
		t.Fatalf("slide add with a generated id: %q", out)
	}
	if _, err := runCLI(t, env, "slide", "add", "--pos", "pax", "--company", "acme", "--title", "x", "--duration", "16"); err == nil ||
		!strings.Contains(describe(err), "durationSeconds: The durationSeconds field must be between 5 and 15.") {
		t.Fatalf("slide add with 16 s: %v", err)
	}
	if _, err := runCLI(t, env, "slide", "add", "--pos", "pax", "--company", "nope", "--title", "x"); err == nil || describe(err) != `company "nope" not found (server `+env["POSGATE_SERVER"]+`)` {
		t.Fatalf("slide add to an unknown company: %v", err)
	}
	mustCLI(t, env, "slide", "update", "hello", "--pos", "pax", "--company", "acme", "--position", "9", "--text", "World")
	out = mustCLI(t, env, "slide", "list", "--pos", "pax", "--company", "acme")
	if !regexp.MustCompile(`(?s)^POSITION\s+ID\s+SECONDS\s+TITLE\s+IMAGE\n2\s+slide-\w+\s+8\s+https://cdn.example.com/a.png\s*\n9\s+hello\s+5\s+Hello\s*\n$`).MatchString(out) {
		t.Fatalf("slide list:\n%s", out)
	}
	if out := mustCLI(t, env, "slide", "remove", "hello", "--pos", "pax", "--company", "acme"); out != "removed slide hello of pax/acme\n" {
		t.Fatalf("slide remove: %q", out)
	}
	if _, err := runCLI(t, env, "slide", "remove", "hello", "--pos", "pax", "--company", "acme"); err == nil || describe(err) != `slide "hello" not found (server `+env["POSGATE_SERVER"]+`)` {
		t.Fatalf("slide remove again: %v", err)
	}

	// The external carousel template.
	tmpl := "https://ads.example.com/{posLocationId}/{terminalId}"
	if out := mustCLI(t, env, "carousel", "template", "--pos", "pax", "--company", "acme"); out != "company pax/acme uses posgate's own carousel page\n" {
		t.Fatalf("carousel template: %q", out)
	}
	if out := mustCLI(t, env, "carousel", "template", "--pos", "pax", "--company", "acme", "--set", tmpl); out != "company pax/acme uses the external carousel "+tmpl+"\n" {
		t.Fatalf("carousel template --set: %q", out)
	}
	if _, err := runCLI(t, env, "carousel", "template", "--pos", "pax", "--company", "acme", "--set", "https://x.example/{shop}"); err == nil {
		t.Fatal("an unknown placeholder was accepted")
	}
	if out := mustCLI(t, env, "carousel", "template", "--pos", "pax", "--company", "acme", "--clear"); out != "company pax/acme uses posgate's own carousel page\n" {
		t.Fatalf("carousel template --clear: %q", out)
	}

	// Receipt promotions: a company default and a location's own.
	if out := mustCLI(t, env, "receipt-promotion", "set", "--pos", "pax", "--company", "acme", "--primary", "Thanks!", "--target", "https://example.com/a"); out != "receipt promotion of company acme (default) set: QR code of https://example.com/a\n" {
		t.Fatalf("receipt-promotion set (company): %q", out)
	}
	if out := mustCLI(t, env, "receipt-promotion", "set", "--pos", "pax", "--location", "S2", "--primary", "S2 only", "--secondary", "Scan", "--target", "https://example.com/s2"); out != "receipt promotion of location S2 set: QR code of https://example.com/s2\n" {
		t.Fatalf("receipt-promotion set (location): %q", out)
	}
	if _, err := runCLI(t, env, "receipt-promotion", "set", "--pos", "pax", "--company", "acme", "--location", "O1", "--primary", "x", "--target", "https://example.com/x"); err == nil || describe(err) != `location "O1" not found (server `+env["POSGATE_SERVER"]+`)` {
		t.Fatalf("a location of another company: %v", err)
	}
	if _, err := runCLI(t, env, "receipt-promotion", "set", "--pos", "pax", "--company", "acme", "--primary", "x", "--target", "mailto:x@example.com"); err == nil ||
		!strings.Contains(describe(err), "targetUrl: The targetUrl field must be an absolute http or https URL.") {
		t.Fatalf("a mailto target: %v", err)
	}
	out = mustCLI(t, env, "receipt-promotion", "list", "--pos", "pax", "--company", "acme")
	if !regexp.MustCompile(`(?s)^LOCATION\s+PRIMARY\s+SECONDARY\s+TARGET\n\(default\)\s+Thanks!\s+https://example.com/a\nS2\s+S2 only\s+Scan\s+https://example.com/s2\n$`).MatchString(out) {
		t.Fatalf("receipt-promotion list:\n%s", out)
	}
	mustCLI(t, env, "receipt-promotion", "remove", "--pos", "pax", "--location", "S2")
	if out := mustCLI(t, env, "receipt-promotion", "list", "--pos", "pax", "--company", "acme"); strings.Contains(out, "S2") {
		t.Fatalf("after remove:\n%s", out)
	}

	// Impressions (none yet) and their date checks.
	today := time.Now().UTC().Format("2006-01-02")
	if out := mustCLI(t, env, "impressions", "--pos", "pax", "--company", "acme", "--from", today, "--to", today); out != "impressions of pax/acme from "+today+" to "+today+": 0\nLOCATION  TERMINAL  TOTAL  SLIDE  IMPRESSIONS\n" {
		t.Fatalf("impressions: %q", out)
	}
	if _, err := runCLI(t, env, "impressions", "--pos", "pax", "--company", "acme", "--from", "yesterday"); err == nil ||
		!strings.Contains(describe(err), "from: The from field must be a date written YYYY-MM-DD.") {
		t.Fatalf("impressions --from yesterday: %v", err)
	}
}
