package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/storekit"
)

// Column lists, qualified by table name so that they serve plain selects,
// joins and RETURNING clauses alike; each *Dest function lists the fields
// to scan them into, in the same order.
const (
	posSystemCols = `pos_systems.pos_system_id, pos_systems.name, pos_systems.created_at`
	companyCols   = `companies.pos_system_id, companies.company_id, companies.name, companies.status,
		companies.coupons, companies.receipt_promotion, companies.carousel, companies.promotion_import, companies.transactions,
		companies.products_import, companies.created_at, companies.updated_at, companies.time_zone`
	locationCols = `locations.pos_system_id, locations.location_id, locations.company_id, locations.name, locations.status,
		locations.created_at, locations.updated_at, locations.time_zone`
	terminalCols = `terminals.pos_system_id, terminals.location_id, terminals.terminal_id, terminals.name, terminals.status,
		terminals.created_at, terminals.updated_at`
	clientCols = `clients.client_id, clients.name, clients.secret_hash, COALESCE(clients.pos_system_id, ''), clients.scopes,
		(SELECT json_group_array(client_companies.company_id ORDER BY client_companies.position)
			FROM client_companies WHERE client_companies.client_id = clients.client_id),
		clients.disabled, clients.created_at, clients.updated_at, clients.rate_limit, clients.rate_burst`
)

// Queries prepared by Open.
const (
	findLocationSQL = `SELECT ` + locationCols + `, ` + companyCols + ` FROM locations
		JOIN companies ON companies.pos_system_id = locations.pos_system_id AND companies.company_id = locations.company_id
		WHERE locations.pos_system_id = ? AND locations.location_id = ?`
	findTerminalSQL = `SELECT ` + terminalCols + ` FROM terminals
		WHERE terminals.pos_system_id = ? AND terminals.location_id = ? AND terminals.terminal_id = ?`
	findClientSQL = `SELECT ` + clientCols + ` FROM clients WHERE clients.client_id = ?`
)

func posSystemDest(p *posgate.POSSystem) []any {
	return []any{&p.ID, &p.Name, timeColumn{&p.CreatedAt}}
}

