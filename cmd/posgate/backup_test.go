package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupAndRestoreCommands: backup copies a SQLite store to a new file
// and refuses to overwrite one; restore refuses an existing database
// without --force and a file that is not a backup; both refuse PostgreSQL.
// (internal/e2e's TestBackupUnderLoad takes a backup under sales.)
func TestBackupAndRestoreCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	mustCLI(t, nil, "demo", "load", "--database", db)
	backup := filepath.Join(dir, "backup.db")
	out := mustCLI(t, nil, "backup", "--database", db, "--to", backup)
	if !strings.HasPrefix(out, "backed "+db+" up to "+backup+" (") {
		t.Fatalf("backup: %s", out)
	}
	if _, err := runCLI(t, nil, "backup", "--database", db, "--to", backup); err == nil || !strings.Contains(describe(err), backup+" already exists; name a new file") {
		t.Fatalf("backup onto an existing file: %v", err)
	}
	if _, err := runCLI(t, nil, "restore", "--from", backup, "--database", db); err == nil || !strings.Contains(describe(err), "exists; stop every posgate that uses it, then restore with --force") {
		t.Fatalf("restore over a database without --force: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte("not a database"), 0o600)
	if _, err := runCLI(t, nil, "restore", "--from", junk, "--database", filepath.Join(dir, "new.db")); err == nil || !strings.Contains(describe(err), "is not a usable backup") {
		t.Fatalf("restore of a junk file: %v", err)
	}
	// Restored, the store answers as the original did.
	restored := filepath.Join(dir, "restored.db")
	if out := mustCLI(t, nil, "restore", "--from", backup, "--database", restored, "--output", "json"); !strings.Contains(out, `"file": "`+restored+`"`) {
		t.Fatalf("restore: %s", out)
	}
	mustCLI(t, nil, "restore", "--from", backup, "--database", restored, "--force")
	if out := mustCLI(t, nil, "client", "bootstrap", "--id", "ops", "--database", restored); !strings.Contains(out, "client_id:     ops") {
		t.Fatalf("the restored store: %s", out)
	}
	for _, args := range [][]string{
		{"backup", "--database", "postgres://posgate@db.internal/posgate", "--to", filepath.Join(dir, "pg.db")},
		{"restore", "--from", backup, "--database", "postgres://posgate@db.internal/posgate"},
	} {
		if _, err := runCLI(t, nil, args...); err == nil || !strings.Contains(describe(err), "back PostgreSQL up with its own tools") {
			t.Fatalf("%s on PostgreSQL: %v", args[0], err)
		}
	}
}
