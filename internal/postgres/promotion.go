package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/promorecord"
	"github.com/posgate/posgate/internal/storekit"
)

// promotionCols are the columns scanPromotion reads, of table p.
const promotionCols = `p.pos_system_id, p.company_id, p.promotion_id, p.data, p.created_at, p.updated_at`

// validBetween keeps the promotions whose validity bounds contain $n.
func validBetween(n int) string {
	a := "$" + strconv.Itoa(n)
	return ` AND (p.valid_from IS NULL OR p.valid_from <= ` + a + `) AND (p.valid_until IS NULL OR p.valid_until >= ` + a + `)`
}

func scanPromotion(r pgx.Row) (*posgate.Promotion, error) {
	p := &posgate.Promotion{}
	var data []byte
	if err := r.Scan(&p.POSSystemID, &p.CompanyID, &p.ID, &data, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return nil, err
	}
	if err := promorecord.Decode(data, p); err != nil {
		return nil, fmt.Errorf("promotion %q: %w", p.ID, err)
	}
	return p, nil
}

// FindPromotion returns one promotion of a company.
func (db *DB) FindPromotion(ctx context.Context, posSystemID, companyID, promotionID string) (*posgate.Promotion, error) {
	p, err := scanPromotion(db.q(ctx).QueryRow(ctx, `SELECT `+promotionCols+` FROM promotions p
		WHERE p.pos_system_id = $1 AND p.company_id = $2 AND p.promotion_id = $3`, posSystemID, companyID, promotionID))
	if err != nil {
		return nil, readErr(err, "find promotion", posgate.NotFound("promotion", promotionID))
	}
	return p, nil
}

