package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storecache"
)

var posClient = &posgate.Client{ID: "pos-1", POSSystemID: "clover", Scopes: []string{posgate.ScopePOSIntegration}, CompanyIDs: []string{"c1"}}

func issue(t *testing.T, a *Auth) string {
	t.Helper()
	tok, _, err := a.Issue(context.Background(), posClient, []string{posgate.ScopePOSIntegration})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func kidOf(t *testing.T, token string) string {
	t.Helper()
	h, _ := decodeJWT(t, token)
	kid, _ := h["kid"].(string)
	return kid
}

func wantUnauthorized(t *testing.T, err error, msg string) {
	t.Helper()
	if posgate.ErrorCode(err) != posgate.EUNAUTHORIZED || posgate.ErrorMessage(err) != msg {
		t.Errorf("err = %v, want EUNAUTHORIZED %q", err, msg)
	}
}

func TestIssueAndVerify(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(t, store, clock, func(c *Config) { c.TokenTTL = 10 * time.Minute; c.Audience = "pos-api" })
	tok, exp, err := a.Issue(context.Background(), posClient, []string{"pos_integration", "service_api"})
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().Add(10 * time.Minute); !exp.Equal(want) {
		t.Errorf("expiresAt = %v, want %v", exp, want)
	}
	p, err := a.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	want := &Principal{ClientID: "pos-1", Scopes: []string{"pos_integration", "service_api"}, POSSystemID: "clover",
		CompanyIDs: []string{"c1"}, ExpiresAt: exp}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("principal = %+v, want %+v", p, want)
	}
	if _, claims := decodeJWT(t, tok); claims["aud"] != "pos-api" || claims["exp"].(float64)-claims["iat"].(float64) != 600 {
		t.Errorf("claims = %v", claims)
	}
	// One second before expiry it is still good (from the cache), at expiry
	// it is not, whether cached or not.
	clock.Advance(10*time.Minute - time.Second)
	if _, err := a.Verify(context.Background(), tok); err != nil {
		t.Errorf("before expiry: %v", err)
	}
	clock.Advance(time.Second)
	_, err = a.Verify(context.Background(), tok)
	wantUnauthorized(t, err, msgExpired)
	b := newTestAuth(t, store, clock, func(c *Config) { c.TokenTTL = 10 * time.Minute; c.Audience = "pos-api" })
	_, err = b.Verify(context.Background(), tok)
	wantUnauthorized(t, err, msgExpired)
}

