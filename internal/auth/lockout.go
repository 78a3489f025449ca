package auth

import (
	"net"
	"sync"
	"time"
)

// Defaults of the token endpoint's lockout (docs/api.md §16.2).
const (
	// DefaultClientFailures failed authentications of one client id lock it.
	DefaultClientFailures = 10
	// DefaultAddressFailures failed authentications from one address lock
	// it: more than for a client id, since many tills may share an address
	// (a shop's NAT, a proxy).
	DefaultAddressFailures = 100
	// DefaultLockout is both the window the failures are counted in and how
	// long a lockout lasts.
	DefaultLockout = time.Minute

	// maxLockoutEntries bounds the memory a flood of made-up client ids or
	// addresses can take.
	maxLockoutEntries = 100_000
)

// lockout counts failed client authentications per key (a client id or a
// remote address) in a fixed window; max failures in one window lock the
// key for one window. It is kept per instance, in memory (docs/decisions.md).
type lockout struct {
	max    int
	window time.Duration

	mu sync.Mutex
	m  map[string]*failures
}

type failures struct {
	count int
	since time.Time // start of the counting window
	until time.Time // locked until (zero: not locked)
}

func newLockout(max int, window time.Duration) *lockout {
	return &lockout{max: max, window: window, m: make(map[string]*failures)}
}

// wait returns how long key stays locked at now; 0 when it is not.
func (l *lockout) wait(key string, now time.Time) time.Duration {
	if l == nil || l.max <= 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.m[key]; f != nil && now.Before(f.until) {
		return f.until.Sub(now)
	}
	return 0
}

// fail records a failed authentication of key at now and reports whether
// it locked the key.
func (l *lockout) fail(key string, now time.Time) bool {
	if l == nil || l.max <= 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.m[key]
	if f == nil {
		if len(l.m) >= maxLockoutEntries {
			l.prune(now)
		}
		f = &failures{since: now}
		l.m[key] = f
	} else if !now.Before(f.since.Add(l.window)) {
		f.count, f.since = 0, now
	}
	f.count++
	if f.count < l.max {
		return false
	}
	f.until = now.Add(l.window)
	f.count, f.since = 0, f.until
	return true
}

// prune drops the entries whose window and lockout are over, then, if the
// map is still full, an arbitrary eighth of it (so that a flood does not
// rescan it on every failure).
func (l *lockout) prune(now time.Time) {
	for k, f := range l.m {
		if !now.Before(f.since.Add(l.window)) && !now.Before(f.until) {
			delete(l.m, k)
		}
	}
	for k := range l.m {
		if len(l.m) <= maxLockoutEntries-maxLockoutEntries/8 {
			break
		}
		delete(l.m, k)
	}
}

// remoteHost is the address part of a request's RemoteAddr: the key of the
// per-address lockout (the port changes with every connection).
func remoteHost(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return remoteAddr
}

// clear forgets every failure and lockout.
func (l *lockout) clear() {
	if l == nil {
		return
	}
	l.mu.Lock()
	clear(l.m)
	l.mu.Unlock()
}
