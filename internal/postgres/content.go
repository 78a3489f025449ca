package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

const slideCols = `s.pos_system_id, s.company_id, s.slide_id, s.position, s.image_url, s.title, s.text, s.duration_seconds, s.created_at, s.updated_at`

func scanSlide(r pgx.Row) (*posgate.Slide, error) {
	s := &posgate.Slide{}
	return s, r.Scan(&s.POSSystemID, &s.CompanyID, &s.ID, &s.Position, &s.ImageURL, &s.Title, &s.Text, &s.DurationSeconds, &s.CreatedAt, &s.UpdatedAt)
}

// CreateSlide stores s; a Position of 0 puts it after the company's last
// slide.
func (db *DB) CreateSlide(ctx context.Context, s *posgate.Slide) error {
	now := posgate.Timestamp(db.now())
	err := db.q(ctx).QueryRow(ctx, `INSERT INTO slides AS s (pos_system_id, company_id, slide_id, position, image_url, title, text, duration_seconds, created_at, updated_at)
		VALUES ($1, $2, $3, CASE WHEN $4::integer > 0 THEN $4::integer ELSE least(10000, 1 + coalesce(
			(SELECT max(x.position) FROM slides x WHERE x.pos_system_id = $1 AND x.company_id = $2), 0)) END,
			$5, $6, $7, $8, $9, $9)
		RETURNING s.position`,
		s.POSSystemID, s.CompanyID, s.ID, s.Position, s.ImageURL, s.Title, s.Text, s.DurationSeconds, now).Scan(&s.Position)
	if err != nil {
		return writeErr(err, "create slide", posgate.AlreadyExists("slide", s.ID), posgate.NotFound("company", s.CompanyID))
	}
	s.CreatedAt, s.UpdatedAt = now, now
	return nil
}

// FindSlide returns one slide of a company.
func (db *DB) FindSlide(ctx context.Context, posSystemID, companyID, slideID string) (*posgate.Slide, error) {
	s, err := scanSlide(db.q(ctx).QueryRow(ctx, `SELECT `+slideCols+` FROM slides s
		WHERE s.pos_system_id = $1 AND s.company_id = $2 AND s.slide_id = $3`, posSystemID, companyID, slideID))
	if err != nil {
		return nil, readErr(err, "find slide", posgate.NotFound("slide", slideID))
	}
	return s, nil
}

// ListSlides returns a company's slides by position, then id.
func (db *DB) ListSlides(ctx context.Context, posSystemID, companyID string) ([]*posgate.Slide, error) {
	return collect(ctx, db, "list slides", scanSlide, `SELECT `+slideCols+` FROM slides s
		WHERE s.pos_system_id = $1 AND s.company_id = $2 ORDER BY s.position, s.slide_id`, posSystemID, companyID)
}

// UpdateSlide changes the fields set in upd and returns the result.
func (db *DB) UpdateSlide(ctx context.Context, posSystemID, companyID, slideID string, upd posgate.SlideUpdate) (*posgate.Slide, error) {
	s, err := scanSlide(db.q(ctx).QueryRow(ctx, `UPDATE slides s SET
		position = coalesce($4, s.position), image_url = coalesce($5, s.image_url), title = coalesce($6, s.title),
		text = coalesce($7, s.text), duration_seconds = coalesce($8, s.duration_seconds), updated_at = $9
		WHERE s.pos_system_id = $1 AND s.company_id = $2 AND s.slide_id = $3
		RETURNING `+slideCols,
		posSystemID, companyID, slideID, upd.Position, upd.ImageURL, upd.Title, upd.Text, upd.DurationSeconds, posgate.Timestamp(db.now())))
	if err != nil {
		return nil, readErr(err, "update slide", posgate.NotFound("slide", slideID))
	}
	return s, nil
}

// DeleteSlide removes the slide and returns it.
func (db *DB) DeleteSlide(ctx context.Context, posSystemID, companyID, slideID string) (*posgate.Slide, error) {
	s, err := scanSlide(db.q(ctx).QueryRow(ctx, `DELETE FROM slides s
		WHERE s.pos_system_id = $1 AND s.company_id = $2 AND s.slide_id = $3 RETURNING `+slideCols,
		posSystemID, companyID, slideID))
	if err != nil {
		return nil, readErr(err, "delete slide", posgate.NotFound("slide", slideID))
	}
	return s, nil
}

