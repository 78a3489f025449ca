package httpapi

import (
	"net/http"
	"strconv"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/service"
)

// Paging of the operator's promotion list.
const (
	defaultPromotionPageSize = 100
	maxPromotionPageSize     = 1000
)

// pagedPromotions is a page of promotions.
type pagedPromotions struct {
	Data []*posgate.Promotion `json:"data"`
	Page service.PageModel    `json:"page"`
}

// listPromotions lists a company's promotions, a page at a time; with
// validAt or posLocationId only those that apply there and then
// (PromotionStore.ListPromotionsValidAt: validAt defaults to now, the
// location to any of the company's).
func (s *Server) listPromotions(r *http.Request) (int, any, error) {
	ctx := r.Context()
	posSystemID, companyID := r.PathValue("posSystemId"), r.PathValue("posCompanyId")
	q := r.URL.Query()
	v := posgate.ValidationError{}
	page := queryInt(v, q.Get("page"), "page", 1, 1, 1<<30)
	size := queryInt(v, q.Get("pageSize"), "pageSize", defaultPromotionPageSize, 1, maxPromotionPageSize)
	at := s.now()
	if raw := q.Get("validAt"); raw != "" {
		var err error
		if at, err = codec.ParseDateTime(raw); err != nil {
			v.Add("validAt", "The validAt parameter must be a date-time (ISO 8601), e.g. 2030-05-01T12:00:00Z.")
		}
	}
	if err := v.Err(); err != nil {
		return 0, nil, err
	}
	if _, err := s.store.FindCompany(ctx, posSystemID, companyID); err != nil {
		return 0, nil, err
	}
	out := pagedPromotions{Page: service.PageModel{Page: page, PageSize: size}}
	offset := (page - 1) * size
	location := q.Get("posLocationId")
	if q.Has("validAt") || location != "" {
		if location != "" {
			l, err := s.store.FindLocation(ctx, posSystemID, location)
			if err == nil && l.CompanyID != companyID {
				err = posgate.ErrNotFound
			}
			if posgate.ErrorCode(err) == posgate.ENOTFOUND {
				return 0, nil, posgate.Errorf(posgate.ENOTFOUND, "Location '%s' is not a location of company '%s'.", location, companyID)
			} else if err != nil {
				return 0, nil, err
			}
		}
		all, err := s.store.ListPromotionsValidAt(ctx, posSystemID, companyID, location, at)
		if err != nil {
			return 0, nil, err
		}
		out.Page.Total = len(all)
		out.Data = all[min(offset, len(all)):min(offset+size, len(all))]
	} else {
		var err error
		if out.Data, out.Page.Total, err = s.store.ListPromotions(ctx, posSystemID, companyID, offset, size); err != nil {
			return 0, nil, err
		}
	}
	out.Data = nonNil(out.Data)
	return http.StatusOK, out, nil
}

// queryInt parses an optional integer parameter in [lo, hi].
func queryInt(v posgate.ValidationError, raw, name string, def, lo, hi int) int {
	if raw == "" {
		return def
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		v.Add(name, "The "+name+" parameter must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi)+".")
		return def
	}
	return n
}

func (s *Server) getPromotion(r *http.Request) (int, any, error) {
	return one(s.store.FindPromotion(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), r.PathValue("promotionId")))
}

func (s *Server) getCatalogue(r *http.Request) (int, any, error) {
	return one(s.store.FindCatalogue(r.Context(), r.PathValue("posSystemId"), r.PathValue("posCompanyId")))
}

// replaceCatalogueRequest is the body of PUT …/catalogue.
type replaceCatalogueRequest struct {
	CategoryIDs []string `json:"categoryIds"`
	ProductIDs  []string `json:"productIds"`
}

func (s *Server) replaceCatalogue(r *http.Request, req *replaceCatalogueRequest) (int, any, error) {
	c := &posgate.Catalogue{POSSystemID: r.PathValue("posSystemId"), CompanyID: r.PathValue("posCompanyId"),
		CategoryIDs: req.CategoryIDs, ProductIDs: req.ProductIDs}
	if err := c.Validate(); err != nil {
		return 0, nil, err
	}
	if err := s.store.ReplaceCatalogue(r.Context(), c); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{c}, nil
}
