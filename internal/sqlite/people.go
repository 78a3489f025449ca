package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/posgate/posgate"
)

// People, sign-ins and the browser flows' codes and tokens (docs/api.md §21).

const personCols = `people.person_id, people.email, people.name, people.password_hash, people.role,
	COALESCE(people.pos_system_id, ''), people.company_ids, people.location_ids, people.disabled,
	people.created_at, people.updated_at`

func personDest(p *posgate.Person) []any {
	return []any{&p.ID, &p.Email, &p.Name, &p.PasswordHash, &p.Role, &p.POSSystemID,
		stringsColumn{&p.CompanyIDs}, stringsColumn{&p.LocationIDs}, &p.Disabled,
		timeColumn{&p.CreatedAt}, timeColumn{&p.UpdatedAt}}
}

// jsonList encodes ids as the JSON array the list columns hold ("[]" for none).
func jsonList(ids []string) string {
	if ids == nil {
		ids = []string{}
	}
	b, _ := json.Marshal(ids) // a []string always encodes
	return string(b)
}

// CreatePerson stores p and sets its CreatedAt and UpdatedAt.
func (db *DB) CreatePerson(ctx context.Context, p *posgate.Person) error {
	now := db.timestamp()
	if _, err := db.w(ctx).ExecContext(ctx, `INSERT INTO people (person_id, email, name, password_hash, role, pos_system_id,
		company_ids, location_ids, disabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, NULLIF(?, ''), ?, ?, ?, ?, ?)`,
		p.ID, p.Email, p.Name, p.PasswordHash, string(p.Role), p.POSSystemID, jsonList(p.CompanyIDs), jsonList(p.LocationIDs),
		p.Disabled, formatTime(now), formatTime(now)); err != nil {
		return writeErr(err, "create person", posgate.AlreadyExists("person", p.Email), posgate.NotFound("POS system", p.POSSystemID))
	}
	p.CreatedAt, p.UpdatedAt = now, now
	return nil
}

// FindPerson returns the person id.
func (db *DB) FindPerson(ctx context.Context, id string) (*posgate.Person, error) {
	p, err := scanRow(db.read.QueryRowContext(ctx, `SELECT `+personCols+` FROM people WHERE person_id = ?`, id), personDest)
	if err != nil {
		return nil, readErr(err, "find person", posgate.NotFound("person", id))
	}
	return p, nil
}

// FindPersonByEmail returns the person with that (normalised) address.
func (db *DB) FindPersonByEmail(ctx context.Context, email string) (*posgate.Person, error) {
	p, err := scanRow(db.read.QueryRowContext(ctx, `SELECT `+personCols+` FROM people WHERE email = ?`, email), personDest)
	if err != nil {
		return nil, readErr(err, "find person", posgate.NotFound("person", email))
	}
	return p, nil
}

// ListPeople returns every person by e-mail address.
func (db *DB) ListPeople(ctx context.Context) ([]*posgate.Person, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+personCols+` FROM people ORDER BY email`)
	return scanAll(rows, err, "list people", personDest)
}

// UpdatePerson changes the fields set in upd and returns the person as the
// change left it.
func (db *DB) UpdatePerson(ctx context.Context, id string, upd posgate.PersonUpdate) (*posgate.Person, error) {
	p, err := scanRow(db.w(ctx).QueryRowContext(ctx, `UPDATE people SET
		name = COALESCE(?, name), disabled = COALESCE(?, disabled), password_hash = COALESCE(?, password_hash), updated_at = ?
		WHERE person_id = ? RETURNING `+personCols,
		upd.Name, upd.Disabled, upd.PasswordHash, formatTime(db.now()), id), personDest)
	if err != nil {
		return nil, readErr(err, "update person", posgate.NotFound("person", id))
	}
	return p, nil
}

