package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
)

// People, sign-ins and the browser flows' codes and tokens (docs/api.md §21).

const personCols = `person_id, email, name, password_hash, role, coalesce(pos_system_id, ''), company_ids, location_ids,
	disabled, created_at, updated_at`

func scanPerson(r pgx.Row) (*posgate.Person, error) {
	p := &posgate.Person{}
	err := r.Scan(&p.ID, &p.Email, &p.Name, &p.PasswordHash, &p.Role, &p.POSSystemID, &p.CompanyIDs, &p.LocationIDs,
		&p.Disabled, &p.CreatedAt, &p.UpdatedAt)
	return p, err
}

// nonNil is ids, or an empty list for nil (the array columns are NOT NULL).
func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// CreatePerson stores p and sets its CreatedAt and UpdatedAt.
func (db *DB) CreatePerson(ctx context.Context, p *posgate.Person) error {
	now := posgate.Timestamp(db.now())
	_, err := db.q(ctx).Exec(ctx, `INSERT INTO people (person_id, email, name, password_hash, role, pos_system_id, company_ids,
		location_ids, disabled, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, nullif($6, ''), $7, $8, $9, $10, $10)`,
		p.ID, p.Email, p.Name, p.PasswordHash, string(p.Role), p.POSSystemID, nonNil(p.CompanyIDs), nonNil(p.LocationIDs), p.Disabled, now)
	if err != nil {
		return writeErr(err, "create person", posgate.AlreadyExists("person", p.Email), posgate.NotFound("POS system", p.POSSystemID))
	}
	p.CreatedAt, p.UpdatedAt = now, now
	return nil
}

// FindPerson returns the person id.
func (db *DB) FindPerson(ctx context.Context, id string) (*posgate.Person, error) {
	p, err := scanPerson(db.q(ctx).QueryRow(ctx, `SELECT `+personCols+` FROM people WHERE person_id = $1`, id))
	if err != nil {
		return nil, readErr(err, "find person", posgate.NotFound("person", id))
	}
	return p, nil
}

// FindPersonByEmail returns the person with that (normalised) address.
func (db *DB) FindPersonByEmail(ctx context.Context, email string) (*posgate.Person, error) {
	p, err := scanPerson(db.q(ctx).QueryRow(ctx, `SELECT `+personCols+` FROM people WHERE email = $1`, email))
	if err != nil {
		return nil, readErr(err, "find person", posgate.NotFound("person", email))
	}
	return p, nil
}

// ListPeople returns every person by e-mail address.
func (db *DB) ListPeople(ctx context.Context) ([]*posgate.Person, error) {
	return collect(ctx, db, "list people", scanPerson, `SELECT `+personCols+` FROM people ORDER BY email`)
}

// UpdatePerson changes the fields set in upd and returns the person as the
// change left it.
func (db *DB) UpdatePerson(ctx context.Context, id string, upd posgate.PersonUpdate) (*posgate.Person, error) {
	p, err := scanPerson(db.q(ctx).QueryRow(ctx, `UPDATE people SET name = coalesce($2, name), disabled = coalesce($3, disabled),
		password_hash = coalesce($4, password_hash), updated_at = $5 WHERE person_id = $1 RETURNING `+personCols,
		id, upd.Name, upd.Disabled, upd.PasswordHash, posgate.Timestamp(db.now())))
	if err != nil {
		return nil, readErr(err, "update person", posgate.NotFound("person", id))
	}
	return p, nil
}

// CreateSignIn stores a sign-in session (times as given).
func (db *DB) CreateSignIn(ctx context.Context, s *posgate.SignIn) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO sign_ins (id_hash, person_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		s.IDHash, s.PersonID, posgate.Timestamp(s.CreatedAt), posgate.Timestamp(s.ExpiresAt))
	return writeErr(err, "create sign-in", posgate.AlreadyExists("sign-in", "?"), posgate.NotFound("person", s.PersonID))
}

