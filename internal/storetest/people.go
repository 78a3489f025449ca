package storetest

import (
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// samePerson makes empty id lists nil, as a store may return either.
func samePerson(ps ...*posgate.Person) []*posgate.Person {
	out := make([]*posgate.Person, len(ps))
	for i, p := range ps {
		n := *p
		if len(n.CompanyIDs) == 0 {
			n.CompanyIDs = nil
		}
		if len(n.LocationIDs) == 0 {
			n.LocationIDs = nil
		}
		out[i] = &n
	}
	return out
}

func testPeople(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	check(t, "ListPeople of an empty store", len(must[[]*posgate.Person](t, "ListPeople")(e.s.ListPeople(ctx))), 0)
	admin := &posgate.Person{ID: "p-admin", Email: "zed@example.com", Name: "Zed", PasswordHash: "$argon2id$x", Role: posgate.RoleAdmin}
	if err := e.s.CreatePerson(ctx, admin); err != nil {
		t.Fatalf("CreatePerson: %v", err)
	}
	check(t, "CreatePerson sets the times", []time.Time{admin.CreatedAt, admin.UpdatedAt}, []time.Time{e.clk.stamp(), e.clk.stamp()})
	e.clk.advance()
	mgr := &posgate.Person{ID: "p-mgr", Email: "ann@example.com", Name: "Ann", PasswordHash: "$argon2id$y", Role: posgate.RoleLocationManager,
		POSSystemID: "clover", LocationIDs: []string{"L2", "L1"}}
	if err := e.s.CreatePerson(ctx, mgr); err != nil {
		t.Fatalf("CreatePerson: %v", err)
	}
	check(t, "FindPerson", samePerson(must[*posgate.Person](t, "FindPerson")(e.s.FindPerson(ctx, "p-mgr"))), samePerson(mgr))
	check(t, "FindPersonByEmail", samePerson(must[*posgate.Person](t, "FindPersonByEmail")(e.s.FindPersonByEmail(ctx, "zed@example.com"))), samePerson(admin))
	check(t, "ListPeople (by e-mail)", samePerson(must[[]*posgate.Person](t, "ListPeople")(e.s.ListPeople(ctx))...), samePerson(mgr, admin))

	dup := &posgate.Person{ID: "p-other", Email: "ann@example.com", Name: "Ann 2", PasswordHash: "h", Role: posgate.RoleAdmin}
	checkErr(t, "CreatePerson with an e-mail address in use", e.s.CreatePerson(ctx, dup), posgate.ErrConflict, `person "ann@example.com" already exists`)
	dup = &posgate.Person{ID: "p-x", Email: "x@example.com", Name: "X", PasswordHash: "h", Role: posgate.RolePOSAdmin, POSSystemID: "nope"}
	checkErr(t, "CreatePerson of an unknown POS system", e.s.CreatePerson(ctx, dup), posgate.ErrNotFound, `POS system "nope" not found`)
	_, err := e.s.FindPerson(ctx, "P-MGR")
	checkErr(t, "FindPerson is case-sensitive", err, posgate.ErrNotFound, `person "P-MGR" not found`)
	_, err = e.s.FindPersonByEmail(ctx, "nobody@example.com")
	checkErr(t, "FindPersonByEmail(unknown)", err, posgate.ErrNotFound, `person "nobody@example.com" not found`)

	e.clk.advance()
	got := must[*posgate.Person](t, "UpdatePerson")(e.s.UpdatePerson(ctx, "p-mgr", posgate.PersonUpdate{Disabled: ptr(true), PasswordHash: ptr("new")}))
	want := *mgr
	want.Disabled, want.PasswordHash, want.UpdatedAt = true, "new", e.clk.stamp()
	check(t, "UpdatePerson", samePerson(got), samePerson(&want))
	check(t, "FindPerson after UpdatePerson", samePerson(must[*posgate.Person](t, "FindPerson")(e.s.FindPerson(ctx, "p-mgr"))), samePerson(&want))
	_, err = e.s.UpdatePerson(ctx, "nobody", posgate.PersonUpdate{Name: ptr("x")})
	checkErr(t, "UpdatePerson(unknown)", err, posgate.ErrNotFound, `person "nobody" not found`)
}

func testSignIns(t *testing.T, e *env) {
	ctx := t.Context()
	p := &posgate.Person{ID: "p1", Email: "a@example.com", Name: "A", PasswordHash: "h", Role: posgate.RoleAdmin}
	if err := e.s.CreatePerson(ctx, p); err != nil {
		t.Fatal(err)
	}
	now := e.clk.stamp()
	s := &posgate.SignIn{IDHash: secret(1), PersonID: "p1", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := e.s.CreateSignIn(ctx, s); err != nil {
		t.Fatalf("CreateSignIn: %v", err)
	}
	check(t, "FindSignIn", must[*posgate.SignIn](t, "FindSignIn")(e.s.FindSignIn(ctx, secret(1), now)), s)
	_, err := e.s.FindSignIn(ctx, secret(1), now.Add(time.Hour))
	check(t, "FindSignIn of an expired sign-in is ENOTFOUND", posgate.ErrorCode(err), posgate.ENOTFOUND)
	_, err = e.s.FindSignIn(ctx, secret(2), now)
	check(t, "FindSignIn(unknown) is ENOTFOUND", posgate.ErrorCode(err), posgate.ENOTFOUND)
	bad := &posgate.SignIn{IDHash: secret(3), PersonID: "nobody", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	check(t, "CreateSignIn of an unknown person is ENOTFOUND", posgate.ErrorCode(e.s.CreateSignIn(ctx, bad)), posgate.ENOTFOUND)
	if err := e.s.DeleteSignIn(ctx, secret(1)); err != nil {
		t.Fatalf("DeleteSignIn: %v", err)
	}
	_, err = e.s.FindSignIn(ctx, secret(1), now)
	check(t, "FindSignIn after DeleteSignIn is ENOTFOUND", posgate.ErrorCode(err), posgate.ENOTFOUND)
	if err := e.s.DeleteSignIn(ctx, secret(1)); err != nil {
		t.Fatalf("DeleteSignIn twice: %v", err)
	}
	late := &posgate.SignIn{IDHash: secret(4), PersonID: "p1", CreatedAt: now, ExpiresAt: now.Add(2 * time.Hour)}
	if err := e.s.CreateSignIn(ctx, late); err != nil {
		t.Fatal(err)
	}
	check(t, "DeleteExpiredGrants before any expiry", must[int64](t, "DeleteExpiredGrants")(e.s.DeleteExpiredGrants(ctx, now)), int64(0))
	check(t, "DeleteExpiredGrants after", must[int64](t, "DeleteExpiredGrants")(e.s.DeleteExpiredGrants(ctx, now.Add(3*time.Hour))), int64(1))
}

func testAuthCodesAndRefreshTokens(t *testing.T, e *env) {
	ctx := t.Context()
	e.posSystem("clover")
	if err := e.s.CreateClient(ctx, &posgate.Client{ID: "web", Name: "Web", SecretHash: secret(9), POSSystemID: "clover", Scopes: []string{posgate.ScopeServiceAPI}}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.CreatePerson(ctx, &posgate.Person{ID: "p1", Email: "a@example.com", Name: "A", PasswordHash: "h", Role: posgate.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	now := e.clk.stamp()

	// Redirect URIs.
	check(t, "ClientRedirectURIs of a client without any", len(must[[]string](t, "ClientRedirectURIs")(e.s.ClientRedirectURIs(ctx, "web"))), 0)
	uris := []string{"https://b.example/cb", "https://a.example/cb"}
	if err := e.s.SetClientRedirectURIs(ctx, "web", uris); err != nil {
		t.Fatalf("SetClientRedirectURIs: %v", err)
	}
	check(t, "ClientRedirectURIs keep their order", must[[]string](t, "ClientRedirectURIs")(e.s.ClientRedirectURIs(ctx, "web")), uris)
	if err := e.s.SetClientRedirectURIs(ctx, "web", uris[1:]); err != nil {
		t.Fatalf("SetClientRedirectURIs: %v", err)
	}
	check(t, "SetClientRedirectURIs replaces", must[[]string](t, "ClientRedirectURIs")(e.s.ClientRedirectURIs(ctx, "web")), uris[1:])
	checkErr(t, "SetClientRedirectURIs(unknown client)", e.s.SetClientRedirectURIs(ctx, "nope", uris), posgate.ErrNotFound, `client "nope" not found`)

	// Authorization codes: the first use sees it unused, every later one used.
	c := &posgate.AuthCode{CodeHash: secret(1), FamilyID: "f1", ClientID: "web", PersonID: "p1", RedirectURI: uris[1],
		Scopes: []string{posgate.ScopeServiceAPI}, CodeChallenge: "abc", ExpiresAt: now.Add(time.Minute)}
	if err := e.s.CreateAuthCode(ctx, c); err != nil {
		t.Fatalf("CreateAuthCode: %v", err)
	}
	check(t, "FindAuthCode", must[*posgate.AuthCode](t, "FindAuthCode")(e.s.FindAuthCode(ctx, secret(1))), c)
	check(t, "FindAuthCode changes nothing", must[*posgate.AuthCode](t, "FindAuthCode")(e.s.FindAuthCode(ctx, secret(1))), c)
	check(t, "UseAuthCode (first)", must[*posgate.AuthCode](t, "UseAuthCode")(e.s.UseAuthCode(ctx, secret(1))), c)
	used := *c
	used.Used = true
	check(t, "UseAuthCode (again)", must[*posgate.AuthCode](t, "UseAuthCode")(e.s.UseAuthCode(ctx, secret(1))), &used)
	_, err := e.s.UseAuthCode(ctx, secret(2))
	check(t, "UseAuthCode(unknown) is ENOTFOUND", posgate.ErrorCode(err), posgate.ENOTFOUND)
	_, err = e.s.FindAuthCode(ctx, secret(2))
	check(t, "FindAuthCode(unknown) is ENOTFOUND", posgate.ErrorCode(err), posgate.ENOTFOUND)
	_, err = e.s.FindRefreshToken(ctx, secret(2))
	check(t, "FindRefreshToken(unknown) is ENOTFOUND", posgate.ErrorCode(err), posgate.ENOTFOUND)

	// Refresh tokens: used once, then replayed; a family revoked at once.
	r1 := &posgate.RefreshToken{TokenHash: secret(3), FamilyID: "f1", ClientID: "web", PersonID: "p1", Scopes: []string{posgate.ScopeServiceAPI}, ExpiresAt: now.Add(time.Hour)}
	r2 := &posgate.RefreshToken{TokenHash: secret(4), FamilyID: "f1", ClientID: "web", PersonID: "p1", Scopes: []string{posgate.ScopeServiceAPI}, ExpiresAt: now.Add(2 * time.Hour)}
	r3 := &posgate.RefreshToken{TokenHash: secret(5), FamilyID: "f2", ClientID: "web", PersonID: "p1", Scopes: []string{posgate.ScopeServiceAPI}, ExpiresAt: now.Add(time.Hour)}
	for _, r := range []*posgate.RefreshToken{r1, r2, r3} {
		if err := e.s.CreateRefreshToken(ctx, r); err != nil {
			t.Fatalf("CreateRefreshToken: %v", err)
		}
	}
	check(t, "FindRefreshToken changes nothing", must[*posgate.RefreshToken](t, "FindRefreshToken")(e.s.FindRefreshToken(ctx, secret(3))), r1)
	check(t, "UseRefreshToken (first)", must[*posgate.RefreshToken](t, "UseRefreshToken")(e.s.UseRefreshToken(ctx, secret(3))), r1)
	r1used := *r1
	r1used.Used = true
	check(t, "FindRefreshToken of a used one", must[*posgate.RefreshToken](t, "FindRefreshToken")(e.s.FindRefreshToken(ctx, secret(3))), &r1used)
	check(t, "UseRefreshToken (replayed)", must[*posgate.RefreshToken](t, "UseRefreshToken")(e.s.UseRefreshToken(ctx, secret(3))), &r1used)
	if err := e.s.RevokeRefreshFamily(ctx, "f1"); err != nil {
		t.Fatalf("RevokeRefreshFamily: %v", err)
	}
	r2revoked := *r2
	r2revoked.Revoked = true
	check(t, "UseRefreshToken of a revoked family", must[*posgate.RefreshToken](t, "UseRefreshToken")(e.s.UseRefreshToken(ctx, secret(4))), &r2revoked)
	check(t, "another family is untouched", must[*posgate.RefreshToken](t, "UseRefreshToken")(e.s.UseRefreshToken(ctx, secret(5))), r3)
	_, err = e.s.UseRefreshToken(ctx, secret(6))
	check(t, "UseRefreshToken(unknown) is ENOTFOUND", posgate.ErrorCode(err), posgate.ENOTFOUND)

	// The sweep removes what expired before its time, and only that: the
	// code (now+1m) and r1, r3 (now+1h), not r2 (now+2h).
	n := must[int64](t, "DeleteExpiredGrants")(e.s.DeleteExpiredGrants(ctx, now.Add(90*time.Minute)))
	check(t, "DeleteExpiredGrants count", n, int64(3))
	_, err = e.s.UseAuthCode(ctx, secret(1))
	check(t, "a swept code is gone", posgate.ErrorCode(err), posgate.ENOTFOUND)
	_, err = e.s.UseRefreshToken(ctx, secret(3))
	check(t, "a swept refresh token is gone", posgate.ErrorCode(err), posgate.ENOTFOUND)
	must[*posgate.RefreshToken](t, "UseRefreshToken of an unexpired token")(e.s.UseRefreshToken(ctx, secret(4)))
}