func TestVerifyRejects(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(t, store, clock)
	kid := store.keyIDs(t)[0]
	key := store.privateKey(t, kid)
	now := clock.Now()
	header := func(kv ...string) map[string]any {
		h := map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": kid}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	withCrit := func(v any) map[string]any {
		h := header()
		h["crit"] = v
		return h
	}
	claimsWith := func(k string, v any) map[string]any {
		c := validClaims(now)
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pubBytes, err := key.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(validClaims(now)))
	hs.Header["kid"], hs.Header["typ"] = kid, "at+jwt"
	hsToken, err := hs.SignedString(pubBytes)
	if err != nil {
		t.Fatal(err)
	}
	seg := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	noneToken := seg(map[string]any{"alg": "none", "typ": "at+jwt", "kid": kid}) + "." + seg(validClaims(now)) + "."
	good := signToken(t, key, header(), validClaims(now))
	parts := strings.Split(good, ".")
	otherSig := strings.Split(signToken(t, otherKey, header(), validClaims(now)), ".")[2]

	tests := []struct {
		name  string
		token string
		msg   string // "" = accepted
	}{
		{"forged but well-formed", good, ""},
		{"typ application/AT+JWT", signToken(t, key, header("typ", "application/AT+JWT"), validClaims(now)), ""},
		{"aud array containing the audience", signToken(t, key, header(), claimsWith("aud", []string{"x", "posgate"})), ""},
		{"nbf at the edge of the clock skew", signToken(t, key, header(), claimsWith("nbf", now.Add(30*time.Second).Unix())), ""},
		{"no nbf", signToken(t, key, header(), claimsWith("nbf", nil)), ""},
		{"empty", "", msgMalformed},
		{"garbage", "not a token", msgMalformed},
		{"three garbage segments", "a.b.c", msgMalformed},
		{"signature of another key", parts[0] + "." + parts[1] + "." + otherSig, msgSignature},
		{"claims altered", parts[0] + "." + seg(claimsWith("sub", "pos-2")) + "." + parts[2], msgSignature},
		{"alg none", noneToken, msgAlgorithm},
		{"HS256 signed with the public key", hsToken, msgAlgorithm},
		{"unknown alg", seg(map[string]any{"alg": "XY99", "typ": "at+jwt", "kid": kid}) + "." + parts[1] + "." + parts[2], msgAlgorithm},
		{"typ JWT", signToken(t, key, header("typ", "JWT"), validClaims(now)), msgType},
		{"no typ", signToken(t, key, map[string]any{"alg": "ES256", "kid": kid}, validClaims(now)), msgType},
		{"unknown kid", signToken(t, key, header("kid", "nope"), validClaims(now)), msgUnknownKey},
		{"no kid", signToken(t, key, map[string]any{"alg": "ES256", "typ": "at+jwt"}, validClaims(now)), msgUnknownKey},
		{"wrong iss", signToken(t, key, header(), claimsWith("iss", "http://evil.test")), msgIssuer},
		{"wrong aud", signToken(t, key, header(), claimsWith("aud", "other")), msgAudience},
		{"expired", signToken(t, key, header(), claimsWith("exp", now.Unix())), msgExpired},
		{"iat too far ahead", signToken(t, key, header(), claimsWith("iat", now.Add(31*time.Second).Unix())), msgNotYetValid},
		{"nbf too far ahead", signToken(t, key, header(), claimsWith("nbf", now.Add(31*time.Second).Unix())), msgNotYetValid},
		{"no exp", signToken(t, key, header(), claimsWith("exp", nil)), msgMissingClaim},
		{"no jti", signToken(t, key, header(), claimsWith("jti", nil)), msgMissingClaim},
		{"no client_id", signToken(t, key, header(), claimsWith("client_id", nil)), msgMissingClaim},
		{"exp of the wrong type", signToken(t, key, header(), claimsWith("exp", "tomorrow")), msgMalformed},
		{"crit naming an unknown extension", signToken(t, key, withCrit([]string{"x-posgate-unknown"}), validClaims(now)), msgCritical},
		{"crit empty", signToken(t, key, withCrit([]string{}), validClaims(now)), msgCritical},
		{"crit naming a registered parameter", signToken(t, key, withCrit([]string{"exp"}), validClaims(now)), msgCritical},
		{"crit not a list", signToken(t, key, withCrit("b64"), validClaims(now)), msgCritical},
		{"client no longer registered", signToken(t, key, header(), claimsWith("client_id", "gone-1")), msgRevoked},
		{"client disabled", signToken(t, key, header(), claimsWith("client_id", "off-1")), msgRevoked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Verify(context.Background(), tt.token)
			if tt.msg == "" {
				if err != nil || p.ClientID != "pos-1" {
					t.Errorf("Verify = %+v, %v", p, err)
				}
				return
			}
			if p != nil {
				t.Errorf("principal %+v for a bad token", p)
			}
			wantUnauthorized(t, err, tt.msg)
		})
	}
}

