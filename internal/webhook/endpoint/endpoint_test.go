package endpoint

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

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
