package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// dayLayout is how impression days are stored: text that sorts as dates.
const dayLayout = "2006-01-02"

const slideCols = `pos_system_id, company_id, slide_id, position, image_url, title, text, duration_seconds, created_at, updated_at`

func slideDest(s *posgate.Slide) []any {
	return []any{&s.POSSystemID, &s.CompanyID, &s.ID, &s.Position, &s.ImageURL, &s.Title, &s.Text, &s.DurationSeconds,
		timeColumn{&s.CreatedAt}, timeColumn{&s.UpdatedAt}}
}

func slideNotFound(slideID string) *posgate.Error { return posgate.NotFound("slide", slideID) }

// CreateSlide stores s; a Position of 0 puts it after the company's last
// slide, computed in the INSERT so that two creations cannot take one place.
func (db *DB) CreateSlide(ctx context.Context, s *posgate.Slide) error {
	now := db.timestamp()
	err := db.w(ctx).QueryRowContext(ctx, `INSERT INTO slides (`+slideCols+`)
		VALUES (?1, ?2, ?3, CASE WHEN ?4 > 0 THEN ?4 ELSE MIN(10000, 1 + COALESCE(
			(SELECT MAX(position) FROM slides WHERE pos_system_id = ?1 AND company_id = ?2), 0)) END,
			?5, ?6, ?7, ?8, ?9, ?9)
		RETURNING position`,
		s.POSSystemID, s.CompanyID, s.ID, s.Position, s.ImageURL, s.Title, s.Text, s.DurationSeconds, formatTime(now)).Scan(&s.Position)
	if err != nil {
		return writeErr(err, "create slide", posgate.AlreadyExists("slide", s.ID), posgate.NotFound("company", s.CompanyID))
	}
	s.CreatedAt, s.UpdatedAt = now, now
	return nil
}

// FindSlide returns one slide of a company.
func (db *DB) FindSlide(ctx context.Context, posSystemID, companyID, slideID string) (*posgate.Slide, error) {
	s, err := scanRow(db.read.QueryRowContext(ctx, `SELECT `+slideCols+` FROM slides
		WHERE pos_system_id = ? AND company_id = ? AND slide_id = ?`, posSystemID, companyID, slideID), slideDest)
	if err != nil {
		return nil, readErr(err, "find slide", slideNotFound(slideID))
	}
	return s, nil
}

// ListSlides returns a company's slides by position, then id.
func (db *DB) ListSlides(ctx context.Context, posSystemID, companyID string) ([]*posgate.Slide, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+slideCols+` FROM slides
		WHERE pos_system_id = ? AND company_id = ? ORDER BY position, slide_id`, posSystemID, companyID)
	return scanAll(rows, err, "list slides", slideDest)
}

// UpdateSlide changes the fields set in upd and returns the slide as the
// change left it.
func (db *DB) UpdateSlide(ctx context.Context, posSystemID, companyID, slideID string, upd posgate.SlideUpdate) (*posgate.Slide, error) {
	s, err := scanRow(db.w(ctx).QueryRowContext(ctx, `UPDATE slides SET
		position = COALESCE(?, position), image_url = COALESCE(?, image_url), title = COALESCE(?, title),
		text = COALESCE(?, text), duration_seconds = COALESCE(?, duration_seconds), updated_at = ?
		WHERE pos_system_id = ? AND company_id = ? AND slide_id = ?
		RETURNING `+slideCols,
		upd.Position, upd.ImageURL, upd.Title, upd.Text, upd.DurationSeconds, formatTime(db.now()),
		posSystemID, companyID, slideID), slideDest)
	if err != nil {
		return nil, readErr(err, "update slide", slideNotFound(slideID))
	}
	return s, nil
}

// DeleteSlide removes the slide and returns it.
func (db *DB) DeleteSlide(ctx context.Context, posSystemID, companyID, slideID string) (*posgate.Slide, error) {
	s, err := scanRow(db.w(ctx).QueryRowContext(ctx, `DELETE FROM slides
		WHERE pos_system_id = ? AND company_id = ? AND slide_id = ? RETURNING `+slideCols,
		posSystemID, companyID, slideID), slideDest)
	if err != nil {
		return nil, readErr(err, "delete slide", slideNotFound(slideID))
	}
	return s, nil
}