// CreatePOSSystem stores p and sets its CreatedAt.
func (db *DB) CreatePOSSystem(ctx context.Context, p *posgate.POSSystem) error {
	now := db.timestamp()
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO pos_systems (pos_system_id, name, created_at) VALUES (?, ?, ?)`,
		p.ID, p.Name, formatTime(now)); err != nil {
		return writeErr(err, "create POS system", posgate.AlreadyExists("POS system", p.ID), nil)
	}
	p.CreatedAt = now
	return nil
}

// FindPOSSystem returns the POS system id.
func (db *DB) FindPOSSystem(ctx context.Context, id string) (*posgate.POSSystem, error) {
	p, err := scanRow(db.read.QueryRowContext(ctx, `SELECT `+posSystemCols+` FROM pos_systems WHERE pos_system_id = ?`, id), posSystemDest)
	if err != nil {
		return nil, readErr(err, "find POS system", posgate.NotFound("POS system", id))
	}
	return p, nil
}

// ListPOSSystems returns every POS system by id.
func (db *DB) ListPOSSystems(ctx context.Context) ([]*posgate.POSSystem, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+posSystemCols+` FROM pos_systems ORDER BY pos_system_id`)
	return scanAll(rows, err, "list POS systems", posSystemDest)
}

func companyDest(c *posgate.Company) []any {
	f := &c.Features
	return []any{&c.POSSystemID, &c.ID, &c.Name, &c.Status,
		&f.Coupons, &f.ReceiptPromotion, &f.Carousel, &f.PromotionImport, &f.Transactions,
		&f.ProductsImport, timeColumn{&c.CreatedAt}, timeColumn{&c.UpdatedAt}, &c.TimeZone}
}

// CreateCompany stores c and sets its CreatedAt and UpdatedAt.
func (db *DB) CreateCompany(ctx context.Context, c *posgate.Company) error {
	now := db.timestamp()
	f := c.Features
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO companies (pos_system_id, company_id, name, status,
		coupons, receipt_promotion, carousel, promotion_import, transactions, products_import, created_at, updated_at, time_zone)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.POSSystemID, c.ID, c.Name, c.Status,
		f.Coupons, f.ReceiptPromotion, f.Carousel, f.PromotionImport, f.Transactions, f.ProductsImport,
		formatTime(now), formatTime(now), c.TimeZone); err != nil {
		return writeErr(err, "create company", posgate.AlreadyExists("company", c.ID), posgate.NotFound("POS system", c.POSSystemID))
	}
	c.CreatedAt, c.UpdatedAt = now, now
	return nil
}

// findCompanySQL is FindCompany's statement, prepared once: the settings
// lookup reads the company on every request (it is not cached, see
// internal/storecache), and preparing it each time cost as much as running it.
const findCompanySQL = `SELECT ` + companyCols + ` FROM companies WHERE pos_system_id = ? AND company_id = ?`

// FindCompany returns company companyID of POS system posSystemID.
func (db *DB) FindCompany(ctx context.Context, posSystemID, companyID string) (*posgate.Company, error) {
	c, err := scanRow(db.findCompany.QueryRowContext(storekit.PointRead(ctx), posSystemID, companyID), companyDest)
	if err != nil {
		return nil, readErr(err, "find company", posgate.NotFound("company", companyID))
	}
	return c, nil
}

// ListCompanies returns a POS system's companies by id.
func (db *DB) ListCompanies(ctx context.Context, posSystemID string) ([]*posgate.Company, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+companyCols+` FROM companies
		WHERE pos_system_id = ? ORDER BY company_id`, posSystemID)
	return scanAll(rows, err, "list companies", companyDest)
}

// UpdateCompany changes the fields set in upd and returns the company as
// the change left it.
func (db *DB) UpdateCompany(ctx context.Context, posSystemID, companyID string, upd posgate.CompanyUpdate) (*posgate.Company, error) {
	f := make([]any, 6) // NULLs keep the stored switches
	if u := upd.Features; u != nil {
		f = []any{u.Coupons, u.ReceiptPromotion, u.Carousel, u.PromotionImport, u.Transactions, u.ProductsImport}
	}
	c, err := scanRow(db.w(ctx).QueryRowContext(ctx, `UPDATE companies SET
		name = COALESCE(?, name), status = COALESCE(?, status),
		coupons = COALESCE(?, coupons), receipt_promotion = COALESCE(?, receipt_promotion),
		carousel = COALESCE(?, carousel), promotion_import = COALESCE(?, promotion_import),
		transactions = COALESCE(?, transactions), products_import = COALESCE(?, products_import), updated_at = ?,
		time_zone = COALESCE(?, time_zone)
		WHERE pos_system_id = ? AND company_id = ?
		RETURNING `+companyCols,
		upd.Name, upd.Status, f[0], f[1], f[2], f[3], f[4], f[5], formatTime(db.now()), upd.TimeZone, posSystemID, companyID), companyDest)
	if err != nil {
		return nil, readErr(err, "update company", posgate.NotFound("company", companyID))
	}
	return c, nil
}

func locationDest(l *posgate.Location) []any {
	return []any{&l.POSSystemID, &l.ID, &l.CompanyID, &l.Name, &l.Status, timeColumn{&l.CreatedAt}, timeColumn{&l.UpdatedAt}, &l.TimeZone}
}

// CreateLocation stores l and sets its CreatedAt and UpdatedAt.
func (db *DB) CreateLocation(ctx context.Context, l *posgate.Location) error {
	now := db.timestamp()
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO locations (pos_system_id, location_id, company_id, name, status, created_at, updated_at, time_zone)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		l.POSSystemID, l.ID, l.CompanyID, l.Name, l.Status, formatTime(now), formatTime(now), l.TimeZone); err != nil {
		return writeErr(err, "create location", posgate.AlreadyExists("location", l.ID), posgate.NotFound("company", l.CompanyID))
	}
	l.CreatedAt, l.UpdatedAt = now, now
	return nil
}

// FindLocation returns the location with its company, read in one query.
func (db *DB) FindLocation(ctx context.Context, posSystemID, locationID string) (*posgate.Location, error) {
	var l posgate.Location
	var c posgate.Company
	err := db.findLocation.QueryRowContext(ctx, posSystemID, locationID).Scan(append(locationDest(&l), companyDest(&c)...)...)
	if err != nil {
		return nil, readErr(err, "find location", posgate.NotFound("location", locationID))
	}
	l.Company = &c
	return &l, nil
}

// ListLocations returns a POS system's locations by id, of one company when
// companyID is not empty.
func (db *DB) ListLocations(ctx context.Context, posSystemID, companyID string) ([]*posgate.Location, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+locationCols+` FROM locations
		WHERE pos_system_id = ?1 AND (?2 = '' OR company_id = ?2) ORDER BY location_id`, posSystemID, companyID)
	return scanAll(rows, err, "list locations", locationDest)
}

// UpdateLocation changes the fields set in upd and returns the location as
// the change left it (without its Company).
func (db *DB) UpdateLocation(ctx context.Context, posSystemID, locationID string, upd posgate.LocationUpdate) (*posgate.Location, error) {
	l, err := scanRow(db.w(ctx).QueryRowContext(ctx, `UPDATE locations SET
		name = COALESCE(?, name), status = COALESCE(?, status), updated_at = ?,
		time_zone = COALESCE(?, time_zone)
		WHERE pos_system_id = ? AND location_id = ?
		RETURNING `+locationCols,
		upd.Name, upd.Status, formatTime(db.now()), upd.TimeZone, posSystemID, locationID), locationDest)
	if err != nil {
		return nil, readErr(err, "update location", posgate.NotFound("location", locationID))
	}
	return l, nil
}

func terminalDest(t *posgate.Terminal) []any {
	return []any{&t.POSSystemID, &t.LocationID, &t.ID, &t.Name, &t.Status, timeColumn{&t.CreatedAt}, timeColumn{&t.UpdatedAt}}
}

// CreateTerminal stores t and sets its CreatedAt and UpdatedAt.
func (db *DB) CreateTerminal(ctx context.Context, t *posgate.Terminal) error {
	now := db.timestamp()
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO terminals (pos_system_id, location_id, terminal_id, name, status, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		t.POSSystemID, t.LocationID, t.ID, t.Name, t.Status, formatTime(now), formatTime(now)); err != nil {
		return writeErr(err, "create terminal", posgate.AlreadyExists("terminal", t.ID), posgate.NotFound("location", t.LocationID))
	}
	t.CreatedAt, t.UpdatedAt = now, now
	return nil
}

// FindTerminal returns terminal terminalID of the location.
func (db *DB) FindTerminal(ctx context.Context, posSystemID, locationID, terminalID string) (*posgate.Terminal, error) {
	t, err := scanRow(db.findTerminal.QueryRowContext(ctx, posSystemID, locationID, terminalID), terminalDest)
	if err != nil {
		return nil, readErr(err, "find terminal", posgate.NotFound("terminal", terminalID))
	}
	return t, nil
}

// ListTerminals returns a POS system's terminals by location and id, of one
// location when locationID is not empty.
func (db *DB) ListTerminals(ctx context.Context, posSystemID, locationID string) ([]*posgate.Terminal, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+terminalCols+` FROM terminals
		WHERE pos_system_id = ?1 AND (?2 = '' OR location_id = ?2) ORDER BY location_id, terminal_id`, posSystemID, locationID)
	return scanAll(rows, err, "list terminals", terminalDest)
}

// UpdateTerminal changes the fields set in upd and returns the terminal as
// the change left it.
func (db *DB) UpdateTerminal(ctx context.Context, posSystemID, locationID, terminalID string, upd posgate.TerminalUpdate) (*posgate.Terminal, error) {
	t, err := scanRow(db.w(ctx).QueryRowContext(ctx, `UPDATE terminals SET
		name = COALESCE(?, name), status = COALESCE(?, status), updated_at = ?
		WHERE pos_system_id = ? AND location_id = ? AND terminal_id = ?
		RETURNING `+terminalCols,
		upd.Name, upd.Status, formatTime(db.now()), posSystemID, locationID, terminalID), terminalDest)
	if err != nil {
		return nil, readErr(err, "update terminal", posgate.NotFound("terminal", terminalID))
	}
	return t, nil
}

// stringsColumn scans a JSON array of strings into s.
type stringsColumn struct{ s *[]string }

// Scan implements sql.Scanner.
func (c stringsColumn) Scan(src any) error {
	s, ok := src.(string)
	if !ok {
		return fmt.Errorf("JSON column holds %T, want text", src)
	}
	return json.Unmarshal([]byte(s), c.s)
}

func clientDest(c *posgate.Client) []any {
	rl := &rateLimitColumns{c: c}
	return []any{&c.ID, &c.Name, &c.SecretHash, &c.POSSystemID, stringsColumn{&c.Scopes}, stringsColumn{&c.CompanyIDs},
		&c.Disabled, timeColumn{&c.CreatedAt}, timeColumn{&c.UpdatedAt}, &rl.rate, rl}
}

// rateLimitColumns scans a client's rate_limit and rate_burst: the rate
// first into rate, then the burst into the scanner itself, which sets the
// client's RateLimit when both are present (the schema keeps them together).
type rateLimitColumns struct {
	c    *posgate.Client
	rate sql.NullFloat64
}

// Scan implements sql.Scanner for the rate_burst column.
func (r *rateLimitColumns) Scan(src any) error {
	var burst sql.NullInt64
	if err := burst.Scan(src); err != nil {
		return err
	}
	r.c.RateLimit = nil
	if r.rate.Valid && burst.Valid {
		r.c.RateLimit = &posgate.RateLimit{RequestsPerSecond: r.rate.Float64, Burst: int(burst.Int64)}
	}
	return nil
}

// rateLimitArgs are the rate_limit and rate_burst values of l (NULL for nil).
func rateLimitArgs(l *posgate.RateLimit) (rate, burst any) {
	if l == nil {
		return nil, nil
	}
	return l.RequestsPerSecond, l.Burst
}

// CreateClient stores c with its company restrictions in one transaction and
// sets its CreatedAt and UpdatedAt. A restriction to a company that does not
// exist is ENOTFOUND, like any absent parent.
func (db *DB) CreateClient(ctx context.Context, c *posgate.Client) error {
	now := db.timestamp()
	scopes, err := json.Marshal(c.Scopes)
	if err != nil {
		return fmt.Errorf("sqlite: create client: %w", err)
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: create client: %w", err)
	}
	defer tx.Rollback()
	rate, burst := rateLimitArgs(c.RateLimit)
	if _, err := tx.ExecContext(ctx, `INSERT INTO clients (client_id, name, secret_hash, pos_system_id, scopes, disabled, created_at, updated_at, rate_limit, rate_burst)
		VALUES (?, ?, ?, NULLIF(?, ''), ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Name, c.SecretHash, c.POSSystemID, string(scopes), c.Disabled, formatTime(now), formatTime(now), rate, burst); err != nil {
		return writeErr(err, "create client", posgate.AlreadyExists("client", c.ID), posgate.NotFound("POS system", c.POSSystemID))
	}
	for i, companyID := range c.CompanyIDs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO client_companies (client_id, position, pos_system_id, company_id) VALUES (?, ?, ?, ?)`,
			c.ID, i, c.POSSystemID, companyID); err != nil {
			return writeErr(err, "create client", nil, posgate.NotFound("company", companyID))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: create client: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = now, now
	return nil
}

// FindClient returns client id with its scopes and company restrictions.
func (db *DB) FindClient(ctx context.Context, id string) (*posgate.Client, error) {
	c, err := scanRow(db.findClient.QueryRowContext(ctx, id), clientDest)
	if err != nil {
		return nil, readErr(err, "find client", posgate.NotFound("client", id))
	}
	return c, nil
}

// ListClients returns every client by id.
func (db *DB) ListClients(ctx context.Context) ([]*posgate.Client, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+clientCols+` FROM clients ORDER BY client_id`)
	return scanAll(rows, err, "list clients", clientDest)
}

// UpdateClient changes the fields set in upd and returns the client as the
// change left it.
func (db *DB) UpdateClient(ctx context.Context, id string, upd posgate.ClientUpdate) (*posgate.Client, error) {
	rate, burst := rateLimitArgs(upd.RateLimit)
	var secret any // NULL keeps the hash
	if upd.SecretHash != nil {
		secret = upd.SecretHash
	}
	c, err := scanRow(db.w(ctx).QueryRowContext(ctx, `UPDATE clients SET
		name = COALESCE(?, name), disabled = COALESCE(?, disabled), updated_at = ?,
		rate_limit = CASE WHEN ? THEN NULL ELSE COALESCE(?, rate_limit) END,
		rate_burst = CASE WHEN ? THEN NULL ELSE COALESCE(?, rate_burst) END,
		secret_hash = COALESCE(?, secret_hash)
		WHERE client_id = ?
		RETURNING `+clientCols,
		upd.Name, upd.Disabled, formatTime(db.now()), upd.ClearRateLimit, rate, upd.ClearRateLimit, burst, secret, id), clientDest)
	if err != nil {
		return nil, readErr(err, "update client", posgate.NotFound("client", id))
	}
	return c, nil
}
