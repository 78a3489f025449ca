package auth

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLockoutPerClientID: the third failure of one client id within the
// window locks it for the window; during the lockout even the right secret
// waits (429, temporarily_unavailable, Retry-After counting down), other
// clients from the same address do not, and the lockout ends on time.
func TestLockoutPerClientID(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	addTestClients(store)
	a := newTestAuth(t, store, clock, func(c *Config) { c.ClientFailures, c.AddressFailures, c.Lockout = 3, 50, time.Minute })
	srv := newServer(t, a)
	wrong := tokenRequest{auth: basic("pos-1", "wrong"), body: "grant_type=client_credentials"}
	right := tokenRequest{auth: basic("pos-1", posSecret), body: "grant_type=client_credentials"}
	for i := range 3 {
		if ans := postToken(t, srv, wrong); ans.status != http.StatusUnauthorized {
			t.Fatalf("wrong secret #%d: %d %s", i+1, ans.status, ans.body)
		}
	}
	ans := postToken(t, srv, right)
	if ans.status != http.StatusTooManyRequests || ans.header.Get("Retry-After") != "60" ||
		ans.body != `{"error":"temporarily_unavailable","error_description":"Too many failed client authentications; retry in 60 s."}` {
		t.Fatalf("right secret during the lockout: %d %v %s", ans.status, ans.header, ans.body)
	}
	checkNoStore(t, ans)
	if ans := postToken(t, srv, tokenRequest{auth: basic("op-1", adminSecret), body: "grant_type=client_credentials"}); ans.status != http.StatusOK {
		t.Fatalf("another client from the same address: %d %s", ans.status, ans.body)
	}
	clock.Advance(59*time.Second + 500*time.Millisecond)
	if ans := postToken(t, srv, wrong); ans.status != http.StatusTooManyRequests || ans.header.Get("Retry-After") != "1" {
		t.Fatalf("wrong secret at the end of the lockout: %d %v", ans.status, ans.header)
	}
	clock.Advance(500 * time.Millisecond)
	if ans := postToken(t, srv, right); ans.status != http.StatusOK {
		t.Fatalf("right secret after the lockout: %d %s", ans.status, ans.body)
	}
}

// TestLockoutWindow: failures spread over more than a window never lock;
// requests without credentials are not failures.
func TestLockoutWindow(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	addTestClients(store)
	a := newTestAuth(t, store, clock, func(c *Config) { c.ClientFailures, c.AddressFailures, c.Lockout = 3, 4, time.Minute })
	srv := newServer(t, a)
	for i := range 6 {
		if ans := postToken(t, srv, tokenRequest{auth: basic("pos-1", "wrong"), body: "grant_type=client_credentials"}); ans.status != http.StatusUnauthorized {
			t.Fatalf("failure #%d: %d %s", i+1, ans.status, ans.body)
		}
		if i%2 == 1 {
			clock.Advance(time.Minute)
		}
	}
	for range 10 {
		if ans := postToken(t, srv, tokenRequest{body: "grant_type=client_credentials&client_id=pos-1"}); ans.status != http.StatusUnauthorized ||
			!strings.Contains(ans.body, "Client authentication is required.") {
			t.Fatalf("no secret: %d %s", ans.status, ans.body)
		}
	}
	if ans := postToken(t, srv, tokenRequest{auth: basic("pos-1", posSecret), body: "grant_type=client_credentials"}); ans.status != http.StatusOK {
		t.Fatalf("right secret: %d %s", ans.status, ans.body)
	}
}

// TestLockoutPerAddress: failures of many client ids (made-up ones too)
// from one address lock the address for every client.
func TestLockoutPerAddress(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	addTestClients(store)
	a := newTestAuth(t, store, clock, func(c *Config) { c.ClientFailures, c.AddressFailures, c.Lockout = 3, 4, time.Minute })
	srv := newServer(t, a)
	for _, id := range []string{"guess-1", "guess-2", "pos-1", strings.Repeat("x", 5000)} {
		if ans := postToken(t, srv, tokenRequest{auth: basic(id, "wrong"), body: "grant_type=client_credentials"}); ans.status != http.StatusUnauthorized {
			t.Fatalf("failure of %.10s: %d %s", id, ans.status, ans.body)
		}
	}
	if ans := postToken(t, srv, tokenRequest{auth: basic("op-1", adminSecret), body: "grant_type=client_credentials"}); ans.status != http.StatusTooManyRequests ||
		ans.header.Get("Retry-After") != "60" {
		t.Fatalf("another client from the locked address: %d %v %s", ans.status, ans.header, ans.body)
	}
	if n := len(a.clientLockout.m); n != 3 {
		t.Fatalf("%d client ids counted, want 3 (the malformed one is not)", n)
	}
}

// TestLockoutOff: a negative count turns the lockout off.
func TestLockoutOff(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	addTestClients(store)
	a := newTestAuth(t, store, clock, func(c *Config) { c.ClientFailures, c.AddressFailures = -1, -1 })
	srv := newServer(t, a)
	for range 30 {
		postToken(t, srv, tokenRequest{auth: basic("pos-1", "wrong"), body: "grant_type=client_credentials"})
	}
	if ans := postToken(t, srv, tokenRequest{auth: basic("pos-1", posSecret), body: "grant_type=client_credentials"}); ans.status != http.StatusOK {
		t.Fatalf("right secret: %d %s", ans.status, ans.body)
	}
}