// A token is refused once its client is disabled, also when it was verified
// (and cached) before, and accepted again when the client is re-enabled
// before the token expires; a failing store is not a 401.
func TestVerifyRevocation(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(t, store, clock)
	ctx := context.Background()
	tok := issue(t, a)
	if _, err := a.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	setDisabled := func(v bool) {
		store.mu.Lock()
		store.clients["pos-1"].Disabled = v
		store.mu.Unlock()
	}
	setDisabled(true)
	for range 2 {
		p, err := a.Verify(ctx, tok)
		if p != nil {
			t.Errorf("principal %+v for a revoked token", p)
		}
		wantUnauthorized(t, err, msgRevoked)
	}
	if n := a.verified.Load(); n != 1 {
		t.Errorf("full verifications = %d, want 1 (the cache still holds the token)", n)
	}
	setDisabled(false)
	if p, err := a.Verify(ctx, tok); err != nil || p.ClientID != "pos-1" {
		t.Fatalf("after re-enabling: %+v, %v", p, err)
	}
	store.failFind.Store(true)
	defer store.failFind.Store(false)
	_, err := a.Verify(ctx, tok)
	if err == nil || posgate.ErrorCode(err) != posgate.EINTERNAL {
		t.Errorf("with the store failing: %v, want an internal error", err)
	}
}

func TestVerifyCache(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(t, store, clock)
	tok := issue(t, a)
	p1, err1 := a.Verify(context.Background(), tok)
	p2, err2 := a.Verify(context.Background(), tok)
	if err1 != nil || err2 != nil || p1 != p2 {
		t.Fatalf("Verify: %v %v, same principal %v", err1, err2, p1 == p2)
	}
	if n := a.verified.Load(); n != 1 {
		t.Errorf("full verifications = %d, want 1", n)
	}
	if _, err := a.Verify(context.Background(), issue(t, a)); err != nil {
		t.Fatal(err)
	}
	if n := a.verified.Load(); n != 2 {
		t.Errorf("full verifications = %d, want 2", n)
	}
	// Failures are not cached.
	for range 2 {
		_, err := a.Verify(context.Background(), "x.y.z")
		wantUnauthorized(t, err, msgMalformed)
	}
	if n, l := a.verified.Load(), a.cache.len(); n != 4 || l != 2 {
		t.Errorf("full verifications = %d (want 4), cache entries %d (want 2)", n, l)
	}
}

func TestVerifyCacheBound(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(t, store, clock, func(c *Config) { c.CacheSize = 40 })
	var last string
	for range 200 {
		last = issue(t, a)
		if _, err := a.Verify(context.Background(), last); err != nil {
			t.Fatal(err)
		}
		if n := a.cache.len(); n > 40 {
			t.Fatalf("cache holds %d entries, bound 40", n)
		}
	}
	if n := a.cache.len(); n < 20 {
		t.Errorf("cache holds only %d entries", n)
	}
	before := a.verified.Load()
	if _, err := a.Verify(context.Background(), last); err != nil || a.verified.Load() != before {
		t.Errorf("the newest token is not cached: %v", err)
	}
}

func TestTokenCacheEvictsExpiredFirst(t *testing.T) {
	c := newTokenCache(32) // 16 shards of 2
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	key := func(b byte) [32]byte { return [32]byte{8: b} } // same shard: equal first 8 bytes
	short := &Principal{ClientID: "short", ExpiresAt: now.Add(time.Second)}
	long := &Principal{ClientID: "long", ExpiresAt: now.Add(time.Hour)}
	c.put(key(1), short, now)
	c.put(key(2), long, now)
	now = now.Add(2 * time.Second)
	third := &Principal{ClientID: "third", ExpiresAt: now.Add(time.Hour)}
	c.put(key(3), third, now)
	if c.get(key(1), now) != nil || c.get(key(2), now) != long || c.get(key(3), now) != third || c.len() != 2 {
		t.Errorf("after eviction of the expired entry: len %d", c.len())
	}
	fourth := &Principal{ClientID: "fourth", ExpiresAt: now.Add(time.Hour)}
	c.put(key(4), fourth, now)
	if c.get(key(4), now) != fourth || c.len() != 2 || (c.get(key(2), now) == nil) == (c.get(key(3), now) == nil) {
		t.Errorf("after eviction of a live entry: len %d", c.len())
	}
	// Re-putting a present key evicts nothing.
	c.put(key(4), fourth, now)
	if c.len() != 2 {
		t.Errorf("len %d after re-put", c.len())
	}
}

