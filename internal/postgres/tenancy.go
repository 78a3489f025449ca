package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Column lists in the order the *Dest functions scan them; every query names
// its tables p, c, l and t.
const (
	posSystemCols = `p.id, p.name, p.created_at`
	companyCols   = `c.pos_system_id, c.company_id, c.name, c.status, c.coupons, c.receipt_promotion, c.carousel, c.promotion_import, c.transactions, c.products_import, c.created_at, c.updated_at, c.time_zone`
	locationCols  = `l.pos_system_id, l.location_id, l.company_id, l.name, l.status, l.created_at, l.updated_at, l.time_zone`
	terminalCols  = `t.pos_system_id, t.location_id, t.terminal_id, t.name, t.status, t.created_at, t.updated_at`
)

func companyDest(c *posgate.Company) []any {
	f := &c.Features
	return []any{&c.POSSystemID, &c.ID, &c.Name, &c.Status, &f.Coupons, &f.ReceiptPromotion, &f.Carousel, &f.PromotionImport, &f.Transactions, &f.ProductsImport, &c.CreatedAt, &c.UpdatedAt, &c.TimeZone}
}

func locationDest(l *posgate.Location) []any {
	return []any{&l.POSSystemID, &l.ID, &l.CompanyID, &l.Name, &l.Status, &l.CreatedAt, &l.UpdatedAt, &l.TimeZone}
}

func scanPOSSystem(r pgx.Row) (*posgate.POSSystem, error) {
	p := &posgate.POSSystem{}
	return p, r.Scan(&p.ID, &p.Name, &p.CreatedAt)
}

func scanCompany(r pgx.Row) (*posgate.Company, error) {
	c := &posgate.Company{}
	return c, r.Scan(companyDest(c)...)
}

func scanLocation(r pgx.Row) (*posgate.Location, error) {
	l := &posgate.Location{}
	return l, r.Scan(locationDest(l)...)
}

func scanTerminal(r pgx.Row) (*posgate.Terminal, error) {
	t := &posgate.Terminal{}
	return t, r.Scan(&t.POSSystemID, &t.LocationID, &t.ID, &t.Name, &t.Status, &t.CreatedAt, &t.UpdatedAt)
}

// CreatePOSSystem stores p and sets its CreatedAt.
func (db *DB) CreatePOSSystem(ctx context.Context, p *posgate.POSSystem) error {
	now := posgate.Timestamp(db.now())
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO pos_systems (id, name, created_at) VALUES ($1, $2, $3)`, p.ID, p.Name, now)
	if err != nil {
		return writeErr(err, "create POS system", posgate.AlreadyExists("POS system", p.ID), nil)
	}
	p.CreatedAt = now
	return nil
}

// FindPOSSystem returns the POS system id.
func (db *DB) FindPOSSystem(ctx context.Context, id string) (*posgate.POSSystem, error) {
	p, err := scanPOSSystem(db.q(ctx).QueryRow(ctx, `SELECT `+posSystemCols+` FROM pos_systems p WHERE p.id = $1`, id))
	if err != nil {
		return nil, readErr(err, "find POS system", posgate.NotFound("POS system", id))
	}
	return p, nil
}

// ListPOSSystems returns every POS system by id.
func (db *DB) ListPOSSystems(ctx context.Context) ([]*posgate.POSSystem, error) {
	return collect(ctx, db, "list POS systems", scanPOSSystem, `SELECT `+posSystemCols+` FROM pos_systems p ORDER BY p.id`)
}

// CreateCompany stores c and sets its CreatedAt and UpdatedAt.
func (db *DB) CreateCompany(ctx context.Context, c *posgate.Company) error {
	now := posgate.Timestamp(db.now())
	f := c.Features
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO companies (pos_system_id, company_id, name, status,
		coupons, receipt_promotion, carousel, promotion_import, transactions, created_at, updated_at, products_import, time_zone)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12)`,
		c.POSSystemID, c.ID, c.Name, c.Status, f.Coupons, f.ReceiptPromotion, f.Carousel, f.PromotionImport, f.Transactions, now, f.ProductsImport, c.TimeZone)
	if err != nil {
		return writeErr(err, "create company", posgate.AlreadyExists("company", c.ID), posgate.NotFound("POS system", c.POSSystemID))
	}
	c.CreatedAt, c.UpdatedAt = now, now
	return nil
}

