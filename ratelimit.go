package posgate

import "fmt"

// Bounds of a RateLimit. The upper ones only keep the numbers sane (a
// client allowed a million requests a second is, in effect, unlimited on
// one instance); the lower ones keep a bucket able to admit a request.
const (
	MinRequestsPerSecond = 0.01
	MaxRequestsPerSecond = 1_000_000
	MinBurst             = 1
	MaxBurst             = 1_000_000
)

// RateLimit is a token bucket (docs/api.md §16.1): it holds at most Burst
// requests and refills at RequestsPerSecond, so that a client may send a
// short burst after a quiet spell but no more than RequestsPerSecond over
// time. An API client may carry its own (Client.RateLimit); the others get
// the installation's default.
type RateLimit struct {
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Burst             int     `json:"burst"`
}

// Validate checks the bounds; an operator sets a rate limit, so its
// mistakes are field errors.
func (l *RateLimit) Validate() error {
	v := ValidationError{}
	l.check(v, "")
	return v.Err()
}

// check records l's errors in v under prefix+field.
func (l *RateLimit) check(v ValidationError, prefix string) {
	if !(l.RequestsPerSecond >= MinRequestsPerSecond && l.RequestsPerSecond <= MaxRequestsPerSecond) {
		v.Add(prefix+"requestsPerSecond", fmt.Sprintf("requestsPerSecond must be between %g and %d.", float64(MinRequestsPerSecond), MaxRequestsPerSecond))
	}
	if l.Burst < MinBurst || l.Burst > MaxBurst {
		v.Add(prefix+"burst", fmt.Sprintf("burst must be between %d and %d.", MinBurst, MaxBurst))
	}
}