// PutCarouselSettings creates or replaces the company's settings.
func (db *DB) PutCarouselSettings(ctx context.Context, c *posgate.CarouselSettings) error {
	now := posgate.Timestamp(db.now())
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO carousel_settings (pos_system_id, company_id, url_template, updated_at)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (pos_system_id, company_id) DO UPDATE SET url_template = excluded.url_template, updated_at = excluded.updated_at`,
		c.POSSystemID, c.CompanyID, c.URLTemplate, now)
	if err != nil {
		return writeErr(err, "put carousel settings", nil, posgate.NotFound("company", c.CompanyID))
	}
	c.UpdatedAt = now
	return nil
}

// FindCarouselSettings returns the company's settings.
func (db *DB) FindCarouselSettings(ctx context.Context, posSystemID, companyID string) (*posgate.CarouselSettings, error) {
	c := &posgate.CarouselSettings{}
	err := db.q(ctx).QueryRow(ctx, `SELECT pos_system_id, company_id, url_template, updated_at
		FROM carousel_settings WHERE pos_system_id = $1 AND company_id = $2`, posSystemID, companyID).
		Scan(&c.POSSystemID, &c.CompanyID, &c.URLTemplate, &c.UpdatedAt)
	if err != nil {
		return nil, readErr(err, "find carousel settings", posgate.NotFound("carousel settings of company", companyID))
	}
	return c, nil
}

const receiptCols = `r.pos_system_id, r.company_id, r.location_id, r.primary_text, r.secondary_text, r.target_url, r.created_at, r.updated_at`

func scanReceipt(row pgx.Row) (*posgate.ReceiptPromotion, error) {
	p := &posgate.ReceiptPromotion{}
	return p, row.Scan(&p.POSSystemID, &p.CompanyID, &p.LocationID, &p.PrimaryText, &p.SecondaryText, &p.TargetURL, &p.CreatedAt, &p.UpdatedAt)
}

// PutReceiptPromotion creates or replaces a receipt promotion. The INSERT
// writes nothing when the location is not one of the company's.
func (db *DB) PutReceiptPromotion(ctx context.Context, p *posgate.ReceiptPromotion) error {
	stored, err := scanReceipt(db.q(ctx).QueryRow(ctx, `INSERT INTO receipt_promotions AS r
		(pos_system_id, company_id, location_id, primary_text, secondary_text, target_url, created_at, updated_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $7
		WHERE $3 = '' OR EXISTS (SELECT 1 FROM locations l WHERE l.pos_system_id = $1 AND l.company_id = $2 AND l.location_id = $3)
		ON CONFLICT (pos_system_id, company_id, location_id) DO UPDATE SET
			primary_text = excluded.primary_text, secondary_text = excluded.secondary_text,
			target_url = excluded.target_url, updated_at = excluded.updated_at
		RETURNING `+receiptCols,
		p.POSSystemID, p.CompanyID, p.LocationID, p.PrimaryText, p.SecondaryText, p.TargetURL, posgate.Timestamp(db.now())))
	if err != nil {
		missing := storekit.ReceiptPromotionOwnerNotFound(p.CompanyID, p.LocationID)
		if errors.Is(err, pgx.ErrNoRows) {
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
	p, err := scanReceipt(db.q(ctx).QueryRow(ctx, `SELECT `+receiptCols+` FROM receipt_promotions r
		WHERE r.pos_system_id = $1 AND r.company_id = $2 AND r.location_id = $3`, posSystemID, companyID, locationID))
	if err != nil {
		return nil, readErr(err, "find receipt promotion", storekit.ReceiptPromotionNotFound(companyID, locationID))
	}
	return p, nil
}

// EffectiveReceiptPromotion returns the location's promotion, else the
// company default: the location's id sorts after ”.
func (db *DB) EffectiveReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*posgate.ReceiptPromotion, error) {
	p, err := scanReceipt(db.q(ctx).QueryRow(ctx, `SELECT `+receiptCols+` FROM receipt_promotions r
		WHERE r.pos_system_id = $1 AND r.company_id = $2 AND r.location_id IN ($3, '')
		ORDER BY r.location_id DESC LIMIT 1`, posSystemID, companyID, locationID))
	if err != nil {
		return nil, readErr(err, "find receipt promotion", storekit.ReceiptPromotionNotFound(companyID, locationID))
	}
	return p, nil
}

// ListReceiptPromotions returns the company's promotions, default first.
func (db *DB) ListReceiptPromotions(ctx context.Context, posSystemID, companyID string) ([]*posgate.ReceiptPromotion, error) {
	return collect(ctx, db, "list receipt promotions", scanReceipt, `SELECT `+receiptCols+` FROM receipt_promotions r
		WHERE r.pos_system_id = $1 AND r.company_id = $2 ORDER BY r.location_id`, posSystemID, companyID)
}

// DeleteReceiptPromotion removes a promotion and returns it.
func (db *DB) DeleteReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*posgate.ReceiptPromotion, error) {
	p, err := scanReceipt(db.q(ctx).QueryRow(ctx, `DELETE FROM receipt_promotions r
		WHERE r.pos_system_id = $1 AND r.company_id = $2 AND r.location_id = $3 RETURNING `+receiptCols,
		posSystemID, companyID, locationID))
	if err != nil {
		return nil, readErr(err, "delete receipt promotion", storekit.ReceiptPromotionNotFound(companyID, locationID))
	}
	return p, nil
}

// RecordImpression adds one to the day's counter of the slide at the
// terminal.
func (db *DB) RecordImpression(ctx context.Context, i *posgate.Impression) error {
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO carousel_impressions AS c
		(pos_system_id, company_id, day, location_id, terminal_id, slide_id, count) VALUES ($1, $2, $3, $4, $5, $6, 1)
		ON CONFLICT (pos_system_id, company_id, day, location_id, terminal_id, slide_id) DO UPDATE SET count = c.count + 1`,
		i.POSSystemID, i.CompanyID, posgate.ImpressionDay(i.At), i.LocationID, i.TerminalID, i.SlideID)
	if err != nil {
		return writeErr(err, "record impression", nil, posgate.NotFound("terminal", i.TerminalID))
	}
	return nil
}

