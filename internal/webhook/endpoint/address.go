package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// The address policy of posgate's outgoing calls (docs/api.md §19.4): one
// function, Allowed, decides for the URL check at registration (after DNS
// resolution) and for every connection the delivery client makes
// (net.Dialer.Control, after resolution, so DNS rebinding reaches nothing).

// ErrForbiddenAddress is the error of a connection to an address that
// deliveries may not reach.
var ErrForbiddenAddress = errors.New("webhook: the address is private, loopback, link-local or otherwise not public")

// AddressPolicy decides which addresses outgoing calls may reach: public
// unicast addresses only, plus loopback when AllowLoopback (tests and
// demos, --webhooks-allow-loopback). Link-local addresses, where cloud
// metadata services answer, are never allowed, nor any other
// special-purpose range.
type AddressPolicy struct {
	AllowLoopback bool
}

// refusedV4 are the IANA IPv4 special-purpose ranges (RFC 6890 registry),
// multicast and the reserved 240.0.0.0/4: none is a webhook receiver on the
// public Internet.
var refusedV4 = prefixes(
	"0.0.0.0/8",       // "this network"
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // shared address space (carrier-grade NAT)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local (cloud metadata: 169.254.169.254)
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation (TEST-NET-1)
	"192.31.196.0/24", // AS112-v4
	"192.52.193.0/24", // AMT
	"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",  // private
	"192.175.48.0/24", // direct delegation AS112
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation (TEST-NET-2)
	"203.0.113.0/24",  // documentation (TEST-NET-3)
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and the limited broadcast address
)

// refusedV6 are the IANA IPv6 special-purpose ranges inside global unicast
// (2000::/3); every address outside 2000::/3 is refused anyway, but for the
// forms that carry an IPv4 address (mapped, NAT64), which its IPv4 decides.
var refusedV6 = prefixes(
	"2001::/23",         // IETF protocol assignments (Teredo 2001::/32, benchmarking, ORCHID, AMT, AS112)
	"2001:db8::/32",     // documentation
	"2620:4f:8000::/48", // direct delegation AS112
	"3fff::/20",         // documentation
)

var (
	globalUnicast = netip.MustParsePrefix("2000::/3")
	sixToFour     = netip.MustParsePrefix("2002::/16")
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local    = netip.MustParsePrefix("64:ff9b:1::/48")
	loopbackV4    = netip.MustParsePrefix("127.0.0.0/8")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Allowed reports whether an outgoing call may connect to ip.
func (p AddressPolicy) Allowed(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	if ip.Is4() {
		if p.AllowLoopback && loopbackV4.Contains(ip) {
			return true
		}
		for _, r := range refusedV4 {
			if r.Contains(ip) {
				return false
			}
		}
		return true
	}
	if !ip.Is6() {
		return false
	}
	if ip == netip.IPv6Loopback() {
		return p.AllowLoopback
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		// The well-known NAT64 prefix (RFC 6052) reaches the IPv4 address in
		// its last 32 bits: that address decides (a DNS64 network answers
		// every IPv4-only host so). Loopback is never reached through it.
		return AddressPolicy{}.Allowed(netip.AddrFrom4([4]byte(b[12:16])))
	case nat64Local.Contains(ip):
		// The local-use NAT64 prefix (RFC 8215) is a network's own
		// translator: refused, whatever it embeds.
		return false
	case sixToFour.Contains(ip):
		// 6to4 (RFC 3056) reaches the IPv4 address in bits 16-47.
		return AddressPolicy{}.Allowed(netip.AddrFrom4([4]byte(b[2:6])))
	case !globalUnicast.Contains(ip):
		// Unspecified, IPv4-compatible, discard-only, unique local,
		// link-local, site-local, multicast, SRv6 and reserved space.
		return false
	}
	for _, r := range refusedV6 {
		if r.Contains(ip) {
			return false
		}
	}
	return true
}

// allowedIP is Allowed for a net.IP (nil is refused).
func (p AddressPolicy) allowedIP(ip net.IP) bool {
	a, ok := netip.AddrFromSlice(ip)
	return ok && p.Allowed(a)
}

// PublicIP reports whether ip is an address deliveries may reach without
// loopback allowed: a public unicast address.
func PublicIP(ip net.IP) bool { return AddressPolicy{}.allowedIP(ip) }

// Control is the dialer's check of the address it is about to connect to.
func (p AddressPolicy) Control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !p.Allowed(ip) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, host)
	}
	return nil
}

// CheckURL refuses an endpoint URL whose host is, or resolves to, an
// address the policy does not allow (docs/api.md §19.1): every address a
// name resolves to must be allowed. The sender checks again at each
// connection.
func CheckURL(ctx context.Context, rawURL string, policy AddressPolicy) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if !policy.Allowed(ip) {
			return ErrForbiddenAddress
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("webhook: the host %q cannot be resolved", host)
	}
	for _, a := range addrs {
		if !policy.Allowed(a) {
			return ErrForbiddenAddress
		}
	}
	return nil
}