// CreateSignIn stores a sign-in session (times as given).
func (db *DB) CreateSignIn(ctx context.Context, s *posgate.SignIn) error {
	if _, err := db.write.ExecContext(ctx, `INSERT INTO sign_ins (id_hash, person_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		s.IDHash, s.PersonID, formatTime(s.CreatedAt), formatTime(s.ExpiresAt)); err != nil {
		return writeErr(err, "create sign-in", posgate.AlreadyExists("sign-in", "?"), posgate.NotFound("person", s.PersonID))
	}
	return nil
}

// FindSignIn returns the sign-in with that hash unless it expired at now.
func (db *DB) FindSignIn(ctx context.Context, idHash []byte, now time.Time) (*posgate.SignIn, error) {
	s, err := scanRow(db.read.QueryRowContext(ctx, `SELECT id_hash, person_id, created_at, expires_at FROM sign_ins
		WHERE id_hash = ? AND expires_at > ?`, idHash, formatTime(now)), func(s *posgate.SignIn) []any {
		return []any{&s.IDHash, &s.PersonID, timeColumn{&s.CreatedAt}, timeColumn{&s.ExpiresAt}}
	})
	if err != nil {
		return nil, readErr(err, "find sign-in", posgate.NotFound("sign-in", "?"))
	}
	return s, nil
}

// DeleteSignIn removes a sign-in (signing out); an unknown one is no error,
// and expired ones go with it.
func (db *DB) DeleteSignIn(ctx context.Context, idHash []byte) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM sign_ins WHERE id_hash = ? OR expires_at <= ?`, idHash, formatTime(db.now())); err != nil {
		return fmt.Errorf("sqlite: delete sign-in: %w", err)
	}
	return nil
}

// CreateAuthCode stores an authorization code (times as given).
func (db *DB) CreateAuthCode(ctx context.Context, c *posgate.AuthCode) error {
	if _, err := db.write.ExecContext(ctx, `INSERT INTO auth_codes (code_hash, family_id, client_id, person_id, redirect_uri, scopes,
		code_challenge, expires_at, used) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)`,
		c.CodeHash, c.FamilyID, c.ClientID, c.PersonID, c.RedirectURI, jsonList(c.Scopes), c.CodeChallenge, formatTime(c.ExpiresAt)); err != nil {
		return writeErr(err, "create authorization code", posgate.AlreadyExists("authorization code", "?"), posgate.NotFound("client or person", c.ClientID))
	}
	return nil
}

// UseAuthCode marks the code used and returns it as it was before. The
// read and the write share one write transaction, so two concurrent
// exchanges cannot both see the code unused.
func (db *DB) UseAuthCode(ctx context.Context, codeHash []byte) (*posgate.AuthCode, error) {
	return useOnce(ctx, db, "use authorization code", authCodeRead, `UPDATE auth_codes SET used = 1 WHERE code_hash = ?`,
		codeHash, authCodeDest, posgate.NotFound("authorization code", "?"))
}

// FindAuthCode returns the code as it is, changing nothing.
func (db *DB) FindAuthCode(ctx context.Context, codeHash []byte) (*posgate.AuthCode, error) {
	c, err := scanRow(db.read.QueryRowContext(ctx, authCodeRead, codeHash), authCodeDest)
	if err != nil {
		return nil, readErr(err, "find authorization code", posgate.NotFound("authorization code", "?"))
	}
	return c, nil
}

const authCodeRead = `SELECT code_hash, family_id, client_id, person_id, redirect_uri, scopes,
		code_challenge, expires_at, used FROM auth_codes WHERE code_hash = ?`

func authCodeDest(c *posgate.AuthCode) []any {
	return []any{&c.CodeHash, &c.FamilyID, &c.ClientID, &c.PersonID, &c.RedirectURI, stringsColumn{&c.Scopes},
		&c.CodeChallenge, timeColumn{&c.ExpiresAt}, &c.Used}
}

// useOnce reads a row by its hash and marks it used in one write
// transaction, returning the row as it was before.
func useOnce[T any](ctx context.Context, db *DB, op, read, mark string, hash []byte, dest func(*T) []any, missing *posgate.Error) (*T, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrapErr(err, op)
	}
	defer tx.Rollback()
	v, err := scanRow(tx.QueryRowContext(ctx, read, hash), dest)
	if err != nil {
		return nil, readErr(err, op, missing)
	}
	if _, err := tx.ExecContext(ctx, mark, hash); err != nil {
		return nil, wrapErr(err, op)
	}
	if err := tx.Commit(); err != nil {
		return nil, wrapErr(err, op)
	}
	return v, nil
}

