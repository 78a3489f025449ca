package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/posgate/posgate/internal/sqlite"
)

// The sale's floor: the statements a sale needs, in the leanest correct
// shape, run by a bare program in the same run as the row.
//
//   - SQLite: this binary run with saleFloorFlag, on posgate's database
//     file with posgate's driver and write pool parameters, its clients
//     handing sales to one writer that commits up to maxSaleGroup of them
//     together (posgate's grouping), each in a savepoint: the coupon
//     redeemed by an UPDATE … RETURNING whose WHERE holds the
//     redeemability (Issued, unexpired, owned by the customer, usable at the location), the
//     balance added by an UPDATE … RETURNING, the transactions row
//     inserted whole with its answer by an INSERT … ON CONFLICT DO NOTHING
//     (a taken key rolls the savepoint back), the coupon linked to it.
//   - PostgreSQL: pgbench, with as many clients as posgate has database
//     connections, running the sale as one statement (a CTE: the coupon's
//     and the balance's UPDATE … RETURNING, the row inserted whole, the
//     link), each its own transaction.
//
// Its sales are reserved for it in the plan (txPlan): coupons and sessions
// that no posgate row uses.

// saleFloorFlag runs the SQLite sale floor:
// -sale-floor DRIVER DSN POS COMPANY KEYS CLIENTS GROUP, KEYS a file of
// location,terminal,user,code lines; it prints a saleFloorOut as JSON.
const saleFloorFlag = "-sale-floor"

// saleFloorOut is what the floor program measured.
type saleFloorOut struct {
	Sales   int64
	Seconds float64
	CPU     time.Duration // the program's own (user + system)
	P99     time.Duration
	Failed  int64
}

// floorSale is one sale of the floor.
type floorSale struct {
	i                     int
	loc, term, user, code string
	done                  chan error
}

// floorAnswer is the answer a floor sale stores, shaped as posgate's.
type floorAnswer struct {
	ID        string          `json:"id"`
	PosStatus string          `json:"posStatus"`
	Receipt   json.RawMessage `json:"receipt"`
	Loyalty   struct {
		UserID       string `json:"userId"`
		PointsEarned int32  `json:"pointsEarned"`
		StampsEarned int32  `json:"stampsEarned"`
		Points       int32  `json:"points"`
		Stamps       int32  `json:"stamps"`
	} `json:"loyalty"`
	Coupons    []floorCoupon `json:"coupons"`
	Promotions []string      `json:"promotions"`
}

type floorCoupon struct {
	Code   string `json:"code"`
	Status string `json:"status"`
}

// floorReceipt is the receipt part of the answer (its size as posgate's).
const floorReceipt = `{"loyaltyText":"You earned 25 points and 1 stamp. Your balance: 0 points and 0 stamps.","primaryText":null,"secondaryText":null,"targetUrl":null}`

const (
	floorRedeemSQL = `UPDATE coupons SET status = 'Redeemed', updated_at = ?1
		WHERE pos_system_id = ?2 AND company_id = ?3 AND code_norm = ?4 AND status = 'Issued'
		AND (available_until IS NULL OR available_until >= ?1) AND user_id = ?5
		AND (location_ids IS NULL OR json_array_length(location_ids) = 0 OR EXISTS (SELECT 1 FROM json_each(location_ids) WHERE value = ?6))
		RETURNING code`
	floorBalanceSQL = `UPDATE loyalty_users SET points = max(min(points + ?1, 2147483647), -2147483648),
		stamps = max(min(stamps + ?2, 2147483647), 0), updated_at = ?3, balance_seq = balance_seq + 1
		WHERE pos_system_id = ?4 AND company_id = ?5 AND user_id = ?6 RETURNING points, stamps, balance_seq`
	floorInsertSQL = `INSERT INTO transactions (id, pos_system_id, company_id, location_id, terminal_id,
		transaction_id, session_id, transaction_type, amount, transaction_date, request_hash, request, answer, created_at,
		user_id, points_earned, stamps_earned) VALUES (?, ?, ?, ?, ?, ?, ?, 'Sale', 2500, ?, ?, ?, ?, ?, ?, 25, 1)
		ON CONFLICT DO NOTHING`
	floorLinkSQL = `INSERT INTO transaction_coupons (pos_system_id, company_id, code_norm, txn_id, code, redeemed_at)
		VALUES (?, ?, ?, ?, ?, ?)`
)

