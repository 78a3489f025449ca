package postgres

import (
	"testing"
	"testing/fstest"
)

func TestLoadMigrations(t *testing.T) {
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatalf("embedded migrations: %v", err)
	}
	if len(ms) == 0 || ms[0].name != "0001_tenancy.sql" {
		t.Errorf("embedded migrations start with %+v, want 0001_tenancy.sql", ms)
	}

	file := &fstest.MapFile{Data: []byte("SELECT 1")}
	ms, err = loadMigrations(fstest.MapFS{"migrations/0002_b.sql": file, "migrations/0001_a.sql": file, "migrations/README": file})
	if err != nil || len(ms) != 2 || ms[0].version != 1 || ms[0].name != "0001_a.sql" || ms[1].version != 2 || ms[1].name != "0002_b.sql" || ms[1].sql != "SELECT 1" {
		t.Errorf("loadMigrations = %+v, %v; want 0001_a.sql and 0002_b.sql", ms, err)
	}
	for _, bad := range []string{"migrations/0002_gap.sql", "migrations/first.sql", "migrations/0000_zero.sql"} {
		if ms, err := loadMigrations(fstest.MapFS{bad: file}); err == nil {
			t.Errorf("loadMigrations(%s) = %+v, want an error", bad, ms)
		}
	}
}
