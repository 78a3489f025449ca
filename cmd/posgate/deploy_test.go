package main

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// serveVariables are the POSGATE_* variables posgate serve reads: one per
// flag, and the key-encryption keys themselves (kek.go).
func serveVariables(t *testing.T) (flags []string, vars map[string]bool) {
	t.Helper()
	out, err := runCLI(t, nil, "serve", "--help")
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve --help: %v", err)
	}
	vars = map[string]bool{kekEnv: true, previousKEKEnv: true}
	for _, m := range regexp.MustCompile(`(?m)^  --?([a-z-]+)`).FindAllStringSubmatch(out, -1) {
		flags = append(flags, m[1])
		vars[envName(m[1])] = true
	}
	return flags, vars
}

func readDeploy(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDeployFilesNameRealSettings keeps the deployment files true to the
// binary: every POSGATE_* variable that deploy/posgate.env,
// deploy/posgate.service and deploy/compose.yaml set (commented-out
// examples included) is one posgate serve reads, the image's command uses
// serve's flags, and haproxy checks /readyz of the instances compose.yaml
// starts, on the port they listen on.
func TestDeployFilesNameRealSettings(t *testing.T) {
	flags, vars := serveVariables(t)
	set := map[string]*regexp.Regexp{
		"deploy/posgate.env":     regexp.MustCompile(`(?m)^#?(POSGATE_[A-Z_]+)=`),
		"deploy/posgate.service": regexp.MustCompile(`(?m)^Environment=(POSGATE_[A-Z_]+)=`),
		"deploy/compose.yaml":    regexp.MustCompile(`(?m)^\s+(POSGATE_[A-Z_]+):`),
	}
	for file, re := range set {
		found := re.FindAllStringSubmatch(readDeploy(t, file), -1)
		if len(found) == 0 {
			t.Errorf("%s sets no POSGATE_* variable: the pattern is stale", file)
		}
		for _, m := range found {
			if !vars[m[1]] {
				t.Errorf("%s sets %s, which posgate serve does not read", file, m[1])
			}
		}
	}

	// The image's command.
	m := regexp.MustCompile(`(?m)^CMD (\[.*\])$`).FindStringSubmatch(readDeploy(t, "Dockerfile"))
	if m == nil {
		t.Fatal("the Dockerfile has no CMD")
	}
	var cmd []string
	if err := json.Unmarshal([]byte(m[1]), &cmd); err != nil || len(cmd) == 0 || cmd[0] != "serve" {
		t.Fatalf("Dockerfile CMD %s: %v", m[1], err)
	}
	for _, arg := range cmd[1:] {
		if name, ok := strings.CutPrefix(arg, "--"); ok && !slices.Contains(flags, name) {
			t.Errorf("the Dockerfile's CMD passes %s, which posgate serve does not have", arg)
		}
	}

	// haproxy and compose agree on the instances and their port.
	compose, haproxy := readDeploy(t, "deploy/compose.yaml"), readDeploy(t, "deploy/haproxy.cfg")
	if !strings.Contains(compose, "    POSGATE_LISTEN: :8080\n") {
		t.Error("compose.yaml's instances do not listen on :8080")
	}
	servers := regexp.MustCompile(`(?m)^\s+server (\S+) (\S+):8080$`).FindAllStringSubmatch(haproxy, -1)
	if len(servers) != 3 {
		t.Fatalf("haproxy.cfg has %d posgate servers on :8080, want 3", len(servers))
	}
	for _, s := range servers {
		if !strings.Contains(compose, "\n  "+s[2]+":\n    <<: *posgate\n") {
			t.Errorf("haproxy.cfg's server %s is not a posgate service of compose.yaml", s[2])
		}
	}
	for _, want := range []string{"option httpchk\n", "http-check send meth GET uri /readyz\n", "http-check expect status 200\n"} {
		if !strings.Contains(haproxy, want) {
			t.Errorf("haproxy.cfg lacks %q", strings.TrimSpace(want))
		}
	}
}
