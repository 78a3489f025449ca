package pgtest

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestWithSearchPath(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://user@127.0.0.1:5433/db?sslmode=disable",
			"postgres://user@127.0.0.1:5433/db?search_path=t_x%2Cpublic&sslmode=disable"},
		{"postgresql://u:p%40ss@[::1]:5432/db",
			"postgresql://u:p%40ss@[::1]:5432/db?search_path=t_x%2Cpublic"},
		{"postgres:///db?host=/tmp/pgsock",
			"postgres:///db?host=%2Ftmp%2Fpgsock&search_path=t_x%2Cpublic"},
		{"postgres:///db?host=/tmp/pgsock&search_path=other",
			"postgres:///db?host=%2Ftmp%2Fpgsock&search_path=t_x%2Cpublic"},
	} {
		got, err := withSearchPath(tc.dsn, "t_x,public")
		if err != nil || got != tc.want {
			t.Errorf("withSearchPath(%q) = %q, %v; want %q", tc.dsn, got, err, tc.want)
		}
		cfg, err := pgx.ParseConfig(got)
		if err != nil {
			t.Fatalf("pgx cannot parse %q: %v", got, err)
		}
		if sp := cfg.RuntimeParams["search_path"]; sp != "t_x,public" {
			t.Errorf("pgx reads search_path %q from %q", sp, got)
		}
	}
	for _, dsn := range []string{"host=/tmp/pgsock dbname=db", "mysql://h/db", "postgres://h/db?%zz"} {
		if got, err := withSearchPath(dsn, "t_x"); err == nil {
			t.Errorf("withSearchPath(%q) = %q, want an error", dsn, got)
		}
	}
}

func TestDSN(t *testing.T) {
	ctx := context.Background()
	var schema string
	t.Run("isolated", func(t *testing.T) {
		dsn := DSN(t)
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var searchPath string
		var tables int
		var similarity float32
		err = conn.QueryRow(ctx, `SELECT current_schema(), current_setting('search_path'),
			(SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()),
			similarity('posgate', 'posgates')`).Scan(&schema, &searchPath, &tables, &similarity)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(schema, "t_") || searchPath != schema+",public" || tables != 0 {
			t.Errorf("schema %q, search_path %q, %d tables; want t_…, \"t_…,public\", 0", schema, searchPath, tables)
		}
		if similarity != 0.7 {
			t.Errorf("similarity = %v, want 0.7", similarity)
		}
		if other := DSN(t); other == dsn {
			t.Errorf("two calls returned the same DSN %q", dsn)
		}
	})
	if schema == "" {
		t.Skip("no schema was created")
	}
	conn, err := pgx.Connect(ctx, DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left {
		t.Errorf("schema %s still exists after its test ended", schema)
	}
}