// CreateRefreshToken stores a refresh token (times as given).
func (db *DB) CreateRefreshToken(ctx context.Context, t *posgate.RefreshToken) error {
	if _, err := db.write.ExecContext(ctx, `INSERT INTO refresh_tokens (token_hash, family_id, client_id, person_id, scopes,
		expires_at, used, revoked) VALUES (?, ?, ?, ?, ?, ?, 0, 0)`,
		t.TokenHash, t.FamilyID, t.ClientID, t.PersonID, jsonList(t.Scopes), formatTime(t.ExpiresAt)); err != nil {
		return writeErr(err, "create refresh token", posgate.AlreadyExists("refresh token", "?"), posgate.NotFound("client or person", t.ClientID))
	}
	return nil
}

// UseRefreshToken marks the token used and returns it as it was before.
func (db *DB) UseRefreshToken(ctx context.Context, tokenHash []byte) (*posgate.RefreshToken, error) {
	return useOnce(ctx, db, "use refresh token", refreshTokenRead, `UPDATE refresh_tokens SET used = 1 WHERE token_hash = ?`,
		tokenHash, refreshTokenDest, posgate.NotFound("refresh token", "?"))
}

// FindRefreshToken returns the token as it is, changing nothing.
func (db *DB) FindRefreshToken(ctx context.Context, tokenHash []byte) (*posgate.RefreshToken, error) {
	t, err := scanRow(db.read.QueryRowContext(ctx, refreshTokenRead, tokenHash), refreshTokenDest)
	if err != nil {
		return nil, readErr(err, "find refresh token", posgate.NotFound("refresh token", "?"))
	}
	return t, nil
}

const refreshTokenRead = `SELECT token_hash, family_id, client_id, person_id, scopes, expires_at, used, revoked
		FROM refresh_tokens WHERE token_hash = ?`

func refreshTokenDest(t *posgate.RefreshToken) []any {
	return []any{&t.TokenHash, &t.FamilyID, &t.ClientID, &t.PersonID, stringsColumn{&t.Scopes}, timeColumn{&t.ExpiresAt}, &t.Used, &t.Revoked}
}

// RevokeRefreshFamily revokes every refresh token of the family.
func (db *DB) RevokeRefreshFamily(ctx context.Context, familyID string) error {
	if _, err := db.write.ExecContext(ctx, `UPDATE refresh_tokens SET revoked = 1 WHERE family_id = ?`, familyID); err != nil {
		return fmt.Errorf("sqlite: revoke refresh tokens: %w", err)
	}
	return nil
}

// DeleteExpiredGrants removes expired sign-ins, codes and refresh tokens.
func (db *DB) DeleteExpiredGrants(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	for _, table := range []string{"sign_ins", "auth_codes", "refresh_tokens"} {
		res, err := db.write.ExecContext(ctx, `DELETE FROM `+table+` WHERE expires_at < ?`, formatTime(t))
		if err != nil {
			return total, fmt.Errorf("sqlite: delete expired %s: %w", table, err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

// SetClientRedirectURIs replaces the client's redirect URIs.
func (db *DB) SetClientRedirectURIs(ctx context.Context, clientID string, uris []string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: set redirect URIs: %w", err)
	}
	defer tx.Rollback()
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM clients WHERE client_id = ?)`, clientID).Scan(&exists); err != nil {
		return fmt.Errorf("sqlite: set redirect URIs: %w", err)
	}
	if !exists {
		return posgate.NotFound("client", clientID)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM client_redirect_uris WHERE client_id = ?`, clientID); err != nil {
		return fmt.Errorf("sqlite: set redirect URIs: %w", err)
	}
	for i, u := range uris {
		if _, err := tx.ExecContext(ctx, `INSERT INTO client_redirect_uris (client_id, position, redirect_uri) VALUES (?, ?, ?)`, clientID, i, u); err != nil {
			return fmt.Errorf("sqlite: set redirect URIs: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: set redirect URIs: %w", err)
	}
	return nil
}

// ClientRedirectURIs lists the client's redirect URIs in the order given.
func (db *DB) ClientRedirectURIs(ctx context.Context, clientID string) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT redirect_uri FROM client_redirect_uris WHERE client_id = ? ORDER BY position`, clientID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: redirect URIs: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("sqlite: redirect URIs: %w", err)
		}
		out = append(out, u)
	}
	return out, wrapErr(rows.Err(), "redirect URIs")
}

// wrapErr labels err with op; nil stays nil.
func wrapErr(err error, op string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}