// FindSignIn returns the sign-in with that hash unless it expired at now.
func (db *DB) FindSignIn(ctx context.Context, idHash []byte, now time.Time) (*posgate.SignIn, error) {
	s := &posgate.SignIn{}
	err := db.pool.QueryRow(ctx, `SELECT id_hash, person_id, created_at, expires_at FROM sign_ins WHERE id_hash = $1 AND expires_at > $2`,
		idHash, now).Scan(&s.IDHash, &s.PersonID, &s.CreatedAt, &s.ExpiresAt)
	if err != nil {
		return nil, readErr(err, "find sign-in", posgate.NotFound("sign-in", "?"))
	}
	return s, nil
}

// DeleteSignIn removes a sign-in (signing out); an unknown one is no error,
// and expired ones go with it.
func (db *DB) DeleteSignIn(ctx context.Context, idHash []byte) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM sign_ins WHERE id_hash = $1 OR expires_at <= $2`, idHash, posgate.Timestamp(db.now()))
	return wrap(err, "delete sign-in")
}

// CreateAuthCode stores an authorization code (times as given).
func (db *DB) CreateAuthCode(ctx context.Context, c *posgate.AuthCode) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO auth_codes (code_hash, family_id, client_id, person_id, redirect_uri, scopes,
		code_challenge, expires_at, used) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, false)`,
		c.CodeHash, c.FamilyID, c.ClientID, c.PersonID, c.RedirectURI, nonNil(c.Scopes), c.CodeChallenge, posgate.Timestamp(c.ExpiresAt))
	return writeErr(err, "create authorization code", posgate.AlreadyExists("authorization code", "?"), posgate.NotFound("client or person", c.ClientID))
}

// UseAuthCode marks the code used and returns it as it was before; the
// row lock of the subquery makes a concurrent exchange wait and then see it
// used.
func (db *DB) UseAuthCode(ctx context.Context, codeHash []byte) (*posgate.AuthCode, error) {
	c := &posgate.AuthCode{}
	err := db.pool.QueryRow(ctx, `UPDATE auth_codes a SET used = true
		FROM (SELECT code_hash, used FROM auth_codes WHERE code_hash = $1 FOR UPDATE) old
		WHERE a.code_hash = old.code_hash
		RETURNING a.code_hash, a.family_id, a.client_id, a.person_id, a.redirect_uri, a.scopes, a.code_challenge, a.expires_at, old.used`,
		codeHash).Scan(&c.CodeHash, &c.FamilyID, &c.ClientID, &c.PersonID, &c.RedirectURI, &c.Scopes, &c.CodeChallenge, &c.ExpiresAt, &c.Used)
	if err != nil {
		return nil, readErr(err, "use authorization code", posgate.NotFound("authorization code", "?"))
	}
	return c, nil
}

// FindAuthCode returns the code as it is, changing nothing.
func (db *DB) FindAuthCode(ctx context.Context, codeHash []byte) (*posgate.AuthCode, error) {
	c := &posgate.AuthCode{}
	err := db.pool.QueryRow(ctx, `SELECT code_hash, family_id, client_id, person_id, redirect_uri, scopes, code_challenge, expires_at, used
		FROM auth_codes WHERE code_hash = $1`,
		codeHash).Scan(&c.CodeHash, &c.FamilyID, &c.ClientID, &c.PersonID, &c.RedirectURI, &c.Scopes, &c.CodeChallenge, &c.ExpiresAt, &c.Used)
	if err != nil {
		return nil, readErr(err, "find authorization code", posgate.NotFound("authorization code", "?"))
	}
	return c, nil
}

// FindRefreshToken returns the token as it is, changing nothing.
func (db *DB) FindRefreshToken(ctx context.Context, tokenHash []byte) (*posgate.RefreshToken, error) {
	t := &posgate.RefreshToken{}
	err := db.pool.QueryRow(ctx, `SELECT token_hash, family_id, client_id, person_id, scopes, expires_at, used, revoked
		FROM refresh_tokens WHERE token_hash = $1`,
		tokenHash).Scan(&t.TokenHash, &t.FamilyID, &t.ClientID, &t.PersonID, &t.Scopes, &t.ExpiresAt, &t.Used, &t.Revoked)
	if err != nil {
		return nil, readErr(err, "find refresh token", posgate.NotFound("refresh token", "?"))
	}
	return t, nil
}

