package main

import (
	"errors"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestConfigurationTable keeps docs/configuration.md's table true: it
// names every flag of posgate serve with its environment variable, and no
// flag that serve does not have.
func TestConfigurationTable(t *testing.T) {
	out, err := runCLI(t, nil, "serve", "--help")
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve --help: %v", err)
	}
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^  --([a-z-]+)`).FindAllStringSubmatch(out, -1) {
		flags = append(flags, m[1])
	}
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	start := strings.Index(section, "\n## posgate serve\n")
	if start < 0 {
		t.Fatal(`docs/configuration.md has no "posgate serve" section`)
	}
	section = section[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `--([a-z-]+)` \\| `([A-Z_]+)` \\|").FindAllStringSubmatch(section, -1) {
		rows = append(rows, m[1])
		if want := envName(m[1]); m[2] != want {
			t.Errorf("--%s: the table says %s, serve reads %s", m[1], m[2], want)
		}
	}
	for _, f := range flags {
		if !slices.Contains(rows, f) {
			t.Errorf("serve's --%s is not in docs/configuration.md's table", f)
		}
	}
	for _, r := range rows {
		if !slices.Contains(flags, r) {
			t.Errorf("docs/configuration.md's table names --%s, which serve does not have", r)
		}
	}
	if len(flags) < 30 {
		t.Fatalf("found %d flags in serve --help, expected more:\n%s", len(flags), out)
	}
}
