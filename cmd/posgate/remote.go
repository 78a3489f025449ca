package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/demo"
)

// defaultServer is the operator commands' server when neither --server
// nor POSGATE_SERVER nor a saved login names one: the demo's address.
const defaultServer = "http://localhost:8080"

// cliAttemptTimeout bounds one attempt of an operator command's call.
const cliAttemptTimeout = 10 * time.Minute

// cliVersion is the CLI's version, sent in its User-Agent
// ("posgate-cli/<version>"), which the audit log records of its writes.
const cliVersion = client.Version

// serverFlags are the flags of every command that talks to a running
// posgate through its operator API.
type serverFlags struct {
	fs                                *flag.FlagSet
	server, authURL, clientID, secret *string
}

func addServerFlags(fs *flag.FlagSet) serverFlags {
	return serverFlags{
		fs:       fs,
		server:   fs.String("server", defaultServer, "address of the running posgate's API"),
		authURL:  fs.String("auth-url", "", "address of its identity provider, when it has its own (default --server)"),
		clientID: fs.String("client-id", "", "operator API client id (scope admin); default: the saved login, or the demo's operator on a loopback server"),
		secret:   fs.String("client-secret", "", "its secret"),
	}
}

// savedLogin is what posgate login keeps in the user's config directory.
type savedLogin struct {
	Server       string `json:"server"`
	AuthURL      string `json:"authUrl,omitempty"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// credentialsPath is where posgate login saves the credentials:
// POSGATE_CREDENTIALS when set, else posgate/credentials.json in the user's
// config directory.
func (env *cli) credentialsPath() (string, error) {
	if p := env.getenv("POSGATE_CREDENTIALS"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the config directory for the saved login: %w", err)
	}
	return filepath.Join(dir, "posgate", "credentials.json"), nil
}

// loadLogin reads the saved login; none is (nil, nil).
func (env *cli) loadLogin() (*savedLogin, string, error) {
	p, err := env.credentialsPath()
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, p, nil
	}
	if err != nil {
		return nil, p, err
	}
	var l savedLogin
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, p, fmt.Errorf("%s is not a saved login (run posgate login again): %w", p, err)
	}
	return &l, p, nil
}

// remote is a resolved connection to a running posgate.
type remote struct {
	server string
	client *client.Client
	// demoDefault says the credentials are the demo's, taken because none
	// were given for a loopback server.
	demoDefault bool
	clientID    string
}

// connect resolves the server and the credentials, in this order: the
// flags (or their POSGATE_* variables); the saved login (its server too,
// when --server is not given); and, for a server on a loopback address
// with no credentials at all, the demo's operator client, so that the
// README's commands work right after posgate serve --demo.
func (env *cli) connect(sf serverFlags) (*remote, error) {
	server, authURL, id, secret := *sf.server, *sf.authURL, *sf.clientID, *sf.secret
	login, _, err := env.loadLogin()
	if err != nil {
		return nil, err
	}
	if server, err = serverURL("--server", server); err != nil {
		return nil, err
	}
	if authURL != "" {
		if authURL, err = serverURL("--auth-url", authURL); err != nil {
			return nil, err
		}
	}
	serverGiven := env.isSet(sf.fs, "server")
	if login != nil && id == "" && secret == "" && (!serverGiven || sameServer(login.Server, server)) {
		server, id, secret = login.Server, login.ClientID, login.ClientSecret
		if authURL == "" {
			authURL = login.AuthURL
		}
	}
	r := &remote{server: strings.TrimRight(server, "/")}
	if id == "" && secret == "" {
		if !isLoopback(server) {
			return nil, &serverError{server: r.server, err: fmt.Errorf("no credentials: give --client-id and --client-secret (or POSGATE_CLIENT_ID and POSGATE_CLIENT_SECRET), or run posgate login")}
		}
		id, secret, r.demoDefault = demo.AdminClientID, demo.AdminSecret, true
	}
	if id == "" || secret == "" {
		return nil, &serverError{server: r.server, err: fmt.Errorf("give both --client-id and --client-secret")}
	}
	r.clientID = id
	// A till's time limits (5 s an attempt) would cut a coupon import of
	// 100,000 short: an operator waits, and Ctrl-C ends the command.
	opts := []client.Option{client.WithCredentials(id, secret, "admin"), client.WithUserAgent("posgate-cli/" + cliVersion),
		client.WithTimeouts(cliAttemptTimeout, 2*cliAttemptTimeout)}
	if authURL != "" {
		opts = append(opts, client.WithAuthURL(authURL))
	}
	c, err := client.New(server, opts...)
	if err != nil {
		return nil, usagef("--server: %v", err)
	}
	r.client = c
	return r, nil
}

// serverURL reads a server address given to flag: an http:// or https://
// URL, or a host and port without a scheme ("localhost:8080"), which is
// read as http:// (as curl does). Anything else is a usage error that says
// what is expected.
func serverURL(flag, given string) (string, error) {
	s := given
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", usagef("%s must be an http:// or https:// address such as http://localhost:8080 (a host:port alone means http://), not %q", flag, given)
	}
	return s, nil
}

// sameServer compares two server addresses, ignoring a trailing slash.
func sameServer(a, b string) bool { return strings.TrimRight(a, "/") == strings.TrimRight(b, "/") }

// isLoopback reports whether a server URL names this machine
// (localhost, 127.0.0.0/8, ::1): only there may the CLI assume the demo.
func isLoopback(server string) bool {
	u, err := url.Parse(server)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// wrap names the server in err and explains the answers an operator can
// act on: the server unreachable, the credentials refused.
func (r *remote) wrap(err error) error {
	if err == nil {
		return nil
	}
	var already *serverError
	if errors.As(err, &already) {
		return err
	}
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && ce.OAuthError != "":
		hint := ""
		if r.demoDefault {
			hint = " (no credentials were given, so the demo's operator client was tried: give --client-id and --client-secret, or run posgate login)"
		}
		err = fmt.Errorf("the server refused the credentials of client %q: %s%s", r.clientID, ce.OAuthDescription, hint)
	case errors.As(err, &ce) && ce.StatusCode == 401:
		err = fmt.Errorf("the server refused the access token of client %q: %s", r.clientID, ce.Detail)
	case errors.As(err, &ce):
	default:
		var ne net.Error
		var oe *net.OpError
		if errors.As(err, &oe) || errors.As(err, &ne) {
			err = fmt.Errorf("cannot reach the server (is posgate serve running there?): %w", err)
		}
	}
	return &serverError{server: r.server, err: err}
}

// serverError names the server a command talked to.
type serverError struct {
	server string
	err    error
}

func (e *serverError) Error() string { return e.err.Error() + " (server " + e.server + ")" }
func (e *serverError) Unwrap() error { return e.err }

// describe ends the message with the server (on a line of its own after a
// list of fields).
func (e *serverError) describe() string {
	out := describe(e.err)
	if strings.Contains(out, "\n") {
		return out + "\n(server " + e.server + ")"
	}
	return out + " (server " + e.server + ")"
}

// describeAPI renders an error answer of the API like a local one: its
// detail, then each invalid field's messages.
func describeAPI(e *client.Error) string {
	msg := e.Detail
	if msg == "" || len(e.Errors) > 0 {
		// The fields follow, each with its messages: the title leads them
		// rather than the detail, which only joins them.
		msg = e.Title
	}
	if msg == "" {
		msg = e.Error()
	}
	keys := make([]string, 0, len(e.Errors))
	for k := range e.Errors {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, naturalCompare)
	var b strings.Builder
	b.WriteString(msg)
	for _, k := range keys {
		for _, m := range e.Errors[k] {
			fmt.Fprintf(&b, "\n  %s: %s", k, m)
		}
	}
	return b.String()
}

// operatorCommand parses flags (wanting exactly nargs positional
// arguments), connects to the running posgate named by --server and runs fn
// with its operator API: the CLI is a client like any other, so the
// server's rules, audit log and caches see its changes at once. Every
// error names the server.
func operatorCommand(ctx context.Context, env *cli, name string, args []string, nargs int, define func(fs *flag.FlagSet),
	fn func(a *client.Admin, pos []string) error) error {
	fs := env.newFlags(name)
	sf := addServerFlags(fs)
	if define != nil {
		define(fs)
	}
	pos, err := env.parseArgs(fs, name, args, nargs)
	if err != nil {
		return err
	}
	r, err := env.connect(sf)
	if err != nil {
		return err
	}
	return r.wrap(fn(r.client.Admin, pos))
}

// conv turns a value into another type of the same JSON: the domain and
// service types the commands print into and from the client's types, which
// are the API's JSON.
func conv[T any](v any) T {
	var out T
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		panic(fmt.Sprintf("posgate: converting %T to %T: %v", v, out, err))
	}
	return out
}

// answer is conv for a client method's answer: the API's JSON read into
// the type the command prints (T a pointer or a slice).
func answer[T any, A any](a A, err error) (T, error) {
	var out T
	if err != nil {
		return out, err
	}
	b, err := json.Marshal(a)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return out, fmt.Errorf("reading the answer: %w", err)
	}
	return out, nil
}

// cmdLogin checks operator credentials against a server (a token of scope
// admin, then one operator call) and saves them, with the server, in the
// user's config directory (mode 0600), where later commands find them when
// neither flags nor POSGATE_* variables give any.
func cmdLogin(ctx context.Context, env *cli, args []string) error {
	fs := env.newFlags("login")
	sf := addServerFlags(fs)
	_, err := env.parseArgs(fs, "login", args, 0)
	if err != nil {
		return err
	}
	if *sf.clientID == "" || *sf.secret == "" {
		return usagef("login needs --client-id and --client-secret (see 'posgate login --help')")
	}
	r, err := env.connect(sf)
	if err != nil {
		return err
	}
	if _, err := r.client.Admin.ListPosSystems(ctx); err != nil {
		return r.wrap(err)
	}
	p, err := env.credentialsPath()
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(savedLogin{Server: r.server, AuthURL: strings.TrimRight(*sf.authURL, "/"), ClientID: *sf.clientID, ClientSecret: *sf.secret}, "", "  ")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("saving the login: %w", err)
	}
	// Write beside and rename, so that a reader never sees half a file, and
	// create it 0600 so that the secret is never readable by others.
	tmp, err := os.CreateTemp(filepath.Dir(p), ".credentials-*")
	if err != nil {
		return fmt.Errorf("saving the login: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the login: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the login: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving the login: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("saving the login: %w", err)
	}
	return env.say(map[string]string{"server": r.server, "clientId": *sf.clientID, "saved": p},
		"logged in to %s as %s; saved in %s\n", r.server, *sf.clientID, p)
}
