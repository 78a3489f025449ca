package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/promorecord"
	"github.com/posgate/posgate/internal/storekit"
)

// promotionCols are the columns a promotion is read from, in the order
// scanPromotion takes them.
const promotionCols = `promotions.promotion_id, promotions.data, promotions.created_at, promotions.updated_at`

// The "valid at" queries: the carousel runs them per request, so they are
// prepared once (preparePromotions). Both read only promotions whose
// validity bounds contain the time (?4); Go checks the recurrences.
const (
	// validAtLocationSQL finds the promotions of company ?2 that name
	// location ?3 (through promotion_places and promotion_locations' keys)
	// or no location (promotions_everywhere), the latter only if ?3 is the
	// company's.
	validAtLocationSQL = `SELECT ` + promotionCols + ` FROM promotion_places
		JOIN promotion_locations ON promotion_locations.place = promotion_places.id
		JOIN promotions ON promotions.id = promotion_locations.promotion
		WHERE promotion_places.pos_system_id = ?1 AND promotion_places.location_id = ?3
			AND promotions.company_id = ?2
			AND (promotions.valid_from IS NULL OR promotions.valid_from <= ?4)
			AND (promotions.valid_until IS NULL OR promotions.valid_until >= ?4)
		UNION ALL
		SELECT ` + promotionCols + ` FROM promotions
		WHERE promotions.pos_system_id = ?1 AND promotions.company_id = ?2 AND promotions.all_locations = 1
			AND (promotions.valid_until IS NULL OR promotions.valid_until >= ?4)
			AND (promotions.valid_from IS NULL OR promotions.valid_from <= ?4)
			AND EXISTS (SELECT 1 FROM locations
				WHERE locations.pos_system_id = ?1 AND locations.location_id = ?3 AND locations.company_id = ?2)
		ORDER BY 1`
	// carouselIDsSQL lists, in the carousel's order, the ids of the
	// promotions validAtLocationSQL finds, a page (?5 rows after ?6) at a
	// time: only ids and sort keys are sorted, and SQLite keeps only the
	// page's rows while it sorts.
	carouselIDsSQL = `SELECT promotion_id FROM (
		SELECT promotions.promotion_id, 0 AS everywhere, promotions.valid_until FROM promotion_places
		JOIN promotion_locations ON promotion_locations.place = promotion_places.id
		JOIN promotions ON promotions.id = promotion_locations.promotion
		WHERE promotion_places.pos_system_id = ?1 AND promotion_places.location_id = ?3
			AND promotions.company_id = ?2
			AND (promotions.valid_from IS NULL OR promotions.valid_from <= ?4)
			AND (promotions.valid_until IS NULL OR promotions.valid_until >= ?4)
		UNION ALL
		SELECT promotions.promotion_id, 1, promotions.valid_until FROM promotions
		WHERE promotions.pos_system_id = ?1 AND promotions.company_id = ?2 AND promotions.all_locations = 1
			AND (promotions.valid_until IS NULL OR promotions.valid_until >= ?4)
			AND (promotions.valid_from IS NULL OR promotions.valid_from <= ?4)
			AND EXISTS (SELECT 1 FROM locations
				WHERE locations.pos_system_id = ?1 AND locations.location_id = ?3 AND locations.company_id = ?2))
		ORDER BY everywhere, valid_until IS NULL, valid_until, promotion_id LIMIT ?5 + 0 OFFSET ?6 + 0`
	// validAnywhereSQL finds the promotions of company ?2 valid at ?3,
	// wherever they apply.
	validAnywhereSQL = `SELECT ` + promotionCols + ` FROM promotions
		WHERE promotions.pos_system_id = ?1 AND promotions.company_id = ?2
			AND (promotions.valid_from IS NULL OR promotions.valid_from <= ?3)
			AND (promotions.valid_until IS NULL OR promotions.valid_until >= ?3)
		ORDER BY promotions.promotion_id`
)

// promotionStmts are the promotion queries prepared by Open.
type promotionStmts struct {
	validAtLocation, validAnywhere, carouselIDs *sql.Stmt
	findProducts                                *sql.Stmt // promotion evaluation's lookup of a basket's products
}

