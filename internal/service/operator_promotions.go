package service

import (
	"context"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec/datetime"
)

// Paging of the operator's promotion list.
const (
	DefaultPromotionPageSize = 100
	MaxPromotionPageSize     = 1000
	// MaxPromotionPage keeps (page-1)*pageSize far from overflowing.
	MaxPromotionPage = 1 << 30
)

// ListPromotionsRequest selects a page of a company's promotions. With
// ValidAt (a date-time; "" for now) or LocationID only those that apply
// there and then are listed (the carousel's query). Page and PageSize are
// nil when absent.
type ListPromotionsRequest struct {
	Page       *int
	PageSize   *int
	ValidAt    *string
	LocationID string
}

// Validate checks the paging ranges and the date-time, reporting every
// problem at once.
func (q *ListPromotionsRequest) Validate() error {
	v := posgate.ValidationError{}
	checkRange(v, "page", q.Page, 1, MaxPromotionPage)
	checkRange(v, "pageSize", q.PageSize, 1, MaxPromotionPageSize)
	if q.ValidAt != nil && *q.ValidAt != "" {
		if _, err := datetime.Parse(*q.ValidAt); err != nil {
			v.Add("validAt", "The validAt parameter must be a date-time (ISO 8601), e.g. 2030-05-01T12:00:00Z.")
		}
	}
	return v.Err()
}

// PromotionPage is a page of promotions, with data and page at the top
// level.
type PromotionPage struct {
	Data []*posgate.Promotion `json:"data"`
	Page PageModel            `json:"page"`
}

// ListPromotions lists a page of the promotions of a company p reaches; a
// LocationID must be one of the company's locations (ENOTFOUND otherwise).
func (s *Service) ListPromotions(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *ListPromotionsRequest) (*PromotionPage, error) {
	co, err := s.operatorCompany(ctx, p, posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	page, size := intOr(req.Page, 1), intOr(req.PageSize, DefaultPromotionPageSize)
	out := &PromotionPage{Page: PageModel{Page: page, PageSize: size}}
	offset := (page - 1) * size
	if req.ValidAt != nil || req.LocationID != "" {
		at := s.now()
		if req.ValidAt != nil && *req.ValidAt != "" {
			at, _ = datetime.Parse(*req.ValidAt)
		}
		// Wall-clock validity is read in the location's zone, or the
		// company's when no location is named.
		zone := co.Zone()
		if req.LocationID != "" {
			l, err := s.store.FindLocation(ctx, posSystemID, req.LocationID)
			if err == nil && l.CompanyID != companyID {
				err = posgate.ErrNotFound
			}
			if posgate.ErrorCode(err) == posgate.ENOTFOUND {
				return nil, posgate.Errorf(posgate.ENOTFOUND, "Location '%s' is not a location of company '%s'.", req.LocationID, companyID)
			} else if err != nil {
				return nil, err
			}
			zone = l.Zone()
		}
		all, err := s.store.ListPromotionsValidAt(ctx, posSystemID, companyID, req.LocationID, at.In(zone))
		if err != nil {
			return nil, err
		}
		out.Page.Total = len(all)
		out.Data = all[min(offset, len(all)):min(offset+size, len(all))]
	} else {
		if out.Data, out.Page.Total, err = s.store.ListPromotions(ctx, posSystemID, companyID, offset, size); err != nil {
			return nil, err
		}
	}
	if out.Data, err = s.withUsage(ctx, posSystemID, companyID, out.Data); err != nil {
		return nil, err
	}
	out.Data = nonNil(out.Data)
	return out, nil
}

// withUsage is promotions with their budgets' usage in all (docs/api.md
// §9.7), read in one statement.
func (s *Service) withUsage(ctx context.Context, posSystemID, companyID string, promotions []*posgate.Promotion) ([]*posgate.Promotion, error) {
	ids := posgate.BudgetedIDs(promotions)
	if len(ids) == 0 {
		return promotions, nil
	}
	usage, err := s.store.PromotionUsage(ctx, posSystemID, companyID, "", ids)
	if err != nil {
		return nil, err
	}
	return posgate.WithUsage(promotions, usage), nil
}

// FindPromotion returns a promotion of a company p reaches, with its
// budget's usage.
func (s *Service) FindPromotion(ctx context.Context, p *posgate.Principal, posSystemID, companyID, promotionID string) (*posgate.Promotion, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	pr, err := s.store.FindPromotion(ctx, posSystemID, companyID, promotionID)
	if err != nil {
		return nil, err
	}
	list, err := s.withUsage(ctx, posSystemID, companyID, []*posgate.Promotion{pr})
	if err != nil {
		return nil, err
	}
	return list[0], nil
}

// FindCatalogue returns the catalogue of a company p reaches, against which
// imported promotions' category and product ids are checked.
func (s *Service) FindCatalogue(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) (*posgate.Catalogue, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	return s.store.FindCatalogue(ctx, posSystemID, companyID)
}

// ReplaceCatalogueRequest is a company's whole catalogue.
type ReplaceCatalogueRequest struct {
	CategoryIDs []string `json:"categoryIds"`
	ProductIDs  []string `json:"productIds"`
}

// ReplaceCatalogue makes the categories and products of a company p
// reaches exactly the ids of the request: those it lacks are removed, new
// ones are added with only their ids, and those kept keep their fields
// (docs/api.md §17.4). Promotions already stored are not checked again.
func (s *Service) ReplaceCatalogue(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *ReplaceCatalogueRequest) (*posgate.Catalogue, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	c := &posgate.Catalogue{POSSystemID: posSystemID, CompanyID: companyID, CategoryIDs: req.CategoryIDs, ProductIDs: req.ProductIDs}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	err := s.audited(ctx, p, "catalogue.replace", func(ctx context.Context, ch *change) error {
		before, err := s.store.FindCatalogue(ctx, posSystemID, companyID)
		if err != nil {
			return err
		}
		ch.target, ch.before, ch.after = companyTarget("catalogue", companyID, posSystemID, companyID), before, c
		return s.store.ReplaceCatalogue(ctx, c)
	})
	s.indexes.invalidate(posSystemID, companyID)
	if err != nil {
		return nil, err
	}
	return c, nil
}
