package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/demo"
)

// demoDatabaseDefault makes the demo commands work on the demo's database
// (posgate-demo.db) unless --database says otherwise, as serve --demo does.
func demoDatabaseDefault(fs *flag.FlagSet) {
	f := fs.Lookup("database")
	f.DefValue = demoDatabase
	f.Value.Set(demoDatabase)
}

func cmdDemoReset(ctx context.Context, env *cli, args []string) error {
	return storeCommand(ctx, env, "demo reset", args, 0, demoDatabaseDefault, func(st posgate.Store, _ []string) error {
		if err := demo.Reset(ctx, st); err != nil {
			return err
		}
		env.say(map[string]bool{"reset": true}, "%s\n", "the store holds exactly the demo data set again (a running demo server sees it within its --cache-ttl)")
		return nil
	})
}

// cmdSandboxClock shows, sets or advances the sandbox clock of a running
// demo server through its operator API (docs/api.md §20).
func cmdSandboxClock(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "sandbox clock", args, -1, nil, func(a *client.Admin, pos []string) error {
		var view *client.SandboxClock
		var err error
		switch {
		case len(pos) == 0:
			view, err = a.GetSandboxClock(ctx)
		case len(pos) == 2 && pos[0] == "set":
			if _, perr := time.Parse(time.RFC3339Nano, pos[1]); perr != nil {
				return usagef("sandbox clock set takes an RFC 3339 date-time (e.g. 2030-01-01T00:00:00Z), not %q", pos[1])
			}
			view, err = a.SetSandboxClock(ctx, client.SetSandboxClockRequest{Now: pos[1]})
		case len(pos) == 2 && pos[0] == "advance":
			d, perr := time.ParseDuration(pos[1])
			if perr != nil || d < time.Second {
				return usagef("sandbox clock advance takes a duration of at least 1s (e.g. 90m, 24h), not %q", pos[1])
			}
			view, err = a.AdvanceSandboxClock(ctx, client.AdvanceSandboxClockRequest{Seconds: int64(d / time.Second)})
		default:
			return usagef("sandbox clock takes nothing, set TIME or advance DURATION (see 'posgate sandbox clock --help')")
		}
		if errors.Is(err, client.ErrNotFound) {
			return fmt.Errorf("this server has no sandbox clock: only a demo server (posgate serve --demo) has one")
		}
		if err != nil {
			return err
		}
		return env.emit(view, func(w io.Writer) {
			fmt.Fprintf(w, "sandbox time %s (real time %s, %s ahead)\n", stamp(view.Now), stamp(view.RealNow),
				time.Duration(view.OffsetSeconds)*time.Second)
		})
	})
}
