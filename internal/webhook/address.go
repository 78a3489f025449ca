package webhook

import (
	"net"
	"net/http"
	"time"

	"github.com/posgate/posgate/internal/webhook/endpoint"
)

// NewClient returns the HTTP client of deliveries: no proxy, no redirects
// followed (a 3xx is a failed attempt), and a dialer that refuses to
// connect to an address the policy does not allow. The check is made on
// the address the dialer connects to, after name resolution, so a name
// that resolves to a public address when the endpoint is registered and
// to loopback later (DNS rebinding) is refused all the same.
func NewClient(timeout time.Duration, policy endpoint.AddressPolicy) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: policy.Control}
	transport := &http.Transport{
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   DefaultWorkers,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{Transport: transport, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