// FindCompany returns one company of a POS system.
func (db *DB) FindCompany(ctx context.Context, posSystemID, companyID string) (*posgate.Company, error) {
	ctx = storekit.PointRead(ctx)
	c, err := scanCompany(db.q(ctx).QueryRow(ctx, `SELECT `+companyCols+` FROM companies c
		WHERE c.pos_system_id = $1 AND c.company_id = $2`, posSystemID, companyID))
	if err != nil {
		return nil, readErr(err, "find company", posgate.NotFound("company", companyID))
	}
	return c, nil
}

// ListCompanies returns a POS system's companies by id.
func (db *DB) ListCompanies(ctx context.Context, posSystemID string) ([]*posgate.Company, error) {
	return collect(ctx, db, "list companies", scanCompany, `SELECT `+companyCols+` FROM companies c
		WHERE c.pos_system_id = $1 ORDER BY c.company_id`, posSystemID)
}

// UpdateCompany changes the fields upd names and returns the result.
func (db *DB) UpdateCompany(ctx context.Context, posSystemID, companyID string, upd posgate.CompanyUpdate) (*posgate.Company, error) {
	var coupons, receiptPromotion, carousel, promotionImport, transactions, productsImport *bool
	if f := upd.Features; f != nil {
		coupons, receiptPromotion, carousel, promotionImport, transactions = &f.Coupons, &f.ReceiptPromotion, &f.Carousel, &f.PromotionImport, &f.Transactions
		productsImport = &f.ProductsImport
	}
	c, err := scanCompany(db.q(ctx).QueryRow(ctx, `UPDATE companies c SET
		name = coalesce($3, c.name), status = coalesce($4, c.status),
		coupons = coalesce($5, c.coupons), receipt_promotion = coalesce($6, c.receipt_promotion),
		carousel = coalesce($7, c.carousel), promotion_import = coalesce($8, c.promotion_import),
		transactions = coalesce($9, c.transactions), products_import = coalesce($11, c.products_import), updated_at = $10,
		time_zone = coalesce($12, c.time_zone)
		WHERE c.pos_system_id = $1 AND c.company_id = $2
		RETURNING `+companyCols,
		posSystemID, companyID, upd.Name, upd.Status, coupons, receiptPromotion, carousel, promotionImport, transactions,
		posgate.Timestamp(db.now()), productsImport, upd.TimeZone))
	if err != nil {
		return nil, readErr(err, "update company", posgate.NotFound("company", companyID))
	}
	return c, nil
}

