// Package demo loads posgate's fixed demo data set, the one the README and
// docs/demo.md use, so that tutorials and scripts work verbatim.
package demo

import (
	"context"
	"errors"
	"fmt"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
)

// The demo credentials. They exist only in a store loaded with --demo.
const (
	POSSystemID   = "clover"
	CompanyID     = "demo-company"
	POSClientID   = "demo-pos"
	POSSecret     = "demo-pos-secret"
	AdminClientID = "demo-admin"
	AdminSecret   = "demo-admin-secret"
)

// Load creates every demo object that is absent. Objects that exist are left
// as they are (an operator may have changed them), so loading twice changes
// nothing.
func Load(ctx context.Context, st posgate.Store) error {
	steps := []func() error{
		func() error {
			return st.CreatePOSSystem(ctx, &posgate.POSSystem{ID: POSSystemID, Name: "Clover (demo)"})
		},
		func() error {
			return st.CreateCompany(ctx, &posgate.Company{POSSystemID: POSSystemID, ID: CompanyID, Name: "Demo Company",
				Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()})
		},
		location(ctx, st, "LOC123", "Demo Store Downtown"),
		location(ctx, st, "LOC456", "Demo Store Airport"),
		terminal(ctx, st, "LOC123", "TERM-05", posgate.StatusActive),
		terminal(ctx, st, "LOC123", "TERM-06", posgate.StatusActive),
		terminal(ctx, st, "LOC456", "TERM-07", posgate.StatusActive),
		terminal(ctx, st, "LOC123", "TERM-99", posgate.StatusDisabled),
		client(ctx, st, &posgate.Client{ID: POSClientID, Name: "Demo POS integration", POSSystemID: POSSystemID,
			Scopes: []string{posgate.ScopePOSIntegration}}, POSSecret),
		client(ctx, st, &posgate.Client{ID: AdminClientID, Name: "Demo operator",
			Scopes: []string{posgate.ScopeAdmin}}, AdminSecret),
		func() error { return loadContent(ctx, st) },
		func() error { return loadCoupons(ctx, st) },
		func() error { return loadLoyaltyProgram(ctx, st) },
		func() error { return loadPeople(ctx, st) },
	}
	for _, step := range steps {
		if err := step(); err != nil && !errors.Is(err, posgate.ErrConflict) {
			return fmt.Errorf("demo data: %w", err)
		}
	}
	if err := loadPromotions(ctx, st); err != nil {
		return fmt.Errorf("demo data: promotions: %w", err)
	}
	return nil
}

func location(ctx context.Context, st posgate.Store, id, name string) func() error {
	return func() error {
		return st.CreateLocation(ctx, &posgate.Location{POSSystemID: POSSystemID, ID: id, CompanyID: CompanyID,
			Name: name, Status: posgate.StatusActive})
	}
}

func terminal(ctx context.Context, st posgate.Store, loc, id string, status posgate.Status) func() error {
	return func() error {
		return st.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: POSSystemID, LocationID: loc, ID: id,
			Name: "Till " + id, Status: status})
	}
}

func client(ctx context.Context, st posgate.Store, c *posgate.Client, secret string) func() error {
	return func() error {
		c.SecretHash = credential.HashSecret(secret)
		return st.CreateClient(ctx, c)
	}
}

// loadLoyaltyProgram gives demo-company its loyalty program while it has
// none: a point per currency unit, a stamp per sale of 5.00 or more, no
// enrolment (docs/api.md §13.2).
func loadLoyaltyProgram(ctx context.Context, st posgate.Store) error {
	_, err := st.FindLoyaltyProgram(ctx, POSSystemID, CompanyID)
	if !errors.Is(err, posgate.ErrNotFound) {
		return err
	}
	return st.PutLoyaltyProgram(ctx, &posgate.LoyaltyProgram{POSSystemID: POSSystemID, CompanyID: CompanyID,
		PointsPerCurrencyUnit: 100, StampsPerSale: 1, MinimumAmountForStamp: 500})
}

// Reset makes st hold exactly the demo data set: it deletes every datum
// (posgate.DataResetter; the signing keys and server secrets stay) and loads
// the data set afresh, so that a sandbox an integrator has changed is as a
// new one (docs/api.md §20).
func Reset(ctx context.Context, st posgate.Store) error {
	r, ok := st.(posgate.DataResetter)
	if !ok {
		return fmt.Errorf("demo reset: the store %T cannot delete its data", st)
	}
	if err := r.DeleteAllData(ctx); err != nil {
		return fmt.Errorf("demo reset: %w", err)
	}
	return Load(ctx, st)
}
