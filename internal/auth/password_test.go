package auth

import (
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=2$") {
		t.Fatalf("hash %q is not an argon2id PHC string with the documented parameters", h)
	}
	h2, _ := HashPassword("correct horse battery")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for pw, want := range map[string]bool{"correct horse battery": true, "correct horse batterY": false, "": false} {
		if ok, err := PasswordMatches(h, pw); err != nil || ok != want {
			t.Errorf("PasswordMatches(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
	if _, err := HashPassword("short"); err == nil {
		t.Error("HashPassword accepted a 5-character password")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=1,t=1,p=1$AAAA$AAAA", "$argon2id$v=19$m=x$AAAA$AAAA", "$argon2id$v=19$m=1,t=1,p=1$!!$AAAA"} {
		if _, err := PasswordMatches(bad, "whatever"); err == nil {
			t.Errorf("PasswordMatches(%q) accepted a malformed hash", bad)
		}
	}
}

// The dummy hash that unknown e-mail addresses are checked against costs
// what a real one costs: it has HashPassword's parameters, and its
// password is unknown (a likely guess does not match it).
func TestDummyPasswordHashHasTheCurrentParameters(t *testing.T) {
	real, err := HashPassword("a password of someone")
	if err != nil {
		t.Fatal(err)
	}
	params := func(h string) string { return strings.Join(strings.Split(h, "$")[1:4], "$") }
	if got, want := params(dummyPasswordHash), params(real); got != want {
		t.Errorf("dummy hash parameters %s, HashPassword's %s: regenerate dummyPasswordHash", got, want)
	}
	for _, guess := range []string{"", "password", "posgate-dummy-password-"} {
		if ok, err := PasswordMatches(dummyPasswordHash, guess); ok || err != nil {
			t.Errorf("guess %q: match %v, error %v", guess, ok, err)
		}
	}
}
