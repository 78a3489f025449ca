package credential

import (
	"net/url"
	"strings"
)

// ValidRedirectURI reports whether u may be registered as a redirect URI:
// absolute, https (or http on the loopback host, for a developer's
// machine), without a fragment (RFC 6749 §3.1.2).
func ValidRedirectURI(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Fragment != "" || strings.Contains(u, "#") || p.Host == "" || p.User != nil {
		return false
	}
	switch p.Scheme {
	case "https":
		return true
	case "http":
		h := p.Hostname()
		return h == "localhost" || h == "127.0.0.1" || h == "::1"
	}
	return false
}
