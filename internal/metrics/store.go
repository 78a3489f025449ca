package metrics

import (
	"context"
	"iter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/posgate/posgate"
)

// Store wraps a posgate.Store and times the operations of the request
// paths (lookups, searches, session writes, imports) into
// posgate_store_operation_duration_seconds. The other methods (operator
// reads and writes) pass through untimed: the HTTP latency by route covers
// them. Put it under the cache (internal/storecache), so that only real
// store calls are timed.
func (m *Metrics) Store(st posgate.Store) posgate.Store {
	t := &timedStore{Store: st, obs: map[string]prometheus.Observer{}}
	for _, op := range []string{"FindLocation", "FindTerminal", "ListTerminals", "FindClient", "FindCompany", "ListCompanies", "CreateSession",
		"SearchCoupons", "FindCoupon", "SearchLoyaltyUsers", "EffectiveReceiptPromotion", "FindCarouselSettings", "ListSlides",
		"ImportCoupons", "ListPromotionsValidAt", "FindCatalogue", "Ping"} {
		t.obs[op] = m.store.WithLabelValues(op)
	}
	return t
}

type timedStore struct {
	posgate.Store
	obs map[string]prometheus.Observer
}

// since records the time since start under op.
func (t *timedStore) since(op string, start time.Time) {
	t.obs[op].Observe(time.Since(start).Seconds())
}

// ApplyCheckingSession passes through untimed, to the store's own when it
// has one (posgate.ApplyCheckingSession).
func (t *timedStore) ApplyCheckingSession(ctx context.Context, in *posgate.TransactionInput, check posgate.SessionCheck) (*posgate.TransactionOutcome, error) {
	return posgate.ApplyCheckingSession(ctx, t.Store, in, check)
}

func (t *timedStore) FindLocation(ctx context.Context, posSystemID, locationID string) (*posgate.Location, error) {
	defer t.since("FindLocation", time.Now())
	return t.Store.FindLocation(ctx, posSystemID, locationID)
}

func (t *timedStore) FindTerminal(ctx context.Context, posSystemID, locationID, terminalID string) (*posgate.Terminal, error) {
	defer t.since("FindTerminal", time.Now())
	return t.Store.FindTerminal(ctx, posSystemID, locationID, terminalID)
}

// ListTerminals is timed: the cache reads a location's terminals with it
// when a terminal misses.
func (t *timedStore) ListTerminals(ctx context.Context, posSystemID, locationID string) ([]*posgate.Terminal, error) {
	defer t.since("ListTerminals", time.Now())
	return t.Store.ListTerminals(ctx, posSystemID, locationID)
}

func (t *timedStore) FindClient(ctx context.Context, id string) (*posgate.Client, error) {
	defer t.since("FindClient", time.Now())
	return t.Store.FindClient(ctx, id)
}

func (t *timedStore) FindCompany(ctx context.Context, posSystemID, companyID string) (*posgate.Company, error) {
	defer t.since("FindCompany", time.Now())
	return t.Store.FindCompany(ctx, posSystemID, companyID)
}

func (t *timedStore) ListCompanies(ctx context.Context, posSystemID string) ([]*posgate.Company, error) {
	defer t.since("ListCompanies", time.Now())
	return t.Store.ListCompanies(ctx, posSystemID)
}

func (t *timedStore) CreateSession(ctx context.Context, s *posgate.Session) error {
	defer t.since("CreateSession", time.Now())
	return t.Store.CreateSession(ctx, s)
}

func (t *timedStore) SearchCoupons(ctx context.Context, q posgate.CouponQuery) (*posgate.CouponPage, error) {
	defer t.since("SearchCoupons", time.Now())
	return t.Store.SearchCoupons(ctx, q)
}

func (t *timedStore) FindCoupon(ctx context.Context, posSystemID, companyID, code string) (*posgate.Coupon, error) {
	defer t.since("FindCoupon", time.Now())
	return t.Store.FindCoupon(ctx, posSystemID, companyID, code)
}

func (t *timedStore) SearchLoyaltyUsers(ctx context.Context, posSystemID, companyID string, keyword posgate.UserKeyword) ([]*posgate.LoyaltyUser, error) {
	defer t.since("SearchLoyaltyUsers", time.Now())
	return t.Store.SearchLoyaltyUsers(ctx, posSystemID, companyID, keyword)
}

func (t *timedStore) EffectiveReceiptPromotion(ctx context.Context, posSystemID, companyID, locationID string) (*posgate.ReceiptPromotion, error) {
	defer t.since("EffectiveReceiptPromotion", time.Now())
	return t.Store.EffectiveReceiptPromotion(ctx, posSystemID, companyID, locationID)
}

func (t *timedStore) FindCarouselSettings(ctx context.Context, posSystemID, companyID string) (*posgate.CarouselSettings, error) {
	defer t.since("FindCarouselSettings", time.Now())
	return t.Store.FindCarouselSettings(ctx, posSystemID, companyID)
}

func (t *timedStore) ListSlides(ctx context.Context, posSystemID, companyID string) ([]*posgate.Slide, error) {
	defer t.since("ListSlides", time.Now())
	return t.Store.ListSlides(ctx, posSystemID, companyID)
}

func (t *timedStore) ImportCoupons(ctx context.Context, seq iter.Seq2[*posgate.Coupon, error]) (int, error) {
	defer t.since("ImportCoupons", time.Now())
	return t.Store.ImportCoupons(ctx, seq)
}

func (t *timedStore) ListPromotionsValidAt(ctx context.Context, posSystemID, companyID, locationID string, at time.Time) ([]*posgate.Promotion, error) {
	defer t.since("ListPromotionsValidAt", time.Now())
	return t.Store.ListPromotionsValidAt(ctx, posSystemID, companyID, locationID, at)
}

func (t *timedStore) FindCatalogue(ctx context.Context, posSystemID, companyID string) (*posgate.Catalogue, error) {
	defer t.since("FindCatalogue", time.Now())
	return t.Store.FindCatalogue(ctx, posSystemID, companyID)
}

func (t *timedStore) Ping(ctx context.Context) error {
	defer t.since("Ping", time.Now())
	return t.Store.Ping(ctx)
}
