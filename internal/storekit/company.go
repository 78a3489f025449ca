package storekit

import (
	"context"

	"github.com/posgate/posgate"
)

// LocationLoader reads the ids of a company's locations for a
// CompanyChecker, through whatever connection or transaction the store
// writes with; exists is false when there is no such company.
type LocationLoader func(ctx context.Context, posSystemID, companyID string) (locations map[string]bool, exists bool, err error)

// CompanyChecker checks a coupon or loyalty user against its company before
// a store writes it: the company must exist, and a coupon's location limits
// must be the company's (posgate.Coupon.CheckLocations), which no foreign
// key can hold. It remembers each company's locations, so that a bulk import
// reads them once per company rather than once per item. One write or import
// owns one CompanyChecker; it is not safe for concurrent use.
type CompanyChecker struct {
	load      LocationLoader
	companies map[[2]string]map[string]bool // (POS system, company) → its locations
}

// NewCompanyChecker returns a CompanyChecker that reads locations with load.
func NewCompanyChecker(load LocationLoader) *CompanyChecker {
	return &CompanyChecker{load: load, companies: map[[2]string]map[string]bool{}}
}

// Locations returns the ids of the company's locations, or ENOTFOUND when
// the company does not exist.
func (k *CompanyChecker) Locations(ctx context.Context, posSystemID, companyID string) (map[string]bool, error) {
	key := [2]string{posSystemID, companyID}
	if locs, ok := k.companies[key]; ok {
		return locs, nil
	}
	locs, exists, err := k.load(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, posgate.NotFound("company", companyID)
	}
	k.companies[key] = locs
	return locs, nil
}

// Coupon normalises c (posgate.Coupon.Normalize: defaults filled in, limits
// sorted and unique) and checks its company and its location limits.
func (k *CompanyChecker) Coupon(ctx context.Context, c *posgate.Coupon) error {
	c.Normalize()
	locs, err := k.Locations(ctx, c.POSSystemID, c.CompanyID)
	if err != nil {
		return err
	}
	return c.CheckLocations(locs)
}
