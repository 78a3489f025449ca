package main

import (
	"context"

	"github.com/posgate/posgate/internal/buildinfo"
)

// cmdVersion prints the running binary's build (internal/buildinfo): one
// line for people, the fields for programs (--output json), as /healthz
// and the posgate_build_info metric report them.
func cmdVersion(_ context.Context, env *cli, args []string) error {
	fs := env.newFlags("version")
	if _, err := env.parseArgs(fs, "version", args, 0); err != nil {
		return err
	}
	bi := buildinfo.Read()
	return env.say(bi, "%s\n", bi)
}
