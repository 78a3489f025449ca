package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/auth"
)

// TestKeysRotateKEK: keys rotate-kek seals a plain store's keys, does
// nothing the second time, moves them to a new KEK given the previous one
// (here from the environment), and refuses a KEK that did not seal them.
func TestKeysRotateKEK(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "keys.db")
	st, err := app.OpenStore(context.Background(), db, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := auth.Rotate(context.Background(), st, nil, time.Now().Add(time.Duration(i)*time.Second), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	newKEK := func(name string) (file, text string) {
		k := make([]byte, 32)
		rand.Read(k)
		text = base64.StdEncoding.EncodeToString(k)
		file = filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(text+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return file, text
	}
	old, oldText := newKEK("old.kek")
	next, _ := newKEK("new.kek")

	out := mustCLI(t, nil, "keys", "rotate-kek", "--database", db, "--key-encryption-key-file", old)
	if !strings.HasPrefix(out, "2 of 2 signing keys sealed again") {
		t.Fatalf("first run: %s", out)
	}
	if out := mustCLI(t, nil, "keys", "rotate-kek", "--database", db, "--key-encryption-key-file", old); !strings.HasPrefix(out, "0 of 2 signing keys sealed again") {
		t.Fatalf("second run: %s", out)
	}
	out = mustCLI(t, map[string]string{previousKEKEnv: oldText}, "keys", "rotate-kek", "--database", db, "--key-encryption-key-file", next, "--output", "json")
	if !strings.Contains(out, `"sealed": 2`) {
		t.Fatalf("rotation to the new KEK: %s", out)
	}
	_, err = runCLI(t, nil, "keys", "rotate-kek", "--database", db, "--key-encryption-key-file", old)
	if err == nil || !strings.Contains(describe(err), "it is encrypted with a key-encryption key this process was not given") {
		t.Fatalf("the retired KEK: %v", err)
	}
	_, err = runCLI(t, map[string]string{kekEnv: oldText}, "keys", "rotate-kek", "--database", db, "--key-encryption-key-file", next)
	if err == nil || !strings.Contains(describe(err), "give the key-encryption key once") {
		t.Fatalf("a KEK in a file and in the environment: %v", err)
	}
	_, err = runCLI(t, nil, "keys", "rotate-kek", "--database", db)
	if err == nil || !strings.Contains(describe(err), "keys rotate-kek needs the key-encryption key") {
		t.Fatalf("no KEK: %v", err)
	}
}