// ListPromotions returns a page of a company's promotions by id and how
// many it has, read from one snapshot.
func (db *DB) ListPromotions(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*posgate.Promotion, int, error) {
	var out []*posgate.Promotion
	var total int
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM promotions WHERE pos_system_id = $1 AND company_id = $2`,
			posSystemID, companyID).Scan(&total); err != nil {
			return err
		}
		var lim *int // NULL: no limit
		if limit > 0 {
			lim = &limit
		}
		rows, err := tx.Query(ctx, `SELECT `+promotionCols+` FROM promotions p
			WHERE p.pos_system_id = $1 AND p.company_id = $2 ORDER BY p.promotion_id LIMIT $3 OFFSET $4`,
			posSystemID, companyID, lim, max(offset, 0))
		if err != nil {
			return err
		}
		out, err = pgx.AppendRows(out, rows, func(r pgx.CollectableRow) (*posgate.Promotion, error) { return scanPromotion(r) })
		return err
	})
	if err != nil {
		return nil, 0, wrap(err, "list promotions")
	}
	if out == nil {
		out = []*posgate.Promotion{}
	}
	return out, total, nil
}

// ListPromotionsValidAt returns the company's promotions that apply at the
// location at time at (see posgate.PromotionStore): those naming the
// location (the GIN index) and those naming none (promotions_everywhere),
// within their validity bounds; Go checks the recurrences.
func (db *DB) ListPromotionsValidAt(ctx context.Context, posSystemID, companyID, locationID string, at time.Time) ([]*posgate.Promotion, error) {
	at = posgate.Timestamp(at).In(at.Location()) // the location's zone stays: ValidAt reads wall-clock dates in it
	var ps []*posgate.Promotion
	var err error
	if locationID == "" {
		ps, err = collect(ctx, db, "list promotions valid at", scanPromotion, `SELECT `+promotionCols+` FROM promotions p
			WHERE p.pos_system_id = $1 AND p.company_id = $2`+validBetween(3)+`
			ORDER BY p.promotion_id`, posSystemID, companyID, at)
	} else {
		ps, err = collect(ctx, db, "list promotions valid at", scanPromotion, `SELECT `+promotionCols+` FROM promotions p
			WHERE p.pos_system_id = $1 AND p.company_id = $2 AND p.location_ids @> ARRAY[$3::text]`+validBetween(4)+`
			UNION ALL
			SELECT `+promotionCols+` FROM promotions p
			WHERE p.pos_system_id = $1 AND p.company_id = $2 AND cardinality(p.location_ids) = 0`+validBetween(4)+`
				AND EXISTS (SELECT 1 FROM locations l WHERE l.pos_system_id = $1 AND l.location_id = $3 AND l.company_id = $2)
			ORDER BY 3`, posSystemID, companyID, locationID, at)
	}
	if err != nil {
		return nil, err
	}
	out := []*posgate.Promotion{}
	for _, p := range ps {
		if p.ValidAt(at) {
			out = append(out, p)
		}
	}
	return out, nil
}

// ListCarouselPromotions returns the first limit promotions that apply at
// the location at time at, in the carousel's order (see
// posgate.PromotionStore): ids a page at a time (a sort of ids and sort
// keys, bounded by the page), then the promotions of those ids.
func (db *DB) ListCarouselPromotions(ctx context.Context, posSystemID, companyID, locationID string, at time.Time, limit int) ([]*posgate.Promotion, error) {
	at = posgate.Timestamp(at).In(at.Location()) // the location's zone stays: ValidAt reads wall-clock dates in it
	return storekit.FirstApplying(ctx, at, limit, func(ctx context.Context, offset, n int) ([]string, error) {
		rows, err := db.q(ctx).Query(ctx, `SELECT promotion_id FROM (
			SELECT p.promotion_id, 0 AS everywhere, p.valid_until FROM promotions p
			WHERE p.pos_system_id = $1 AND p.company_id = $2 AND p.location_ids @> ARRAY[$3::text]`+validBetween(4)+`
			UNION ALL
			SELECT p.promotion_id, 1, p.valid_until FROM promotions p
			WHERE p.pos_system_id = $1 AND p.company_id = $2 AND cardinality(p.location_ids) = 0`+validBetween(4)+`
				AND EXISTS (SELECT 1 FROM locations l WHERE l.pos_system_id = $1 AND l.location_id = $3 AND l.company_id = $2)
			) c ORDER BY everywhere, valid_until ASC NULLS LAST, promotion_id LIMIT $5 OFFSET $6`,
			posSystemID, companyID, locationID, at, n, offset)
		if err != nil {
			return nil, wrap(err, "carousel promotions")
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		return ids, wrap(err, "carousel promotions")
	}, func(ctx context.Context, ids []string) (map[string]*posgate.Promotion, error) {
		ps, err := collect(ctx, db, "carousel promotions", scanPromotion, `SELECT `+promotionCols+` FROM promotions p
			WHERE p.pos_system_id = $1 AND p.company_id = $2 AND p.promotion_id = ANY($3)`, posSystemID, companyID, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[string]*posgate.Promotion, len(ps))
		for _, p := range ps {
			m[p.ID] = p
		}
		return m, nil
	})
}

// companyExists is ENOTFOUND unless the company exists.
func companyExists(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, posSystemID, companyID string) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM companies WHERE pos_system_id = $1 AND company_id = $2`, posSystemID, companyID).Scan(&one)
	if err == nil {
		return nil
	}
	return readErr(err, "find company", posgate.NotFound("company", companyID))
}

// stageCols are the columns of promotion_stage, in the order of the rows
// Add sends to COPY.
var stageCols = []string{"promotion_id", "location_ids", "data", "valid_from", "valid_until"}

// recordChunk is the size of the buffers Add writes records to.
const recordChunk = 1 << 20

// stageRows is how many rows the channel between Add and the worker holds:
// a chunk and a half, so that the request keeps being decoded while the
// database upserts a chunk (some 5 MB of records).
const stageRows = stageChunk * 3 / 2

// stageChunk is how many rows go through the staging table at a time: the
// last chunk's upsert is all that is left to do once the body has been
// read, and each chunk is one COPY and one upsert statement.
const stageChunk = 10_000

