package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/pgtest"
)

// pgTool finds a PostgreSQL client program in Debian's
// /usr/lib/postgresql/VERSION/bin, the newest version first (pg_dump must
// not be older than the server).
func pgTool(t *testing.T, name string) string {
	t.Helper()
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	slices.SortFunc(found, func(a, b string) int { // "17" after "9": by the version's length, then text
		va, vb := filepath.Base(filepath.Dir(filepath.Dir(a))), filepath.Base(filepath.Dir(filepath.Dir(b)))
		if len(va) != len(vb) {
			return len(va) - len(vb)
		}
		return strings.Compare(va, vb)
	})
	if len(found) == 0 {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		t.Skipf("%s not found in /usr/lib/postgresql/*/bin or PATH", name)
	}
	return found[len(found)-1]
}

// scratchDatabase creates a database of its own on the test cluster,
// dropped when t ends, and returns its DSN.
func scratchDatabase(t *testing.T, base, prefix string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := prefix + strings.ToLower(rand.Text()[:10])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// TestPgDumpRoundTrip backs a PostgreSQL store up as docs/deployment.md
// says (pg_dump in the custom format, pg_restore into a new database) and
// serves the copy: the sales, the balances and the signing keys (a token
// of the original server is accepted) came across.
func TestPgDumpRoundTrip(t *testing.T) {
	pgtest.DSN(t) // skips without POSGATE_TEST_POSTGRES_DSN
	base := os.Getenv(pgtest.EnvDSN)
	pgDump, pgRestore := pgTool(t, "pg_dump"), pgTool(t, "pg_restore")
	src := scratchDatabase(t, base, "posgate_src_")
	s := start(t, src)
	pos, admin := s.posToken(t), s.adminToken(t)
	for i := range 5 {
		recordSale(t, s, pos, fmt.Sprintf("DUMP-%d", i))
	}
	count, points := s.salesAndPoints(t, admin)

	dump := filepath.Join(t.TempDir(), "posgate.dump")
	run := func(name string, args ...string) {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
	}
	run(pgDump, "--format=custom", "--file="+dump, "--dbname="+src)
	s.stop(t)
	dst := scratchDatabase(t, base, "posgate_dst_")
	run(pgRestore, "--no-owner", "--exit-on-error", "--dbname="+dst, dump)

	// The copy is served at the original's address: its tokens name that
	// issuer.
	r := start(t, dst, func(c *app.Config) { c.Demo, c.Listen = false, s.addrs.API.String() })
	if c, p := r.salesAndPoints(t, r.adminToken(t)); c != count || p != points {
		t.Fatalf("restored: %d sales, %d points; the original had %d, %d", c, p, count, points)
	}
	for i := range 5 {
		mustStatus(t, r.admin(t, admin, "GET", fmt.Sprintf("%s/transactions/DUMP-%d", companyPath, i), ""), 200)
	}
	// The original server's POS token: the keys and the client came across.
	mustStatus(t, r.api(t, pos).start("TERM-05", "LOC123"), 200)
}
