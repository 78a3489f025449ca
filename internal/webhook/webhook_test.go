package webhook

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/webhook/endpoint"
)

// TestSignatureMatchesTheStandardVector signs the Standard Webhooks
// specification's test vector: secret, message id, timestamp and payload
// from the "sign function works" test of the specification's reference
// libraries (github.com/standard-webhooks/standard-webhooks,
// libraries/javascript/src/webhook.test.ts), whose expected signature is
// the one below. A receiver using any of that specification's libraries
// therefore verifies posgate's deliveries.
func TestSignatureMatchesTheStandardVector(t *testing.T) {
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		ts     = 1614265330
		want   = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	body := []byte(`{"test": 2432232314}`)
	got, err := Signature(secret, id, ts, body)
	if err != nil || got != want {
		t.Fatalf("Signature = %q, %v; want %q", got, err, want)
	}
	if !Verify(secret, id, ts, body, "v1,bm90IGl0 "+want) {
		t.Fatal("Verify refuses the vector among other signatures")
	}
	for name, bad := range map[string]func() bool{
		"another body":      func() bool { return Verify(secret, id, ts, []byte(`{"test": 1}`), want) },
		"another id":        func() bool { return Verify(secret, "msg_other", ts, body, want) },
		"another timestamp": func() bool { return Verify(secret, id, ts+1, body, want) },
		"another secret":    func() bool { return Verify(endpoint.NewSecret(), id, ts, body, want) },
		"no v1 prefix":      func() bool { return Verify(secret, id, ts, body, strings.TrimPrefix(want, "v1,")) },
	} {
		if bad() {
			t.Errorf("Verify accepts %s", name)
		}
	}
}

// TestSignatureHeaderDuringRotation: both secrets sign, space-separated,
// and a receiver holding either verifies.
func TestSignatureHeaderDuringRotation(t *testing.T) {
	old, cur := endpoint.NewSecret(), endpoint.NewSecret()
	body := []byte(`{"type":"webhook.test"}`)
	h, err := SignatureHeader([]string{cur, old}, "msg_1", 1700000000, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(strings.Fields(h)) != 2 || !Verify(old, "msg_1", 1700000000, body, h) || !Verify(cur, "msg_1", 1700000000, body, h) {
		t.Fatalf("header %q does not carry both signatures", h)
	}
	if !strings.HasPrefix(cur, endpoint.SecretPrefix) || len(cur) != len(endpoint.SecretPrefix)+32 {
		t.Fatalf("secret %q: want whsec_ and 24 bytes in base64", cur)
	}
}

// TestDelaySchedule: 5 s doubled up to an hour, spread ±20 %.
func TestDelaySchedule(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 5 * time.Second, 2: 10 * time.Second, 3: 20 * time.Second, 6: 160 * time.Second,
		10: 2560 * time.Second, 11: time.Hour, 50: time.Hour} {
		if got := Delay(n, 0.5); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
		if lo, hi := Delay(n, 0), Delay(n, 0.999999); lo != want*8/10 || hi < want*119/100 || hi > want*12/10 {
			t.Errorf("Delay(%d) spread %v–%v, want ±20 %% of %v", n, lo, hi, want)
		}
	}
}

// TestClientRefusesPrivateAtConnect: the delivery client checks the
// address it connects to, after resolution, so a name that resolves to
// loopback only at delivery time (DNS rebinding) reaches nothing; with
// loopback allowed, the same request arrives.
func TestClientRefusesPrivateAtConnect(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/hook"} {
		resp, err := NewClient(2*time.Second, endpoint.AddressPolicy{}).Post(u, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("POST %s reached the loopback receiver", u)
		}
		if !errors.Is(err, endpoint.ErrForbiddenAddress) {
			t.Fatalf("POST %s: %v, want endpoint.ErrForbiddenAddress", u, err)
		}
	}
	if hits != 0 {
		t.Fatalf("receiver got %d requests", hits)
	}
	resp, err := NewClient(2*time.Second, endpoint.AddressPolicy{AllowLoopback: true}).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits != 1 {
		t.Fatalf("allowed client: receiver got %d requests", hits)
	}
}

// TestClientRefusesLinkLocalWithLoopbackAllowed: the connect-time check
// stays on with loopback allowed: a link-local address (the metadata
// service's) is refused before any packet is sent.
func TestClientRefusesLinkLocalWithLoopbackAllowed(t *testing.T) {
	for _, u := range []string{"http://169.254.169.254/latest/meta-data", "http://[64:ff9b::a9fe:a9fe]/", "http://10.255.255.1/"} {
		resp, err := NewClient(2*time.Second, endpoint.AddressPolicy{AllowLoopback: true}).Post(u, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("POST %s was sent", u)
		}
		if !errors.Is(err, endpoint.ErrForbiddenAddress) {
			t.Fatalf("POST %s: %v, want endpoint.ErrForbiddenAddress", u, err)
		}
	}
}

// TestClientFollowsNoRedirect: a redirect is the attempt's answer, not a
// hop to somewhere else (which could be private).
func TestClientFollowsNoRedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/", http.StatusFound)
	}))
	defer srv.Close()
	resp, err := NewClient(2*time.Second, endpoint.AddressPolicy{AllowLoopback: true}).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status %d, want the 302 itself", resp.StatusCode)
	}
}
