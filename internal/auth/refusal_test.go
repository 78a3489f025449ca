package auth

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/postgres"
	"github.com/posgate/posgate/internal/sqlite"
)

// grantStore is what the refusal tests need of a real store.
type grantStore interface {
	Store
	People
	CreatePOSSystem(ctx context.Context, p *posgate.POSSystem) error
	CreateClient(ctx context.Context, c *posgate.Client) error
	CreatePerson(ctx context.Context, p *posgate.Person) error
	UpdatePerson(ctx context.Context, id string, upd posgate.PersonUpdate) (*posgate.Person, error)
	SetClientRedirectURIs(ctx context.Context, clientID string, uris []string) error
}

// forEachGrantStore runs fn on a fresh SQLite store and, when configured,
// a fresh PostgreSQL one, holding two browser clients (web, web2), a POS
// client (pos-1) and one person (p1).
func forEachGrantStore(t *testing.T, fn func(t *testing.T, st grantStore)) {
	open := map[string]func(t *testing.T) grantStore{
		"sqlite": func(t *testing.T) grantStore {
			db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "grants.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
		"postgres": func(t *testing.T) grantStore {
			db, err := postgres.Open(t.Context(), pgtest.DSN(t), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			st := open[name](t)
			ctx := t.Context()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(st.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover", Name: "Clover"}))
			for _, id := range []string{"web", "web2"} {
				must(st.CreateClient(ctx, &posgate.Client{ID: id, Name: id, SecretHash: credential.HashSecret("unused"), POSSystemID: "clover",
					Scopes: []string{posgate.ScopeServiceAPI, posgate.ScopePOSIntegration}}))
				must(st.SetClientRedirectURIs(ctx, id, []string{"https://app.example/cb"}))
			}
			must(st.CreateClient(ctx, &posgate.Client{ID: "pos-1", Name: "POS", SecretHash: credential.HashSecret(posSecret), POSSystemID: "clover",
				Scopes: []string{posgate.ScopePOSIntegration}}))
			must(st.CreatePerson(ctx, &posgate.Person{ID: "p1", Email: "a@example.com", Name: "A", PasswordHash: "h", Role: posgate.RoleAdmin}))
			fn(t, st)
		})
	}
}

// oauthCode is the error code of a token answer ("" for a success).
func oauthCode(t *testing.T, ans tokenAnswer) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(ans.body), &e); err != nil {
		t.Fatalf("token answer %d %s", ans.status, ans.body)
	}
	return e.Error
}

