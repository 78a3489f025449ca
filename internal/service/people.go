package service

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
)

// People (docs/api.md §21.1): operators who sign in. A principal manages
// only people whose reach lies within its own, so that nobody can hand out
// more than they hold; others answer as if they did not exist.

// CreatePersonRequest is a new person; the password is hashed (argon2id)
// and never stored or shown.
type CreatePersonRequest struct {
	Email       string       `json:"email"`
	Name        string       `json:"name"`
	Password    string       `json:"password"`
	Role        posgate.Role `json:"role"`
	POSSystemID string       `json:"posSystemId"`
	CompanyIDs  []string     `json:"companyIds"`
	LocationIDs []string     `json:"locationIds"`
}

// PersonView is a person as the operator API and the CLI show it: never
// the password hash, and [] rather than null for empty lists.
type PersonView struct {
	*posgate.Person
	CompanyIDs  []string `json:"companyIds"`
	LocationIDs []string `json:"locationIds"`
}

func viewPerson(p *posgate.Person) *PersonView {
	return &PersonView{Person: p, CompanyIDs: nonNil(p.CompanyIDs), LocationIDs: nonNil(p.LocationIDs)}
}

// CreatePerson registers a person. The reach given must lie within p's:
// only an unrestricted operator creates admins, and the companies and
// locations named must exist and be visible to p (ENOTFOUND otherwise).
func (s *Service) CreatePerson(ctx context.Context, p *posgate.Principal, req *CreatePersonRequest) (*PersonView, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	person := &posgate.Person{ID: uuid.NewString(), Email: posgate.NormalizeEmail(req.Email), Name: req.Name, Role: req.Role,
		POSSystemID: req.POSSystemID, CompanyIDs: posgate.Dedupe(req.CompanyIDs), LocationIDs: posgate.Dedupe(req.LocationIDs)}
	if len(person.CompanyIDs) == 0 {
		person.CompanyIDs = nil
	}
	if len(person.LocationIDs) == 0 {
		person.LocationIDs = nil
	}
	// Validate sees a placeholder hash: the slow hashing comes last, once
	// everything else is known to be right.
	if req.Password != "" {
		person.PasswordHash = "pending"
	}
	v := posgate.ValidationError{}
	if req.Password != "" && (len(req.Password) < credential.MinPasswordLen || len(req.Password) > 1024) {
		v.Add("password", "A password has 10 to 1024 characters.")
	}
	if err := person.Validate(); err != nil {
		var pe *posgate.Error
		if !errors.As(err, &pe) || pe.Fields == nil {
			return nil, err
		}
		for k, msgs := range pe.Fields {
			v[k] = append(v[k], msgs...)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if err := s.checkReach(ctx, p, person); err != nil {
		return nil, err
	}
	// The slow hash is made before the transaction, which then holds the
	// write lock only for the insert and its audit entry.
	hash, err := credential.HashPassword(req.Password)
	if err != nil {
		return nil, err
	}
	person.PasswordHash = hash
	err = s.audited(ctx, p, "person.create", func(ctx context.Context, ch *change) error {
		if err := s.store.CreatePerson(ctx, person); err != nil {
			if posgate.ErrorCode(err) == posgate.ECONFLICT {
				return posgate.Errorf(posgate.ECONFLICT, "A person with the e-mail address '%s' exists already.", person.Email)
			}
			return err
		}
		target, err := s.personTarget(ctx, person)
		if err != nil {
			return err
		}
		ch.target, ch.after = target, viewPerson(person)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return viewPerson(person), nil
}

// personTarget is a person as the target of a change, placed where their
// reach lies, so that the log shows it to the readers who manage them: an
// admin belongs to the whole installation; the others to their POS system,
// and to their company (and location) when they reach exactly one.
func (s *Service) personTarget(ctx context.Context, person *posgate.Person) (posgate.AuditTarget, error) {
	t := posgate.AuditTarget{Type: "person", ID: person.ID, POSSystemID: person.POSSystemID}
	switch {
	case len(person.CompanyIDs) == 1:
		t.CompanyID = person.CompanyIDs[0]
	case len(person.LocationIDs) == 1:
		loc, err := s.store.FindLocation(ctx, person.POSSystemID, person.LocationIDs[0])
		if err != nil && posgate.ErrorCode(err) != posgate.ENOTFOUND {
			return t, err
		}
		if err == nil {
			t.CompanyID, t.LocationID = loc.CompanyID, loc.ID
		}
	}
	return t, nil
}

// CreatableRoles lists the roles of the people p may add, by checkReach's
// rules: an admin only for an unrestricted principal, a pos-admin for one
// restricted at most to a POS system, a company-admin for one that sees
// companies, a location-manager for any operator.
func CreatableRoles(p *posgate.Principal) []posgate.Role {
	var out []posgate.Role
	for _, r := range posgate.Roles {
		switch {
		case r == posgate.RoleAdmin && !p.Unrestricted(),
			r == posgate.RolePOSAdmin && (p == nil || len(p.CompanyIDs) > 0 || len(p.LocationIDs) > 0),
			r == posgate.RoleCompanyAdmin && !p.SeesCompanies():
			continue
		}
		out = append(out, r)
	}
	return out
}

// checkReach returns nil when person's reach lies within p's, else the
// ENOTFOUND (or, for an admin, EFORBIDDEN) answer of the first thing p
// cannot see.
func (s *Service) checkReach(ctx context.Context, p *posgate.Principal, person *posgate.Person) error {
	switch person.Role {
	case posgate.RoleAdmin:
		if !p.Unrestricted() {
			return posgate.Errorf(posgate.EFORBIDDEN, msgInstallation)
		}
		return nil
	case posgate.RolePOSAdmin:
		if _, err := s.operatorPOSSystem(ctx, p, person.POSSystemID); err != nil {
			return notFound(err, "POS system '%s' not found.", person.POSSystemID)
		}
		if len(p.CompanyIDs) > 0 || len(p.LocationIDs) > 0 {
			return posgate.Errorf(posgate.EFORBIDDEN, msgInstallation)
		}
	case posgate.RoleCompanyAdmin:
		if _, err := s.operatorPOSSystem(ctx, p, person.POSSystemID); err != nil {
			return notFound(err, "POS system '%s' not found.", person.POSSystemID)
		}
		for _, id := range person.CompanyIDs {
			if _, err := s.operatorCompany(ctx, p, person.POSSystemID, id); err != nil {
				return notFound(err, "Company '%s' of POS system '%s' not found.", id, person.POSSystemID)
			}
		}
	case posgate.RoleLocationManager:
		if _, err := s.operatorPOSSystem(ctx, p, person.POSSystemID); err != nil {
			return notFound(err, "POS system '%s' not found.", person.POSSystemID)
		}
		for _, id := range person.LocationIDs {
			if _, err := s.operatorLocation(ctx, p, person.POSSystemID, id); err != nil {
				return notFound(err, "Location '%s' of POS system '%s' not found.", id, person.POSSystemID)
			}
		}
	}
	return nil
}

// within reports whether person's reach lies within p's (its companies and
// locations still visible to p).
func (s *Service) within(ctx context.Context, p *posgate.Principal, person *posgate.Person) (bool, error) {
	err := s.checkReach(ctx, p, person)
	switch posgate.ErrorCode(err) {
	case "":
		return true, nil
	case posgate.ENOTFOUND, posgate.EFORBIDDEN:
		return false, nil
	}
	return false, err
}

// ListPeople lists the people whose reach lies within p's, by e-mail.
func (s *Service) ListPeople(ctx context.Context, p *posgate.Principal) ([]*PersonView, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	all, err := s.store.ListPeople(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*PersonView, 0, len(all))
	for _, person := range all {
		ok, err := s.within(ctx, p, person)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, viewPerson(person))
		}
	}
	return out, nil
}

// FindPerson returns a person within p's reach, by id or e-mail address.
func (s *Service) FindPerson(ctx context.Context, p *posgate.Principal, idOrEmail string) (*PersonView, error) {
	person, err := s.findPerson(ctx, p, idOrEmail)
	if err != nil {
		return nil, err
	}
	return viewPerson(person), nil
}

func (s *Service) findPerson(ctx context.Context, p *posgate.Principal, idOrEmail string) (*posgate.Person, error) {
	if err := s.AuthorizeOperator(p); err != nil {
		return nil, err
	}
	person, err := s.store.FindPerson(ctx, idOrEmail)
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		person, err = s.store.FindPersonByEmail(ctx, posgate.NormalizeEmail(idOrEmail))
	}
	if err == nil {
		var ok bool
		if ok, err = s.within(ctx, p, person); err == nil && !ok {
			err = posgate.ErrNotFound
		}
	}
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, posgate.Errorf(posgate.ENOTFOUND, "Person '%s' not found.", idOrEmail)
	}
	return person, err
}

// SetPersonDisabled disables or enables a person within p's reach. A
// disabled person cannot sign in, and their sign-in sessions and tokens
// stop working within the lookup cache's TTL (docs/api.md §21.4).
func (s *Service) SetPersonDisabled(ctx context.Context, p *posgate.Principal, idOrEmail string, disabled bool) (*PersonView, error) {
	person, err := s.findPerson(ctx, p, idOrEmail)
	if err != nil {
		return nil, err
	}
	action := "person.enable"
	if disabled {
		action = "person.disable"
	}
	var out *PersonView
	err = s.audited(ctx, p, action, func(ctx context.Context, ch *change) error {
		before, err := s.store.FindPerson(ctx, person.ID)
		if err != nil {
			return err
		}
		after, err := s.store.UpdatePerson(ctx, person.ID, posgate.PersonUpdate{Disabled: &disabled})
		if err != nil {
			return err
		}
		target, err := s.personTarget(ctx, after)
		if err != nil {
			return err
		}
		out = viewPerson(after)
		ch.target, ch.before, ch.after = target, viewPerson(before), out
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
