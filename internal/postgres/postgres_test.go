package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/postgres"
	"github.com/posgate/posgate/internal/storetest"
)

// migrations is the number of files in migrations/; TestReopenKeepsMigrations
// lists them.
const migrations = 2

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) posgate.Store {
		return open(t, pgtest.DSN(t), postgres.Options{Now: now})
	})
}

func open(t *testing.T, dsn string, opts postgres.Options) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// query runs sql on a connection of its own and returns the first column.
func query[T any](t *testing.T, dsn, sql string) []T {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		t.Fatal(err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowTo[T])
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// applied returns the recorded migrations as "version name applied_at".
func applied(t *testing.T, dsn string) []string {
	return query[string](t, dsn, `SELECT version || ' ' || name || ' ' || to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')
		FROM schema_migrations ORDER BY version`)
}

func TestReopenKeepsMigrations(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	first := time.Date(2025, 3, 1, 10, 0, 0, 123456789, time.UTC)
	db := open(t, dsn, postgres.Options{Now: func() time.Time { return first }})
	if err := db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover", Name: "Clover"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	want := []string{"1 0001_tenancy.sql 2025-03-01T10:00:00.123456", "2 0002_promotions.sql 2025-03-01T10:00:00.123456"}
	if got := applied(t, dsn); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("after first Open: applied %q, want %q", got, want)
	}

	db = open(t, dsn, postgres.Options{Now: func() time.Time { return first.Add(time.Hour) }})
	if got := applied(t, dsn); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("after reopening: applied %q, want %q", got, want)
	}
	if v, err := db.SchemaVersion(ctx); v != migrations || err != nil {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, migrations)
	}
	p, err := db.FindPOSSystem(ctx, "clover")
	if err != nil || p.Name != "Clover" || !p.CreatedAt.Equal(posgate.Timestamp(first)) || p.CreatedAt.Location() != time.UTC {
		t.Errorf("FindPOSSystem after reopening = %+v, %v", p, err)
	}
}

func TestNoMigrate(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db, err := postgres.Open(ctx, dsn, postgres.Options{NoMigrate: true})
	if err == nil {
		db.Close()
		t.Fatal("NoMigrate Open of an empty schema succeeded")
	}
	if want := fmt.Sprintf("database schema is at version 0, this posgate needs version %d: run `posgate migrate`", migrations); !strings.Contains(err.Error(), want) {
		t.Errorf("NoMigrate Open of an empty schema: %v; want it to say %q", err, want)
	}
	if got := query[string](t, dsn, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`); len(got) != 0 {
		t.Errorf("NoMigrate Open created tables %q", got)
	}

	open(t, dsn, postgres.Options{}).Close()
	db = open(t, dsn, postgres.Options{NoMigrate: true})
	if v, err := db.SchemaVersion(ctx); v != migrations || err != nil {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, migrations)
	}
}

func TestConcurrentOpens(t *testing.T) {
	dsn := pgtest.DSN(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	if got := applied(t, dsn); len(got) != migrations {
		t.Errorf("applied %q, want %d migrations", got, migrations)
	}
}

// TestSchemaIsolation checks that Open migrates the connection's current
// schema even when a later schema of the search_path holds another
// posgate's tables (e.g. one installed in public).
func TestSchemaIsolation(t *testing.T) {
	ctx := context.Background()
	other := pgtest.DSN(t)
	if err := open(t, other, postgres.Options{}).CreatePOSSystem(ctx, &posgate.POSSystem{ID: "other"}); err != nil {
		t.Fatal(err)
	}
	u := parseURL(t, pgtest.DSN(t))
	q := u.Query()
	own, _, _ := strings.Cut(q.Get("search_path"), ",")
	q.Set("search_path", own+","+parseURL(t, other).Query().Get("search_path"))
	u.RawQuery = q.Encode()

	db := open(t, u.String(), postgres.Options{})
	if v, err := db.SchemaVersion(ctx); v != migrations || err != nil {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, migrations)
	}
	if list, err := db.ListPOSSystems(ctx); len(list) != 0 || err != nil {
		t.Errorf("ListPOSSystems = %v, %v; want none: the other schema's tables leaked in", list, err)
	}
}

func parseURL(t *testing.T, dsn string) *url.URL {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
