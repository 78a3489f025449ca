package client

import (
	"testing"
	"time"
)

// TestBackoffJitter: each wait is drawn between half and all of the
// exponential step, and the draws differ, so tills that failed together
// spread out.
func TestBackoffJitter(t *testing.T) {
	c := &Client{retry: RetryPolicy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 400 * time.Millisecond}}
	for attempt, step := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 4: 400 * time.Millisecond} {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := c.backoff(attempt)
			if d < step/2 || d > step {
				t.Fatalf("attempt %d: wait %v outside [%v, %v]", attempt, d, step/2, step)
			}
			seen[d] = true
		}
		if len(seen) < 50 {
			t.Fatalf("attempt %d: only %d distinct waits in 200: no jitter", attempt, len(seen))
		}
	}
}

// TestRetryAfterHeader reads both forms of Retry-After.
func TestRetryAfterHeader(t *testing.T) {
	h := map[string][]string{"Retry-After": {"3"}}
	if d := retryAfter(h); d != 3*time.Second {
		t.Fatalf("%v", d)
	}
	h["Retry-After"] = []string{time.Now().Add(10 * time.Second).UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT")}
	if d := retryAfter(h); d < 8*time.Second || d > 10*time.Second {
		t.Fatalf("%v", d)
	}
	h["Retry-After"] = []string{"soon"}
	if d := retryAfter(h); d != 0 {
		t.Fatalf("%v", d)
	}
}