// preparePromotions prepares the promotion queries on the read pool.
func (db *DB) preparePromotions(ctx context.Context) error {
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{{&db.promo.validAtLocation, validAtLocationSQL}, {&db.promo.validAnywhere, validAnywhereSQL}, {&db.promo.carouselIDs, carouselIDsSQL}, {&db.promo.findProducts, findProductsSQL}} {
		var err error
		if *p.stmt, err = db.read.PrepareContext(ctx, p.query); err != nil {
			return fmt.Errorf("sqlite: prepare %q: %w", p.query, err)
		}
	}
	return nil
}

// closePromotions releases what preparePromotions prepared.
func (db *DB) closePromotions() error {
	var first error
	for _, s := range []*sql.Stmt{db.promo.validAtLocation, db.promo.validAnywhere, db.promo.carouselIDs, db.promo.findProducts} {
		if s != nil {
			if err := s.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// scanPromotions reads promotions of one company from rows of promotionCols,
// keeping those keep accepts (nil: all).
func scanPromotions(rows *sql.Rows, err error, posSystemID, companyID string, keep func(*posgate.Promotion) bool) ([]*posgate.Promotion, error) {
	if err != nil {
		return nil, fmt.Errorf("sqlite: list promotions: %w", err)
	}
	defer rows.Close()
	out := []*posgate.Promotion{}
	for rows.Next() {
		p, err := scanPromotion(rows, posSystemID, companyID)
		if err != nil {
			return nil, err
		}
		if keep == nil || keep(p) {
			out = append(out, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list promotions: %w", err)
	}
	return out, nil
}

// scanPromotion reads one row of promotionCols.
func scanPromotion(s scanner, posSystemID, companyID string) (*posgate.Promotion, error) {
	p := &posgate.Promotion{POSSystemID: posSystemID, CompanyID: companyID}
	var data []byte
	if err := s.Scan(&p.ID, &data, timeColumn{&p.CreatedAt}, timeColumn{&p.UpdatedAt}); err != nil {
		return nil, err
	}
	if err := promorecord.Decode(data, p); err != nil {
		return nil, fmt.Errorf("sqlite: promotion %q: %w", p.ID, err)
	}
	return p, nil
}

// FindPromotion returns one promotion of a company.
func (db *DB) FindPromotion(ctx context.Context, posSystemID, companyID, promotionID string) (*posgate.Promotion, error) {
	p, err := scanPromotion(db.read.QueryRowContext(ctx, `SELECT `+promotionCols+` FROM promotions
		WHERE pos_system_id = ? AND company_id = ? AND promotion_id = ?`, posSystemID, companyID, promotionID), posSystemID, companyID)
	if err != nil {
		return nil, readErr(err, "find promotion", posgate.NotFound("promotion", promotionID))
	}
	return p, nil
}

// ListPromotions returns a page of a company's promotions by id and how
// many it has.
func (db *DB) ListPromotions(ctx context.Context, posSystemID, companyID string, offset, limit int) ([]*posgate.Promotion, int, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	// One read transaction, so that the page and the total agree.
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite: list promotions: %w", err)
	}
	defer tx.Rollback()
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM promotions WHERE pos_system_id = ? AND company_id = ?`,
		posSystemID, companyID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlite: count promotions: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+promotionCols+` FROM promotions
		WHERE pos_system_id = ? AND company_id = ? ORDER BY promotion_id LIMIT ? + 0 OFFSET ? + 0`,
		posSystemID, companyID, limit, max(offset, 0))
	ps, err := scanPromotions(rows, err, posSystemID, companyID, nil)
	if err != nil {
		return nil, 0, err
	}
	return ps, total, nil
}

// ListPromotionsValidAt returns the company's promotions that apply at the
// location at time at (see posgate.PromotionStore).
func (db *DB) ListPromotionsValidAt(ctx context.Context, posSystemID, companyID, locationID string, at time.Time) ([]*posgate.Promotion, error) {
	// at keeps its location: the location's zone, in which ValidAt reads
	// wall-clock dates.
	keep := func(p *posgate.Promotion) bool { return p.ValidAt(at) }
	if locationID == "" {
		rows, err := db.promo.validAnywhere.QueryContext(ctx, posSystemID, companyID, at.UnixMicro())
		return scanPromotions(rows, err, posSystemID, companyID, keep)
	}
	rows, err := db.promo.validAtLocation.QueryContext(ctx, posSystemID, companyID, locationID, at.UnixMicro())
	return scanPromotions(rows, err, posSystemID, companyID, keep)
}

// ListCarouselPromotions returns the first limit promotions that apply at
// the location at time at, in the carousel's order (see
// posgate.PromotionStore): ids a page at a time, then the promotions of
// those ids.
func (db *DB) ListCarouselPromotions(ctx context.Context, posSystemID, companyID, locationID string, at time.Time, limit int) ([]*posgate.Promotion, error) {
	// at keeps its location (ListPromotionsValidAt).
	return storekit.FirstApplying(ctx, at, limit, func(ctx context.Context, offset, n int) ([]string, error) {
		rows, err := db.promo.carouselIDs.QueryContext(ctx, posSystemID, companyID, locationID, at.UnixMicro(), n, offset)
		if err != nil {
			return nil, fmt.Errorf("sqlite: carousel promotions: %w", err)
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, fmt.Errorf("sqlite: carousel promotions: %w", err)
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: carousel promotions: %w", err)
		}
		return ids, nil
	}, func(ctx context.Context, ids []string) (map[string]*posgate.Promotion, error) {
		args := make([]any, 0, 2+len(ids))
		args = append(args, posSystemID, companyID)
		for _, id := range ids {
			args = append(args, id)
		}
		rows, err := db.read.QueryContext(ctx, `SELECT `+promotionCols+` FROM promotions
			WHERE pos_system_id = ? AND company_id = ? AND promotion_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
		ps, err := scanPromotions(rows, err, posSystemID, companyID, nil)
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
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, posSystemID, companyID string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM companies WHERE pos_system_id = ? AND company_id = ?`, posSystemID, companyID).Scan(&one)
	if err == nil {
		return nil
	}
	return readErr(err, "find company", posgate.NotFound("company", companyID))
}

// batchRows is how many rows one INSERT (or DELETE) statement of an import
// carries: binding many rows per statement spares the driver's fixed cost
// per statement, which dominates single-row statements.
const batchRows = 100

// execBatches runs head + n rows + tail in statements of batchRows rows
// (the last one shorter), one prepared statement serving every full batch;
// args appends row i's values to dst. stmts, when not nil, keeps that
// statement for the next call (preparing one of a hundred rows costs about
// as much as running it); the caller closes them.
func execBatches(ctx context.Context, tx *sql.Tx, stmts map[string]*sql.Stmt, head, row, tail string, n int, args func(dst []any, i int) []any) error {
	var full *sql.Stmt
	fullSQL := ""
	buf := make([]any, 0, batchRows*strings.Count(row, "?"))
	for start := 0; start < n; start += batchRows {
		end := min(start+batchRows, n)
		buf = buf[:0]
		for i := start; i < end; i++ {
			buf = args(buf, i)
		}
		var err error
		if end-start == batchRows {
			if full == nil {
				fullSQL = batchSQL(head, row, tail, batchRows)
				if full = stmts[fullSQL]; full == nil {
					if full, err = tx.PrepareContext(ctx, fullSQL); err != nil {
						return err
					}
					if stmts != nil {
						stmts[fullSQL] = full
					} else {
						defer full.Close()
					}
				}
			}
			_, err = full.ExecContext(ctx, buf...)
		} else {
			_, err = tx.ExecContext(ctx, batchSQL(head, row, tail, end-start), buf...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// batchSQL is head, n copies of row separated by commas, and tail.
func batchSQL(head, row, tail string, n int) string {
	var b strings.Builder
	b.Grow(len(head) + n*(len(row)+1) + len(tail))
	b.WriteString(head)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	b.WriteString(tail)
	return b.String()
}

// How long an import may hold SQLite's write lock while its request body
// is still arriving (see BeginPromotionImport): importStall waiting for
// the next batch of items, importLockBudget in all.
const (
	importStall      = 250 * time.Millisecond
	importLockBudget = 10 * time.Second
)

// BeginPromotionImport starts an import. The promotions Add stages are kept
// in memory, compactly encoded, and a writer goroutine writes them into the
// database as they come, in one write transaction, so that writing overlaps
// decoding and Commit has little left to do. SQLite has one writer at a
// time, so while that transaction is open other writes (sessions, other
// imports) wait: if the writer waits longer than importStall for the next
// batch of items (the upload is slower than the import), or the body is
// still arriving importLockBudget after the transaction began, it rolls
// back and steps aside, and Commit then writes everything in a transaction
// of its own. A slow upload thus holds the lock for a moment only, plus its
// commit.
func (db *DB) BeginPromotionImport(ctx context.Context, posSystemID, companyID string) (posgate.PromotionImport, error) {
	if err := companyExists(ctx, db.read, posSystemID, companyID); err != nil {
		return nil, err
	}
	imp := &promotionImport{db: db, posSystemID: posSystemID, companyID: companyID, now: formatTime(db.now()),
		more: make(chan struct{}, 1), closing: make(chan struct{})}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	imp.cancel = cancel
	imp.writer = make(chan writeResult, 1)
	limits := writeLimits{stall: importStall, budget: importLockBudget}
	if db.importStall > 0 {
		limits.stall = db.importStall
	}
	go func() { imp.writer <- imp.write(wctx, limits) }()
	return imp, nil
}

// promotionImport is SQLite's posgate.PromotionImport.
type promotionImport struct {
	db                     *DB
	posSystemID, companyID string
	now                    string // the import's CreatedAt and UpdatedAt
	chunk                  []byte // where the next record goes

	mu     sync.Mutex
	staged [][]staged // in chunks, so that growing never copies them; under mu
	n      int        // how many are staged; under mu

	more    chan struct{}    // Add → writer: more are staged
	closing chan struct{}    // closed by Commit: nothing more comes
	cancel  func()           // stops the writer
	writer  chan writeResult // the early writer's outcome
	state   int              // 0 open, 1 committing, 2 finished
}

// staged is one promotion waiting to be written: 96 bytes and its record.
type staged struct {
	id          string
	record      []byte // within a chunk of records
	from, until int64  // the validity bounds, Unix microseconds
	bounds      uint8  // hasFrom | hasUntil
	locations   []string
}

const (
	hasFrom = 1 << iota
	hasUntil
)

// Chunk sizes: large enough that chunks are few, small enough that a new
// one costs little (one growing buffer would copy all of it at each
// doubling).
const (
	recordChunk = 1 << 20
	stagedChunk = 4096
)

// Add encodes and stages p.
func (imp *promotionImport) Add(ctx context.Context, p *posgate.Promotion) error {
	if imp.state != 0 {
		return fmt.Errorf("sqlite: promotion import already finished")
	}
	if cap(imp.chunk)-len(imp.chunk) < 4096 {
		imp.chunk = make([]byte, 0, recordChunk)
	}
	start := len(imp.chunk)
	imp.chunk = promorecord.Append(imp.chunk, p) // a huge record moves to a buffer of its own
	s := staged{id: p.ID, record: imp.chunk[start:len(imp.chunk):len(imp.chunk)], locations: p.LocationIDs}
	from, until := p.ValidityBounds()
	if from != nil {
		s.from, s.bounds = from.UnixMicro(), s.bounds|hasFrom
	}
	if until != nil {
		s.until, s.bounds = until.UnixMicro(), s.bounds|hasUntil
	}
	imp.mu.Lock()
	if len(imp.staged) == 0 || len(imp.staged[len(imp.staged)-1]) == stagedChunk {
		imp.staged = append(imp.staged, make([]staged, 0, stagedChunk))
	}
	last := &imp.staged[len(imp.staged)-1]
	*last = append(*last, s)
	imp.n++
	full := imp.n%writeBatch == 0
	imp.mu.Unlock()
	if full {
		select {
		case imp.more <- struct{}{}:
		default: // the writer has a wake-up pending already
		}
	}
	return nil
}

// take returns the staged promotions from index from on, at most max, and
// none while fewer than min are there. Entries never move once staged, so
// the pointers stay valid.
func (imp *promotionImport) take(from, min, max int) []*staged {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	if imp.n-from < min {
		return nil
	}
	var out []*staged
	for i := from; i < imp.n && len(out) < max; i++ {
		out = append(out, &imp.staged[i/stagedChunk][i%stagedChunk])
	}
	return out
}

// bound is a validity bound for binding: Unix microseconds, or NULL.
func bound(micros int64, set bool) any {
	if !set {
		return nil
	}
	return micros
}

// writeResult is what a write run leaves: its open transaction and counts,
// or that it stepped aside (nothing written), or an error.
type writeResult struct {
	tx               *sql.Tx
	created, updated int
	steppedAside     bool
	err              error
}

// writeLimits bound how long a write run holds the lock while the body is
// still arriving; zero: no bound (the body has arrived).
type writeLimits struct{ stall, budget time.Duration }

// write opens the write transaction and writes the staged promotions as
// they come, until Commit closes imp.closing and the last is written. While
// the body is still arriving it steps aside (rolls back) when lim says so.
func (imp *promotionImport) write(ctx context.Context, lim writeLimits) writeResult {
	tx, err := imp.db.write.BeginTx(ctx, nil)
	if err != nil {
		return writeResult{err: err}
	}
	began := time.Now()
	w := &writeRun{imp: imp, tx: tx, places: map[string]int64{}, seen: map[string]struct{}{}, stmts: map[string]*sql.Stmt{}}
	defer func() {
		for _, st := range w.stmts {
			st.Close()
		}
	}()
	fail := func(err error) writeResult {
		tx.Rollback()
		return writeResult{err: err}
	}
	stepAside := func() writeResult {
		tx.Rollback()
		return writeResult{steppedAside: true}
	}
	if err := companyExists(ctx, tx, imp.posSystemID, imp.companyID); err != nil {
		return fail(err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM promotions`).Scan(&w.next); err != nil {
		return fail(err)
	}
	if err := w.loadExisting(ctx); err != nil {
		return fail(err)
	}
	closing := imp.closing
	done := 0
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	timer.Stop()
	for {
		if closing != nil && lim.budget > 0 && time.Since(began) > lim.budget {
			return stepAside()
		}
		// Whole batches while the body arrives (statements of a few rows
		// cost nearly as much as full ones), whatever is left at the end.
		least := writeBatch
		if closing == nil {
			least = 1
		}
		if batch := imp.take(done, least, writeBatch); len(batch) > 0 {
			if err := w.batch(ctx, batch); err != nil {
				return fail(err)
			}
			done += len(batch)
			continue
		}
		if closing == nil { // Commit is waiting, and everything is written
			if w.twice != "" {
				return fail(storekit.PromotionGivenTwice(w.twice))
			}
			if err := w.addLocations(ctx); err != nil {
				return fail(err)
			}
			if err := bumpCatalogueVersion(ctx, tx, imp.posSystemID, imp.companyID); err != nil {
				return fail(err)
			}
			return writeResult{tx: tx, created: w.created, updated: w.updated}
		}
		var stalled <-chan time.Time
		if lim.stall > 0 {
			timer.Reset(lim.stall)
			stalled = timer.C
		}
		select {
		case <-imp.more:
		case <-closing:
			closing = nil
		case <-stalled:
			return stepAside()
		case <-ctx.Done():
			return fail(ctx.Err())
		}
		timer.Stop()
	}
}

// writeBatch is how many staged promotions the writer takes at a time.
const writeBatch = 1000

// writeRun is the state of one write transaction.
type writeRun struct {
	imp              *promotionImport
	tx               *sql.Tx
	next             int64            // the last rowid given
	places           map[string]int64 // location id → promotion_places.id
	seen             map[string]struct{}
	existing         map[string]int64     // the company's stored promotions' rowids
	added            []locationRow        // promotion_locations rows to insert at the end
	twice            string               // an id staged twice
	stmts            map[string]*sql.Stmt // the run's prepared statements
	created, updated int
}

// locationRow is one row of promotion_locations.
type locationRow struct{ place, promotion int64 }

// target is a staged promotion with what the writer decided for it.
type target struct {
	*staged
	rowid     int64
	unchanged bool
	old       []string // the stored location list of a changed one
}

// batch writes some staged promotions: it finds which are stored (and
// their records), gives the new ones rowids after the largest, upserts
// those that changed (an unchanged one keeps its UpdatedAt) and brings
// promotion_locations in line with their location lists, deleting only the
// pairs that went away and inserting only new ones, in key order.
func (w *writeRun) batch(ctx context.Context, batch []*staged) error {
	imp := w.imp
	ts := make([]target, 0, len(batch))
	for _, s := range batch {
		if _, dup := w.seen[s.id]; dup {
			if w.twice == "" {
				w.twice = s.id
			}
			continue
		}
		w.seen[s.id] = struct{}{}
		ts = append(ts, target{staged: s})
	}
	// The stored ones (the write run knows their rowids), with their
	// records.
	var stored []any
	for i := range ts {
		if rowid, ok := w.existing[ts[i].id]; ok {
			ts[i].rowid = rowid
			stored = append(stored, rowid)
		}
	}
	byRowid := make(map[int64]*target, len(stored))
	for i := range ts {
		if ts[i].rowid != 0 {
			byRowid[ts[i].rowid] = &ts[i]
		}
	}
	for start := 0; start < len(stored); start += writeBatch {
		chunk := stored[start:min(start+writeBatch, len(stored))]
		rows, err := w.tx.QueryContext(ctx, `SELECT id, data FROM promotions WHERE id IN (`+
			strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",")+`)`, chunk...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var rowid int64
			var data sql.RawBytes
			if err := rows.Scan(&rowid, &data); err != nil {
				rows.Close()
				return err
			}
			t := byRowid[rowid]
			w.updated++
			if bytes.Equal(data, t.record) {
				t.unchanged = true // its bounds and locations derive from the record
				continue
			}
			if t.old, err = promorecord.Locations(data); err != nil {
				rows.Close()
				return fmt.Errorf("promotion %q: %w", t.id, err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	var write []*target
	for i := range ts {
		t := &ts[i]
		if t.rowid == 0 {
			w.next++
			t.rowid = w.next
			w.created++
		}
		if !t.unchanged {
			write = append(write, t)
			if err := w.ensurePlaces(ctx, t.locations); err != nil {
				return err
			}
			if err := w.ensurePlaces(ctx, t.old); err != nil {
				return err
			}
		}
	}
	var removed []locationRow
	for _, t := range write {
		for _, l := range t.old {
			if !slices.Contains(t.locations, l) {
				removed = append(removed, locationRow{w.places[l], t.rowid})
			}
		}
		for _, l := range t.locations {
			if !slices.Contains(t.old, l) {
				w.added = append(w.added, locationRow{w.places[l], t.rowid})
			}
		}
	}
	// The values every row shares are bound once per statement, not per row.
	err := execBatches(ctx, w.tx, w.stmts, `INSERT INTO promotions (id, pos_system_id, company_id, promotion_id, all_locations, valid_from, valid_until, data, created_at, updated_at)
		SELECT column1, ?, ?, column2, column3, column4, column5, column6, ?, ? FROM (VALUES `,
		`(?, ?, ?, ?, ?, ?)`,
		`) WHERE true ON CONFLICT (id) DO UPDATE SET all_locations = excluded.all_locations, valid_from = excluded.valid_from,
			valid_until = excluded.valid_until, data = excluded.data, updated_at = excluded.updated_at`,
		len(write), func(dst []any, i int) []any {
			if len(dst) == 0 {
				dst = append(dst, imp.posSystemID, imp.companyID, imp.now, imp.now)
			}
			t := write[i]
			return append(dst, t.rowid, t.id, len(t.locations) == 0, bound(t.from, t.bounds&hasFrom != 0),
				bound(t.until, t.bounds&hasUntil != 0), t.record)
		})
	if err != nil {
		return err
	}
	return execBatches(ctx, w.tx, w.stmts, `DELETE FROM promotion_locations WHERE (place, promotion) IN (VALUES `, `(?, ?)`, `)`,
		len(removed), func(dst []any, i int) []any { return append(dst, removed[i].place, removed[i].promotion) })
}

// addLocations inserts the location pairs the run collected, in key order:
// then every insert appends to the index's last page, which is several
// times cheaper than inserting each batch's pairs among the others'.
func (w *writeRun) addLocations(ctx context.Context) error {
	slices.SortFunc(w.added, func(a, b locationRow) int {
		return cmp.Or(cmp.Compare(a.place, b.place), cmp.Compare(a.promotion, b.promotion))
	})
	return execBatches(ctx, w.tx, w.stmts, `INSERT INTO promotion_locations (place, promotion) VALUES `, `(?, ?)`, ``,
		len(w.added), func(dst []any, i int) []any { return append(dst, w.added[i].place, w.added[i].promotion) })
}

// loadExisting reads the rowids of the company's stored promotions (an
// index-only scan of the unique key; nothing for a company's first import).
func (w *writeRun) loadExisting(ctx context.Context) error {
	rows, err := w.tx.QueryContext(ctx, `SELECT promotion_id, id FROM promotions WHERE pos_system_id = ? AND company_id = ?`,
		w.imp.posSystemID, w.imp.companyID)
	if err != nil {
		return err
	}
	defer rows.Close()
	w.existing = map[string]int64{}
	for rows.Next() {
		var id string
		var rowid int64
		if err := rows.Scan(&id, &rowid); err != nil {
			return err
		}
		w.existing[id] = rowid
	}
	return rows.Err()
}

// ensurePlaces makes sure the locations ls have keys in w.places, reading
// them from promotion_places or numbering them there. A stored promotion's
// old locations have keys already; they are found the same way.
func (w *writeRun) ensurePlaces(ctx context.Context, ls []string) error {
	for _, l := range ls {
		if _, ok := w.places[l]; ok {
			continue
		}
		var id int64
		err := w.tx.QueryRowContext(ctx, `SELECT id FROM promotion_places WHERE pos_system_id = ? AND location_id = ?`,
			w.imp.posSystemID, l).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			err = w.tx.QueryRowContext(ctx, `INSERT INTO promotion_places (pos_system_id, location_id) VALUES (?, ?) RETURNING id`,
				w.imp.posSystemID, l).Scan(&id)
		}
		if err != nil {
			return fmt.Errorf("place of location %q: %w", l, err)
		}
		w.places[l] = id
	}
	return nil
}

// Rollback stops the writer and drops the staged promotions.
func (imp *promotionImport) Rollback() {
	if imp.state == 2 {
		return
	}
	imp.state = 2
	imp.cancel()
	if r := <-imp.writer; r.tx != nil {
		r.tx.Rollback()
	}
	imp.release()
}

// release lets the staged promotions go.
func (imp *promotionImport) release() {
	imp.mu.Lock()
	imp.chunk, imp.staged, imp.n = nil, nil, 0
	imp.mu.Unlock()
}

// Commit tells the writer that nothing more comes and commits what it
// wrote; if it had stepped aside, a new write run writes everything first.
func (imp *promotionImport) Commit(ctx context.Context) (created, updated int, err error) {
	if imp.state != 0 {
		return 0, 0, fmt.Errorf("sqlite: promotion import already finished")
	}
	imp.state = 2 // Rollback has nothing left to do
	defer imp.release()
	defer imp.cancel()
	close(imp.closing)
	var r writeResult
	select {
	case r = <-imp.writer:
	case <-ctx.Done():
		imp.cancel()
		if r = <-imp.writer; r.tx != nil {
			r.tx.Rollback()
		}
		return 0, 0, ctx.Err()
	}
	if r.steppedAside {
		// The writer gave the lock back while the body was arriving; it has
		// all arrived now.
		r = imp.write(ctx, writeLimits{})
	}
	if r.err == nil {
		started, _ := parseTime(imp.now)
		r.err = imp.db.logImport(ctx, r.tx, imp.posSystemID, imp.companyID, posgate.ImportKindPromotions, r.created, r.updated, started)
	}
	if r.err == nil {
		r.err = imp.db.emitTx(ctx, r.tx, posgate.ImportEvent(imp.posSystemID, imp.companyID, "promotions", r.created+r.updated, imp.db.timestamp()))
	}
	if r.err == nil {
		if r.err = r.tx.Commit(); r.err == nil {
			imp.db.outbox.Committed()
			return r.created, r.updated, nil
		}
	}
	if posgate.ErrorCode(r.err) != posgate.EINTERNAL {
		return 0, 0, r.err
	}
	return 0, 0, writeErr(r.err, "import promotions", nil, posgate.NotFound("company", imp.companyID))
}
