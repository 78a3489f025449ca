package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/posgate/posgate"
)

// promotionCols are the columns a promotion is read from, in the order
// scanPromotion takes them.
const promotionCols = `promotions.promotion_id, promotions.data, promotions.created_at, promotions.updated_at`

// The "valid at" queries: the carousel runs them per request, so they are
// prepared once (preparePromotions). Both read only promotions whose
// validity bounds contain the time (?4); Go checks the recurrences.
const (
	// validAtLocationSQL finds the promotions of company ?2 that name
	// location ?3 (through promotion_locations' key) or no location
	// (promotions_everywhere), the latter only if ?3 is the company's.
	validAtLocationSQL = `SELECT ` + promotionCols + ` FROM promotion_locations
		JOIN promotions ON promotions.id = promotion_locations.promotion
		WHERE promotion_locations.pos_system_id = ?1 AND promotion_locations.location_id = ?3
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
	if err := decodePromotion(data, p); err != nil {
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
	return &promotionImport{db: db, posSystemID: posSystemID, companyID: companyID, ids: map[string]struct{}{}}, nil
}

// promotionImport is SQLite's posgate.PromotionImport.
type promotionImport struct {
	db                     *DB
	posSystemID, companyID string
	records                []byte // every staged record, back to back
	staged                 []staged
	ids                    map[string]struct{}
	done                   bool
}

// staged is one promotion waiting for Commit.
type staged struct {
	id           string
	record       [2]int // records[record[0]:record[1]]
	allLocations bool
	from, until  any // formatted time, or nil (NULL)
	locations    []string
	rowid        int64
	update       bool
}

// Add encodes and stages p.
func (imp *promotionImport) Add(ctx context.Context, p *posgate.Promotion) error {
	if imp.done {
		return fmt.Errorf("sqlite: promotion import already finished")
	}
	if _, dup := imp.ids[p.ID]; dup {
		return posgate.Errorf(posgate.ECONFLICT, "promotion %q is already part of this import", p.ID)
	}
	imp.ids[p.ID] = struct{}{}
	start := len(imp.records)
	imp.records = appendPromotion(imp.records, p)
	s := staged{id: p.ID, record: [2]int{start, len(imp.records)}, allLocations: len(p.LocationIDs) == 0, locations: p.LocationIDs}
	from, until := p.ValidityBounds()
	if from != nil {
		s.from = formatTime(*from)
	}
	if until != nil {
		s.until = formatTime(*until)
	}
	imp.staged = append(imp.staged, s)
	return nil
}

// Rollback drops the staged promotions.
func (imp *promotionImport) Rollback() {
	imp.done = true
	imp.records, imp.staged, imp.ids = nil, nil, nil
}

// locationRow is one row of promotion_locations.
type locationRow struct {
	location string
	rowid    int64
}

// Commit writes every staged promotion in one write transaction: it finds
// which exist, gives the new ones rowids after the largest, upserts them in
// id order, and brings promotion_locations in line with their new location
// lists (deleting only the pairs that went away, inserting only new ones,
// in key order).
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
	slices.SortFunc(imp.staged, func(a, b staged) int { return strings.Compare(a.id, b.id) })
	now := formatTime(db.now())

	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, wrap(err)
	}
	defer tx.Rollback()
	if err := companyExists(ctx, tx, imp.posSystemID, imp.companyID); err != nil {
		return 0, 0, err
	}
	existing, err := imp.existing(ctx, tx)
	if err != nil {
		return 0, 0, wrap(err)
	}
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM promotions`).Scan(&next); err != nil {
		return 0, 0, wrap(err)
	}
	var added, removed []locationRow
	var updates []int // indexes into staged
	for i := range imp.staged {
		s := &imp.staged[i]
		if rowid, ok := existing[s.id]; ok {
			s.rowid, s.update = rowid, true
			updates = append(updates, i)
			updated++
			continue
		}
		next++
		s.rowid = next
		created++
		for _, l := range s.locations {
			added = append(added, locationRow{l, s.rowid})
		}
	}
	if len(updates) > 0 {
		if added, removed, err = imp.locationChanges(ctx, tx, updates, added); err != nil {
			return 0, 0, wrap(err)
		}
	}

	err = execBatches(ctx, tx, `INSERT INTO promotions (id, pos_system_id, company_id, promotion_id, all_locations, valid_from, valid_until, data, created_at, updated_at) VALUES `,
		`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		` ON CONFLICT (id) DO UPDATE SET all_locations = excluded.all_locations, valid_from = excluded.valid_from,
			valid_until = excluded.valid_until, data = excluded.data, updated_at = excluded.updated_at`,
		len(imp.staged), func(dst []any, i int) []any {
			s := &imp.staged[i]
			return append(dst, s.rowid, imp.posSystemID, imp.companyID, s.id, s.allLocations, s.from, s.until,
				imp.records[s.record[0]:s.record[1]], now, now)
		})
	if err != nil {
		return 0, 0, wrap(err)
	}
	err = execBatches(ctx, tx, `DELETE FROM promotion_locations WHERE (pos_system_id, location_id, promotion) IN (VALUES `, `(?, ?, ?)`, `)`,
		len(removed), func(dst []any, i int) []any {
			return append(dst, imp.posSystemID, removed[i].location, removed[i].rowid)
		})
	if err != nil {
		return 0, 0, wrap(err)
	}
	// In key order, every insert appends to the index's pages.
	slices.SortFunc(added, func(a, b locationRow) int {
		return cmp.Or(strings.Compare(a.location, b.location), cmp.Compare(a.rowid, b.rowid))
	})
	err = execBatches(ctx, tx, `INSERT INTO promotion_locations (pos_system_id, location_id, promotion) VALUES `, `(?, ?, ?)`, ``,
		len(added), func(dst []any, i int) []any { return append(dst, imp.posSystemID, added[i].location, added[i].rowid) })
	if err != nil {
		return 0, 0, wrap(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, wrap(err)
	}
	return created, updated, nil
}

// existing maps the ids of the company's stored promotions to their rowids
// (an index-only scan of the unique key).
func (imp *promotionImport) existing(ctx context.Context, tx *sql.Tx) (map[string]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT promotion_id, id FROM promotions WHERE pos_system_id = ? AND company_id = ?`,
		imp.posSystemID, imp.companyID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var rowid int64
		if err := rows.Scan(&id, &rowid); err != nil {
			return nil, err
		}
		out[id] = rowid
	}
	return out, rows.Err()
}

