package posgate

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
)

// Role is what a person (an operator who signs in) may reach
// (docs/api.md §21.1). Each role maps to the same reach a restricted API
// client has, so that one set of rules (Principal) serves both.
type Role string

// The roles of people.
const (
	// RoleAdmin reaches everything, like an unrestricted operator client.
	RoleAdmin Role = "admin"
	// RolePOSAdmin reaches one POS system.
	RolePOSAdmin Role = "pos-admin"
	// RoleCompanyAdmin reaches some companies of one POS system.
	RoleCompanyAdmin Role = "company-admin"
	// RoleLocationManager reaches some locations of one POS system.
	RoleLocationManager Role = "location-manager"
)

// Roles lists every role, in a stable order (for messages and the CLI).
var Roles = []Role{RoleAdmin, RolePOSAdmin, RoleCompanyAdmin, RoleLocationManager}

// Person is an operator who signs in with an e-mail address and a password
// (the portal, the browser flows of the identity provider). PasswordHash is
// an argon2id PHC string; the password itself is never stored.
type Person struct {
	ID           string `json:"personId"`
	Email        string `json:"email"`
	Name         string `json:"name"`
	PasswordHash string `json:"-"`
	Role         Role   `json:"role"`
	// POSSystemID is the POS system of every role but admin.
	POSSystemID string `json:"posSystemId"`
	// CompanyIDs are a company admin's companies; LocationIDs a location
	// manager's locations. Both empty for the other roles.
	CompanyIDs  []string  `json:"companyIds"`
	LocationIDs []string  `json:"locationIds"`
	Disabled    bool      `json:"disabled"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// NormalizeEmail is the form in which e-mail addresses are stored and
// looked up: trimmed and lower-cased, so that "Admin@Demo.posgate" signs in
// as admin@demo.posgate.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Validate checks what an operator supplies for a person: an e-mail address,
// a name, a known role and exactly the reach that role needs.
func (p *Person) Validate() error {
	v := ValidationError{}
	if a, err := mail.ParseAddress(p.Email); err != nil || a.Address != p.Email || p.Email != NormalizeEmail(p.Email) || len(p.Email) > 254 {
		v.Add("email", "A lower-case e-mail address (name@example.com) of at most 254 characters is required.")
	}
	checkName(v, "name", p.Name)
	if strings.TrimSpace(p.Name) == "" {
		v.Add("name", "A name is required.")
	}
	if p.PasswordHash == "" {
		v.Add("password", "A password is required.")
	}
	switch p.Role {
	case RoleAdmin:
		if p.POSSystemID != "" || len(p.CompanyIDs) > 0 || len(p.LocationIDs) > 0 {
			v.Add("role", "An admin reaches everything: give no POS system, companies or locations.")
		}
	case RolePOSAdmin, RoleCompanyAdmin, RoleLocationManager:
		checkKey(v, "posSystemId", p.POSSystemID)
		if (p.Role == RoleCompanyAdmin) != (len(p.CompanyIDs) > 0) {
			v.Add("companyIds", "Companies are given for a company-admin, and only for one.")
		}
		if (p.Role == RoleLocationManager) != (len(p.LocationIDs) > 0) {
			v.Add("locationIds", "Locations are given for a location-manager, and only for one.")
		}
	default:
		v.Add("role", fmt.Sprintf("Unknown role %q (known: %s).", p.Role, joinRoles()))
	}
	for _, id := range p.CompanyIDs {
		checkKey(v, "companyIds", id)
	}
	for _, id := range p.LocationIDs {
		checkKey(v, "locationIds", id)
	}
	return v.Err()
}

func joinRoles() string {
	s := make([]string, len(Roles))
	for i, r := range Roles {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

// Principal is what the person may do when acting through client with the
// given scopes until expiresAt: the person's reach, exactly as a restricted
// client's (docs/api.md §21.1).
func (p *Person) Principal(clientID string, scopes []string, expiresAt time.Time) *Principal {
	return &Principal{
		ClientID:    clientID,
		PersonID:    p.ID,
		Scopes:      slices.Clone(scopes),
		POSSystemID: p.POSSystemID,
		CompanyIDs:  slices.Clone(p.CompanyIDs),
		LocationIDs: slices.Clone(p.LocationIDs),
		ExpiresAt:   expiresAt,
	}
}

// PersonUpdate names the fields of a person to change.
type PersonUpdate struct {
	Name         *string
	Disabled     *bool
	PasswordHash *string
}

// SignIn is a person's browser session at the identity provider (and the
// portal): the cookie holds a random id, the store only its SHA-256, so that
// a copy of the database signs nobody in.
type SignIn struct {
	IDHash    []byte
	PersonID  string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// AuthCode is an OAuth2 authorization code (RFC 6749 §4.1), stored by its
// SHA-256: single-use, short-lived, bound to its client, redirect URI and
// PKCE challenge. FamilyID names the refresh tokens it leads to, so that a
// replayed code revokes them (RFC 6749 §4.1.2).
type AuthCode struct {
	CodeHash      []byte
	FamilyID      string
	ClientID      string
	PersonID      string
	RedirectURI   string
	Scopes        []string
	CodeChallenge string
	ExpiresAt     time.Time
	// Used is true once the code was exchanged (UseAuthCode reports it as it
	// was before the call).
	Used bool
}

// RefreshToken is a rotating refresh token (RFC 9700 §4.14), stored by its
// SHA-256. Every use replaces it by a new one of the same family; a used
// one presented again revokes the whole family.
type RefreshToken struct {
	TokenHash []byte
	FamilyID  string
	ClientID  string
	PersonID  string
	Scopes    []string
	ExpiresAt time.Time
	// Used is true once the token was exchanged; Revoked once its family
	// was revoked. UseRefreshToken reports both as they were before the call.
	Used    bool
	Revoked bool
}

// PeopleStore holds people, their sign-in sessions, the authorization codes
// and refresh tokens of the browser flows, and the redirect URIs registered
// for clients (docs/api.md §21).
type PeopleStore interface {
	// CreatePerson stores p (ECONFLICT for an e-mail address or id in use)
	// and sets its CreatedAt and UpdatedAt.
	CreatePerson(ctx context.Context, p *Person) error
	FindPerson(ctx context.Context, id string) (*Person, error)
	// FindPersonByEmail looks a person up by the normalised address.
	FindPersonByEmail(ctx context.Context, email string) (*Person, error)
	// ListPeople returns every person by e-mail address.
	ListPeople(ctx context.Context) ([]*Person, error)
	UpdatePerson(ctx context.Context, id string, upd PersonUpdate) (*Person, error)

	CreateSignIn(ctx context.Context, s *SignIn) error
	// FindSignIn returns the live (unexpired at now) sign-in with that hash.
	FindSignIn(ctx context.Context, idHash []byte, now time.Time) (*SignIn, error)
	DeleteSignIn(ctx context.Context, idHash []byte) error

	CreateAuthCode(ctx context.Context, c *AuthCode) error
	// UseAuthCode marks the code used and returns it as it was before (Used
	// tells a replay); ENOTFOUND when no such code was issued.
	UseAuthCode(ctx context.Context, codeHash []byte) (*AuthCode, error)
	// FindAuthCode returns the code as it is and changes nothing, so that
	// a refused exchange leaves it as it was; ENOTFOUND when no such code
	// was issued.
	FindAuthCode(ctx context.Context, codeHash []byte) (*AuthCode, error)

	CreateRefreshToken(ctx context.Context, t *RefreshToken) error
	// UseRefreshToken marks the token used and returns it as it was before
	// (Used and Revoked tell a replay); ENOTFOUND when no such token exists.
	UseRefreshToken(ctx context.Context, tokenHash []byte) (*RefreshToken, error)
	// FindRefreshToken returns the token as it is and changes nothing, so
	// that a refused refresh leaves it as it was; ENOTFOUND when no such
	// token exists.
	FindRefreshToken(ctx context.Context, tokenHash []byte) (*RefreshToken, error)
	// RevokeRefreshFamily revokes every refresh token of a family.
	RevokeRefreshFamily(ctx context.Context, familyID string) error
	// DeleteExpiredGrants removes the sign-ins, authorization codes and
	// refresh tokens that expired before t and returns how many.
	DeleteExpiredGrants(ctx context.Context, t time.Time) (int64, error)

	// SetClientRedirectURIs registers the redirect URIs of a client of the
	// browser flows (replacing any before); ENOTFOUND for an unknown client.
	SetClientRedirectURIs(ctx context.Context, clientID string, uris []string) error
	// ClientRedirectURIs lists them in the order given; none for a client
	// of the client credentials grant only.
	ClientRedirectURIs(ctx context.Context, clientID string) ([]string, error)
}