// upsertSQL moves the staging table into promotions. A staged promotion
// equal to the stored one is left as it is (it counts as updated, its
// UpdatedAt stays): re-sending an import rewrites nothing. xmax = 0 tells
// the inserted rows from the updated ones.
const upsertSQL = `WITH up AS (
	INSERT INTO promotions AS p (pos_system_id, company_id, promotion_id, location_ids, valid_from, valid_until, data, created_at, updated_at)
	SELECT $1, $2, s.promotion_id, s.location_ids, s.valid_from, s.valid_until, s.data, $3, $3
	FROM promotion_stage s
	ON CONFLICT (pos_system_id, company_id, promotion_id) DO UPDATE SET
		location_ids = excluded.location_ids, valid_from = excluded.valid_from, valid_until = excluded.valid_until,
		data = excluded.data, updated_at = excluded.updated_at
	WHERE p.data <> excluded.data -- the record holds everything else
	RETURNING p.xmax = 0 AS created)
	SELECT count(*) FILTER (WHERE created) FROM up`

// BeginPromotionImport starts an import on a connection of its own (not
// one of the pool's, which the POS requests need while a long upload runs):
// it begins a transaction, creates a staging table and starts a goroutine
// that COPYs the rows Add sends into it and upserts them into promotions,
// stageChunk rows at a time, so that the database works while the request
// body is still being read. Nothing is visible before Commit, which upserts
// the last chunk and commits; a rollback, or a crash, leaves nothing.
func (db *DB) BeginPromotionImport(ctx context.Context, posSystemID, companyID string) (posgate.PromotionImport, error) {
	cfg := db.pool.Config()
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, wrap(err, "import promotions: connect")
	}
	if cfg.AfterConnect != nil {
		if err := cfg.AfterConnect(ctx, conn); err != nil {
			conn.Close(ctx)
			return nil, wrap(err, "import promotions: connect")
		}
	}
	imp := &promotionImport{db: db, conn: conn, posSystemID: posSystemID, companyID: companyID,
		now: posgate.Timestamp(db.now()), seen: map[string]struct{}{}}
	if err := imp.begin(ctx); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return imp, nil
}

// promotionImport is PostgreSQL's posgate.PromotionImport.
type promotionImport struct {
	db                     *DB
	conn                   *pgx.Conn
	tx                     pgx.Tx
	posSystemID, companyID string
	now                    time.Time // the import's CreatedAt and UpdatedAt

	rows    chan []any // Add → the worker
	done    chan error // the worker's outcome, once the rows are closed
	cancel  func()     // stops the worker
	created int        // set by the worker, read after done
	staged  int        // rows sent
	seen    map[string]struct{}
	twice   string // an id Add was given twice
	err     error  // the worker's outcome, once received
	state   int    // 0 open, 1 rows closed, 2 finished
	chunk   []byte // where Add writes the next record
}

func (imp *promotionImport) begin(ctx context.Context) error {
	var err error
	if imp.tx, err = imp.conn.Begin(ctx); err != nil {
		return wrap(err, "import promotions")
	}
	// FOR KEY SHARE: the company cannot go away before the import commits.
	var one int
	err = imp.tx.QueryRow(ctx, `SELECT 1 FROM companies WHERE pos_system_id = $1 AND company_id = $2 FOR KEY SHARE`,
		imp.posSystemID, imp.companyID).Scan(&one)
	if err != nil {
		return readErr(err, "find company", posgate.NotFound("company", imp.companyID))
	}
	// JIT compiling the upserts costs more than it saves.
	if _, err := imp.tx.Exec(ctx, `SET LOCAL jit = off; CREATE TEMP TABLE promotion_stage (
		promotion_id text COLLATE "C" NOT NULL, location_ids text[] NOT NULL, data bytea NOT NULL,
		valid_from timestamptz, valid_until timestamptz) ON COMMIT DROP`); err != nil {
		return wrap(err, "import promotions: staging table")
	}
	workCtx, cancel := context.WithCancel(ctx)
	imp.cancel = cancel
	imp.rows = make(chan []any, stageRows)
	imp.done = make(chan error, 1)
	go func() { imp.done <- imp.work(workCtx) }()
	return nil
}