// CountImpressions sums the counters of the query's days.
func (db *DB) CountImpressions(ctx context.Context, q posgate.ImpressionQuery) ([]*posgate.ImpressionCount, error) {
	return collect(ctx, db, "count impressions", func(r pgx.Row) (*posgate.ImpressionCount, error) {
		c := &posgate.ImpressionCount{}
		return c, r.Scan(&c.LocationID, &c.TerminalID, &c.SlideID, &c.Count)
	}, `SELECT location_id, terminal_id, slide_id, sum(count)::bigint FROM carousel_impressions
		WHERE pos_system_id = $1 AND company_id = $2 AND day BETWEEN $3::date AND $4::date
			AND ($5 = '' OR location_id = $5) AND ($6 = '' OR terminal_id = $6)
		GROUP BY location_id, terminal_id, slide_id ORDER BY location_id, terminal_id, slide_id`,
		q.POSSystemID, q.CompanyID, posgate.ImpressionDay(q.From), posgate.ImpressionDay(q.To), q.LocationID, q.TerminalID)
}

// EnsureSecret inserts candidate unless name exists, then reads what is
// stored. Two statements on purpose: in READ COMMITTED the SELECT takes a
// new snapshot, so it sees a row that a concurrent instance committed while
// the INSERT waited on it.
func (db *DB) EnsureSecret(ctx context.Context, name string, candidate []byte) ([]byte, error) {
	if _, err := db.q(ctx).Exec(ctx, `INSERT INTO secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		name, candidate, posgate.Timestamp(db.now())); err != nil {
		return nil, wrap(err, "ensure secret")
	}
	var v []byte
	if err := db.q(ctx).QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, wrap(err, "ensure secret")
	}
	return v, nil
}
