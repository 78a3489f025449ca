package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/demo"
)

// errWatchDone ends a watch that printed the events --count asked for.
var errWatchDone = errors.New("watch done")

// cmdTerminalWatch prints the events of a terminal's channel (docs/api.md
// §25) as they come, reconnecting with Last-Event-ID whenever the
// connection ends, until Ctrl-C or --count events.
func cmdTerminalWatch(ctx context.Context, env *cli, args []string) error {
	fs := env.newFlags("terminal watch")
	baseURL := fs.String("server", defaultServer, "address of the running posgate's API")
	authURL := fs.String("auth-url", "", "address of the identity provider (default --server)")
	clientID := fs.String("client-id", "", "client id of a POS client (scope pos_integration); default on a loopback server: the demo's")
	clientSecret := fs.String("client-secret", "", "its secret")
	posID := fs.String("pos", "", "POS system id (required)")
	location := fs.String("location", "", "location id (required)")
	last := fs.String("last-event-id", "", "resume after this event id (default: the events from now on)")
	count := fs.Int("count", 0, "stop after this many events (0: watch until interrupted)")
	pos, err := env.parseArgs(fs, "terminal watch", args, 1)
	if err != nil {
		return err
	}
	switch {
	case *posID == "":
		return usagef("--pos is required")
	case *location == "":
		return usagef("--location is required")
	}
	server, err := serverURL("--server", *baseURL)
	if err != nil {
		return err
	}
	id, secret := *clientID, *clientSecret
	if id == "" && secret == "" && isLoopback(server) {
		id, secret = demo.POSClientID, demo.POSSecret
	}
	if id == "" || secret == "" {
		return usagef("give --client-id and --client-secret (or POSGATE_CLIENT_ID and POSGATE_CLIENT_SECRET) of a POS client")
	}
	opts := []client.Option{client.WithCredentials(id, secret, "pos_integration"), client.WithUserAgent("posgate-cli/" + cliVersion)}
	if *authURL != "" {
		a, err := serverURL("--auth-url", *authURL)
		if err != nil {
			return err
		}
		opts = append(opts, client.WithAuthURL(a))
	}
	c, err := client.New(server, opts...)
	if err != nil {
		return usagef("--server: %v", err)
	}
	seen := 0
	err = c.WatchTerminal(ctx, *posID, *location, pos[0], *last, func(ev *client.TerminalEvent) error {
		if env.jsonOutput() {
			b, _ := json.Marshal(ev)
			fmt.Fprintf(env.stdout, "%s\n", b)
		} else {
			fmt.Fprintf(env.stdout, "%s %s %s\n", ev.ID, ev.Type, strings.TrimSpace(string(ev.Data)))
		}
		if seen++; *count > 0 && seen >= *count {
			return errWatchDone
		}
		return nil
	})
	if errors.Is(err, errWatchDone) || (err != nil && ctx.Err() != nil) {
		return nil
	}
	return &serverError{server: strings.TrimSuffix(server, "/"), err: err}
}
