package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
)

// runStore benchmarks posgate on one store: cold start on a new database,
// data set, cold start on the loaded database, then every selected scenario
// against that one posgate process.
func runStore(ctx context.Context, o *options, bin, kind string, rep *report) error {
	dsn, cleanup, err := prepareStore(ctx, o, kind, rep)
	if err != nil {
		return err
	}
	defer cleanup()
	logPath := filepath.Join(o.workDir, "posgate-"+kind+".log")

	logf("%s: cold start on a new database", kind)
	p, fresh, err := coldStart(ctx, o, bin, dsn, logPath+".fresh", false)
	if err != nil {
		return err
	}
	if err := p.stop(); err != nil {
		return fmt.Errorf("stopping posgate: %w", err)
	}

	data, err := newDataset()
	if err != nil {
		return err
	}
	e := &env{Kind: kind, DSN: dsn, bin: bin, Rows: o.rows, Data: data, HTTP: &http.Client{Timeout: 30 * time.Second}, Keys: map[string][][]string{}, loaded: map[string]bool{},
		RowTime: o.warmup + o.load.Duration.Round(time.Second), Conns: o.load.Connections, Rates: map[string]float64{}}
	o.lock.release(o.nice) // held by the store measured before
	logf("%s: loading the data set (%d rows per generated table)", kind, o.rows)
	t0 := time.Now()
	if e.Store, err = openStore(ctx, dsn); err != nil {
		return err
	}
	err = data.load(ctx, e.Store)
	for _, sc := range selected(o) {
		if err == nil && sc.setup != nil && sc.runsOn(kind) {
			err = sc.setup(ctx, e)
		}
	}
	if cerr := e.Store.Close(); err == nil {
		err = cerr
	}
	e.Store = nil
	if err != nil {
		return err
	}
	logf("%s: data set loaded in %s", kind, time.Since(t0).Round(time.Millisecond))

	if err := o.lock.acquire("measure " + kind); err != nil {
		return err
	}
	if err := baselineBefore(ctx, o, rep); err != nil {
		return err
	}
	logf("%s: cold start on the loaded database", kind)
	p, loaded, err := coldStart(ctx, o, bin, dsn, logPath, o.profile)
	if err != nil {
		return err
	}
	defer p.stop()
	rep.Starts = append(rep.Starts, &startRow{Store: kind, Fresh: fresh, Loaded: loaded})
	if kind == "postgres" {
		if e.db, err = findDBServer(ctx, dsn); err != nil {
			logf("postgres: the database's CPU is not counted: %v", err)
		}
	}
	e.BaseURL = p.BaseURL
	if e.Token, err = e.token(ctx, data.ClientID, data.ClientSecret, posgate.ScopePOSIntegration); err != nil {
		return err
	}
	if e.AdminToken, err = e.token(ctx, data.AdminID, data.AdminSecret, posgate.ScopeAdmin); err != nil {
		return err
	}
	for _, sc := range selected(o) {
		if !sc.runsOn(kind) {
			logf("%s: %s runs on PostgreSQL only (%d instances share its database)", kind, sc.name, sc.instances)
			continue
		}
		logf("%s: %s", kind, sc.name)
		r := runScenario(ctx, o, p, e, sc)
		r.Scenario, r.Store, r.target = sc.name, kind, sc.target
		if sc.hugeP99 > 0 && o.rows >= hugeRows {
			r.target.maxP99 = sc.hugeP99
		}
		e.Rates[sc.name] = r.RPS
		if r.Err != nil {
			logf("%s: %s: %v", kind, sc.name, r.Err)
		} else {
			logf("%s: %s: %.0f req/s, p50 %s, p99 %s, %d errors, peak RSS %d MB %s", kind, sc.name, r.RPS,
				r.P50, r.P99, r.errors(), r.PeakRSSKB>>10, r.Note)
		}
		rep.Rows = append(rep.Rows, r)
	}
	if err := p.stop(); err != nil {
		return fmt.Errorf("stopping posgate: %w", err)
	}
	return nil
}