// CreateLocation stores l and sets its CreatedAt and UpdatedAt.
func (db *DB) CreateLocation(ctx context.Context, l *posgate.Location) error {
	now := posgate.Timestamp(db.now())
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO locations (pos_system_id, location_id, company_id, name, status, created_at, updated_at, time_zone)
		VALUES ($1, $2, $3, $4, $5, $6, $6, $7)`, l.POSSystemID, l.ID, l.CompanyID, l.Name, l.Status, now, l.TimeZone)
	if err != nil {
		return writeErr(err, "create location", posgate.AlreadyExists("location", l.ID), posgate.NotFound("company", l.CompanyID))
	}
	l.CreatedAt, l.UpdatedAt = now, now
	return nil
}

// FindLocation returns a location with its company, in one round trip: the
// POS routes need both for every request.
func (db *DB) FindLocation(ctx context.Context, posSystemID, locationID string) (*posgate.Location, error) {
	l := &posgate.Location{Company: &posgate.Company{}}
	err := db.q(ctx).QueryRow(ctx, `SELECT `+locationCols+`, `+companyCols+`
		FROM locations l JOIN companies c ON c.pos_system_id = l.pos_system_id AND c.company_id = l.company_id
		WHERE l.pos_system_id = $1 AND l.location_id = $2`, posSystemID, locationID).
		Scan(append(locationDest(l), companyDest(l.Company)...)...)
	if err != nil {
		return nil, readErr(err, "find location", posgate.NotFound("location", locationID))
	}
	return l, nil
}

// ListLocations returns a POS system's locations by id, only companyID's
// when it is not empty.
func (db *DB) ListLocations(ctx context.Context, posSystemID, companyID string) ([]*posgate.Location, error) {
	return collect(ctx, db, "list locations", scanLocation, `SELECT `+locationCols+` FROM locations l
		WHERE l.pos_system_id = $1 AND ($2::text = '' OR l.company_id = $2)
		ORDER BY l.location_id`, posSystemID, companyID)
}

// UpdateLocation changes the fields upd names and returns the result
// (without its Company).
func (db *DB) UpdateLocation(ctx context.Context, posSystemID, locationID string, upd posgate.LocationUpdate) (*posgate.Location, error) {
	l, err := scanLocation(db.q(ctx).QueryRow(ctx, `UPDATE locations l SET
		name = coalesce($3, l.name), status = coalesce($4, l.status), updated_at = $5,
		time_zone = coalesce($6, l.time_zone)
		WHERE l.pos_system_id = $1 AND l.location_id = $2
		RETURNING `+locationCols,
		posSystemID, locationID, upd.Name, upd.Status, posgate.Timestamp(db.now()), upd.TimeZone))
	if err != nil {
		return nil, readErr(err, "update location", posgate.NotFound("location", locationID))
	}
	return l, nil
}

// CreateTerminal stores t and sets its CreatedAt and UpdatedAt.
func (db *DB) CreateTerminal(ctx context.Context, t *posgate.Terminal) error {
	now := posgate.Timestamp(db.now())
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO terminals (pos_system_id, location_id, terminal_id, name, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, t.POSSystemID, t.LocationID, t.ID, t.Name, t.Status, now)
	if err != nil {
		return writeErr(err, "create terminal", posgate.AlreadyExists("terminal", t.ID), posgate.NotFound("location", t.LocationID))
	}
	t.CreatedAt, t.UpdatedAt = now, now
	return nil
}

// FindTerminal returns one terminal of a location.
func (db *DB) FindTerminal(ctx context.Context, posSystemID, locationID, terminalID string) (*posgate.Terminal, error) {
	t, err := scanTerminal(db.q(ctx).QueryRow(ctx, `SELECT `+terminalCols+` FROM terminals t
		WHERE t.pos_system_id = $1 AND t.location_id = $2 AND t.terminal_id = $3`, posSystemID, locationID, terminalID))
	if err != nil {
		return nil, readErr(err, "find terminal", posgate.NotFound("terminal", terminalID))
	}
	return t, nil
}

// ListTerminals returns a POS system's terminals by location and id, only
// locationID's when it is not empty.
func (db *DB) ListTerminals(ctx context.Context, posSystemID, locationID string) ([]*posgate.Terminal, error) {
	if locationID != "" {
		// One location's (the store cache's miss): a range of the key, whose
		// plan does not depend on the arguments.
		return collect(ctx, db, "list terminals", scanTerminal, `SELECT `+terminalCols+` FROM terminals t
			WHERE t.pos_system_id = $1 AND t.location_id = $2 ORDER BY t.terminal_id`, posSystemID, locationID)
	}
	return collect(ctx, db, "list terminals", scanTerminal, `SELECT `+terminalCols+` FROM terminals t
		WHERE t.pos_system_id = $1 ORDER BY t.location_id, t.terminal_id`, posSystemID)
}

// UpdateTerminal changes the fields upd names and returns the result.
func (db *DB) UpdateTerminal(ctx context.Context, posSystemID, locationID, terminalID string, upd posgate.TerminalUpdate) (*posgate.Terminal, error) {
	t, err := scanTerminal(db.q(ctx).QueryRow(ctx, `UPDATE terminals t SET
		name = coalesce($4, t.name), status = coalesce($5, t.status), updated_at = $6
		WHERE t.pos_system_id = $1 AND t.location_id = $2 AND t.terminal_id = $3
		RETURNING `+terminalCols,
		posSystemID, locationID, terminalID, upd.Name, upd.Status, posgate.Timestamp(db.now())))
	if err != nil {
		return nil, readErr(err, "update terminal", posgate.NotFound("terminal", terminalID))
	}
	return t, nil
}
