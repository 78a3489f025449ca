package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/codec"
)

// Defaults of the import route's own limits (Config.MaxImportBodyBytes and
// Config.ImportTimeout).
const (
	// DefaultMaxImportBodyBytes fits 100,000 items of a realistic size as
	// JSON (about 600 bytes each) or XML (about twice that) with room to
	// spare.
	DefaultMaxImportBodyBytes = 256 << 20
	// DefaultImportTimeout is how long an import request may take to arrive
	// and be answered, in place of the server's 60 s: 256 MiB needs about
	// 4 Mbit/s to arrive in 10 minutes.
	DefaultImportTimeout = 10 * time.Minute
)

// importBody prepares the import route's request: its own, larger body cap
// and read and write deadlines extended to Config.ImportTimeout for this
// request only (the server's own timeouts suit the small POS requests).
func (s *Server) importBody(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		deadline := time.Now().Add(s.cfg.ImportTimeout)
		if err := rc.SetReadDeadline(deadline); err == nil {
			rc.SetWriteDeadline(deadline)
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxImportBodyBytes)
		next(w, r)
	}
}

// importPromotions is endpoint 7. It checks the content type, then the
// company (404, or 403 when it is disabled or its promotionImport switch is
// off) before reading the body, so that a request that cannot succeed is not
// read for nothing. The body is then decoded one item at a time; each item
// is checked (contract.md §9) and the valid ones go to the store's import as
// they arrive. Only when the whole body has been read without error are they
// committed, in one transaction: a malformed body, more than 100,000 items
// or a body over the cap store nothing.
func (s *Server) importPromotions(r *http.Request) (int, any, error) {
	ctx := r.Context()
	posSystemID, companyID := r.PathValue("posSystemId"), r.PathValue("posCompanyId")
	if err := codec.CheckContentType(r.Header.Get("Content-Type")); err != nil {
		return 0, nil, err
	}
	company, err := s.store.FindCompany(ctx, posSystemID, companyID)
	if err == nil && !canSee(principal(ctx), companyID) {
		err = posgate.ErrNotFound
	}
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
		return 0, nil, posgate.Errorf(posgate.ENOTFOUND, "Company '%s' is not registered.", companyID)
	case err != nil:
		return 0, nil, err
	case company.Status != posgate.StatusActive:
		return 0, nil, posgate.Errorf(posgate.EFORBIDDEN, "Company '%s' is disabled: its promotions cannot be imported.", companyID)
	case !company.Features.PromotionImport:
		return 0, nil, posgate.Errorf(posgate.EFORBIDDEN, "Promotion import is switched off for company '%s'.", companyID)
	}
	locations, err := s.store.ListLocations(ctx, posSystemID, companyID)
	if err != nil {
		return 0, nil, err
	}
	ids := make([]string, len(locations))
	for i, l := range locations {
		ids[i] = l.ID
	}
	catalogue, err := s.store.FindCatalogue(ctx, posSystemID, companyID)
	if err != nil {
		return 0, nil, err
	}
	checker := posgate.NewPromotionChecker(companyID, ids, catalogue)
	imp, err := s.store.BeginPromotionImport(ctx, posSystemID, companyID)
	if err != nil {
		return 0, nil, err
	}
	defer imp.Rollback()
	// Decoding and checking run side by side: this goroutine decodes, a
	// second one checks the items and hands the valid ones to the store.
	stage := newStager(ctx, func(row int, it *importItem) error {
		p := it.promotion(posSystemID, companyID)
		if checker.Check(row, p) {
			return imp.Add(ctx, p)
		}
		return nil
	})
	err = codec.StreamArray(r, "items", codec.Options{}, func(i int, it *importItem) error {
		if i >= posgate.MaxPromotionImportItems {
			return posgate.Errorf(posgate.ETOOLARGE, "The import holds more than %d items; send at most %d per request.",
				posgate.MaxPromotionImportItems, posgate.MaxPromotionImportItems)
		}
		return stage.add(it)
	})
	if err2 := stage.close(); err == nil {
		err = err2
	}
	if err != nil {
		return 0, nil, err
	}
	// A large import's commit takes a while: say what it is waiting for.
	s.log.InfoContext(ctx, "promotion import: committing", slog.String("traceId", traceID(ctx)),
		slog.String("posSystemId", posSystemID), slog.String("posCompanyId", companyID), slog.Int("valid", checker.Accepted()))
	created, updated, err := imp.Commit(ctx)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, envelope{checker.Result(created, updated)}, nil
}

// stager runs fn on every item, in order, on a goroutine of its own, fed in
// batches so that handing items over costs little.
type stager struct {
	ctx     context.Context
	batches chan []*importItem
	batch   []*importItem
	row     int
	done    chan error // fn's first error, or nil; then closed
	err     error
}

// stagerBatch is how many items go over at a time.
const stagerBatch = 256

func newStager(ctx context.Context, fn func(row int, it *importItem) error) *stager {
	st := &stager{ctx: ctx, batches: make(chan []*importItem, 4), done: make(chan error, 1)}
	go func() {
		var err error
		row := 0
		for batch := range st.batches {
			for _, it := range batch {
				row++
				if err == nil {
					err = fn(row, it)
				}
			}
		}
		st.done <- err
		close(st.done)
	}()
	return st
}

// add queues an item; it fails with fn's error once fn has failed.
func (st *stager) add(it *importItem) error {
	st.batch = append(st.batch, it)
	if len(st.batch) < stagerBatch {
		return nil
	}
	return st.flush()
}

func (st *stager) flush() error {
	if len(st.batch) == 0 {
		return nil
	}
	select {
	case st.batches <- st.batch:
		st.batch = make([]*importItem, 0, stagerBatch)
		return nil
	case err := <-st.done:
		st.err = err
		return err
	case <-st.ctx.Done():
		return st.ctx.Err()
	}
}

// close hands over the last items, waits until fn has seen every item and
// returns its error.
func (st *stager) close() error {
	err := st.flush()
	close(st.batches)
	if err2, ok := <-st.done; ok {
		err = err2
	} else if st.err != nil {
		err = st.err
	}
	return err
}

// Paging of the operator's promotion list.
const (
	defaultPromotionPageSize = 100
	maxPromotionPageSize     = 1000
)

// pagedPromotions is a page of promotions.
type pagedPromotions struct {
	Data []*posgate.Promotion `json:"data"`
	Page pageModel            `json:"page"`
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
	out := pagedPromotions{Page: pageModel{Page: page, PageSize: size}}
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
