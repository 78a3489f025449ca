package service

import (
	"context"

	"github.com/posgate/posgate"
)

// The catalogue imports (docs/api.md §17) and the operator's catalogue
// lists.

// catalogueCompany checks what a catalogue import needs before its body is
// read: p may use the POS system and see the company (a hidden company is
// ENOTFOUND), and the company is active with its productsImport switch on
// (EFORBIDDEN otherwise).
func (s *Service) catalogueCompany(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) error {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return err
	}
	company, err := s.store.FindCompany(ctx, posSystemID, companyID)
	if err == nil && !p.CanSeeCompany(posSystemID, companyID) {
		err = posgate.ErrNotFound
	}
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
		return posgate.Errorf(posgate.ENOTFOUND, "Company '%s' is not registered.", companyID)
	case err != nil:
		return err
	case company.Status != posgate.StatusActive:
		return posgate.Errorf(posgate.EFORBIDDEN, "Company '%s' is disabled: its catalogue cannot be imported.", companyID)
	case !company.Features.ProductsImport:
		return posgate.Errorf(posgate.EFORBIDDEN, "Products import is switched off for company '%s'.", companyID)
	}
	return nil
}

// countItems is ETOOLARGE beyond posgate.MaxCatalogueImportItems items.
func countItems(n int) error {
	if n > posgate.MaxCatalogueImportItems {
		return posgate.Errorf(posgate.ETOOLARGE, "The import holds more than %d items; send at most %d per request.",
			posgate.MaxCatalogueImportItems, posgate.MaxCatalogueImportItems)
	}
	return nil
}

// ProductImport is one products import in progress (docs/api.md §17.1):
// items are checked as they arrive and the valid ones stored together, all
// or none, once the whole request has been read.
type ProductImport struct {
	store                  posgate.Store
	who                    *posgate.Principal
	posSystemID, companyID string
	checker                *posgate.ProductChecker
}

// BeginProductImport starts a products import into a company, after the
// checks that do not depend on the items (catalogueCompany).
func (s *Service) BeginProductImport(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) (*ProductImport, error) {
	if err := s.catalogueCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	cats, _, err := s.store.ListCategories(ctx, posSystemID, companyID, 0, 0)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(cats))
	for i, c := range cats {
		ids[i] = c.ID
	}
	return &ProductImport{store: s.store, who: p, posSystemID: posSystemID, companyID: companyID, checker: posgate.NewProductChecker(companyID, ids)}, nil
}

// Count is told how many items the request has held so far; beyond the
// cap it is ETOOLARGE, and the caller stops reading.
func (imp *ProductImport) Count(n int) error { return countItems(n) }

// Add checks item number row (1-based); a failed item is recorded in the
// result.
func (imp *ProductImport) Add(row int, it *posgate.ProductItem) {
	imp.checker.Check(row, imp.posSystemID, it)
}

// Commit stores the items that passed, in one transaction, and returns the
// import's result.
func (imp *ProductImport) Commit(ctx context.Context) (*posgate.ImportResult, error) {
	created, updated := 0, 0
	if ps := imp.checker.Accepted(); len(ps) > 0 {
		var err error
		if created, updated, err = imp.store.ImportProducts(importMeta(ctx, imp.who, imp.checker.Result(0, 0)), imp.posSystemID, imp.companyID, ps); err != nil {
			return nil, err
		}
	}
	return imp.checker.Result(created, updated), nil
}

// CategoryImport is one categories import in progress (docs/api.md
// §17.2): items are checked alone as they arrive; the tree checks run
// against the stored tree in the store's transaction, which stores the
// items that pass, all or none.
type CategoryImport struct {
	svc                    *Service
	who                    *posgate.Principal
	posSystemID, companyID string
	checker                *posgate.CategoryChecker
}

// BeginCategoryImport starts a categories import into a company, after the
// checks that do not depend on the items (catalogueCompany).
func (s *Service) BeginCategoryImport(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) (*CategoryImport, error) {
	if err := s.catalogueCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	return &CategoryImport{svc: s, who: p, posSystemID: posSystemID, companyID: companyID, checker: posgate.NewCategoryChecker(posSystemID, companyID)}, nil
}

// Count is told how many items the request has held so far; beyond the
// cap it is ETOOLARGE.
func (imp *CategoryImport) Count(n int) error { return countItems(n) }

// Add runs the checks of item number row (1-based) that need nothing else.
func (imp *CategoryImport) Add(row int, it *posgate.CategoryItem) { imp.checker.Check(row, it) }

// Commit runs the tree checks and stores what passes, in one transaction,
// and returns the import's result.
func (imp *CategoryImport) Commit(ctx context.Context) (*posgate.ImportResult, error) {
	created, updated := 0, 0
	if imp.checker.Pending() > 0 {
		var err error
		created, updated, err = imp.svc.store.ImportCategories(importMeta(ctx, imp.who, imp.checker.Result(0, 0)), imp.posSystemID, imp.companyID, imp.checker.Plan)
		if err != nil {
			return nil, err
		}
		imp.svc.indexes.invalidate(imp.posSystemID, imp.companyID)
	}
	return imp.checker.Result(created, updated), nil
}

// CataloguePageRequest selects a page of a company's products or
// categories; nil is the default.
type CataloguePageRequest struct {
	Page     *int
	PageSize *int
}

// Validate checks the paging ranges (those of the promotion list).
func (q *CataloguePageRequest) Validate() error {
	v := posgate.ValidationError{}
	checkRange(v, "page", q.Page, 1, MaxPromotionPage)
	checkRange(v, "pageSize", q.PageSize, 1, MaxPromotionPageSize)
	return v.Err()
}

// ProductPage is a page of products, data and page at the top level.
type ProductPage struct {
	Data []*posgate.Product `json:"data"`
	Page PageModel          `json:"page"`
}

// CategoryPage is a page of categories, data and page at the top level.
type CategoryPage struct {
	Data []*posgate.Category `json:"data"`
	Page PageModel           `json:"page"`
}

// ListProducts lists a page of the products of a company p reaches, by id.
func (s *Service) ListProducts(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *CataloguePageRequest) (*ProductPage, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	page, size := intOr(req.Page, 1), intOr(req.PageSize, DefaultPromotionPageSize)
	out := &ProductPage{Page: PageModel{Page: page, PageSize: size}}
	var err error
	if out.Data, out.Page.Total, err = s.store.ListProducts(ctx, posSystemID, companyID, (page-1)*size, size); err != nil {
		return nil, err
	}
	return out, nil
}

// ListCategories lists a page of the categories of a company p reaches, by
// id.
func (s *Service) ListCategories(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *CataloguePageRequest) (*CategoryPage, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	page, size := intOr(req.Page, 1), intOr(req.PageSize, DefaultPromotionPageSize)
	out := &CategoryPage{Page: PageModel{Page: page, PageSize: size}}
	var err error
	if out.Data, out.Page.Total, err = s.store.ListCategories(ctx, posSystemID, companyID, (page-1)*size, size); err != nil {
		return nil, err
	}
	return out, nil
}

// importMeta returns ctx carrying, for the store's import log, who runs
// the import and how many items the checks have failed so far (items, not
// errors: one item may fail more than one check).
func importMeta(ctx context.Context, p *posgate.Principal, r *posgate.ImportResult) context.Context {
	rows := map[int]struct{}{}
	for _, e := range r.Errors {
		rows[e.RowNumber] = struct{}{}
	}
	return posgate.WithImportMeta(ctx, posgate.ImportMeta{ClientID: p.ClientID, PersonID: p.PersonID, Failed: len(rows)})
}
