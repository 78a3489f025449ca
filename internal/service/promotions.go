package service

import (
	"context"

	"github.com/posgate/posgate"
)

// PromotionImport is one promotion import in progress (docs/api.md
// §9): its items are checked and staged as they arrive, and committed
// together, all or none, once the whole request has been read. It is used
// by one goroutine at a time.
type PromotionImport struct {
	checker *posgate.PromotionChecker
	staged  posgate.PromotionImport
	done    func(ctx context.Context) error // drops the company's cached promotion index, tells the tills (terminal channel)
	who     *posgate.Principal
}

// BeginPromotionImport starts an import of promotions into a company. It
// checks everything that does not depend on the items first, so that a
// request that cannot succeed is refused before its body is read: p must be
// allowed the POS system and the company (a hidden company is ENOTFOUND),
// and the company must be active with its promotionImport switch on
// (EFORBIDDEN otherwise). The caller must Rollback or Commit.
func (s *Service) BeginPromotionImport(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) (*PromotionImport, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	company, err := s.store.FindCompany(ctx, posSystemID, companyID)
	if err == nil && !p.CanSeeCompany(posSystemID, companyID) {
		err = posgate.ErrNotFound
	}
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
		return nil, posgate.Errorf(posgate.ENOTFOUND, "Company '%s' is not registered.", companyID)
	case err != nil:
		return nil, err
	case company.Status != posgate.StatusActive:
		return nil, posgate.Errorf(posgate.EFORBIDDEN, "Company '%s' is disabled: its promotions cannot be imported.", companyID)
	case !company.Features.PromotionImport:
		return nil, posgate.Errorf(posgate.EFORBIDDEN, "Promotion import is switched off for company '%s'.", companyID)
	}
	locations, err := s.store.ListLocations(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(locations))
	for i, l := range locations {
		ids[i] = l.ID
	}
	// The catalogue's ids, for the warnings (docs/api.md §9.3, §17).
	catalogue, err := s.store.FindCatalogue(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	staged, err := s.store.BeginPromotionImport(ctx, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	return &PromotionImport{checker: posgate.NewPromotionChecker(companyID, ids, catalogue), staged: staged, who: p,
		done: func(ctx context.Context) error {
			s.indexes.invalidate(posSystemID, companyID)
			return s.settingsChangedNow(ctx, posSystemID, companyID, ChangedPromotions)
		}}, nil
}

// Count is told how many items the request has held so far; beyond
// posgate.MaxPromotionImportItems it is ETOOLARGE, and the caller stops
// reading.
func (imp *PromotionImport) Count(n int) error {
	if n > posgate.MaxPromotionImportItems {
		return posgate.Errorf(posgate.ETOOLARGE, "The import holds more than %d items; send at most %d per request.",
			posgate.MaxPromotionImportItems, posgate.MaxPromotionImportItems)
	}
	return nil
}

// Add checks item number row (1-based) and stages it when it passes; a
// failed item is recorded in the result, not returned as an error. The
// error is the store's.
func (imp *PromotionImport) Add(ctx context.Context, row int, p *posgate.Promotion) error {
	if imp.checker.Check(row, p) {
		return imp.staged.Add(ctx, p)
	}
	return nil
}

// Valid is how many items have passed so far.
func (imp *PromotionImport) Valid() int { return imp.checker.Accepted() }

// Commit stores every item that passed, in one transaction, and returns the
// import's result.
func (imp *PromotionImport) Commit(ctx context.Context) (*posgate.ImportResult, error) {
	created, updated, err := imp.staged.Commit(importMeta(ctx, imp.who, imp.checker.Result(0, 0)))
	if err != nil {
		return nil, err
	}
	if err := imp.done(ctx); err != nil {
		return nil, err
	}
	return imp.checker.Result(created, updated), nil
}

// Rollback discards the import; it does nothing after Commit, so callers
// defer it.
func (imp *PromotionImport) Rollback() { imp.staged.Rollback() }
