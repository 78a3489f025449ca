package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/posgate/posgate/internal/sqlite"
)

// floorFlag makes the bench binary serve the read floors instead of
// benchmarking: -serve-floor ADDR KIND DSN POS COMPANY. GET /f/{row}/k1/k2…
// runs the row's floor statements (floors.go) for that key tuple and
// answers their rows as JSON, through a bare net/http server like the
// baseline's; GET /readyz answers when the database is open.
const floorFlag = "-serve-floor"

// floorDB runs a floor's statements on one store and encodes their rows.
type floorDB interface {
	run(ctx context.Context, query string, args []any) ([][]any, error)
}

// sqliteFloorDB is SQLite opened as posgate's read pool is, with every
// floor statement prepared once (posgate prepares its hot reads).
type sqliteFloorDB struct {
	db    *sql.DB
	stmts map[string]*sql.Stmt
}

// stmt is the prepared statement of query.
func (f *sqliteFloorDB) stmt(query string) (*sql.Stmt, error) {
	st, ok := f.stmts[query]
	if !ok {
		return nil, fmt.Errorf("statement not prepared: %s", query)
	}
	return st, nil
}

func (f *sqliteFloorDB) run(ctx context.Context, query string, args []any) ([][]any, error) {
	st, err := f.stmt(query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// pgFloorDB is PostgreSQL through pgx's pool with its defaults, as
// posgate's; pgx prepares and caches each statement per connection.
type pgFloorDB struct{ pool *pgxpool.Pool }

func (f *pgFloorDB) run(ctx context.Context, query string, args []any) ([][]any, error) {
	rows, err := f.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// serveFloor is the floor server's process.
func serveFloor(args []string) error {
	if len(args) != 6 {
		return fmt.Errorf("usage: %s ADDR KIND DSN POS COMPANY DRIVER", floorFlag)
	}
	addr, kind, dsn, t := args[0], args[1], args[2], tenant{pos: args[3], company: args[4]}
	ctx := context.Background()
	var db floorDB
	switch kind {
	case "sqlite":
		conn, err := openFloorSQLite(ctx, args[5], sqlite.ReadDSN(dsn))
		if err != nil {
			return err
		}
		conn.SetMaxOpenConns(sqlite.ReadConns)
		conn.SetMaxIdleConns(sqlite.ReadConns)
		f := &sqliteFloorDB{db: conn, stmts: map[string]*sql.Stmt{}}
		for _, rf := range readFloors {
			for _, s := range rf.sql {
				q := sqliteParams(s.text(kind))
				if _, ok := f.stmts[q]; ok || q == "" {
					continue // prepared, or none on this store
				}
				if f.stmts[q], err = conn.PrepareContext(ctx, q); err != nil {
					return fmt.Errorf("prepare %s: %w", q, err)
				}
			}
		}
		db = f
	case "postgres":
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			return err
		}
		db = &pgFloorDB{pool: pool}
	default:
		return fmt.Errorf("unknown store %q", kind)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /f/{row}/{keys...}", func(w http.ResponseWriter, r *http.Request) {
		rf, ok := readFloors[r.PathValue("row")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		key := strings.Split(r.PathValue("keys"), "/")
		var answer [][][]any
		if rf.run != nil {
			rows, err := rf.run(r.Context(), db, t, key)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			answer = append(answer, rows)
		}
		for _, c := range floorCalls(rf, t, kind, key) {
			q := rf.sql[c.name].text(kind)
			if kind == "sqlite" {
				q = sqliteParams(q)
			}
			rows, err := db.run(r.Context(), q, c.args)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			answer = append(answer, rows)
		}
		writeBareJSON(w, answer)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {})
	return http.ListenAndServe(addr, mux)
}

// floorCalls are the statements of rf's calls for key, none when rf runs
// its own.
func floorCalls(rf readFloor, t tenant, kind string, key []string) []floorCall {
	if rf.calls == nil {
		return nil
	}
	return rf.calls(t, kind, key)
}

// floorResult is a floor measured beside a row.
type floorResult struct {
	RPS      float64
	P99      time.Duration
	CPU      time.Duration // the floor's own process, per request
	DBCPU    time.Duration // the PostgreSQL server's, per request
	Requests int64
	Errors   int64
	What     string // how the floor was built, for the notes
}

// runReadFloor measures a read row's floor: the floor server on the
// row's store, driven by wrk with the row's keys and load.
func runReadFloor(ctx context.Context, o *options, e *env, name string, keys [][]string, l load) (*floorResult, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("no keys")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p := &proc{BaseURL: "http://" + addr, cpus: o.serverCPUs}
	if err := p.start(ctx, self, []string{floorFlag, addr, e.Kind, e.DSN, e.Data.POSSystem, e.Data.Company, o.floorDriver},
		filepath.Join(o.workDir, "floor-"+e.Kind+".log"), p.BaseURL+"/readyz"); err != nil {
		return nil, fmt.Errorf("floor server: %w", err)
	}
	defer p.stop()
	path := "/f/" + name
	for i := range keys[0] {
		path += fmt.Sprintf("/$%d", i+1)
	}
	script, err := luaScript(http.MethodGet, path, "", nil, keys)
	if err != nil {
		return nil, err
	}
	if o.warmup > 0 {
		if _, err := runWrk(ctx, p.BaseURL, script, load{l.Threads, l.Connections, o.warmup}, o.workDir, name+"-floor-warmup"); err != nil {
			return nil, err
		}
	}
	cpu0, err := p.cpuTime()
	if err != nil {
		return nil, err
	}
	db0 := e.db.cpuTime()
	r, err := runWrk(ctx, p.BaseURL, script, l, o.workDir, name+"-floor")
	if err != nil {
		return nil, err
	}
	cpu1, err := p.cpuTime()
	if err != nil {
		return nil, err
	}
	f := &floorResult{RPS: r.RPS, P99: r.P99, Requests: r.Requests, Errors: r.errors(),
		CPU: perRequest(cpu1-cpu0, r.Requests), DBCPU: perRequest(max(0, e.db.cpuTime()-db0), r.Requests),
		What: "bare net/http + the row's statements (bench/floors.go)"}
	if e.Kind == "sqlite" && o.floorDriver != "sqlite" {
		f.What += ", driver " + o.floorDriver
	}
	if f.Errors > 0 {
		return f, fmt.Errorf("floor answered %d errors (see floor-%s.log)", f.Errors, e.Kind)
	}
	return f, nil
}
