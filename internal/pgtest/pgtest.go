// Package pgtest gives each PostgreSQL test a schema of its own in the
// database named by POSGATE_TEST_POSTGRES_DSN, so that tests of any package
// can run in parallel against one database and leave nothing behind.
// .ci/pg-start starts a suitable throw-away cluster.
package pgtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the variable holding the base DSN, a postgres:// or
// postgresql:// URL; without it PostgreSQL tests are skipped.
const EnvDSN = "POSGATE_TEST_POSTGRES_DSN"

// extensionLock is the advisory lock key that serialises CREATE EXTENSION
// between test processes: concurrent creations of one extension collide.
const extensionLock = 0x70677465 // "pgte"

// DSN returns a DSN for a fresh, empty schema t_<random> that is dropped
// with everything in it when t ends; the schema is first in the DSN's
// search_path, followed by the schema of the pg_trgm extension, which DSN
// installs in public when the database lacks it. Without
// POSGATE_TEST_POSTGRES_DSN it skips t.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDSN)
	if base == "" {
		t.Skip(EnvDSN + " not set: PostgreSQL tests skipped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", EnvDSN, err)
	}
	defer conn.Close(ctx)

	var extSchema string
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, extensionLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT e.extnamespace::regnamespace::text FROM pg_extension e WHERE e.extname = 'pg_trgm'`).Scan(&extSchema)
	})
	if err != nil {
		t.Fatalf("pgtest: install pg_trgm: %v", err)
	}

	schema := "t_" + strings.ToLower(rand.Text())
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() { dropSchema(t, base, schema) })

	dsn, err := withSearchPath(base, schema+","+extSchema)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dsn
}

// dropSchema connects anew: DSN's connection is gone by the time t ends.
func dropSchema(t testing.TB, base, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Errorf("pgtest: drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
		t.Errorf("pgtest: drop schema %s: %v", schema, err)
	}
}

// withSearchPath returns the URL dsn with its search_path runtime parameter
// set to path, keeping every other part (host, socket directory, options).
func withSearchPath(dsn, path string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("%s must be a postgres:// or postgresql:// URL", EnvDSN)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", fmt.Errorf("%s: bad query: %w", EnvDSN, err)
	}
	q.Set("search_path", path)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