// PutCarouselSettings creates or replaces the company's settings.
func (db *DB) PutCarouselSettings(ctx context.Context, c *posgate.CarouselSettings) error {
	now := db.timestamp()
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO carousel_settings (pos_system_id, company_id, url_template, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (pos_system_id, company_id) DO UPDATE SET url_template = excluded.url_template, updated_at = excluded.updated_at`,
		c.POSSystemID, c.CompanyID, c.URLTemplate, formatTime(now)); err != nil {
		return writeErr(err, "put carousel settings", nil, posgate.NotFound("company", c.CompanyID))
	}
	c.UpdatedAt = now
	return nil
}

// FindCarouselSettings returns the company's settings.
func (db *DB) FindCarouselSettings(ctx context.Context, posSystemID, companyID string) (*posgate.CarouselSettings, error) {
	c, err := scanRow(db.findCarouselSettings.QueryRowContext(ctx, posSystemID, companyID),
		func(c *posgate.CarouselSettings) []any {
			return []any{&c.POSSystemID, &c.CompanyID, &c.URLTemplate, timeColumn{&c.UpdatedAt}}
		})
	if err != nil {
		return nil, readErr(err, "find carousel settings", posgate.NotFound("carousel settings of company", companyID))
	}
	return c, nil
}

const receiptCols = `pos_system_id, company_id, location_id, primary_text, secondary_text, target_url, created_at, updated_at`

// Reads of every transaction's answer (docs/api.md §13.1), prepared by Open.
const (
	findCarouselSettingsSQL = `SELECT pos_system_id, company_id, url_template, updated_at
		FROM carousel_settings WHERE pos_system_id = ? AND company_id = ?`
	effectiveReceiptSQL = `SELECT ` + receiptCols + ` FROM receipt_promotions
		WHERE pos_system_id = ? AND company_id = ? AND location_id IN (?, '')
		ORDER BY location_id DESC LIMIT 1`
)

func receiptDest(p *posgate.ReceiptPromotion) []any {
	return []any{&p.POSSystemID, &p.CompanyID, &p.LocationID, &p.PrimaryText, &p.SecondaryText, &p.TargetURL,
		timeColumn{&p.CreatedAt}, timeColumn{&p.UpdatedAt}}
}

// PutReceiptPromotion creates or replaces a receipt promotion. The INSERT
// writes nothing when the location is not one of the company's.
func (db *DB) PutReceiptPromotion(ctx context.Context, p *posgate.ReceiptPromotion) error {
	now := formatTime(db.now())
	row := db.w(ctx).QueryRowContext(ctx, `INSERT INTO receipt_promotions (`+receiptCols+`)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7
		WHERE ?3 = '' OR EXISTS (SELECT 1 FROM locations WHERE pos_system_id = ?1 AND company_id = ?2 AND location_id = ?3)
		ON CONFLICT (pos_system_id, company_id, location_id) DO UPDATE SET
			primary_text = excluded.primary_text, secondary_text = excluded.secondary_text,
			target_url = excluded.target_url, updated_at = excluded.updated_at
		RETURNING `+receiptCols,
		p.POSSystemID, p.CompanyID, p.LocationID, p.PrimaryText, p.SecondaryText, p.TargetURL, now)
	stored, err := scanRow(row, receiptDest)
	if err != nil {
		missing := storekit.ReceiptPromotionOwnerNotFound(p.CompanyID, p.LocationID)
		if errors.Is(err, sql.ErrNoRows) {
			return missing
		}
		return writeErr(err, "put receipt promotion", nil, missing)
	}
	*p = *stored
	return nil
}

// FindReceiptPromotion returns exactly the promotion of the location (or
// the company default for "").
func (db *DB) FindReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*posgate.ReceiptPromotion, error) {
	p, err := scanRow(db.read.QueryRowContext(ctx, `SELECT `+receiptCols+` FROM receipt_promotions
		WHERE pos_system_id = ? AND company_id = ? AND location_id = ?`, posSystemID, companyID, locationID), receiptDest)
	if err != nil {
		return nil, readErr(err, "find receipt promotion", storekit.ReceiptPromotionNotFound(companyID, locationID))
	}
	return p, nil
}

// EffectiveReceiptPromotion returns the location's promotion, else the
// company default: the location's id sorts after ”.
func (db *DB) EffectiveReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*posgate.ReceiptPromotion, error) {
	p, err := scanRow(db.effectiveReceipt.QueryRowContext(ctx, posSystemID, companyID, locationID), receiptDest)
	if err != nil {
		return nil, readErr(err, "find receipt promotion", storekit.ReceiptPromotionNotFound(companyID, locationID))
	}
	return p, nil
}

// ListReceiptPromotions returns the company's promotions, default first.
func (db *DB) ListReceiptPromotions(ctx context.Context, posSystemID, companyID string) ([]*posgate.ReceiptPromotion, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+receiptCols+` FROM receipt_promotions
		WHERE pos_system_id = ? AND company_id = ? ORDER BY location_id`, posSystemID, companyID)
	return scanAll(rows, err, "list receipt promotions", receiptDest)
}

// DeleteReceiptPromotion removes a promotion and returns it.
func (db *DB) DeleteReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*posgate.ReceiptPromotion, error) {
	p, err := scanRow(db.w(ctx).QueryRowContext(ctx, `DELETE FROM receipt_promotions
		WHERE pos_system_id = ? AND company_id = ? AND location_id = ? RETURNING `+receiptCols,
		posSystemID, companyID, locationID), receiptDest)
	if err != nil {
		return nil, readErr(err, "delete receipt promotion", storekit.ReceiptPromotionNotFound(companyID, locationID))
	}
	return p, nil
}

// RecordImpression adds one to the day's counter of the slide at the
// terminal.
func (db *DB) RecordImpression(ctx context.Context, i *posgate.Impression) error {
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO carousel_impressions
		(pos_system_id, company_id, day, location_id, terminal_id, slide_id, count) VALUES (?, ?, ?, ?, ?, ?, 1)
		ON CONFLICT (pos_system_id, company_id, day, location_id, terminal_id, slide_id) DO UPDATE SET count = count + 1`,
		i.POSSystemID, i.CompanyID, i.At.UTC().Format(dayLayout), i.LocationID, i.TerminalID, i.SlideID); err != nil {
		return writeErr(err, "record impression", nil, posgate.NotFound("terminal", i.TerminalID))
	}
	return nil
}