func TestNewCreatesTheFirstKeyOnce(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	newTestAuth(t, store, clock)
	ids := store.keyIDs(t)
	if len(ids) != 1 || len(ids[0]) != 22 {
		t.Fatalf("keys after the first start: %v", ids)
	}
	clock.Advance(time.Hour)
	newTestAuth(t, store, clock)
	if got := store.keyIDs(t); !reflect.DeepEqual(got, ids) {
		t.Errorf("keys after a restart: %v, want %v", got, ids)
	}
}

func TestNewRejects(t *testing.T) {
	ctx := context.Background()
	if _, err := New(ctx, newMemStore(), Config{}); err == nil {
		t.Error("no issuer accepted")
	}
	if _, err := New(ctx, newMemStore(), Config{Issuer: testIssuer, TokenTTL: 500 * time.Millisecond}); err == nil {
		t.Error("sub-second TTL accepted")
	}
	store := newMemStore()
	if err := store.CreateSigningKey(ctx, &posgate.SigningKey{ID: "bad", Algorithm: "ES256", PrivateKey: []byte("junk"), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, store, Config{Issuer: testIssuer}); err == nil || !strings.Contains(err.Error(), `signing key "bad"`) {
		t.Errorf("corrupt key: err = %v", err)
	}
}

func TestRotation(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(t, store, clock)
	srv := newServer(t, a)
	ctx := context.Background()
	oldKid := store.keyIDs(t)[0]
	oldToken := issue(t, a)

	clock.Advance(10 * time.Minute)
	k, err := a.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k.Algorithm != "ES256" || !k.CreatedAt.Equal(clock.Now()) || k.ID == oldKid {
		t.Errorf("new key %s %s %v", k.ID, k.Algorithm, k.CreatedAt)
	}
	if got := jwksKids(t, srv.URL); !reflect.DeepEqual(got, []string{k.ID, oldKid}) {
		t.Errorf("JWKS kids = %v, want new then old", got)
	}
	if kid := kidOf(t, issue(t, a)); kid != k.ID {
		t.Errorf("new tokens signed by %s, want %s", kid, k.ID)
	}
	if _, err := a.Verify(ctx, oldToken); err != nil {
		t.Errorf("token of the old key: %v", err)
	}

	// The old key stays published until TTL + 5 min after the rotation.
	forged := func() string {
		return signToken(t, store.privateKey(t, oldKid), map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": oldKid}, validClaims(clock.Now()))
	}
	clock.Advance(time.Hour + 5*time.Minute - time.Second)
	if got := jwksKids(t, srv.URL); len(got) != 2 {
		t.Errorf("JWKS kids one second before retirement = %v", got)
	}
	if _, err := a.Verify(ctx, forged()); err != nil {
		t.Errorf("old key one second before retirement: %v", err)
	}
	clock.Advance(time.Second)
	if got := jwksKids(t, srv.URL); !reflect.DeepEqual(got, []string{k.ID}) {
		t.Errorf("JWKS kids after retirement = %v", got)
	}
	_, err = a.Verify(ctx, forged())
	wantUnauthorized(t, err, msgUnknownKey)
	if got := store.keyIDs(t); !reflect.DeepEqual(got, []string{oldKid, k.ID}) {
		t.Errorf("stored keys before the next rotation = %v", got)
	}

	// The next rotation prunes it; the CLI's Rotate works on the store alone.
	k3, err := Rotate(ctx, store, nil, clock.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := store.keyIDs(t); !reflect.DeepEqual(got, []string{k.ID, k3.ID}) {
		t.Errorf("stored keys after the next rotation = %v", got)
	}
}

func jwksKids(t *testing.T, srv string) []string {
	t.Helper()
	var kids []string
	for _, k := range jwks(t, srv) {
		kids = append(kids, k["kid"])
	}
	return kids
}

func TestSecondInstancePicksUpRotationOnRefresh(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(t, store, clock)
	b := newTestAuth(t, store, clock, func(c *Config) { c.KeyRefresh = 5 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	k, err := a.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for kidOf(t, issue(t, b)) != k.ID {
		if time.Now().After(deadline) {
			t.Fatal("b never signed with the rotated key")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Both verify each other's tokens.
	if _, err := a.Verify(ctx, issue(t, b)); err != nil {
		t.Error(err)
	}
	if _, err := b.Verify(ctx, issue(t, a)); err != nil {
		t.Error(err)
	}
}

func TestSecondInstanceReloadsOnUnknownKid(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(t, store, clock)
	b := newTestAuth(t, store, clock)
	ctx := context.Background()
	if _, err := a.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	tok := issue(t, a)

	// b read the keys less than a second ago: no reload, the kid is unknown.
	lists := store.lists.Load()
	_, err := b.Verify(ctx, tok)
	wantUnauthorized(t, err, msgUnknownKey)
	if n := store.lists.Load() - lists; n != 0 {
		t.Errorf("%d reloads within a second of the last", n)
	}
	clock.Advance(time.Second)
	if _, err := b.Verify(ctx, tok); err != nil {
		t.Fatalf("after one second: %v", err)
	}
	if n := store.lists.Load() - lists; n != 1 {
		t.Errorf("%d reloads, want 1", n)
	}
	if kidOf(t, issue(t, b)) != kidOf(t, tok) {
		t.Error("b does not sign with the newest key after the reload")
	}
	// Forged kids make at most one reload per second.
	for i := range 5 {
		_, err := b.Verify(ctx, strings.Replace(tok, strings.Split(tok, ".")[0],
			base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"alg":"ES256","typ":"at+jwt","kid":"forged-%d"}`, i)), 1))
		wantUnauthorized(t, err, msgUnknownKey)
	}
	if n := store.lists.Load() - lists; n != 1 {
		t.Errorf("%d reloads after forged kids, want 1", n)
	}
}

func TestRestartVerifiesOldTokens(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	tok := issue(t, newTestAuth(t, store, clock))
	clock.Advance(30 * time.Minute)
	p, err := newTestAuth(t, store, clock).Verify(context.Background(), tok)
	if err != nil || p.ClientID != "pos-1" {
		t.Errorf("after restart: %+v, %v", p, err)
	}
}

func BenchmarkIssue(b *testing.B) {
	a := newTestAuth(b, newMemStore(), newFakeClock())
	ctx := context.Background()
	scopes := []string{posgate.ScopePOSIntegration}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := a.Issue(ctx, posClient, scopes); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkVerifyCached measures the hot path of every POS request: a
// token verified before, and its client found in the lookup cache that
// posgate serve puts in front of the store (internal/storecache).
func BenchmarkVerifyCached(b *testing.B) {
	a := newTestAuth(b, storecache.New(memFull(newMemStore()), storecache.Options{TTL: time.Hour}), newFakeClock())
	ctx := context.Background()
	tok, _, err := a.Issue(ctx, posClient, []string{posgate.ScopePOSIntegration})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Verify(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestRotateWithAClockBehind(t *testing.T) {
	store, clock := newMemStore(), newFakeClock()
	a := newTestAuth(t, store, clock)
	first := store.keyIDs(t)[0]
	k, err := Rotate(context.Background(), store, nil, clock.Now().Add(-time.Hour), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().Add(time.Microsecond); !k.CreatedAt.Equal(want) {
		t.Errorf("CreatedAt = %v, want %v", k.CreatedAt, want)
	}
	if got := store.keyIDs(t); !reflect.DeepEqual(got, []string{first, k.ID}) {
		t.Errorf("stored keys = %v", got)
	}
	clock.Advance(time.Second)
	if kid := kidOf(t, issue(t, a)); kid != first {
		t.Fatalf("signed by %s before the refresh", kid)
	}
	if err := a.reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if kid := kidOf(t, issue(t, a)); kid != k.ID {
		t.Errorf("signed by %s after the refresh, want %s", kid, k.ID)
	}
}
