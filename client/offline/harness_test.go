package offline_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/client/offline"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/openapi/openapitest"
	"github.com/posgate/posgate/internal/pgtest"
)

// clock is the server's injected clock, which the tests move through a
// simulated day.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// forEachStore runs fn against SQLite and, when POSGATE_TEST_POSTGRES_DSN
// is set, PostgreSQL.
func forEachStore(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "posgate.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.DSN(t)) })
}

// env is a running posgate with the demo data set, its clock, and clients
// of it as the demo POS and the demo operator.
type env struct {
	t          *testing.T
	ctx        context.Context
	clock      *clock
	base       string
	pos, admin *client.Client
}

// t0 is the start of the simulated day: a Monday morning, so that the
// promotions' recurrences fall on several days of the week within it.
var t0 = time.Date(2030, 6, 3, 7, 0, 0, 0, time.UTC)

func start(t *testing.T, dsn string) *env {
	t.Helper()
	clk := &clock{t: t0}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan app.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		// The webhook sender stays off: the deliveries of the events wait
		// in the outbox, where the tests read them.
		done <- app.Serve(ctx, app.Config{Listen: "127.0.0.1:0", Database: dsn, Demo: true, Now: clk.Now,
			NoWebhooks: true, WebhooksAllowLoopback: true,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))},
			func(a app.Addrs) { ready <- a })
	}()
	var base string
	select {
	case a := <-ready:
		base = a.BaseURL
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("posgate did not start")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("posgate did not stop")
		}
	})
	// Every answer is checked against the served OpenAPI document.
	hc := client.WithHTTPClient(&http.Client{Transport: openapitest.New(t).Transport(t, nil)})
	pos, err := client.New(base, hc, client.WithCredentials(demo.POSClientID, demo.POSSecret, "pos_integration"))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(base, hc, client.WithCredentials(demo.AdminClientID, demo.AdminSecret, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: context.Background(), clock: clk, base: base, pos: pos, admin: admin}
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// The place of the tests: a company of its own, with two locations and
// two terminals at the first.
const (
	pos     = demo.POSSystemID
	company = "kit-co"
	locA    = "KIT-A"
	locB    = "KIT-B"
	till1   = "T1"
	till2   = "T2"
	userID  = "kit-user"
)

// place registers the company, its locations, terminals and a loyalty
// user.
func (e *env) place() {
	e.t.Helper()
	a := e.admin.Admin
	_, err := a.CreateCompany(e.ctx, pos, client.CreateCompanyRequest{PosCompanyID: company, Name: "Kit Company"})
	e.must(err)
	// KIT-A keeps its wall-clock promotion dates in New York's time, so
	// that a till reads them in the zone the server does.
	for l, zone := range map[string]string{locA: "America/New_York", locB: ""} {
		_, err := a.CreateLocation(e.ctx, pos, client.CreateLocationRequest{PosLocationID: l, PosCompanyID: company, TimeZone: zone})
		e.must(err)
	}
	for _, id := range []string{till1, till2} {
		_, err := a.CreateTerminal(e.ctx, pos, locA, client.CreateTerminalRequest{TerminalID: id})
		e.must(err)
	}
	_, err = a.CreateLoyaltyUser(e.ctx, pos, company, client.CreateLoyaltyUserRequest{ID: userID, FirstName: "Kit", Email: "kit@example.com"})
	e.must(err)
}

// kit fetches and opens the kit of location loc for terminal term.
func (e *env) kit(loc, term string, prev *offline.Kit) (*offline.Kit, *client.OfflineKitAnswer) {
	e.t.Helper()
	q := client.KitQuery{TerminalID: term}
	if prev != nil {
		q.Since = prev.Version
	}
	ans, err := e.pos.GetOfflineKit(e.ctx, pos, loc, q)
	e.must(err)
	jwks, err := e.pos.GetJWKS(e.ctx)
	e.must(err)
	k, err := offline.Open(ans.JWS, jwks, prev)
	e.must(err)
	return k, ans
}

// catalogue imports a random catalogue and random promotions for the
// company: a category tree (with a name that two categories share),
// products in it (some without a category or with one outside the
// catalogue) and promotions of both types, for products, categories or
// everything, at one location, both or every one, with and without
// validities and recurrences.
func (e *env) catalogue(rng *rand.Rand) (categories []client.CategoryItem, products []client.ProductItem) {
	e.t.Helper()
	parents := map[int]int{2: 0, 3: 2, 4: 1, 5: 4, 7: 6}
	for i := range 8 {
		c := client.CategoryItem{PosProductCategoryID: fmt.Sprintf("C%d", i), Name: fmt.Sprintf("cat %d", i)}
		if p, ok := parents[i]; ok {
			c.PosProductParentCategoryID = fmt.Sprintf("C%d", p)
		}
		if i == 5 || i == 7 {
			c.Name = "shared name"
		}
		categories = append(categories, c)
	}
	_, err := e.pos.ImportProductCategories(e.ctx, pos, company, client.CategoryImport{Items: categories})
	e.must(err)
	for i := range 40 {
		p := client.ProductItem{ProductID: fmt.Sprintf("P%02d", i)}
		switch n := rng.IntN(10); {
		case n < 7:
			p.ProductCategoryID = fmt.Sprintf("C%d", rng.IntN(8))
		case n < 9:
			p.ProductCategoryID = "OUTSIDE"
		}
		price := float64(rng.IntN(5000)) / 100
		p.Price = &price
		products = append(products, p)
	}
	_, err = e.pos.ImportProducts(e.ctx, pos, company, client.ProductImport{Items: products})
	e.must(err)
	var promos []client.PromotionItem
	days := []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	for i := range 40 {
		p := client.PromotionItem{ID: fmt.Sprintf("PR%02d", i), Name: fmt.Sprintf("promotion %d", i)}
		if rng.IntN(2) == 0 {
			p.PromotionResults = []client.PromotionResult{{PromotionType: "Percentage", Value: []float64{5, 10, 12.5, 15, 20, 33.3333, 50}[rng.IntN(7)]}}
		} else {
			p.PromotionResults = []client.PromotionResult{{PromotionType: "Amount", Value: []float64{0.5, 1, 1.25, 2, 5}[rng.IntN(5)]}}
		}
		yes := true
		switch n := rng.IntN(20); {
		case n < 3:
			p.UseForAllProducts = &yes
		case n < 4:
			p.UseForAllCategories = &yes
		case n < 12:
			for range 1 + rng.IntN(3) {
				p.ProductIds = append(p.ProductIds, []string{fmt.Sprintf("P%02d", rng.IntN(40)), "X1"}[rng.IntN(2)])
			}
		default:
			for range 1 + rng.IntN(2) {
				p.CategoryIds = append(p.CategoryIds, []string{fmt.Sprintf("C%d", rng.IntN(8)), "OUTSIDE"}[min(rng.IntN(6), 1)])
			}
		}
		switch rng.IntN(4) {
		case 1:
			p.LocationIds = []string{locA}
		case 2:
			p.LocationIds = []string{locB}
		case 3:
			p.LocationIds = []string{locA, locB}
		}
		if rng.IntN(2) == 0 {
			// Dates with an offset (instants) or without (the location's
			// wall-clock time, docs/api.md §9.1).
			layout := []string{time.RFC3339, "2006-01-02T15:04:05"}[rng.IntN(2)]
			from := t0.Add(time.Duration(rng.IntN(48)-24) * time.Hour)
			v := client.PromotionValidity{StartDate: from.Format(layout), EndDate: from.Add(time.Duration(1+rng.IntN(48)) * time.Hour).Format(layout)}
			if rng.IntN(2) == 0 {
				w := time.Date(2030, 1, 1, rng.IntN(24), 0, 0, 0, time.UTC)
				v.Recurrence = &client.PromotionRecurrence{DaysOfWeek: []string{days[rng.IntN(7)], days[rng.IntN(7)]},
					StartDate: w.Format(layout), EndDate: w.Add(time.Duration(1+rng.IntN(12)) * time.Hour).Format(layout)}
			}
			p.PromotionValidities = []client.PromotionValidity{v}
		}
		promos = append(promos, p)
	}
	// Promotions that only a coupon carrying them brings (docs/api.md
	// §18.3): the coupons of couponWith carry them.
	for i := range 4 {
		yes := true
		promos = append(promos, client.PromotionItem{ID: fmt.Sprintf("CP%d", i), Name: fmt.Sprintf("coupon promotion %d", i), UseForAllProducts: &yes,
			RequiresCoupon: &yes, PromotionResults: []client.PromotionResult{{PromotionType: "Amount", Value: float64(1 + i)}}})
	}
	res, err := e.pos.ImportPromotions(e.ctx, pos, company, client.PromotionImport{Items: promos})
	e.must(err)
	if res.Status != "Completed" {
		e.t.Fatalf("promotion import: %+v", res)
	}
	return categories, products
}

// coupon issues an unowned coupon usable at the company's locations (or at
// locs), available until until (zero: for good).
func (e *env) coupon(code string, until time.Time, locs ...string) {
	e.t.Helper()
	e.couponWith(code, "", until, locs...)
}

// couponWith is coupon with the promotion it carries ("" for none).
func (e *env) couponWith(code, promotionID string, until time.Time, locs ...string) {
	e.t.Helper()
	r := client.CreateCouponRequest{Code: code, LocationIds: locs, PromotionID: promotionID}
	if !until.IsZero() {
		r.AvailableUntil = until.Format(time.RFC3339)
	}
	_, err := e.admin.Admin.CreateCoupon(e.ctx, pos, company, r)
	e.must(err)
}