// locationChanges reads the stored location lists of the promotions being
// replaced and adds to added and removed the pairs that differ from their
// new lists.
func (imp *promotionImport) locationChanges(ctx context.Context, tx *sql.Tx, updates []int, added []locationRow) (_, removed []locationRow, err error) {
	byRowid := make(map[int64]*staged, len(updates))
	for _, i := range updates {
		byRowid[imp.staged[i].rowid] = &imp.staged[i]
	}
	for start := 0; start < len(updates); start += batchRows {
		chunk := updates[start:min(start+batchRows, len(updates))]
		args := make([]any, len(chunk))
		for j, i := range chunk {
			args[j] = imp.staged[i].rowid
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, data FROM promotions WHERE id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",")+`)`, args...)
		if err != nil {
			return nil, nil, err
		}
		for rows.Next() {
			var rowid int64
			var data []byte
			if err := rows.Scan(&rowid, &data); err != nil {
				rows.Close()
				return nil, nil, err
			}
			old, err := decodeLocations(data)
			if err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("promotion %d: %w", rowid, err)
			}
			s := byRowid[rowid]
			for _, l := range old {
				if !slices.Contains(s.locations, l) {
					removed = append(removed, locationRow{l, rowid})
				}
			}
			for _, l := range s.locations {
				if !slices.Contains(old, l) {
					added = append(added, locationRow{l, rowid})
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
	}
	return added, removed, nil
}
