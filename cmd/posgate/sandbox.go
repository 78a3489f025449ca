package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/service"
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
	fs := env.newFlags("sandbox clock")
	baseURL := fs.String("base-url", "http://127.0.0.1:8080", "address of the demo server's API")
	authURL := fs.String("auth-url", "", "address of its identity provider (default --base-url)")
	clientID := fs.String("client-id", demo.AdminClientID, "operator client id (scope admin)")
	clientSecret := fs.String("client-secret", demo.AdminSecret, "its secret")
	pos, err := env.parse(fs, args)
	if err != nil {
		return err
	}
	method, path, body := http.MethodGet, "/admin/v1/sandbox/clock", ""
	switch {
	case len(pos) == 0:
	case len(pos) == 2 && pos[0] == "set":
		if _, err := time.Parse(time.RFC3339Nano, pos[1]); err != nil {
			return usagef("sandbox clock set takes an RFC 3339 date-time (e.g. 2030-01-01T00:00:00Z), not %q", pos[1])
		}
		b, _ := json.Marshal(service.SetSandboxClockRequest{Now: &pos[1]})
		method, body = http.MethodPut, string(b)
	case len(pos) == 2 && pos[0] == "advance":
		d, err := time.ParseDuration(pos[1])
		if err != nil || d < time.Second {
			return usagef("sandbox clock advance takes a duration of at least 1s (e.g. 90m, 24h), not %q", pos[1])
		}
		secs := int64(d / time.Second)
		b, _ := json.Marshal(service.AdvanceSandboxClockRequest{Seconds: &secs})
		method, path, body = http.MethodPost, path+"/advance", string(b)
	default:
		return usagef("sandbox clock takes nothing, set TIME or advance DURATION (see 'posgate sandbox clock --help')")
	}
	base := strings.TrimSuffix(*baseURL, "/")
	auth := strings.TrimSuffix(*authURL, "/")
	if auth == "" {
		auth = base
	}
	var view service.SandboxClockView
	if err := operatorCall(ctx, auth, base, *clientID, *clientSecret, method, path, body, &view); err != nil {
		return err
	}
	return env.emit(view, func(w io.Writer) {
		fmt.Fprintf(w, "sandbox time %s (real time %s, %s ahead) on %s\n", stamp(view.Now), stamp(view.RealNow),
			time.Duration(view.OffsetSeconds)*time.Second, base)
	})
}

// operatorCall sends one operator API request with a token of the given
// client and decodes the answer's data into out; an error names the
// server.
func operatorCall(ctx context.Context, authURL, base, id, secret, method, path, body string, out any) error {
	tok, err := clientToken(ctx, authURL, id, secret, posgate.ScopeAdmin)
	if err != nil {
		return fmt.Errorf("%s: %w", authURL, err)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %w", base, err)
	}
	if resp.StatusCode == http.StatusNotFound && strings.Contains(path, "/sandbox/") {
		return fmt.Errorf("%s has no sandbox clock: only a demo server (posgate serve --demo) has one", base)
	}
	if resp.StatusCode/100 != 2 {
		var p struct {
			Detail string `json:"detail"`
		}
		if json.Unmarshal(raw, &p) != nil || p.Detail == "" {
			p.Detail = strings.TrimSpace(string(raw))
		}
		return fmt.Errorf("%s: %s: %s", base, resp.Status, p.Detail)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s: unexpected answer: %v", base, err)
	}
	return json.Unmarshal(env.Data, out)
}
