// Package endpoint holds the rules of a webhook endpoint that the use
// cases (internal/service) check when an operator registers or rotates
// one: the addresses deliveries may reach and the form of a signing
// secret. It knows nothing of HTTP; the sender (internal/webhook) applies
// the same address rule again at each connection.
package endpoint

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"
)

// SecretPrefix starts every signing secret, as the Standard Webhooks
// libraries expect ("whsec_" + base64 of the key).
const SecretPrefix = "whsec_"

// NewSecret returns a new signing secret: 24 random bytes (192 bits,
// within the 24–64 bytes the specification recommends).
func NewSecret() string {
	b := make([]byte, 24)
	rand.Read(b) // never fails (crypto/rand)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ErrForbiddenAddress is the error of a connection to an address that
// deliveries may not reach.
var ErrForbiddenAddress = errors.New("webhook: the address is private, loopback or otherwise not public")

// cgnat is the shared address space of carrier-grade NAT (RFC 6598), not
// public either.
var cgnat = &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}

// PublicIP reports whether ip is a public unicast address: not loopback,
// private (RFC 1918, RFC 4193), link-local (cloud metadata services live
// there), unspecified, multicast or carrier-grade NAT.
func PublicIP(ip net.IP) bool {
	if ip4 := ip.To4(); ip4 != nil {
		ip = ip4
		if ip4[0] == 0 || cgnat.Contains(ip4) {
			return false
		}
	}
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified())
}

// CheckURL refuses an endpoint URL whose host is, or resolves to, a
// non-public address, unless allowPrivate (docs/api.md §19.1). The sender
// checks again at each connection.
func CheckURL(ctx context.Context, rawURL string, allowPrivate bool) error {
	if allowPrivate {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		if !PublicIP(ip) {
			return ErrForbiddenAddress
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return fmt.Errorf("webhook: the host %q cannot be resolved", host)
	}
	for _, a := range addrs {
		if !PublicIP(a.IP) {
			return ErrForbiddenAddress
		}
	}
	return nil
}