// floorSession is the session id of floor sale i, of a format no
// posgate row uses (txSessionFormat, whSessionFormat, the paced row's).
func floorSession(i int) string { return fmt.Sprintf("00000000-0000-4000-b000-%012d", i) }

// floorRequest is floor sale i's request body, as a POS sends it.
func floorRequest(s *floorSale, date string) string {
	return fmt.Sprintf(`{"sessionId":"%s","transactionId":"FL%d","posLocationId":"%s","terminalId":"%s","transactionType":"Sale",`+
		`"transactionAmount":25.00,"transactionDate":"%s","loyalty":{"cardNumber":"%s"},"couponCodes":["%s"]}`,
		floorSession(s.i), s.i, s.loc, s.term, date, s.user, s.code)
}

// runSaleFloorProgram is the SQLite floor's process.
func runSaleFloorProgram(args []string) error {
	if len(args) != 7 {
		return fmt.Errorf("usage: %s DRIVER DSN POS COMPANY KEYS CLIENTS GROUP", saleFloorFlag)
	}
	driver, dsn, pos, company, keysPath := args[0], args[1], args[2], args[3], args[4]
	clients, err1 := strconv.Atoi(args[5])
	group, err2 := strconv.Atoi(args[6])
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	sales, err := readFloorKeys(keysPath)
	if err != nil {
		return err
	}
	out, err := saleFloor(context.Background(), driver, dsn, pos, company, sales, clients, group)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// saleFloor records sales with clients clients and up to group sales per
// commit, and says how fast and at what CPU.
func saleFloor(ctx context.Context, driver, dsn, pos, company string, sales []*floorSale, clients, group int) (*saleFloorOut, error) {
	db, err := openFloorSQLite(ctx, driver, sqlite.WriteDSN(dsn))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	stmts := make([]*sql.Stmt, 4)
	for i, q := range []string{floorRedeemSQL, floorBalanceSQL, floorInsertSQL, floorLinkSQL} {
		if stmts[i], err = db.PrepareContext(ctx, q); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	queue := make(chan *floorSale, clients)
	defer close(queue)
	go floorWriter(ctx, db, stmts, pos, company, group, queue)

	var next, failed atomic.Int64
	lat := make([][]time.Duration, clients)
	cpu0 := selfCPU()
	t0 := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(sales) {
					return
				}
				s := sales[i]
				s.done = make(chan error, 1)
				start := time.Now()
				queue <- s
				if err := <-s.done; err != nil {
					if failed.Add(1) == 1 {
						fmt.Fprintln(os.Stderr, "sale:", err)
					}
				}
				lat[c] = append(lat[c], time.Since(start))
			}
		}()
	}
	wg.Wait()
	out := &saleFloorOut{Sales: int64(len(sales)), Seconds: time.Since(t0).Seconds(), CPU: selfCPU() - cpu0, Failed: failed.Load()}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	out.P99 = quantile(all, 0.99)
	return out, nil
}

