package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/pgtest"
)

// recordSale records a sale of 3.00 for john-doe with the POS token, as a
// till does: an interaction, then its transaction.
func recordSale(t *testing.T, s *server, pos, id string) {
	t.Helper()
	in := mustInteraction(t, s.do(t, startReq(pos, "TERM-05", "LOC123")), "TERM-05", "LOC123", "Accepted")
	mustStatus(t, s.do(t, req{Method: "POST", Path: "/pos/clover/transaction", Token: pos, ContentType: "application/json",
		Body: fmt.Sprintf(`{"sessionId":%q,"transactionId":%q,"terminalId":"TERM-05","posLocationId":"LOC123","transactionType":"Sale",`+
			`"transactionAmount":3,"transactionDate":%q,"loyalty":{"cardNumber":"john-doe"}}`, *in.SessionID, id, s.clock.Now().UTC().Format(time.RFC3339))}), 200)
}

// archivingCluster is a PostgreSQL cluster of the test's own that archives
// its WAL, as docs/deployment.md §6.2 configures a primary.
type archivingCluster struct {
	t      *testing.T
	bin    string // /usr/lib/postgresql/N/bin
	dir    string
	port   int
	asRoot bool
}

func (c *archivingCluster) run(name string, args ...string) string {
	c.t.Helper()
	path := filepath.Join(c.bin, name) // a PostgreSQL program, else one of PATH
	if _, err := os.Stat(path); err != nil {
		path = name
	}
	cmd := exec.Command(path, args...)
	if c.asRoot { // initdb refuses root: the cluster runs as postgres
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", cmd.Path}, args...)...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (c *archivingCluster) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

func (c *archivingCluster) start(data string) {
	c.t.Helper()
	c.run("pg_ctl", "--pgdata="+data, "--log="+data+".log", "--wait", "--silent", "start")
	c.t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err == nil {
			c.run("pg_ctl", "--pgdata="+data, "-m", "immediate", "--wait", "--silent", "stop")
		}
	})
}

func (c *archivingCluster) sql(db, query string) string {
	c.t.Helper()
	conn, err := pgx.Connect(context.Background(), c.dsn(db))
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var out string
	if err := conn.QueryRow(context.Background(), query).Scan(&out); err != nil {
		c.t.Fatalf("%s: %v", query, err)
	}
	return out
}

// TestPointInTimeRestore follows docs/deployment.md §6.2 on a cluster of
// its own: WAL archiving, a base backup, then sales before and after a
// chosen moment; the restore to that moment, served by posgate, holds the
// sales before it with their points and none after.
func TestPointInTimeRestore(t *testing.T) {
	pgtest.DSN(t) // PostgreSQL tests run when POSGATE_TEST_POSTGRES_DSN is set
	if testing.Short() {
		t.Skip("starts and restores a PostgreSQL cluster")
	}
	c := &archivingCluster{t: t, bin: filepath.Dir(pgTool(t, "initdb")), asRoot: os.Getuid() == 0}
	dir, err := os.MkdirTemp("", "posgate-pitr-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.dir = dir
	if c.asRoot {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root without a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	data, archive := filepath.Join(dir, "data"), filepath.Join(dir, "archive")
	c.run("initdb", "--pgdata="+data, "--username=postgres", "--auth=trust", "--no-sync")
	c.run("mkdir", "-p", archive)
	conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\n"+
		"wal_level = replica\narchive_mode = on\narchive_command = 'test ! -f %s/%%f && cp %%p %s/%%f'\n", c.port, dir, archive, archive)
	appendFile(t, filepath.Join(data, "postgresql.conf"), conf)
	c.start(data)
	c.run("createdb", "--host=127.0.0.1", fmt.Sprintf("--port=%d", c.port), "--username=postgres", "posgate")

	s := start(t, c.dsn("posgate"))
	pos, admin := s.posToken(t), s.adminToken(t)
	for i := range 3 {
		recordSale(t, s, pos, fmt.Sprintf("BEFORE-BASE-%d", i))
	}
	base := filepath.Join(dir, "base")
	c.run("pg_basebackup", "--pgdata="+base, "--format=tar", "--gzip", "--wal-method=stream", "--checkpoint=fast", "--dbname="+c.dsn(""))
	for i := range 3 {
		recordSale(t, s, pos, fmt.Sprintf("BEFORE-TARGET-%d", i))
	}
	count, points := s.salesAndPoints(t, admin)
	time.Sleep(1100 * time.Millisecond)
	target := c.sql("posgate", `SELECT now()::text`)
	time.Sleep(1100 * time.Millisecond)
	for i := range 3 {
		recordSale(t, s, pos, fmt.Sprintf("AFTER-TARGET-%d", i))
	}
	// Close the WAL segment and wait for it in the archive.
	segment := c.sql("posgate", `SELECT pg_walfile_name(pg_switch_wal())`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(archive, segment)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("WAL segment %s was not archived in 30 s", segment)
		}
	}
	s.stop(t)
	c.run("pg_ctl", "--pgdata="+data, "-m", "fast", "--wait", "--silent", "stop")

	restored := filepath.Join(dir, "restored")
	c.run("mkdir", "-m", "0700", restored)
	c.run("tar", "-xzf", filepath.Join(base, "base.tar.gz"), "-C", restored)
	c.run("tar", "-xzf", filepath.Join(base, "pg_wal.tar.gz"), "-C", filepath.Join(restored, "pg_wal"))
	appendFile(t, filepath.Join(restored, "postgresql.conf"), fmt.Sprintf(
		"\nrestore_command = 'cp %s/%%f %%p'\nrecovery_target_time = '%s'\nrecovery_target_action = 'promote'\narchive_mode = off\n", archive, target))
	c.run("touch", filepath.Join(restored, "recovery.signal"))
	c.start(restored)
	for deadline := time.Now().Add(30 * time.Second); c.sql("postgres", `SELECT pg_is_in_recovery()::text`) != "false"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the restored cluster did not finish its recovery in 30 s")
		}
	}

	r := start(t, c.dsn("posgate"), func(cfg *app.Config) { cfg.Demo, cfg.Listen = false, s.addrs.API.String() })
	admin = r.adminToken(t)
	if n, p := r.salesAndPoints(t, admin); n != count || p != points {
		t.Fatalf("restored to %s: %d sales, %d points; at that moment there were %d, %d", target, n, p, count, points)
	}
	for _, id := range []string{"BEFORE-BASE-0", "BEFORE-TARGET-2", "AFTER-TARGET-0"} {
		want := 200
		if strings.HasPrefix(id, "AFTER") {
			want = 404
		}
		mustStatus(t, r.admin(t, admin, "GET", companyPath+"/transactions/"+id, ""), want)
	}
}

// appendFile appends text to a file of the cluster (its owner's file; root
// and the owner may both write it).
func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