// TestRefusedCodeGrantChangesNothing: every refusal of the authorization
// code grant but a replay leaves the code as it was, so that the right
// request afterwards still gets its tokens; only a code presented again
// revokes what it gave (RFC 6749 §4.1.2).
func TestRefusedCodeGrantChangesNothing(t *testing.T) {
	forEachGrantStore(t, func(t *testing.T, st grantStore) {
		ctx := t.Context()
		clock := newFakeClock()
		a := newTestAuth(t, st, clock, func(c *Config) { c.People = st })
		srv := newServer(t, a)
		verifier := strings.Repeat("v", 43)
		code := "the-code-" + strings.Repeat("c", 34)
		issued := &posgate.AuthCode{CodeHash: hashToken(code), FamilyID: "fam-1", ClientID: "web", PersonID: "p1",
			RedirectURI: "https://app.example/cb", Scopes: []string{posgate.ScopeServiceAPI}, CodeChallenge: sha256B64(verifier),
			ExpiresAt: clock.Now().Add(time.Minute)}
		if err := st.CreateAuthCode(ctx, issued); err != nil {
			t.Fatal(err)
		}
		before, err := st.FindAuthCode(ctx, hashToken(code))
		if err != nil {
			t.Fatal(err)
		}
		exchange := func(form url.Values) tokenAnswer {
			return postForm(t, srv, url.Values{"grant_type": {"authorization_code"}, "client_id": {"web"}, "code": {code}, "code_verifier": {verifier}}, form)
		}
		disabled, enabled := true, false
		for _, c := range []struct {
			name   string
			form   url.Values
			before func()
			after  func()
			want   string
		}{
			{name: "no code", form: url.Values{"code": {""}}, want: "invalid_request"},
			{name: "no verifier", form: url.Values{"code_verifier": {""}}, want: "invalid_request"},
			{name: "a code too long", form: url.Values{"code": {strings.Repeat("c", 257)}}, want: "invalid_grant"},
			{name: "an unknown code", form: url.Values{"code": {"unknown"}}, want: "invalid_grant"},
			{name: "another client", form: url.Values{"client_id": {"web2"}}, want: "invalid_grant"},
			{name: "another redirect_uri", form: url.Values{"redirect_uri": {"https://app.example/other"}}, want: "invalid_grant"},
			{name: "a wrong verifier", form: url.Values{"code_verifier": {strings.Repeat("w", 43)}}, want: "invalid_grant"},
			{name: "an expired code", before: func() { clock.Advance(time.Minute) }, after: func() { clock.Advance(-time.Minute) }, want: "invalid_grant"},
			{name: "a disabled person", before: func() {
				if _, err := st.UpdatePerson(ctx, "p1", posgate.PersonUpdate{Disabled: &disabled}); err != nil {
					t.Fatal(err)
				}
			}, after: func() {
				if _, err := st.UpdatePerson(ctx, "p1", posgate.PersonUpdate{Disabled: &enabled}); err != nil {
					t.Fatal(err)
				}
			}, want: "invalid_grant"},
			{name: "a POS client's credentials", form: url.Values{"client_id": {""}}, want: "invalid_grant"},
		} {
			if c.before != nil {
				c.before()
			}
			var ans tokenAnswer
			if c.name == "a POS client's credentials" {
				f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}}
				ans = postToken(t, srv, tokenRequest{auth: basic("pos-1", posSecret), body: f.Encode()})
			} else {
				ans = exchange(c.form)
			}
			if c.after != nil {
				c.after()
			}
			if got := oauthCode(t, ans); got != c.want {
				t.Fatalf("%s: %d %s, want %s", c.name, ans.status, ans.body, c.want)
			}
			now, err := st.FindAuthCode(ctx, hashToken(code))
			if err != nil || !reflect.DeepEqual(now, before) {
				t.Fatalf("%s changed the code: %+v (%v), was %+v", c.name, now, err, before)
			}
		}
		// The right request still works, once.
		ok := exchange(nil)
		if ok.status != 200 || oauthCode(t, ok) != "" {
			t.Fatalf("the right exchange after the refusals: %d %s", ok.status, ok.body)
		}
		var tr struct {
			RefreshToken string `json:"refresh_token"`
		}
		json.Unmarshal([]byte(ok.body), &tr)
		// A replay is the one refusal that changes state: it revokes the
		// refresh tokens the code gave.
		if got := oauthCode(t, exchange(nil)); got != "invalid_grant" {
			t.Fatalf("a replayed code: %s", got)
		}
		rt, err := st.FindRefreshToken(ctx, hashToken(tr.RefreshToken))
		if err != nil || !rt.Revoked {
			t.Fatalf("the replayed code's refresh token: %+v (%v), want revoked", rt, err)
		}
	})
}