// CountImpressions sums the counters of the query's days.
func (db *DB) CountImpressions(ctx context.Context, q posgate.ImpressionQuery) ([]*posgate.ImpressionCount, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT location_id, terminal_id, slide_id, SUM(count) FROM carousel_impressions
		WHERE pos_system_id = ?1 AND company_id = ?2 AND day BETWEEN ?3 AND ?4
			AND (?5 = '' OR location_id = ?5) AND (?6 = '' OR terminal_id = ?6)
		GROUP BY location_id, terminal_id, slide_id ORDER BY location_id, terminal_id, slide_id`,
		q.POSSystemID, q.CompanyID, q.From.UTC().Format(dayLayout), q.To.UTC().Format(dayLayout), q.LocationID, q.TerminalID)
	return scanAll(rows, err, "count impressions", func(c *posgate.ImpressionCount) []any {
		return []any{&c.LocationID, &c.TerminalID, &c.SlideID, &c.Count}
	})
}

// EnsureSecret inserts candidate unless name exists, then reads what is
// stored, both on the write connection so that the read sees the insert.
func (db *DB) EnsureSecret(ctx context.Context, name string, candidate []byte) ([]byte, error) {
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, candidate, formatTime(db.now())); err != nil {
		return nil, fmt.Errorf("sqlite: ensure secret: %w", err)
	}
	var v []byte
	if err := db.w(ctx).QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = ?`, name).Scan(&v); err != nil {
		return nil, fmt.Errorf("sqlite: ensure secret: %w", err)
	}
	return v, nil
}
