package auth

import (
	"encoding/binary"
	"sync"
	"time"
)

// tokenCache remembers verified tokens until they expire, so that the POS
// routes, which see the same token on every request, skip the ECDSA check.
// Entries are keyed by the SHA-256 of the token (a memory dump shows no
// usable token) and spread over shards so that readers rarely contend.
type tokenCache struct {
	shards []cacheShard
}

type cacheShard struct {
	mu  sync.RWMutex
	max int
	m   map[[32]byte]*Principal
}

const maxCacheShards = 16

// newTokenCache returns a cache holding at most size entries in total.
func newTokenCache(size int) *tokenCache {
	n := min(size, maxCacheShards)
	c := &tokenCache{shards: make([]cacheShard, n)}
	for i := range c.shards {
		c.shards[i].max = size / n
		if i < size%n {
			c.shards[i].max++
		}
		c.shards[i].m = make(map[[32]byte]*Principal)
	}
	return c
}

func (c *tokenCache) shard(key [32]byte) *cacheShard {
	return &c.shards[binary.LittleEndian.Uint64(key[:8])%uint64(len(c.shards))]
}

// get returns the principal of a token verified before, unless it has
// expired at now.
func (c *tokenCache) get(key [32]byte, now time.Time) *Principal {
	s := c.shard(key)
	s.mu.RLock()
	p := s.m[key]
	s.mu.RUnlock()
	if p == nil || !now.Before(p.ExpiresAt) {
		return nil
	}
	return p
}

// put stores p, valid until p.ExpiresAt. A full shard first drops its
// expired entries, then, if still full, an arbitrary eighth of its entries
// (so that a flood of new tokens does not rescan the shard on every put).
func (c *tokenCache) put(key [32]byte, p *Principal, now time.Time) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; !ok && len(s.m) >= s.max {
		for k, e := range s.m {
			if !now.Before(e.ExpiresAt) {
				delete(s.m, k)
			}
		}
		target := s.max - max(1, s.max/8)
		for k := range s.m {
			if len(s.m) <= target {
				break
			}
			delete(s.m, k)
		}
	}
	s.m[key] = p
}

// len returns the number of entries, expired ones included.
func (c *tokenCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}

// clear drops every entry.
func (c *tokenCache) clear() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		clear(s.m)
		s.mu.Unlock()
	}
}