// floorWriter is the floor's one writer: a group of waiting sales per
// write transaction.
func floorWriter(ctx context.Context, db *sql.DB, stmts []*sql.Stmt, pos, company string, group int, queue chan *floorSale) {
	for s := range queue {
		batch := []*floorSale{s}
		runtime.Gosched() // as posgate's writer: let more sales queue
	fill:
		for len(batch) < group {
			select {
			case s := <-queue:
				batch = append(batch, s)
			default:
				break fill
			}
		}
		errs := make([]error, len(batch))
		err := func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			bound := make([]*sql.Stmt, len(stmts))
			for i, st := range stmts {
				bound[i] = tx.StmtContext(ctx, st)
			}
			for i, s := range batch {
				if errs[i], err = floorApply(ctx, tx, bound, pos, company, s); err != nil {
					return err
				}
			}
			return tx.Commit()
		}()
		for i, s := range batch {
			if err != nil {
				s.done <- err
			} else {
				s.done <- errs[i]
			}
		}
	}
}

// floorApply records one sale in a savepoint: an error of the sale (its
// coupon not redeemable, its key taken) rolls it back; a store error is
// returned as err.
func floorApply(ctx context.Context, tx *sql.Tx, st []*sql.Stmt, pos, company string, s *floorSale) (saleErr, err error) {
	now := time.Now().UTC()
	at := now.Format("2006-01-02T15:04:05.000000Z")
	if _, err := tx.ExecContext(ctx, `SAVEPOINT sale`); err != nil {
		return nil, err
	}
	codeNorm := strings.ToLower(s.code)
	var code string
	saleErr = st[0].QueryRowContext(ctx, at, pos, company, codeNorm, s.user, s.loc).Scan(&code)
	var a floorAnswer
	if saleErr == nil {
		saleErr = st[1].QueryRowContext(ctx, 25, 1, at, pos, company, s.user).Scan(&a.Loyalty.Points, &a.Loyalty.Stamps, new(int64))
	}
	id := rand.Text()
	if saleErr == nil {
		a.ID, a.PosStatus, a.Receipt = id, "Accepted", json.RawMessage(floorReceipt)
		a.Loyalty.UserID, a.Loyalty.PointsEarned, a.Loyalty.StampsEarned = s.user, 25, 1
		a.Coupons, a.Promotions = []floorCoupon{{Code: code, Status: "Redeemed"}}, []string{}
		answer, _ := json.Marshal(a)
		req := floorRequest(s, at)
		sum := sha256.Sum256([]byte(req))
		var res sql.Result
		res, err = st[2].ExecContext(ctx, id, pos, company, s.loc, s.term, fmt.Sprintf("FL%d", s.i), floorSession(s.i), at,
			hex.EncodeToString(sum[:]), req, string(answer), at, s.user)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			saleErr = errors.New("transaction id or session taken")
		}
	}
	if saleErr == nil {
		if _, err := st[3].ExecContext(ctx, pos, company, codeNorm, id, code, at); err != nil {
			return nil, err
		}
		_, err = tx.ExecContext(ctx, `RELEASE sale`)
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `ROLLBACK TO sale`); err != nil {
		return nil, err
	}
	_, err = tx.ExecContext(ctx, `RELEASE sale`)
	return saleErr, err
}

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// readFloorKeys reads the floor's sales: index,location,terminal,user,code.
func readFloorKeys(path string) ([]*floorSale, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*floorSale
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Split(sc.Text(), ",")
		if len(p) != 5 {
			return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		i, err := strconv.Atoi(p[0])
		if err != nil {
			return nil, err
		}
		out = append(out, &floorSale{i: i, loc: p[1], term: p[2], user: p[3], code: p[4]})
	}
	return out, sc.Err()
}

