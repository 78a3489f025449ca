package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/pgtest"
)

// call sends one request to a running process and returns status and body.
func call(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func kidOf(t *testing.T, tok string) string {
	t.Helper()
	h, _, _ := strings.Cut(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	var header struct {
		Kid string `json:"kid"`
	}
	json.Unmarshal(b, &header)
	return header.Kid
}

// eventually retries check until it passes or the deadline is reached.
func eventually(t *testing.T, within time.Duration, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTwoInstancesShareOnePostgreSQL runs two posgate processes on one
// PostgreSQL database, as behind a load balancer: tokens, sessions, keys and
// terminals made through one are good on the other.
func TestTwoInstancesShareOnePostgreSQL(t *testing.T) {
	dsn := pgtest.DSN(t)
	// Both advertise the same public address, as instances behind one load
	// balancer do; it is the tokens' issuer.
	args := []string{"--database", dsn, "--base-url", "https://posgate.example", "--key-refresh", "1s"}
	a := startProcess(t, t.TempDir(), args...)
	b := startProcess(t, t.TempDir(), args...)

	// A token issued by A is accepted by B, and the other way round.
	tokA := token(t, a.base, "demo-pos", "demo-pos-secret")
	tokB := token(t, b.base, "demo-pos", "demo-pos-secret")
	start := `{"terminalId":"TERM-05","posLocationId":"LOC123"}`
	if st, body := call(t, "POST", b.base+"/pos/clover/startInteraction", tokA, start); st != 200 || !strings.Contains(body, `"posStatus":"Accepted"`) {
		t.Fatalf("A's token on B: %d %s", st, body)
	}
	if st, body := call(t, "POST", a.base+"/pos/clover/startInteraction", tokB, start); st != 200 {
		t.Fatalf("B's token on A: %d %s", st, body)
	}

	// A session made on A is found through B.
	_, body := call(t, "POST", a.base+"/pos/clover/startInteraction", tokA, start)
	var res struct {
		Data struct {
			SessionID string `json:"sessionId"`
		} `json:"data"`
	}
	json.Unmarshal([]byte(body), &res)
	adminB := token(t, b.base, "demo-admin", "demo-admin-secret")
	if st, body := call(t, "GET", b.base+"/admin/v1/sessions/"+res.Data.SessionID, adminB, ""); st != 200 || !strings.Contains(body, `"terminalId":"TERM-05"`) {
		t.Fatalf("A's session through B: %d %s", st, body)
	}

	// A terminal registered through A is usable on B at once.
	adminA := token(t, a.base, "demo-admin", "demo-admin-secret")
	if st, body := call(t, "POST", a.base+"/admin/v1/pos-systems/clover/locations/LOC456/terminals", adminA, `{"terminalId":"TERM-NEW"}`); st != 201 {
		t.Fatalf("register on A: %d %s", st, body)
	}
	if st, body := call(t, "POST", b.base+"/pos/clover/startInteraction", tokA, `{"terminalId":"TERM-NEW","posLocationId":"LOC456"}`); st != 200 || !strings.Contains(body, `"posStatus":"Accepted"`) {
		t.Fatalf("new terminal on B: %d %s", st, body)
	}
	// Disabling it through B takes effect on B at once and on A within the
	// lookup cache's TTL (--cache-ttl, 1 s by default), although A has the
	// terminal cached.
	newTerm := `{"terminalId":"TERM-NEW","posLocationId":"LOC456"}`
	if _, body := call(t, "POST", a.base+"/pos/clover/startInteraction", tokA, newTerm); !strings.Contains(body, `"posStatus":"Accepted"`) {
		t.Fatalf("new terminal on A: %s", body)
	}
	if st, _ := call(t, "POST", b.base+"/admin/v1/pos-systems/clover/locations/LOC456/terminals/TERM-NEW/disable", adminB, ""); st != 200 {
		t.Fatalf("disable on B: %d", st)
	}
	if _, body := call(t, "POST", b.base+"/pos/clover/startInteraction", tokA, newTerm); !strings.Contains(body, `"posStatus":"Disabled"`) {
		t.Fatalf("disabled terminal on B: %s", body)
	}
	eventually(t, 3*time.Second, "A sees the terminal disabled", func() bool {
		_, body := call(t, "POST", a.base+"/pos/clover/startInteraction", tokA, newTerm)
		return strings.Contains(body, `"posStatus":"Disabled"`)
	})

	// A key rotated on A: B accepts A's new tokens at once (unknown kid →
	// reload), publishes the key and signs with it after its refresh.
	st, body := call(t, "POST", a.base+"/admin/v1/keys/rotate", adminA, "")
	if st != 201 {
		t.Fatalf("rotate on A: %d %s", st, body)
	}
	var rot struct {
		Data struct {
			Kid string `json:"kid"`
		} `json:"data"`
	}
	json.Unmarshal([]byte(body), &rot)
	newA := token(t, a.base, "demo-pos", "demo-pos-secret")
	if kidOf(t, newA) != rot.Data.Kid {
		t.Fatalf("A signs with %s, rotated to %s", kidOf(t, newA), rot.Data.Kid)
	}
	eventually(t, 5*time.Second, "B accepts a token of A's new key", func() bool {
		st, _ := call(t, "POST", b.base+"/pos/clover/startInteraction", newA, start)
		return st == 200
	})
	eventually(t, 10*time.Second, "B publishes and signs with the new key", func() bool {
		_, jwks := call(t, "GET", b.base+"/.well-known/openid-configuration/jwks", "", "")
		return strings.Contains(jwks, rot.Data.Kid) && kidOf(t, token(t, b.base, "demo-pos", "demo-pos-secret")) == rot.Data.Kid
	})
	// Tokens of the old key keep working on both.
	for _, p := range []*proc{a, b} {
		if st, _ := call(t, "POST", p.base+"/pos/clover/startInteraction", tokB, start); st != 200 {
			t.Fatalf("old token after rotation on %s: %d", p.base, st)
		}
	}
}
