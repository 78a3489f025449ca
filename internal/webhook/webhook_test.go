package webhook

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
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
		"another secret":    func() bool { return Verify(NewSecret(), id, ts, body, want) },
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
	old, cur := NewSecret(), NewSecret()
	body := []byte(`{"type":"webhook.test"}`)
	h, err := SignatureHeader([]string{cur, old}, "msg_1", 1700000000, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(strings.Fields(h)) != 2 || !Verify(old, "msg_1", 1700000000, body, h) || !Verify(cur, "msg_1", 1700000000, body, h) {
		t.Fatalf("header %q does not carry both signatures", h)
	}
	if !strings.HasPrefix(cur, SecretPrefix) || len(cur) != len(SecretPrefix)+32 {
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

// TestAddressPolicy classifies addresses for outgoing calls: every IANA
// special-purpose range and the IPv6 forms that carry a refused IPv4
// address are refused; with loopback allowed, only loopback is added, never
// link-local (metadata) or private space.
func TestAddressPolicy(t *testing.T) {
	const (
		refused  = 0 // in both modes
		public   = 1 // in both modes
		loopback = 2 // only with AllowLoopback
	)
	for addr, want := range map[string]int{
		// Public.
		"93.184.216.34": public, "8.8.8.8": public, "1.1.1.1": public, "2606:2800:220:1:248:1893:25c8:1946": public,
		"2001:4860:4860::8888": public, "::ffff:8.8.8.8": public,
		"64:ff9b::808:808": public, "2002:808:808::1": public, // NAT64 and 6to4 forms of 8.8.8.8
		"192.0.1.1": public, "198.20.0.1": public, "223.255.255.255": public,
		// Loopback.
		"127.0.0.1": loopback, "127.5.6.7": loopback, "::1": loopback, "::ffff:127.0.0.1": loopback,
		// IPv4 special-purpose ranges.
		"0.0.0.0": refused, "0.1.2.3": refused, "10.1.2.3": refused, "100.64.0.1": refused, "100.127.255.254": refused,
		"169.254.169.254": refused, "169.254.0.1": refused, "172.16.0.1": refused, "172.31.255.255": refused,
		"192.0.0.1": refused, "192.0.0.192": refused, "192.0.2.1": refused, "192.31.196.1": refused, "192.52.193.1": refused,
		"192.88.99.1": refused, "192.168.1.1": refused, "192.175.48.1": refused, "198.18.0.1": refused, "198.19.255.255": refused,
		"198.51.100.7": refused, "203.0.113.9": refused, "224.0.0.1": refused, "239.255.255.250": refused,
		"240.0.0.1": refused, "255.255.255.255": refused, "100.100.100.200": refused,
		// IPv4-mapped forms.
		"::ffff:10.0.0.1": refused, "::ffff:169.254.169.254": refused, "::ffff:198.18.0.1": refused,
		// NAT64 (well-known and local-use) forms.
		"64:ff9b::7f00:1": refused, "64:ff9b::a9fe:a9fe": refused, "64:ff9b::a00:1": refused, "64:ff9b::c612:1": refused,
		"64:ff9b:1::808:808": refused, "64:ff9b:1:ffff::a9fe:a9fe": refused,
		// 6to4 forms of refused IPv4 addresses.
		"2002:7f00:1::1": refused, "2002:a9fe:a9fe::1": refused, "2002:a00:1::": refused, "2002:c612:1::1": refused,
		// Teredo (2001::/32) and the rest of 2001::/23.
		"2001:0:4136:e378:8000:63bf:3fff:fdd2": refused, "2001:0:53aa:64c:0:0:f5ff:fffe": refused, "2001:2::1": refused,
		"2001:10::1": refused, "2001:20::1": refused, "2001:1::1": refused,
		// IPv6 special-purpose ranges.
		"::": refused, "::7f00:1": refused, "100::1": refused, "100:0:0:1::1": refused, "2001:db8::1": refused,
		"2620:4f:8000::1": refused, "3fff::1": refused, "5f00::1": refused, "fc00::1": refused, "fd00:ec2::254": refused,
		"fe80::1": refused, "fe80::a9fe:a9fe": refused, "fec0::1": refused, "ff02::1": refused, "ff0e::1": refused,
	} {
		ip := netip.MustParseAddr(addr)
		for _, allow := range []bool{false, true} {
			wantOK := want == public || (want == loopback && allow)
			if got := (AddressPolicy{AllowLoopback: allow}).Allowed(ip); got != wantOK {
				t.Errorf("AllowLoopback %v: Allowed(%s) = %v, want %v", allow, addr, got, wantOK)
			}
		}
		if got, wantPublic := PublicIP(net.ParseIP(addr)), want == public; got != wantPublic {
			t.Errorf("PublicIP(%s) = %v, want %v", addr, got, wantPublic)
		}
	}
	if PublicIP(nil) {
		t.Error("PublicIP(nil) is true")
	}
}

// TestCheckURL refuses registering non-public hosts, by address or by a
// name that resolves to one; with loopback allowed, loopback hosts only.
func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	loopbackOnly := AddressPolicy{AllowLoopback: true}
	for _, u := range []string{"http://127.0.0.1:8080/hook", "https://[::1]/hook", "http://localhost:9000/hook"} {
		if err := CheckURL(ctx, u, AddressPolicy{}); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("CheckURL(%s) = %v, want ErrForbiddenAddress", u, err)
		}
		if err := CheckURL(ctx, u, loopbackOnly); err != nil {
			t.Errorf("CheckURL(%s) with loopback allowed = %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.7/", "http://169.254.169.254/latest/meta-data", "http://[fe80::1%25eth0]/",
		"http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::1]/", "http://198.18.0.1/", "http://240.0.0.1/"} {
		for _, p := range []AddressPolicy{{}, loopbackOnly} {
			if err := CheckURL(ctx, u, p); !errors.Is(err, ErrForbiddenAddress) {
				t.Errorf("CheckURL(%s, %+v) = %v, want ErrForbiddenAddress", u, p, err)
			}
		}
	}
	if err := CheckURL(ctx, "https://93.184.216.34/hook", AddressPolicy{}); err != nil {
		t.Errorf("public address refused: %v", err)
	}
	if err := CheckURL(ctx, "https://no-such-host.invalid/hook", AddressPolicy{}); err == nil {
		t.Error("an unresolvable host is accepted")
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
		resp, err := NewClient(2*time.Second, AddressPolicy{}).Post(u, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("POST %s reached the loopback receiver", u)
		}
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("POST %s: %v, want ErrForbiddenAddress", u, err)
		}
	}
	if hits != 0 {
		t.Fatalf("receiver got %d requests", hits)
	}
	resp, err := NewClient(2*time.Second, AddressPolicy{AllowLoopback: true}).Post(srv.URL, "application/json", strings.NewReader("{}"))
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
		resp, err := NewClient(2*time.Second, AddressPolicy{AllowLoopback: true}).Post(u, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("POST %s was sent", u)
		}
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("POST %s: %v, want ErrForbiddenAddress", u, err)
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
	resp, err := NewClient(2*time.Second, AddressPolicy{AllowLoopback: true}).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status %d, want the 302 itself", resp.StatusCode)
	}
}
