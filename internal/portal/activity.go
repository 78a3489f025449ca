package portal

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// transactionsData is the transactions page's.
type transactionsData struct {
	Places   []place
	Company  string
	Filter   url.Values
	Page     *service.TransactionPage
	Next     string // the query of the next page; "" on the last
	Previous string
	Session  *posgate.Session
}

// transactions lists a company's transactions, newest first, filtered by
// location, loyalty user and day, and finds a session by its id.
func (p *Portal) transactions(q *request) error {
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	f := q.r.URL.Query()
	pos, co := companyOf(q, places)
	d := transactionsData{Places: places, Company: pos + "/" + co, Filter: f}
	v := view{Title: "Sessions and transactions", Nav: "transactions"}
	status := http.StatusOK
	if id := strings.TrimSpace(f.Get("session")); id != "" {
		s, err := p.svc.FindSession(q.ctx, q.pr, id)
		switch posgate.ErrorCode(err) {
		case "":
			d.Session = s
		case posgate.ENOTFOUND, posgate.EINVALID:
			v.Error, status = posgate.ErrorMessage(err), http.StatusNotFound
		default:
			return err
		}
	}
	if co != "" {
		page := 1
		if n, err := strconv.Atoi(f.Get("page")); err == nil && n > 0 {
			page = n
		}
		size := service.DefaultTransactionPageSize
		d.Page, err = p.svc.ListTransactions(q.ctx, q.pr, pos, co, &service.ListTransactionsRequest{PosLocationID: f.Get("location"),
			UserID: strings.TrimSpace(f.Get("user")), Day: strings.TrimSpace(f.Get("day")), Page: &page, PageSize: &size})
		if err != nil {
			// A bad filter: the page again, with the fields at fault.
			return p.formError(q, err, func(status int, fv view) error {
				fv.Title, fv.Nav = v.Title, v.Nav
				return p.render(q, status, "transactions", withData(fv, d))
			})
		}
		link := func(n int) string {
			l := url.Values{}
			for k, vs := range f {
				l[k] = vs
			}
			l.Set("page", strconv.Itoa(n))
			l.Set("company", d.Company)
			l.Del("done")
			return l.Encode()
		}
		if page*size < d.Page.Page.Total {
			d.Next = link(page + 1)
		}
		if page > 1 {
			d.Previous = link(page - 1)
		}
	}
	return p.render(q, status, "transactions", withData(v, d))
}

// withData returns v showing d.
func withData(v view, d any) view { v.Data = d; return v }

// catalogueData is the catalogue page's.
type catalogueData struct {
	Places     []place
	Company    string
	Promotions *service.PromotionPage
	Categories *service.CategoryPage
	Products   *service.ProductPage
	// Upload is the result of a file just uploaded (upload.go).
	Upload *uploadResult
}

// catalogue lists a company's promotions, categories and products (the
// first thousand of each; the POS imports them, docs/api.md §9, §17).
func (p *Portal) catalogue(q *request) error {
	return p.renderCatalogue(q, http.StatusOK, view{}, nil)
}

func (p *Portal) renderCatalogue(q *request, status int, v view, up *uploadResult) error {
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	pos, co := companyOf(q, places)
	d := catalogueData{Places: places, Company: pos + "/" + co, Upload: up}
	if co != "" {
		size := service.MaxPromotionPageSize
		if d.Promotions, err = p.svc.ListPromotions(q.ctx, q.pr, pos, co, &service.ListPromotionsRequest{PageSize: &size}); err != nil {
			return err
		}
		if d.Categories, err = p.svc.ListCategories(q.ctx, q.pr, pos, co, &service.CataloguePageRequest{PageSize: &size}); err != nil {
			return err
		}
		if d.Products, err = p.svc.ListProducts(q.ctx, q.pr, pos, co, &service.CataloguePageRequest{PageSize: &size}); err != nil {
			return err
		}
	}
	v.Title, v.Nav, v.Data = "Promotions and catalogue", "catalogue", d
	return p.render(q, status, "catalogue", v)
}
