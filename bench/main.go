// Command bench is posgate's benchmark suite: one command that builds
// posgate, generates its data set, starts it on SQLite (and on PostgreSQL
// when a DSN is given), drives every endpoint with wrk on loopback with
// fixed settings beside a bare net/http baseline measured in the same run,
// measures right after each row its floor (the same work done bare:
// floors.go, salefloor.go), checks each row's target (scenarios.go) and
// writes docs/performance.md (and, with -json, the rows as JSON).
//
//	go run ./bench                                  # 2 threads, 64 connections, 10 s per row
//	go run ./bench -duration 2s -warmup 0 -doc ''   # a smoke run that writes no doc
//	go run ./bench -postgres 'postgres://…'         # SQLite and PostgreSQL
//	go run ./bench -profile                         # CPU and allocation profiles per row, in bench/out
//
// Scenarios (the rows) are listed in scenarios.go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	load     load
	warmup   time.Duration
	rows     int
	postgres string
	stores   []string
	only     []string
	profile  bool
	outDir   string
	doc      string
	jsonPath string
	// floorDriver is the database/sql driver of the SQLite floors.
	floorDriver string
	keep        bool
	serveArgs   []string
	workDir     string
	root        string
	commandLine string
	// lock is the -lock file, held only while the run measures; nice is
	// the priority the run started with, restored while it loads.
	lock *benchLock
	nice int
	// pin is -pin; serverCPUs and loadCPUs are its split (pinSelf), ""
	// without it.
	pin                  bool
	serverCPUs, loadCPUs string
	// pinnedPostgres says where -pin put the PostgreSQL server.
	pinnedPostgres string
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == baselineFlag {
		if err := serveBaseline(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "baseline:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 8 && os.Args[1] == floorFlag {
		if err := serveFloor(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 9 && os.Args[1] == saleFloorFlag {
		if err := runSaleFloorProgram(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "sale floor:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// otherConnections lists, in order, the connection counts of the selected
// scenarios that differ from the run's own.
func otherConnections(o *options) []int {
	var out []int
	for _, sc := range scenarios {
		if len(o.only) > 0 && !containsString(o.only, sc.name) {
			continue
		}
		if sc.connections > 0 && sc.connections != o.load.Connections && !slices.Contains(out, sc.connections) {
			out = append(out, sc.connections)
		}
	}
	return out
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&o.load.Threads, "threads", 2, "wrk threads")
	fs.IntVar(&o.load.Connections, "connections", 64, "wrk connections (a scenario may set its own)")
	fs.DurationVar(&o.load.Duration, "duration", 10*time.Second, "load per row (whole seconds)")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before each row (0: none)")
	fs.IntVar(&o.rows, "rows", 100_000, "rows of the generated data sets (coupons, loyalty users)")
	large := fs.Bool("large", false, "generate 1,000,000 rows (same as -rows 1000000)")
	fs.StringVar(&o.postgres, "postgres", "",
		"PostgreSQL URL to benchmark too (default $POSGATE_BENCH_POSTGRES_DSN); the run uses a schema of its own and drops it")
	stores := fs.String("stores", "sqlite,postgres", "stores to run, of sqlite and postgres (postgres only with -postgres)")
	only := fs.String("only", "", "comma-separated scenario names to run (default all)")
	fs.BoolVar(&o.profile, "profile", false, "capture CPU and allocation profiles of every row from posgate's private pprof listener")
	fs.StringVar(&o.outDir, "out", "bench/out", "directory for the profiles of -profile")
	fs.StringVar(&o.doc, "doc", "docs/performance.md", "markdown file to write the results into ('' for none)")
	fs.StringVar(&o.jsonPath, "json", "", "also write the rows as a JSON array to this file (row, store, rps, p99Millis, cpuMicrosPerRequest, dbCpuMicrosPerRequest, floorRps, ratioToFloor…)")
	fs.StringVar(&o.floorDriver, "floor-driver", "sqlite", "database/sql driver of the SQLite floors: sqlite (modernc, posgate's), or another registered in the bench binary (docs/decisions.md, \"SQLite driver\", says how the C driver was measured)")
	serveArgs := fs.String("serve-args", "", "extra flags for posgate serve, space-separated (e.g. '--cache-ttl 0' to compare)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory (databases, wrk scripts, posgate logs)")
	fs.BoolVar(&o.pin, "pin", false, "run posgate, the baseline and a PostgreSQL server on this machine on the first half of the CPUs, wrk and the bench on the rest (taskset), so that the load generator does not share the server's cores")
	lock := fs.String("lock", "", "benchmark lock file to hold only while measuring, not while loading (start the run with nice; e.g. /tmp/posgate-bench.lock)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.postgres == "" {
		o.postgres = os.Getenv("POSGATE_BENCH_POSTGRES_DSN")
	}
	o.serveArgs = strings.Fields(*serveArgs)
	o.lock = &benchLock{path: *lock}
	if nice, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err == nil {
		o.nice = 20 - nice // the raw system call returns 20 - nice
	}
	if *large {
		o.rows = 1_000_000
	}
	for _, s := range strings.Split(*stores, ",") {
		switch s = strings.TrimSpace(s); s {
		case "sqlite":
			o.stores = append(o.stores, s)
		case "postgres":
			if o.postgres != "" {
				o.stores = append(o.stores, s)
			}
		default:
			return nil, fmt.Errorf("-stores: unknown store %q", s)
		}
	}
	if *only != "" {
		for _, name := range strings.Split(*only, ",") {
			if !slices.ContainsFunc(scenarios, func(s scenario) bool { return s.name == name }) {
				return nil, fmt.Errorf("-only: unknown scenario %q", name)
			}
			o.only = append(o.only, name)
		}
	}
	if o.load.Threads < 1 || o.load.Connections < o.load.Threads || o.load.Duration < time.Second {
		return nil, errors.New("need -threads ≥ 1, -connections ≥ -threads and -duration ≥ 1s")
	}
	o.commandLine = commandLine(args)
	return o, nil
}

// commandLine renders the command for the report, shell-quoted, with the
// PostgreSQL URL (which may hold a password) replaced by the variable that
// can carry it.
func commandLine(args []string) string {
	out := []string{"go", "run", "./bench"}
	hide := false
	for _, a := range args {
		switch {
		case hide:
			a, hide = "$POSGATE_BENCH_POSTGRES_DSN", false
			out = append(out, `"`+a+`"`)
			continue
		case a == "-postgres" || a == "--postgres":
			hide = true
		case strings.HasPrefix(a, "-postgres=") || strings.HasPrefix(a, "--postgres="):
			name, _, _ := strings.Cut(a, "=")
			out = append(out, name+`="$POSGATE_BENCH_POSTGRES_DSN"`)
			continue
		}
		out = append(out, shellQuote(a))
	}
	return strings.Join(out, " ")
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if o.pin {
		if err := pinSelf(o, args); err != nil {
			return err
		}
	}
	if o.root, err = moduleRoot(); err != nil {
		return err
	}
	if err := ensureWrk(ctx); err != nil {
		return err
	}
	if o.workDir, err = os.MkdirTemp("", "posgate-bench-*"); err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "work directory:", o.workDir)
	} else {
		defer os.RemoveAll(o.workDir)
	}
	if o.profile {
		if !filepath.IsAbs(o.outDir) {
			o.outDir = filepath.Join(o.root, o.outDir)
		}
		if err := os.MkdirAll(o.outDir, 0o755); err != nil {
			return err
		}
	}
	m := describeMachine(ctx)
	fmt.Fprintf(os.Stderr, "machine: %s\n", m.summary())
	bin, err := buildPosgate(ctx, o.root, o.workDir)
	if err != nil {
		return err
	}

	rep := &report{Machine: m, Options: o, Started: time.Now().UTC()}
	defer o.lock.release(o.nice)
	for _, kind := range o.stores {
		if err := runStore(ctx, o, bin, kind, rep); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	if err := o.lock.acquire("baseline"); err != nil {
		return err
	}
	if err := baselineBefore(ctx, o, rep); err != nil {
		return err
	}
	logf("baseline (after)")
	b2, err := runBaseline(ctx, o, o.load.Connections)
	if err != nil {
		return err
	}
	rep.Baselines = append(rep.Baselines, b2)
	// Rows with a connection count of their own (the searches) get a
	// baseline at that count too: the latency a server that does nothing
	// shows there is the floor of their p99.
	for _, conns := range otherConnections(o) {
		logf("baseline at %d connections", conns)
		b, err := runBaseline(ctx, o, conns)
		if err != nil {
			return err
		}
		rep.ExtraBaselines = append(rep.ExtraBaselines, b)
	}
	if len(o.only) == 0 || containsString(o.only, "overload") {
		logf("baseline at %d connections", overloadConnections+overloadProbes)
		b, err := runOverloadBaseline(ctx, o)
		if err != nil {
			return err
		}
		rep.ExtraBaselines = append(rep.ExtraBaselines, b)
	}
	rep.finish()

	md := rep.markdown()
	fmt.Println(md)
	if o.doc != "" {
		path := o.doc
		if !filepath.IsAbs(path) {
			path = filepath.Join(o.root, path)
		}
		if err := writeDoc(path, md); err != nil {
			return err
		}
		logf("wrote %s", path)
	}
	if o.jsonPath != "" {
		if err := rep.writeJSON(o.jsonPath); err != nil {
			return err
		}
		logf("wrote %s", o.jsonPath)
	}
	if n := rep.failures(); n > 0 {
		logf("%d row(s) missed a target or failed a check", n)
	}
	return nil
}

// baselineBefore measures the baseline before the first store's rows, once
// (after that store's data set is loaded, so that with -lock the loading
// runs outside the lock).
func baselineBefore(ctx context.Context, o *options, rep *report) error {
	if len(rep.Baselines) > 0 {
		return nil
	}
	logf("baseline (before)")
	b, err := runBaseline(ctx, o, o.load.Connections)
	if err != nil {
		return err
	}
	rep.Baselines = append(rep.Baselines, b)
	return nil
}

// moduleRoot is the directory of posgate's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run the benchmark inside posgate's module (go run ./bench from the repository root)")
	}
	return filepath.Dir(mod), nil
}

// ensureWrk installs wrk from Debian's packages when it is missing.
func ensureWrk(ctx context.Context) error {
	if _, err := exec.LookPath("wrk"); err == nil {
		return nil
	}
	logf("wrk is missing: installing it with apt-get")
	var prefix []string
	if os.Geteuid() != 0 {
		prefix = []string{"sudo"}
	}
	for _, args := range [][]string{{"apt-get", "update"}, {"apt-get", "install", "-y", "wrk"}} {
		cmd := exec.CommandContext(ctx, append(prefix, args...)[0], append(prefix, args...)[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("installing wrk (%s): %w", strings.Join(args, " "), err)
		}
	}
	_, err := exec.LookPath("wrk")
	return err
}

// logf prints progress on stderr; the table goes to stdout.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