// work COPYs the rows into the staging table and upserts them, a chunk at
// a time, until the rows are closed.
func (imp *promotionImport) work(ctx context.Context) error {
	for more := true; more; {
		n := 0
		_, err := imp.tx.CopyFrom(ctx, pgx.Identifier{"promotion_stage"}, stageCols, pgx.CopyFromFunc(func() ([]any, error) {
			if n == stageChunk {
				return nil, nil
			}
			select {
			case row, ok := <-imp.rows:
				if !ok {
					more = false
					return nil, nil // the end of the data
				}
				n++
				return row, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}))
		if err != nil {
			return wrap(err, "import promotions: copy")
		}
		if n == 0 {
			break
		}
		var created int
		if err := imp.tx.QueryRow(ctx, upsertSQL, imp.posSystemID, imp.companyID, imp.now).Scan(&created); err != nil {
			return writeErr(err, "import promotions", nil, posgate.NotFound("company", imp.companyID))
		}
		imp.created += created
		if _, err := imp.tx.Exec(ctx, `TRUNCATE promotion_stage`); err != nil {
			return wrap(err, "import promotions")
		}
	}
	return nil
}

// Add sends p to the worker.
func (imp *promotionImport) Add(ctx context.Context, p *posgate.Promotion) error {
	if imp.state != 0 {
		return errors.New("postgres: promotion import already finished")
	}
	if _, dup := imp.seen[p.ID]; dup {
		if imp.twice == "" {
			imp.twice = p.ID // Commit fails; the rest still goes through
		}
		return nil
	}
	imp.seen[p.ID] = struct{}{}
	from, until := p.ValidityBounds()
	// Records go into shared buffers: COPY encodes the rows later, in the
	// worker, and a buffer goes when its last row has.
	if cap(imp.chunk)-len(imp.chunk) < 4096 {
		imp.chunk = make([]byte, 0, recordChunk)
	}
	start := len(imp.chunk)
	imp.chunk = promorecord.Append(imp.chunk, p)
	row := []any{p.ID, p.LocationIDs, imp.chunk[start:len(imp.chunk):len(imp.chunk)], from, until}
	select {
	case imp.rows <- row:
		imp.staged++
		return nil
	case err := <-imp.done:
		// The worker stopped before the data did: it failed.
		imp.err, imp.state = err, 1
		close(imp.rows)
		if err == nil {
			err = errors.New("the import's worker ended early")
		}
		return wrap(err, "import promotions")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish closes the rows and waits for the worker's outcome.
func (imp *promotionImport) finish() error {
	if imp.state == 0 {
		close(imp.rows)
		imp.state = 1
		imp.err = <-imp.done
	}
	return imp.err
}

// Rollback stops the worker, rolls back and closes the connection.
func (imp *promotionImport) Rollback() {
	if imp.state == 2 {
		return
	}
	imp.cancel()
	imp.finish()
	imp.state = 2
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	imp.tx.Rollback(ctx)
	imp.conn.Close(ctx)
}

// Commit waits for the worker to upsert the last chunk, then commits.
func (imp *promotionImport) Commit(ctx context.Context) (created, updated int, err error) {
	if imp.state == 2 {
		return 0, 0, errors.New("postgres: promotion import already finished")
	}
	defer imp.Rollback()
	if err := imp.finish(); err != nil {
		return 0, 0, err
	}
	if imp.twice != "" {
		return 0, 0, storekit.PromotionGivenTwice(imp.twice)
	}
	if err := bumpCatalogueVersion(ctx, imp.tx, imp.posSystemID, imp.companyID); err != nil {
		return 0, 0, wrap(err, "import promotions")
	}
	if err := imp.db.logImport(ctx, imp.tx, imp.posSystemID, imp.companyID, posgate.ImportKindPromotions, imp.created, imp.staged-imp.created, imp.now); err != nil {
		return 0, 0, err
	}
	emitted, err := imp.db.emitIn(ctx, imp.tx, posgate.ImportEvent(imp.posSystemID, imp.companyID, "promotions", imp.staged, posgate.Timestamp(imp.db.now())))
	if err != nil {
		return 0, 0, err
	}
	if err := imp.tx.Commit(ctx); err != nil {
		return 0, 0, wrap(err, "import promotions: commit")
	}
	if emitted {
		imp.db.outbox.Notify()
	}
	imp.state = 2
	imp.conn.Close(context.WithoutCancel(ctx))
	return imp.created, imp.staged - imp.created, nil
}