// CreateRefreshToken stores a refresh token (times as given).
func (db *DB) CreateRefreshToken(ctx context.Context, t *posgate.RefreshToken) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO refresh_tokens (token_hash, family_id, client_id, person_id, scopes, expires_at, used, revoked)
		VALUES ($1, $2, $3, $4, $5, $6, false, false)`,
		t.TokenHash, t.FamilyID, t.ClientID, t.PersonID, nonNil(t.Scopes), posgate.Timestamp(t.ExpiresAt))
	return writeErr(err, "create refresh token", posgate.AlreadyExists("refresh token", "?"), posgate.NotFound("client or person", t.ClientID))
}

// UseRefreshToken marks the token used and returns it as it was before.
func (db *DB) UseRefreshToken(ctx context.Context, tokenHash []byte) (*posgate.RefreshToken, error) {
	t := &posgate.RefreshToken{}
	err := db.pool.QueryRow(ctx, `UPDATE refresh_tokens r SET used = true
		FROM (SELECT token_hash, used FROM refresh_tokens WHERE token_hash = $1 FOR UPDATE) old
		WHERE r.token_hash = old.token_hash
		RETURNING r.token_hash, r.family_id, r.client_id, r.person_id, r.scopes, r.expires_at, old.used, r.revoked`,
		tokenHash).Scan(&t.TokenHash, &t.FamilyID, &t.ClientID, &t.PersonID, &t.Scopes, &t.ExpiresAt, &t.Used, &t.Revoked)
	if err != nil {
		return nil, readErr(err, "use refresh token", posgate.NotFound("refresh token", "?"))
	}
	return t, nil
}

// RevokeRefreshFamily revokes every refresh token of the family.
func (db *DB) RevokeRefreshFamily(ctx context.Context, familyID string) error {
	_, err := db.pool.Exec(ctx, `UPDATE refresh_tokens SET revoked = true WHERE family_id = $1`, familyID)
	return wrap(err, "revoke refresh tokens")
}

// DeleteExpiredGrants removes expired sign-ins, codes and refresh tokens.
func (db *DB) DeleteExpiredGrants(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	for _, table := range []string{"sign_ins", "auth_codes", "refresh_tokens"} {
		tag, err := db.pool.Exec(ctx, `DELETE FROM `+table+` WHERE expires_at < $1`, posgate.Timestamp(t))
		if err != nil {
			return total, wrap(err, "delete expired "+table)
		}
		total += tag.RowsAffected()
	}
	return total, nil
}

// SetClientRedirectURIs replaces the client's redirect URIs.
func (db *DB) SetClientRedirectURIs(ctx context.Context, clientID string, uris []string) error {
	return wrap(pgx.BeginFunc(ctx, db.q(ctx), func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM clients WHERE id = $1)`, clientID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return posgate.NotFound("client", clientID)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM client_redirect_uris WHERE client_id = $1`, clientID); err != nil {
			return err
		}
		for i, u := range uris {
			if _, err := tx.Exec(ctx, `INSERT INTO client_redirect_uris (client_id, position, redirect_uri) VALUES ($1, $2, $3)`, clientID, i, u); err != nil {
				return err
			}
		}
		return nil
	}), "set redirect URIs")
}

// ClientRedirectURIs lists the client's redirect URIs in the order given.
func (db *DB) ClientRedirectURIs(ctx context.Context, clientID string) ([]string, error) {
	rows, err := db.q(ctx).Query(ctx, `SELECT redirect_uri FROM client_redirect_uris WHERE client_id = $1 ORDER BY position`, clientID)
	if err != nil {
		return nil, wrap(err, "redirect URIs")
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if len(out) == 0 {
		out = nil
	}
	return out, wrap(err, "redirect URIs")
}
