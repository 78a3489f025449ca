package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/promorecord"
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
	validAtLocation, validAnywhere *sql.Stmt
}

// preparePromotions prepares the promotion queries on the read pool.
func (db *DB) preparePromotions(ctx context.Context) error {
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{{&db.promo.validAtLocation, validAtLocationSQL}, {&db.promo.validAnywhere, validAnywhereSQL}} {
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
	for _, s := range []*sql.Stmt{db.promo.validAtLocation, db.promo.validAnywhere} {
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
		return nil, readErr(err, "find promotion", notFound("promotion", promotionID))
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
		WHERE pos_system_id = ? AND company_id = ? ORDER BY promotion_id LIMIT ? OFFSET ?`,
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
	at = at.UTC()
	keep := func(p *posgate.Promotion) bool { return p.ValidAt(at) }
	if locationID == "" {
		rows, err := db.promo.validAnywhere.QueryContext(ctx, posSystemID, companyID, formatTime(at))
		return scanPromotions(rows, err, posSystemID, companyID, keep)
	}
	rows, err := db.promo.validAtLocation.QueryContext(ctx, posSystemID, companyID, locationID, formatTime(at))
	return scanPromotions(rows, err, posSystemID, companyID, keep)
}

// FindCatalogue returns a company's catalogue, empty if it was never set.
func (db *DB) FindCatalogue(ctx context.Context, posSystemID, companyID string) (*posgate.Catalogue, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: find catalogue: %w", err)
	}
	defer tx.Rollback()
	if err := companyExists(ctx, tx, posSystemID, companyID); err != nil {
		return nil, err
	}
	c := &posgate.Catalogue{POSSystemID: posSystemID, CompanyID: companyID, CategoryIDs: []string{}, ProductIDs: []string{}}
	rows, err := tx.QueryContext(ctx, `SELECT kind, item_id FROM catalogue_items
		WHERE pos_system_id = ? AND company_id = ? ORDER BY kind, item_id`, posSystemID, companyID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: find catalogue: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, id string
		if err := rows.Scan(&kind, &id); err != nil {
			return nil, fmt.Errorf("sqlite: find catalogue: %w", err)
		}
		if kind == "category" {
			c.CategoryIDs = append(c.CategoryIDs, id)
		} else {
			c.ProductIDs = append(c.ProductIDs, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: find catalogue: %w", err)
	}
	return c, nil
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
	return readErr(err, "find company", notFound("company", companyID))
}

// ReplaceCatalogue replaces a company's catalogue with c in one transaction.
func (db *DB) ReplaceCatalogue(ctx context.Context, c *posgate.Catalogue) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: replace catalogue: %w", err)
	}
	defer tx.Rollback()
	if err := companyExists(ctx, tx, c.POSSystemID, c.CompanyID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM catalogue_items WHERE pos_system_id = ? AND company_id = ?`, c.POSSystemID, c.CompanyID); err != nil {
		return fmt.Errorf("sqlite: replace catalogue: %w", err)
	}
	type item struct{ kind, id string }
	var items []item
	for _, id := range c.CategoryIDs {
		items = append(items, item{"category", id})
	}
	for _, id := range c.ProductIDs {
		items = append(items, item{"product", id})
	}
	err = execBatches(ctx, tx, `INSERT OR IGNORE INTO catalogue_items (pos_system_id, company_id, kind, item_id) VALUES `, `(?, ?, ?, ?)`, ``,
		len(items), func(dst []any, i int) []any {
			return append(dst, c.POSSystemID, c.CompanyID, items[i].kind, items[i].id)
		})
	if err != nil {
		return fmt.Errorf("sqlite: replace catalogue: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: replace catalogue: %w", err)
	}
	return nil
}

// batchRows is how many rows one INSERT (or DELETE) statement of an import
// carries: binding many rows per statement spares the driver's fixed cost
// per statement, which dominates single-row statements.
const batchRows = 100

// execBatches runs head + n rows + tail in statements of batchRows rows
// (the last one shorter), one prepared statement serving every full batch;
// args appends row i's values to dst.
func execBatches(ctx context.Context, tx *sql.Tx, head, row, tail string, n int, args func(dst []any, i int) []any) error {
	var full *sql.Stmt
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
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
				if full, err = tx.PrepareContext(ctx, batchSQL(head, row, tail, batchRows)); err != nil {
					return err
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

// BeginPromotionImport starts an import. It holds no lock: the promotions
// are staged in memory, compactly encoded, and written in one transaction by
// Commit, so that a slow upload never holds SQLite's single write lock.
func (db *DB) BeginPromotionImport(ctx context.Context, posSystemID, companyID string) (posgate.PromotionImport, error) {
	if err := companyExists(ctx, db.read, posSystemID, companyID); err != nil {
		return nil, err
	}
	return &promotionImport{db: db, posSystemID: posSystemID, companyID: companyID, now: formatTime(db.now())}, nil
}

// promotionImport is SQLite's posgate.PromotionImport.
type promotionImport struct {
	db                     *DB
	posSystemID, companyID string
	now                    string     // the import's CreatedAt and UpdatedAt
	chunk                  []byte     // where the next record goes
	staged                 [][]staged // in chunks, so that growing never copies them
	n                      int
	done                   bool
}

// staged is one promotion waiting for Commit: 96 bytes and its record.
type staged struct {
	id          string
	record      []byte // within a chunk of records
	from, until int64  // the validity bounds, Unix microseconds
	bounds      uint8  // hasFrom | hasUntil
	unchanged   bool   // stored exactly so already
	rowid       int64
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
	if imp.done {
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
	if len(imp.staged) == 0 || len(imp.staged[len(imp.staged)-1]) == stagedChunk {
		imp.staged = append(imp.staged, make([]staged, 0, stagedChunk))
	}
	last := &imp.staged[len(imp.staged)-1]
	*last = append(*last, s)
	imp.n++
	return nil
}

// bound is a validity bound for binding: formatted, or NULL.
func bound(micros int64, set bool) any {
	if !set {
		return nil
	}
	return string(appendTimestamp(nil, time.UnixMicro(micros)))
}

// appendTimestamp appends t as formatTime does (timeLayout), without
// time.Format's general machinery: an import formats two per promotion.
func appendTimestamp(dst []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	digits := func(dst []byte, v, n int) []byte {
		for i := n - 1; i >= 0; i-- {
			dst = append(dst, 0)
		}
		for i := len(dst) - 1; n > 0; i, n = i-1, n-1 {
			dst[i] = byte('0' + v%10)
			v /= 10
		}
		return dst
	}
	dst = digits(dst, y, 4)
	dst = append(dst, '-')
	dst = digits(dst, int(mo), 2)
	dst = append(dst, '-')
	dst = digits(dst, d, 2)
	dst = append(dst, 'T')
	dst = digits(dst, h, 2)
	dst = append(dst, ':')
	dst = digits(dst, mi, 2)
	dst = append(dst, ':')
	dst = digits(dst, sec, 2)
	dst = append(dst, '.')
	dst = digits(dst, t.Nanosecond()/1000, 6)
	return append(dst, 'Z')
}

// Rollback drops the staged promotions.
func (imp *promotionImport) Rollback() {
	imp.done = true
	imp.chunk, imp.staged, imp.n = nil, nil, 0
}

// locationRow is one row of promotion_locations.
type locationRow struct{ place, promotion int64 }

// Commit writes every staged promotion in one write transaction: it reads
// which exist (with their records), gives the new ones rowids after the
// largest, upserts them in id order (except those stored exactly so
// already: their UpdatedAt stays), and brings promotion_locations in line
// with their location lists, deleting only the pairs that went away and
// inserting only new ones, in key order.
func (imp *promotionImport) Commit(ctx context.Context) (created, updated int, err error) {
	if imp.done {
		return 0, 0, fmt.Errorf("sqlite: promotion import already finished")
	}
	defer imp.Rollback()
	db := imp.db
	wrap := func(err error) error {
		if posgate.ErrorCode(err) != posgate.EINTERNAL {
			return err
		}
		return writeErr(err, "import promotions", nil, notFound("company", imp.companyID))
	}
	all := make([]*staged, 0, imp.n)
	for _, chunk := range imp.staged {
		for i := range chunk {
			all = append(all, &chunk[i])
		}
	}
	slices.SortFunc(all, func(a, b *staged) int { return strings.Compare(a.id, b.id) })
	for i := 1; i < len(all); i++ {
		if all[i].id == all[i-1].id {
			return 0, 0, posgate.Errorf(posgate.ECONFLICT, "promotion %q is given twice in this import", all[i].id)
		}
	}
	now := imp.now

	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, wrap(err)
	}
	defer tx.Rollback()
	if err := companyExists(ctx, tx, imp.posSystemID, imp.companyID); err != nil {
		return 0, 0, err
	}
	places, err := imp.places(ctx, tx, all)
	if err != nil {
		return 0, 0, wrap(err)
	}
	var added, removed []locationRow
	if updated, added, removed, err = imp.matchExisting(ctx, tx, all, places); err != nil {
		return 0, 0, wrap(err)
	}
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM promotions`).Scan(&next); err != nil {
		return 0, 0, wrap(err)
	}
	for _, s := range all {
		if s.rowid != 0 {
			continue
		}
		next++
		s.rowid = next
		created++
		for _, l := range s.locations {
			added = append(added, locationRow{places[l], s.rowid})
		}
	}

	// Promotions stored exactly so already are not written again.
	write := make([]*staged, 0, len(all))
	for _, s := range all {
		if !s.unchanged {
			write = append(write, s)
		}
	}
	// The values every row shares are bound once per statement, not per row.
	err = execBatches(ctx, tx, `INSERT INTO promotions (id, pos_system_id, company_id, promotion_id, all_locations, valid_from, valid_until, data, created_at, updated_at)
		SELECT column1, ?, ?, column2, column3, column4, column5, column6, ?, ? FROM (VALUES `,
		`(?, ?, ?, ?, ?, ?)`,
		`) WHERE true ON CONFLICT (id) DO UPDATE SET all_locations = excluded.all_locations, valid_from = excluded.valid_from,
			valid_until = excluded.valid_until, data = excluded.data, updated_at = excluded.updated_at`,
		len(write), func(dst []any, i int) []any {
			if len(dst) == 0 {
				dst = append(dst, imp.posSystemID, imp.companyID, now, now)
			}
			s := write[i]
			return append(dst, s.rowid, s.id, len(s.locations) == 0, bound(s.from, s.bounds&hasFrom != 0), bound(s.until, s.bounds&hasUntil != 0), s.record)
		})
	if err != nil {
		return 0, 0, wrap(err)
	}
	err = execBatches(ctx, tx, `DELETE FROM promotion_locations WHERE (place, promotion) IN (VALUES `, `(?, ?)`, `)`,
		len(removed), func(dst []any, i int) []any { return append(dst, removed[i].place, removed[i].promotion) })
	if err != nil {
		return 0, 0, wrap(err)
	}
	// In key order, every insert appends to the index's pages.
	slices.SortFunc(added, func(a, b locationRow) int {
		return cmp.Or(cmp.Compare(a.place, b.place), cmp.Compare(a.promotion, b.promotion))
	})
	err = execBatches(ctx, tx, `INSERT INTO promotion_locations (place, promotion) VALUES `, `(?, ?)`, ``,
		len(added), func(dst []any, i int) []any { return append(dst, added[i].place, added[i].promotion) })
	if err != nil {
		return 0, 0, wrap(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, wrap(err)
	}
	return created, updated, nil
}

// places returns the keys of the locations the staged promotions name,
// numbering those that have none yet.
func (imp *promotionImport) places(ctx context.Context, tx *sql.Tx, all []*staged) (map[string]int64, error) {
	places := map[string]int64{}
	for _, s := range all {
		for _, l := range s.locations {
			places[l] = 0
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT location_id, id FROM promotion_places WHERE pos_system_id = ?`, imp.posSystemID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var l string
		var id int64
		if err := rows.Scan(&l, &id); err != nil {
			return nil, err
		}
		places[l] = id // also for locations this import does not name: old lists may
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for l, id := range places {
		if id == 0 {
			if err := tx.QueryRowContext(ctx, `INSERT INTO promotion_places (pos_system_id, location_id) VALUES (?, ?) RETURNING id`,
				imp.posSystemID, l).Scan(&id); err != nil {
				return nil, err
			}
			places[l] = id
		}
	}
	return places, nil
}

// matchExisting finds which staged promotions are stored already, in one
// pass over the company's promotions in id order beside the staged ones
// (sorted the same way), gives them their rowids and lists the location
// pairs their new lists add and remove.
func (imp *promotionImport) matchExisting(ctx context.Context, tx *sql.Tx, all []*staged, places map[string]int64) (updated int, added, removed []locationRow, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT promotion_id, id, data FROM promotions
		WHERE pos_system_id = ? AND company_id = ? ORDER BY promotion_id`, imp.posSystemID, imp.companyID)
	if err != nil {
		return 0, nil, nil, err
	}
	defer rows.Close()
	var id sql.RawBytes
	var data sql.RawBytes
	var rowid int64
	j := 0
	for rows.Next() && j < len(all) {
		if err := rows.Scan(&id, &rowid, &data); err != nil {
			return 0, nil, nil, err
		}
		for j < len(all) && all[j].id < string(id) {
			j++
		}
		if j == len(all) || all[j].id != string(id) {
			continue
		}
		s := all[j]
		s.rowid = rowid
		updated++
		if bytes.Equal(data, s.record) {
			s.unchanged = true // its bounds and locations derive from the record
			continue
		}
		old, err := promorecord.Locations(data)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("promotion %q: %w", s.id, err)
		}
		for _, l := range old {
			if !slices.Contains(s.locations, l) {
				removed = append(removed, locationRow{places[l], rowid})
			}
		}
		for _, l := range s.locations {
			if !slices.Contains(old, l) {
				added = append(added, locationRow{places[l], rowid})
			}
		}
	}
	return updated, added, removed, rows.Err()
}
