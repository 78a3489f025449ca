package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
	"github.com/posgate/posgate/internal/importfile"
	"github.com/posgate/posgate/internal/service"
)

// The catalogue imports (docs/api.md §17), the operator's catalogue lists
// and promotion evaluation (docs/api.md §18).

// importProducts imports a company's products (docs/api.md §17.1): the
// company is checked before the body is read, the items are checked as they
// are decoded, and the valid ones are stored together once the whole body
// has been read without error.
func (s *Server) importProducts(r *http.Request) (int, any, error) {
	ctx := r.Context()
	posSystemID, companyID := r.PathValue("posSystemId"), r.PathValue("posCompanyId")
	if err := codec.CheckContentType(r.Header.Get("Content-Type")); err != nil {
		return 0, nil, err
	}
	imp, err := s.svc.BeginProductImport(ctx, principal(ctx), posSystemID, companyID)
	if err != nil {
		return 0, nil, err
	}
	err = codec.StreamArray(r, "items", codec.Options{}, func(i int, it *importfile.ProductItem) error {
		if err := imp.Count(i + 1); err != nil {
			return err
		}
		imp.Add(i+1, &posgate.ProductItem{ProductID: it.ProductID, ProductName: it.ProductName, ProductCategoryID: it.ProductCategoryID,
			ProductCategory: it.ProductCategory, Manufacturer: it.Manufacturer, Price: it.Price})
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	s.log.InfoContext(ctx, "products import: committing", slog.String("traceId", traceID(ctx)),
		slog.String("posSystemId", posSystemID), slog.String("posCompanyId", companyID))
	return enveloped(imp.Commit(ctx))
}

// importCategories imports a company's product categories (docs/api.md
// §17.2), as importProducts does; the tree checks run when the body has
// been read.
func (s *Server) importCategories(r *http.Request) (int, any, error) {
	ctx := r.Context()
	posSystemID, companyID := r.PathValue("posSystemId"), r.PathValue("posCompanyId")
	if err := codec.CheckContentType(r.Header.Get("Content-Type")); err != nil {
		return 0, nil, err
	}
	imp, err := s.svc.BeginCategoryImport(ctx, principal(ctx), posSystemID, companyID)
	if err != nil {
		return 0, nil, err
	}
	err = codec.StreamArray(r, "items", codec.Options{}, func(i int, it *importfile.CategoryItem) error {
		if err := imp.Count(i + 1); err != nil {
			return err
		}
		imp.Add(i+1, &posgate.CategoryItem{Name: it.Name, PosProductParentCategoryID: it.PosProductParentCategoryID,
			PosProductCategoryID: it.PosProductCategoryID, PosCatalogID: it.PosCatalogID})
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	s.log.InfoContext(ctx, "categories import: committing", slog.String("traceId", traceID(ctx)),
		slog.String("posSystemId", posSystemID), slog.String("posCompanyId", companyID))
	return enveloped(imp.Commit(ctx))
}

// evaluatePromotions evaluates a basket (docs/api.md §18).
func (s *Server) evaluatePromotions(r *http.Request, req *service.EvaluateRequest) (int, any, error) {
	return enveloped(s.svc.EvaluatePromotions(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), req))
}

func (s *Server) cataloguePage(r *http.Request) *service.CataloguePageRequest {
	q := r.URL.Query()
	return &service.CataloguePageRequest{Page: queryNumber(q, "page"), PageSize: queryNumber(q, "pageSize")}
}

func (s *Server) listProducts(r *http.Request) (int, any, error) {
	return plain(s.svc.ListProducts(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), s.cataloguePage(r)))
}

func (s *Server) listCategories(r *http.Request) (int, any, error) {
	return plain(s.svc.ListCategories(r.Context(), principal(r.Context()), r.PathValue("posSystemId"), r.PathValue("posCompanyId"), s.cataloguePage(r)))
}
