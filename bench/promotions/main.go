// Command promotions measures the promotion import (docs/api.md §9) end to
// end: it builds posgate, runs `posgate serve` as a process of its own, and
// posts an import of 100,000 promotions (each with 2 validities, 3
// locations, 2 categories, 5 products and 1 result) over HTTP, timing each
// request from the first byte sent to the last byte of the answer and
// reading the server's peak memory (VmHWM, reset before each run) and CPU
// time from /proc. It runs the import three times: creating everything,
// re-sending the same body (every item an unchanged update), and sending
// every item changed (every item rewritten).
//
//	go run ./bench/promotions                               # SQLite
//	go run ./bench/promotions -postgres 'postgres://…'      # PostgreSQL (a schema of its own, dropped after)
//
// Linux only (/proc).
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	n := flag.Int("n", 100_000, "promotions per import")
	pgDSN := flag.String("postgres", "", "PostgreSQL URL to run against (default: a SQLite file)")
	bin := flag.String("bin", "", "posgate binary (default: build one)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the server during the first import to this file")
	flag.Parse()
	log.SetFlags(0)

	dir, err := os.MkdirTemp("", "posgate-bench-promotions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if *bin == "" {
		*bin = filepath.Join(dir, "posgate")
		if out, err := exec.Command("go", "build", "-o", *bin, "github.com/posgate/posgate/cmd/posgate").CombinedOutput(); err != nil {
			log.Fatalf("go build: %v\n%s", err, out)
		}
	}
	database, store := filepath.Join(dir, "bench.db"), "sqlite"
	dbCPU := func() time.Duration { return 0 }
	if *pgDSN != "" {
		var drop func()
		var postmaster int
		database, postmaster, drop = pgSchema(*pgDSN)
		defer drop()
		store = "postgres"
		dbCPU = func() time.Duration { return childrenCPU(postmaster) }
	}

	debug := ""
	if *cpuProfile != "" {
		debug = freeAddr()
	}
	srv := start(*bin, database, debug)
	defer srv.stop()
	admin := srv.token("demo-admin", "demo-admin-secret", "admin")
	for _, c := range [][2]string{
		{"/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"bench"}`},
		{"/admin/v1/pos-systems/clover/locations", `{"posLocationId":"STORE-1","posCompanyId":"bench"}`},
		{"/admin/v1/pos-systems/clover/locations", `{"posLocationId":"STORE-2","posCompanyId":"bench"}`},
		{"/admin/v1/pos-systems/clover/locations", `{"posLocationId":"STORE-3","posCompanyId":"bench"}`},
	} {
		srv.call("POST", c[0], admin, c[1], 201)
	}
	// A catalogue, so that the warnings check runs as it would in production.
	var cat struct {
		Categories []string `json:"categoryIds"`
		Products   []string `json:"productIds"`
	}
	for i := range 50 {
		cat.Categories = append(cat.Categories, fmt.Sprintf("CAT-%02d", i))
	}
	for i := range 2000 {
		cat.Products = append(cat.Products, fmt.Sprintf("SKU-%05d", i))
	}
	catBody, _ := json.Marshal(cat)
	srv.call("PUT", "/admin/v1/pos-systems/clover/companies/bench/catalogue", admin, string(catBody), 200)
	tok := srv.token("demo-pos", "demo-pos-secret", "pos_integration")

	first := body(*n, "")
	changed := body(*n, " (changed)")
	fmt.Printf("store %s, %d promotions, %.1f MB of JSON per import, %d CPUs\n\n", store, *n, float64(len(first))/1e6, numCPU())
	fmt.Printf("%-22s %9s %12s %11s %9s %10s  %s\n", "run", "time", "items/s", "server CPU", "db CPU", "peak RSS", "result")
	for _, run := range []struct {
		name string
		body []byte
	}{{"create", first}, {"re-send (unchanged)", first}, {"update (all changed)", changed}} {
		srv.resetPeak()
		var profiled chan error
		if *cpuProfile != "" && run.name == "create" {
			profiled = make(chan error, 1)
			go func() { profiled <- fetchProfile("http://"+debug+"/debug/pprof/profile?seconds=6", *cpuProfile) }()
			time.Sleep(100 * time.Millisecond)
		}
		cpu0, db0 := srv.cpu(), dbCPU()
		start := time.Now()
		status, answer := srv.post("/pos/clover/company/bench/import/promotions", tok, run.body)
		elapsed := time.Since(start)
		cpu, db := srv.cpu()-cpu0, dbCPU()-db0
		if profiled != nil {
			if err := <-profiled; err != nil {
				log.Printf("CPU profile: %v", err)
			}
		}
		if status != 200 {
			log.Fatalf("%s: %d %s", run.name, status, answer)
		}
		var r struct {
			Data struct {
				Status                     string
				CreatedCount, UpdatedCount int
				Errors, Warnings           []any
			}
		}
		json.Unmarshal(answer, &r)
		fmt.Printf("%-22s %8.2fs %12.0f %10.2fs %8.2fs %7.0f MB  %s, created %d, updated %d, %d errors, %d warnings\n",
			run.name, elapsed.Seconds(), float64(*n)/elapsed.Seconds(), cpu.Seconds(), db.Seconds(), float64(srv.peakRSS())/1e6,
			r.Data.Status, r.Data.CreatedCount, r.Data.UpdatedCount, len(r.Data.Errors), len(r.Data.Warnings))
	}
}

