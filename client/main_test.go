package client_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/openapi/openapitest"
)

// serverURL is the address of the posgate the examples and tests call: a
// real server (internal/app) on 127.0.0.1 with a temporary SQLite file and
// the demo data set, as `posgate serve --demo` runs it. In an integration it
// is the address of your posgate.
var serverURL string

// The demo credentials (posgate serve --demo prints them).
const (
	posClientID     = "demo-pos"
	posClientSecret = "demo-pos-secret"
	adminClientID   = "demo-admin"
	adminSecret     = "demo-admin-secret"
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "posgate-client-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan app.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- app.Serve(ctx, app.Config{Listen: "127.0.0.1:0", Database: filepath.Join(dir, "posgate.db"), Demo: true},
			func(a app.Addrs) { ready <- a })
	}()
	select {
	case a := <-ready:
		serverURL = a.BaseURL
	case err := <-done:
		fmt.Fprintln(os.Stderr, "serve:", err)
		cancel()
		return 1
	case <-time.After(60 * time.Second):
		fmt.Fprintln(os.Stderr, "posgate did not start")
		cancel()
		return 1
	}
	code := m.Run()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintln(os.Stderr, "serve returned:", err)
			code = 1
		}
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "posgate did not stop")
		code = 1
	}
	return code
}

// validating is an *http.Client whose every response is checked against the
// OpenAPI document, so that the client's tests also prove what they decode.
func validating(t *testing.T) *http.Client {
	return &http.Client{Transport: openapitest.New(t).Transport(t, nil)}
}
