package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/posgate/posgate", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "-tags", Value: "timetzdata"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-29T06:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	got := FromBuildInfo(bi, true)
	want := Info{Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567", RevisionTime: "2026-11-29T06:00:00Z", Modified: true, GoVersion: "go1.26.8"}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if s, w := got.String(), "posgate v1.2.3 (revision 0123456789abcdef0123456789abcdef01234567, modified) go1.26.8"; s != w {
		t.Fatalf("String() = %q, want %q", s, w)
	}
	clean := FromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: ""}}, true)
	if clean != (Info{Version: "(devel)", GoVersion: "go1.26.8"}) {
		t.Fatalf("unstamped: %+v", clean)
	}
	if s, w := clean.String(), "posgate (devel) (revision unknown) go1.26.8"; s != w {
		t.Fatalf("String() = %q, want %q", s, w)
	}
	if none := FromBuildInfo(nil, false); none != (Info{Version: "unknown", GoVersion: runtime.Version()}) {
		t.Fatalf("no build info: %+v", none)
	}
}

func TestReadIsTheRunningBinary(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if got, want := Read(), FromBuildInfo(bi, ok); got != want {
		t.Fatalf("Read() = %+v, want %+v", got, want)
	}
	if Read().GoVersion != runtime.Version() {
		t.Fatalf("GoVersion %q, runtime %q", Read().GoVersion, runtime.Version())
	}
}
