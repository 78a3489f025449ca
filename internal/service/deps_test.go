package service_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestNoHTTPBelowTheAdapters: the domain (the root package) and the use
// cases (this package) do not depend on net/http, directly or through any
// package they import; reading requests and writing answers is the
// adapters' work (internal/httpapi, internal/portal, internal/importfile).
func TestNoHTTPBelowTheAdapters(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	for _, pkg := range []string{"github.com/posgate/posgate", "github.com/posgate/posgate/internal/service"} {
		out, err := exec.Command(goCmd, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 || deps[len(deps)-1] != pkg {
			t.Fatalf("go list -deps %s answered %q", pkg, out)
		}
		for _, d := range deps {
			if d == "net/http" || strings.HasPrefix(d, "net/http/") {
				t.Errorf("%s depends on %s (go list -deps %s)", pkg, d, pkg)
			}
		}
	}
}