// writeFloorKeys writes keys (location, terminal, user, code tuples of the
// plan) numbered from first for the floor program.
func writeFloorKeys(path string, first int, keys [][]string) error {
	var b strings.Builder
	for j, k := range keys {
		fmt.Fprintf(&b, "%d,%s,%s,%s,%s\n", first+j, k[0], k[1], k[2], k[3])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// runSQLiteSaleFloor runs the SQLite floor program over keys with the
// given clients and group size, with driver (modernc's "sqlite", or the C
// driver's when built in).
func runSQLiteSaleFloor(ctx context.Context, o *options, e *env, driver, name string, first int, keys [][]string, clients, group int) (*floorResult, error) {
	path := filepath.Join(o.workDir, name+"-floor-keys.csv")
	if err := writeFloorKeys(path, first, keys); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{saleFloorFlag, driver, e.DSN, e.Data.POSSystem, e.Data.Company, path, strconv.Itoa(clients), strconv.Itoa(group)}
	if o.serverCPUs != "" {
		args = append([]string{"-c", o.serverCPUs, self}, args...)
		self = "taskset"
	}
	cmd := exec.CommandContext(ctx, self, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sale floor: %w: %s", err, tail([]byte(stderr.String()), 500))
	}
	var out saleFloorOut
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("sale floor: %w", err)
	}
	f := &floorResult{RPS: float64(out.Sales) / out.Seconds, P99: out.P99, Requests: out.Sales, Errors: out.Failed,
		CPU:  perRequest(out.CPU, out.Sales),
		What: fmt.Sprintf("bare Go program, driver %s, %d clients, up to %d sales per commit", driver, clients, group)}
	if out.Failed > 0 {
		return f, fmt.Errorf("sale floor: %d of %d sales failed: %s", out.Failed, out.Sales, tail([]byte(stderr.String()), 300))
	}
	return f, nil
}

// pgbenchSale is the sale as one statement for pgbench: the floor's sale
// i is the next of the floor_sales table (a sequence), its tenancy pasted
// in ({pos}, {company}).
const pgbenchSale = `WITH k AS (SELECT * FROM floor_sales WHERE i = (SELECT nextval('floor_seq'))),
c AS (UPDATE coupons SET status = 'Redeemed', updated_at = now() FROM k
	WHERE coupons.pos_system_id = '{pos}' AND coupons.company_id = '{company}' AND coupons.code_norm = k.code_norm
	AND coupons.status = 'Issued' AND (coupons.available_until IS NULL OR coupons.available_until >= now()) AND coupons.user_id = k.user_id
	AND (coupons.location_ids IS NULL OR cardinality(coupons.location_ids) = 0 OR k.loc = ANY(coupons.location_ids))
	RETURNING coupons.code_norm, coupons.code),
u AS (UPDATE loyalty_users SET points = greatest(least(points::bigint + 25, 2147483647), -2147483648)::integer,
	stamps = greatest(least(stamps::bigint + 1, 2147483647), 0)::integer, updated_at = now(), balance_seq = balance_seq + 1 FROM k, c
	WHERE loyalty_users.pos_system_id = '{pos}' AND loyalty_users.company_id = '{company}' AND loyalty_users.user_id = k.user_id
	RETURNING points, stamps, balance_seq),
t AS (INSERT INTO transactions (id, pos_system_id, company_id, location_id, terminal_id, transaction_id, session_id, transaction_type,
		amount, transaction_date, request_hash, request, answer, created_at, user_id, points_earned, stamps_earned)
	SELECT k.id, '{pos}', '{company}', k.loc, k.term, 'FL' || k.i, k.session, 'Sale', 2500, now(), k.request_hash, k.request,
		k.answer_head || u.points || ',"stamps":' || u.stamps || '},"coupons":[{"code":"' || k.code || '","status":"Redeemed"}],"promotions":[]}',
		now(), k.user_id, 25, 1 FROM k, u
	ON CONFLICT DO NOTHING RETURNING id)
INSERT INTO transaction_coupons (pos_system_id, company_id, code_norm, txn_id, code, redeemed_at)
SELECT '{pos}', '{company}', c.code_norm, t.id, c.code, now() FROM t, c;
`

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// runPgbenchSaleFloor loads keys into floor_sales and runs pgbench over
// them with clients clients, each running its share of the sales.
func runPgbenchSaleFloor(ctx context.Context, o *options, e *env, name string, first int, keys [][]string, clients int) (*floorResult, error) {
	conn, err := pgx.Connect(ctx, e.DSN)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var schema string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS floor_sales; DROP SEQUENCE IF EXISTS floor_seq;
		CREATE UNLOGGED TABLE floor_sales (i bigint PRIMARY KEY, id text, loc text, term text, user_id text, code text, code_norm text,
			session text, request text, request_hash text, answer_head text);
		CREATE SEQUENCE floor_seq MINVALUE 0`); err != nil {
		return nil, err
	}
	date := time.Now().UTC().Format(time.RFC3339)
	rows := make([][]any, len(keys))
	for j, k := range keys {
		s := &floorSale{i: first + j, loc: k[0], term: k[1], user: k[2], code: k[3]}
		req := floorRequest(s, date)
		sum := sha256.Sum256([]byte(req))
		id := rand.Text()
		head := `{"id":"` + id + `","posStatus":"Accepted","receipt":` + floorReceipt + `,"loyalty":{"userId":"` + s.user +
			`","pointsEarned":25,"stampsEarned":1,"points":`
		rows[j] = []any{int64(first + j), id, s.loc, s.term, s.user, s.code, strings.ToLower(s.code), floorSession(s.i), req, hex.EncodeToString(sum[:]), head}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"floor_sales"},
		[]string{"i", "id", "loc", "term", "user_id", "code", "code_norm", "session", "request", "request_hash", "answer_head"},
		pgx.CopyFromRows(rows)); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`SELECT setval('floor_seq', %d, false); ANALYZE floor_sales`, first)); err != nil {
		return nil, err
	}
	dir := filepath.Join(o.workDir, name+"-pgbench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	script := strings.NewReplacer("{pos}", e.Data.POSSystem, "{company}", e.Data.Company).Replace(pgbenchSale)
	if err := os.WriteFile(filepath.Join(dir, "sale.sql"), []byte(script), 0o644); err != nil {
		return nil, err
	}
	perClient := len(keys) / clients
	dsn, options, err := libpqDSN(e.DSN)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "pgbench", "-n", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(clients, runtime.NumCPU())),
		"-t", strconv.Itoa(perClient), "-M", "prepared", "-f", "sale.sql", "-l", "--log-prefix", "lat", dsn)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "PGOPTIONS="+options)
	db0 := e.db.cpuTime()
	out, err := cmd.CombinedOutput()
	dbCPU := max(0, e.db.cpuTime()-db0)
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w: %s", err, tail(out, 600))
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("pgbench: no tps in its output: %s", tail(out, 600))
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	n := int64(perClient * clients)
	lat, err := pgbenchLatencies(dir)
	if err != nil {
		return nil, err
	}
	var redeemed int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM transactions t JOIN floor_sales k ON t.id = k.id`).Scan(&redeemed); err != nil {
		return nil, err
	}
	f := &floorResult{RPS: tps, P99: quantile(lat, 0.99), Requests: n, DBCPU: perRequest(dbCPU, n),
		What: fmt.Sprintf("pgbench, %d clients, the sale as one statement (a CTE, the row inserted whole)", clients)}
	if redeemed != n {
		return f, fmt.Errorf("pgbench floor: %d of its %d sales recorded", redeemed, n)
	}
	return f, nil
}

// pgbenchLatencies reads the latencies of pgbench's transaction logs in
// dir (-l: "client transaction latency_µs script epoch µs" per line).
func pgbenchLatencies(dir string) ([]time.Duration, error) {
	files, err := filepath.Glob(filepath.Join(dir, "lat.*"))
	if err != nil {
		return nil, err
	}
	var out []time.Duration
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			if us, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				out = append(out, time.Duration(us)*time.Microsecond)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// libpqDSN is a pgx URL as libpq takes it: without the search_path
// parameter (pgx passes it to the server, libpq refuses it), which comes
// back as PGOPTIONS' -c search_path=….
func libpqDSN(dsn string) (string, string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", "", err
	}
	q := u.Query()
	path := q.Get("search_path")
	q.Del("search_path")
	u.RawQuery = q.Encode()
	if path == "" {
		return u.String(), "", nil
	}
	return u.String(), "-c search_path=" + path, nil
}

// pgFloorClients is the sale floor's pgbench clients on PostgreSQL: as
// many as posgate's database connections (pgx's pool's default: 4, or the
// CPUs when more).
func pgFloorClients() int { return max(4, runtime.NumCPU()) }

// runSaleFloor measures the floor of the sale row (conns clients) or of
// the replay (one of its batches) on the row's store, over the plan's
// reserved sales: the replay's first, the sale's after them.
func runSaleFloor(ctx context.Context, o *options, e *env, row string, conns int) (*floorResult, error) {
	if _, _, err := txPlan(e); err != nil {
		return nil, err
	}
	keys := e.Keys["floor"]
	if len(keys) < 2*batchItems {
		return nil, fmt.Errorf("%d sales reserved for the floors; want more (use more -rows)", len(keys))
	}
	first, clients, group := batchItems, conns, maxSaleGroup
	if row == "transactionBatch" {
		keys, first, clients, group = keys[:batchItems], 0, batchItems, batchItems
	} else {
		keys = keys[batchItems:]
	}
	if e.Kind == "sqlite" {
		return runSQLiteSaleFloor(ctx, o, e, o.floorDriver, row, first, keys, clients, group)
	}
	if row == "transactionBatch" {
		clients = 1
	} else {
		clients = pgFloorClients()
	}
	return runPgbenchSaleFloor(ctx, o, e, row, first, keys, clients)
}

// maxSaleGroup is the most sales posgate's SQLite writer commits together
// (internal/sqlite's maxSaleGroup).
const maxSaleGroup = 32

// openFloorSQLite opens a SQLite floor's database with driver and dsn
// (posgate's parameters). modernc's driver applies every parameter itself;
// the C driver knows the _busy_timeout, _journal_mode, _foreign_keys,
// _synchronous, _txlock and _query_only ones but not _pragma, whose
// pragmas are then set on each connection as it opens.
func openFloorSQLite(ctx context.Context, driver, dsn string) (*sql.DB, error) {
	if !slices.Contains(sql.Drivers(), driver) {
		return nil, fmt.Errorf("no SQLite driver %q in this build (drivers: %v)", driver, sql.Drivers())
	}
	if driver == "sqlite" {
		return sql.Open(driver, dsn)
	}
	var pragmas []string
	for _, m := range pragmaParam.FindAllStringSubmatch(dsn, -1) {
		pragmas = append(pragmas, "PRAGMA "+strings.Replace(strings.TrimSuffix(m[1], ")"), "(", " = ", 1))
	}
	return openWithPragmas(ctx, driver, pragmaParam.ReplaceAllString(dsn, ""), pragmas)
}

var pragmaParam = regexp.MustCompile(`&?_pragma=([a-z_]+\([^)&]*\))`)

// openWithPragmas opens dsn with driver, running pragmas on each new
// connection.
func openWithPragmas(ctx context.Context, driverName, dsn string, pragmas []string) (*sql.DB, error) {
	probe, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	d := probe.Driver()
	probe.Close()
	return sql.OpenDB(pragmaConnector{d: d, dsn: dsn, pragmas: pragmas}), nil
}

// pragmaConnector is a driver.Connector that sets pragmas on each
// connection it opens.
type pragmaConnector struct {
	d       driver.Driver
	dsn     string
	pragmas []string
}

func (c pragmaConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.d.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("the driver's connections cannot run a pragma")
	}
	for _, p := range c.pragmas {
		if _, err := ex.ExecContext(ctx, p, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return conn, nil
}

func (c pragmaConnector) Driver() driver.Driver { return c.d }