// body is an import of n promotions, each with 2 validities, 3 locations,
// 2 categories, 5 products and 1 result; suffix changes their names.
func body(n int, suffix string) []byte {
	var b bytes.Buffer
	b.Grow(n * 640)
	b.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"PROMO-%06d","name":"Promotion %d: 2 off any large coffee%s","useForAllCategories":false,"useForAllProducts":false,`+
			`"locationIds":["STORE-1","STORE-2","STORE-3"],"categoryIds":["CAT-%02d","CAT-%02d"],`+
			`"productIds":["SKU-%05d","SKU-%05d","SKU-%05d","SKU-%05d","SKU-%05d"],`+
			`"promotionValidities":[{"startDate":"2030-01-01T00:00:00Z","endDate":"2030-06-30T23:59:59Z"},`+
			`{"startDate":"2030-07-01T00:00:00Z","endDate":"2030-12-31T23:59:59Z","recurrence":{"daysOfWeek":["Saturday","Sunday"],`+
			`"startDate":"2030-07-06T08:00:00Z","endDate":"2030-07-06T20:00:00Z"}}],`+
			`"promotionResults":[{"promotionType":"Amount","value":2.5}]}`,
			i, i, suffix, i%50, (i+1)%50, i%2000, (i+1)%2000, (i+2)%2000, (i+3)%2000, (i+4)%2000)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// server is the posgate process under test.
type server struct {
	cmd  *exec.Cmd
	base string
}

var bannerRE = regexp.MustCompile(`posgate demo is serving \S+ on (\S+) `)

func start(bin, database, debug string) *server {
	args := []string{"serve", "--demo", "--listen", "127.0.0.1:0", "--database", database, "--log-level", "warn"}
	if debug != "" {
		args = append(args, "--debug-listen", debug)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := bannerRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case addr := <-found:
		return &server{cmd: cmd, base: "http://" + addr}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		log.Fatal("posgate did not start")
	}
	return nil
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	s.cmd.Wait()
}

func (s *server) token(id, secret, scope string) string {
	resp, err := http.PostForm(s.base+"/connect/token", url.Values{"grant_type": {"client_credentials"}, "scope": {scope},
		"client_id": {id}, "client_secret": {secret}})
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil {
		log.Fatal(err)
	}
	return tr.AccessToken
}

func (s *server) call(method, path, tok, body string, want int) {
	r, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+tok)
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		log.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		log.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
}

// post sends body and reads the whole answer.
func (s *server) post(path, tok string, body []byte) (int, []byte) {
	r, _ := http.NewRequestWithContext(context.Background(), "POST", s.base+path, bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+tok)
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	return resp.StatusCode, b
}

// resetPeak resets the process's peak RSS (VmHWM) to its current RSS.
func (s *server) resetPeak() {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0); err != nil {
		log.Printf("cannot reset the peak RSS (%v): it is then the peak since the start", err)
	}
}

// peakRSS is VmHWM in bytes.
func (s *server) peakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// cpu is the process's user and system CPU time so far.
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		log.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) start after ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// freeAddr returns a local address nothing listens on (for --debug-listen,
// whose address posgate does not print).
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// fetchProfile saves a CPU profile from posgate's pprof listener.
func fetchProfile(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

// pgSchema creates a schema of its own in the database at dsn and returns
// a DSN that uses it, the pid of the cluster's postmaster (whose children's
// CPU time is the database's work) and a function that drops the schema.
func pgSchema(dsn string) (string, int, func()) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		log.Fatal(err)
	}
	schema := "bench_promotions_" + strings.ToLower(rand.Text()[:8])
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		log.Fatal(err)
	}
	var ext string
	if err := conn.QueryRow(ctx, `SELECT coalesce((SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'), 'public')`).Scan(&ext); err != nil {
		log.Fatal(err)
	}
	var backend int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		log.Fatal(err)
	}
	postmaster := 0
	if f := procStat(backend); len(f) > 1 {
		postmaster, _ = strconv.Atoi(f[1])
	}
	u, err := url.Parse(dsn)
	if err != nil {
		log.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema+","+ext)
	u.RawQuery = q.Encode()
	return u.String(), postmaster, func() {
		conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`)
		conn.Close(ctx)
	}
}

// procStat returns the fields of /proc/pid/stat after the command name
// (field 3, the state, is the first); nil if the process is gone.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

// childrenCPU sums the CPU time of the processes whose parent is pid (a
// PostgreSQL cluster's backends and workers), and of those that ended.
func childrenCPU(pid int) time.Duration {
	var ticks int64
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(child); len(f) > 12 && f[1] == strconv.Itoa(pid) {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	if f := procStat(pid); len(f) > 14 { // cutime and cstime: children that ended
		u, _ := strconv.ParseInt(f[13], 10, 64)
		s, _ := strconv.ParseInt(f[14], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * time.Second / 100
}
