package endpoint

import (
	"context"
	"errors"
	"net"
	"testing"
)

// TestPublicIP classifies the address ranges deliveries must not reach.
func TestPublicIP(t *testing.T) {
	for addr, public := range map[string]bool{
		"93.184.216.34": true, "8.8.8.8": true, "2606:2800:220:1:248:1893:25c8:1946": true,
		"127.0.0.1": false, "127.5.6.7": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fd00::1": false, "0.0.0.0": false, "0.1.2.3": false, "::": false,
		"100.64.0.1": false, "224.0.0.1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false,
	} {
		if got := PublicIP(net.ParseIP(addr)); got != public {
			t.Errorf("PublicIP(%s) = %v, want %v", addr, got, public)
		}
	}
}

// TestCheckURL refuses registering private and loopback hosts, by address
// or by a name that resolves to one, unless allowed.
func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{"http://127.0.0.1:8080/hook", "https://[::1]/hook", "http://10.0.0.7/", "http://169.254.169.254/latest/meta-data",
		"http://localhost:9000/hook"} {
		if err := CheckURL(ctx, u, false); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("CheckURL(%s) = %v, want ErrForbiddenAddress", u, err)
		}
		if err := CheckURL(ctx, u, true); err != nil {
			t.Errorf("CheckURL(%s) allowed = %v", u, err)
		}
	}
	if err := CheckURL(ctx, "https://93.184.216.34/hook", false); err != nil {
		t.Errorf("public address refused: %v", err)
	}
	if err := CheckURL(ctx, "https://no-such-host.invalid/hook", false); err == nil {
		t.Error("an unresolvable host is accepted")
	}
}