// TestRefusedRefreshChangesNothing: every refusal of the refresh grant but
// a replay leaves the token and its family as they were, so that the right
// request afterwards still refreshes; only a spent token presented again
// revokes its family (RFC 9700 §4.14.2).
func TestRefusedRefreshChangesNothing(t *testing.T) {
	forEachGrantStore(t, func(t *testing.T, st grantStore) {
		ctx := t.Context()
		clock := newFakeClock()
		a := newTestAuth(t, st, clock, func(c *Config) { c.People = st })
		srv := newServer(t, a)
		token, sibling := "refresh-"+strings.Repeat("r", 35), "refresh-"+strings.Repeat("s", 35)
		for _, tok := range []string{token, sibling} {
			if err := st.CreateRefreshToken(ctx, &posgate.RefreshToken{TokenHash: hashToken(tok), FamilyID: "fam-1", ClientID: "web",
				PersonID: "p1", Scopes: []string{posgate.ScopeServiceAPI}, ExpiresAt: clock.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		state := func() [2]*posgate.RefreshToken {
			t.Helper()
			var out [2]*posgate.RefreshToken
			for i, tok := range []string{token, sibling} {
				rt, err := st.FindRefreshToken(ctx, hashToken(tok))
				if err != nil {
					t.Fatal(err)
				}
				out[i] = rt
			}
			return out
		}
		before := state()
		refresh := func(form url.Values) tokenAnswer {
			return postForm(t, srv, url.Values{"grant_type": {"refresh_token"}, "client_id": {"web"}, "refresh_token": {token}}, form)
		}
		disabled, enabled := true, false
		for _, c := range []struct {
			name          string
			form          url.Values
			before, after func()
			want          string
		}{
			{name: "no token", form: url.Values{"refresh_token": {""}}, want: "invalid_request"},
			{name: "a token too long", form: url.Values{"refresh_token": {strings.Repeat("r", 257)}}, want: "invalid_grant"},
			{name: "an unknown token", form: url.Values{"refresh_token": {"unknown"}}, want: "invalid_grant"},
			{name: "a wider scope", form: url.Values{"scope": {"service_api pos_integration"}}, want: "invalid_scope"},
			{name: "another scope", form: url.Values{"scope": {"admin"}}, want: "invalid_scope"},
			{name: "another client", form: url.Values{"client_id": {"web2"}}, want: "invalid_grant"},
			{name: "an expired token", before: func() { clock.Advance(time.Hour) }, after: func() { clock.Advance(-time.Hour) }, want: "invalid_grant"},
			{name: "a disabled person", before: func() {
				if _, err := st.UpdatePerson(ctx, "p1", posgate.PersonUpdate{Disabled: &disabled}); err != nil {
					t.Fatal(err)
				}
			}, after: func() {
				if _, err := st.UpdatePerson(ctx, "p1", posgate.PersonUpdate{Disabled: &enabled}); err != nil {
					t.Fatal(err)
				}
			}, want: "invalid_grant"},
		} {
			if c.before != nil {
				c.before()
			}
			ans := refresh(c.form)
			if c.after != nil {
				c.after()
			}
			if got := oauthCode(t, ans); got != c.want {
				t.Fatalf("%s: %d %s, want %s", c.name, ans.status, ans.body, c.want)
			}
			if now := state(); !reflect.DeepEqual(now, before) {
				t.Fatalf("%s changed the family: %+v %+v, was %+v %+v", c.name, now[0], now[1], before[0], before[1])
			}
		}
		// The right request still works, with the scope it narrows to.
		ok := refresh(url.Values{"scope": {"service_api"}})
		if ok.status != 200 || oauthCode(t, ok) != "" {
			t.Fatalf("the right refresh after the refusals: %d %s", ok.status, ok.body)
		}
		// A replay is the one refusal that changes state: the family is
		// revoked.
		if got := oauthCode(t, refresh(nil)); got != "invalid_grant" {
			t.Fatalf("a replayed refresh token: %s", got)
		}
		if now := state(); !now[1].Revoked {
			t.Fatalf("the family after a replay: %+v, want revoked", now[1])
		}
	})
}

// TestRefusedClientCredentialsChangeNothing: a client that authenticated
// and is refused (a scope it may not have, an unknown scope, a grant type
// posgate does not serve, a browser client) is not counted as a failed
// authentication, however often: its right request afterwards is served,
// where as many wrong secrets lock it out.
func TestRefusedClientCredentialsChangeNothing(t *testing.T) {
	forEachGrantStore(t, func(t *testing.T, st grantStore) {
		clock := newFakeClock()
		a := newTestAuth(t, st, clock, func(c *Config) {
			c.People = st
			c.ClientFailures, c.AddressFailures, c.Lockout = 3, 3, time.Minute
		})
		srv := newServer(t, a)
		keys, err := st.ListSigningKeys(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		cc := func(id, secret, body string) tokenAnswer {
			return postToken(t, srv, tokenRequest{auth: basic(id, secret), body: body})
		}
		for _, c := range []struct {
			name, id, body, want string
		}{
			{"a scope the client may not have", "pos-1", "grant_type=client_credentials&scope=admin", "invalid_scope"},
			{"an unknown scope", "pos-1", "grant_type=client_credentials&scope=nope", "invalid_scope"},
			{"no grant type", "pos-1", "scope=pos_integration", "invalid_request"},
			{"another grant type", "pos-1", "grant_type=password", "unsupported_grant_type"},
			{"a repeated parameter", "pos-1", "grant_type=client_credentials&scope=pos_integration&scope=pos_integration", "invalid_request"},
			{"a browser client", "web", "grant_type=client_credentials", "unauthorized_client"},
		} {
			secret := posSecret
			if c.id == "web" {
				secret = "unused"
			}
			for range 4 { // more than the lockout's 3
				if got := oauthCode(t, cc(c.id, secret, c.body)); got != c.want {
					t.Fatalf("%s: %s, want %s", c.name, got, c.want)
				}
			}
		}
		if ans := cc("pos-1", posSecret, "grant_type=client_credentials"); ans.status != 200 {
			t.Fatalf("the right request after the refusals: %d %s", ans.status, ans.body)
		}
		after, err := st.ListSigningKeys(t.Context())
		if err != nil || len(after) != len(keys) {
			t.Fatalf("signing keys %d (%v), were %d", len(after), err, len(keys))
		}
		// The lockout the refusals did not trigger is real.
		for range 3 {
			cc("pos-1", "wrong", "grant_type=client_credentials")
		}
		if ans := cc("pos-1", posSecret, "grant_type=client_credentials"); ans.status != 429 {
			t.Fatalf("after 3 wrong secrets: %d %s, want a lockout", ans.status, ans.body)
		}
	})
}

// postForm posts base to the token endpoint with form's fields in place of
// base's; a field set to "" in form is left out.
func postForm(t *testing.T, srv *httptest.Server, base, form url.Values) tokenAnswer {
	t.Helper()
	f := url.Values{}
	for k, v := range base {
		f[k] = v
	}
	for k, v := range form {
		f[k] = v
	}
	for k, v := range f {
		if v[0] == "" {
			delete(f, k)
		}
	}
	return postToken(t, srv, tokenRequest{body: f.Encode()})
}