// selected lists the scenarios the run measures.
func selected(o *options) []*scenario {
	var out []*scenario
	for i := range scenarios {
		if len(o.only) == 0 || containsString(o.only, scenarios[i].name) {
			out = append(out, &scenarios[i])
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runScenario measures one row; errors end up in the result.
func runScenario(ctx context.Context, o *options, p *proc, e *env, sc *scenario) *result {
	fail := func(err error) *result { return &result{Err: err} }
	if sc.run != nil {
		if err := p.resetPeakRSS(); err != nil {
			return fail(err)
		}
		cpu0, err := p.cpuTime()
		if err != nil {
			return fail(err)
		}
		db0 := e.db.cpuTime()
		profErr := make(chan error, 1)
		if o.profile {
			// The import takes about two seconds: profile them.
			go func() { profErr <- p.profile(ctx, o.outDir, e.Kind+"-"+sc.name, 2) }()
		} else {
			profErr <- nil
		}
		r, err := sc.run(ctx, e)
		if perr := <-profErr; err == nil && perr != nil {
			err = fmt.Errorf("profile: %w", perr)
		}
		if err != nil {
			return fail(err)
		}
		if cpu1, err := p.cpuTime(); err == nil {
			r.CPUPerReq = perRequest(cpu1-cpu0, r.Requests)
			r.DBCPUPerReq = perRequest(max(0, e.db.cpuTime()-db0), r.Requests)
		}
		r.PeakRSSKB, _ = p.peakRSSKB()
		measureFloor(ctx, o, e, sc, r, nil, o.load)
		return r
	}
	l := o.load
	if sc.connections > 0 {
		l.Connections = sc.connections
	}
	procs := []*proc{p}
	if sc.instances > 1 {
		more, err := startInstances(ctx, o, e, sc.instances-1)
		if err != nil {
			return fail(err)
		}
		defer stopAll(more)
		procs = append(procs, more...)
	}
	e.instances = procs
	defer func() { e.instances = nil }()
	// Each instance gets a wrk process of its own (fleet.go); threads is
	// the threads of all of them.
	lp := splitLoad(l, len(procs))
	threads := lp.Threads * len(procs)
	var keys [][]string
	if sc.keys != nil {
		if keys = sc.keys(e); len(keys) == 0 {
			return fail(fmt.Errorf("the data set holds no keys for %s", sc.name))
		}
	}
	// {now} in the body is the time the row starts (a sale's date).
	scCopy := *sc
	sc = &scCopy
	sc.body = strings.ReplaceAll(sc.body, "{now}", time.Now().UTC().Format(time.RFC3339))
	path := strings.ReplaceAll(sc.path, "{pos}", e.Data.POSSystem)
	// script renders the wrk script; a sequence row's starts at index next,
	// the first its probe, warm-up and measurement have not used yet.
	var seq *sequence
	next := 0
	script := func(part int) (string, error) {
		if seq != nil {
			return seqScriptPart(sc.method, path, sc.body, headersFor(sc, e), seq, next, threads, part*lp.Threads)
		}
		return luaScript(sc.method, path, sc.body, headersFor(sc, e), keys)
	}
	// used moves next past the indices a run of a sequence script used.
	used := func(r *result) (err error) {
		if seq != nil {
			next, err = seq.advance(next, threads, r)
		}
		return err
	}
	pick := func(int) []string {
		if len(keys) == 0 {
			return nil
		}
		return keys[randInt(len(keys))]
	}
	probes := min(probeRequests, max(1, len(keys)))
	if sc.seq != nil {
		var err error
		if seq, err = sc.seq(e); err != nil {
			return fail(err)
		}
		pick = func(j int) []string { return seq.key(next + j) }
		probes = probeRequests
	}
	if _, err := script(0); err != nil {
		return fail(err)
	}
	if sc.verify != nil {
		if err := probe(ctx, e, sc, path, probes, pick); err != nil {
			return fail(err)
		}
		if seq != nil {
			next += probes
		}
	}
	if o.warmup > 0 {
		w, err := runWrkAll(ctx, procs, script, load{lp.Threads, lp.Connections, o.warmup}, o.workDir, sc.name+"-warmup")
		if err == nil {
			err = used(w)
		}
		if err != nil {
			return fail(err)
		}
	}
	var state any
	if sc.before != nil {
		var err error
		if state, err = sc.before(ctx, e); err != nil {
			return fail(err)
		}
	}
	for _, p := range procs {
		if err := p.resetPeakRSS(); err != nil {
			return fail(err)
		}
	}
	profErr := make(chan error, 1)
	if o.profile {
		// Profile the middle of the load: start a moment after wrk, stop
		// before it does.
		secs := int(l.Duration/time.Second) - 2
		go func() {
			time.Sleep(time.Second)
			profErr <- p.profile(ctx, o.outDir, e.Kind+"-"+sc.name, secs)
		}()
	} else {
		profErr <- nil
	}
	m0, err := p.scrapeRowMetrics(ctx)
	if err != nil {
		return fail(err)
	}
	cpu0, err := cpuTimeAll(procs)
	if err != nil {
		return fail(err)
	}
	db0 := e.db.cpuTime()
	wall0 := time.Now()
	r, err := runWrkAll(ctx, procs, script, lp, o.workDir, sc.name)
	if err == nil {
		err = used(r)
	}
	if err == nil {
		var m1 rowMetrics
		if m1, err = p.scrapeRowMetrics(ctx); err == nil {
			r.Handler = m1.hist.since(m0.hist).describe()
			r.Writers = describeWritersBusy(m0.writers, m1.writers, time.Since(wall0))
		}
	}
	if err == nil {
		var cpu1 time.Duration
		if cpu1, err = cpuTimeAll(procs); err == nil {
			r.CPUPerReq = perRequest(cpu1-cpu0, r.Requests)
			r.DBCPUPerReq = perRequest(max(0, e.db.cpuTime()-db0), r.Requests)
		}
	}
	if perr := <-profErr; err == nil && perr != nil {
		err = fmt.Errorf("profile: %w", perr)
	}
	if err != nil {
		return fail(err)
	}
	for _, p := range procs {
		rss, err := p.peakRSSKB()
		if err != nil {
			return fail(err)
		}
		r.PeakRSSKB = max(r.PeakRSSKB, rss)
	}
	if seq != nil {
		r.SeqNext, r.SeqSize = next, seq.Size
		logf("%s: %s: %d distinct requests built in the measurement, %d of %d indices used by the row", e.Kind, sc.name, r.Issued, next, seq.Size)
	}
	if sc.check != nil {
		note, err := sc.check(ctx, e, r, state)
		if err != nil {
			r.Failed = append(r.Failed, err.Error())
		}
		r.Note = note
	}
	measureFloor(ctx, o, e, sc, r, keys, l)
	return r
}

// measureFloor measures the row's floor, if it has one, right after it.
func measureFloor(ctx context.Context, o *options, e *env, sc *scenario, r *result, keys [][]string, l load) {
	_, read := readFloors[sc.name]
	if !read && sc.name != "transaction" && sc.name != "transactionBatch" {
		return
	}
	logf("%s: %s: floor", e.Kind, sc.name)
	if read {
		r.Floor, r.FloorErr = runReadFloor(ctx, o, e, sc.name, keys, l)
	} else {
		r.Floor, r.FloorErr = runSaleFloor(ctx, o, e, sc.name, l.Connections)
	}
	if r.FloorErr != nil {
		logf("%s: %s: floor: %v", e.Kind, sc.name, r.FloorErr)
	} else {
		logf("%s: %s: floor %.0f/s, p99 %s, CPU %s + database %s per request", e.Kind, sc.name, r.Floor.RPS, fmtDur(r.Floor.P99),
			fmtDur(r.Floor.CPU), fmtDur(r.Floor.DBCPU))
	}
}

// prepareStore returns the DSN posgate runs on: a new SQLite file in the
// work directory, or a new schema of the given PostgreSQL database (dropped
// by cleanup unless -keep).
func prepareStore(ctx context.Context, o *options, kind string, rep *report) (dsn string, cleanup func(), err error) {
	if kind == "sqlite" {
		return filepath.Join(o.workDir, "bench.db"), func() {}, nil
	}
	conn, err := pgx.Connect(ctx, o.postgres)
	if err != nil {
		return "", nil, fmt.Errorf("connect to -postgres: %w", err)
	}
	defer conn.Close(ctx)
	// The coupon and loyalty searches use trigram indexes; the extension is
	// per database, so it goes into public once.
	var extSchema string
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`); err != nil {
		return "", nil, fmt.Errorf("install pg_trgm: %w", err)
	}
	if err := conn.QueryRow(ctx, `SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'`).Scan(&extSchema); err != nil {
		return "", nil, fmt.Errorf("find pg_trgm: %w", err)
	}
	// Durability settings change what a commit costs, and the buffer cache
	// what a search over a million rows reads from the kernel: the report
	// names them.
	var version, fsync, syncCommit, buffers string
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit'), current_setting('shared_buffers')`).
		Scan(&version, &fsync, &syncCommit, &buffers); err != nil {
		return "", nil, fmt.Errorf("read PostgreSQL settings: %w", err)
	}
	rep.PostgresSettings = fmt.Sprintf("PostgreSQL %s, fsync=%s, synchronous_commit=%s, shared_buffers=%s", version, fsync, syncCommit, buffers)
	if o.serverCPUs != "" {
		if o.pinnedPostgres, err = pinPostgres(ctx, o.postgres, o.serverCPUs); err != nil {
			return "", nil, err
		}
	}
	schema := "bench_" + strings.ToLower(rand.Text()[:12])
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	u, err := url.Parse(o.postgres)
	if err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema+","+extSchema)
	u.RawQuery = q.Encode()
	cleanup = func() {
		if o.keep {
			logf("kept PostgreSQL schema %s", schema)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, o.postgres)
		if err != nil {
			logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			logf("drop schema %s: %v", schema, err)
		}
	}
	return u.String(), cleanup, nil
}
