// Package buildinfo says which build of posgate is running: the module
// version, the VCS revision and whether the tree had uncommitted changes,
// and the Go version, as the Go toolchain stamped them into the binary
// (runtime/debug.ReadBuildInfo). `posgate version`, /healthz and the
// posgate_build_info metric all report this one Info.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Info is the build of the running binary. Fields the toolchain did not
// stamp are empty: a binary built by `go build` outside a VCS checkout has
// no revision, and `go test` binaries have neither a version nor a
// revision.
type Info struct {
	// Version is the main module's version: "v1.2.3" for `go install
	// …@v1.2.3`, a pseudo-version or "(devel)" for a build in a checkout.
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from; RevisionTime
	// its commit time (RFC 3339).
	Revision     string `json:"revision"`
	RevisionTime string `json:"revisionTime"`
	// Modified is true when the checkout had uncommitted changes.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain that built the binary, e.g. "go1.26.8".
	GoVersion string `json:"goVersion"`
}

var (
	once sync.Once
	info Info
)

// Read returns the running binary's build information (read once).
func Read() Info {
	once.Do(func() { info = FromBuildInfo(debug.ReadBuildInfo()) })
	return info
}

// FromBuildInfo extracts Info from what debug.ReadBuildInfo answered; ok
// false (a binary built without module support) gives the Go version
// alone.
func FromBuildInfo(bi *debug.BuildInfo, ok bool) Info {
	if !ok || bi == nil {
		return Info{Version: "unknown", GoVersion: runtime.Version()}
	}
	out := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if out.Version == "" {
		out.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			out.Revision = s.Value
		case "vcs.time":
			out.RevisionTime = s.Value
		case "vcs.modified":
			out.Modified = s.Value == "true"
		}
	}
	return out
}

// String is the one-line form `posgate --version` prints:
// "posgate v1.2.3 (revision 0123abcd…, modified) go1.26.8".
func (i Info) String() string {
	rev := i.Revision
	if rev == "" {
		rev = "unknown"
	}
	if i.Modified {
		rev += ", modified"
	}
	return fmt.Sprintf("posgate %s (revision %s) %s", i.Version, rev, i.GoVersion)
}
