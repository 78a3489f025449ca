package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// scenario is one row group of the benchmark: a request that wrk repeats
// for the whole duration, with keys drawn at random from the data set, or
// (run set) a measurement of its own such as a timed import.
//
// To add an endpoint, add an entry to scenarios: name it, give the request
// (method, path and body templates whose $1, $2… are replaced by the fields
// of a key tuple), say where its keys come from and, when it needs data the
// tenancy data set does not hold, a setup function that loads it through the
// store before posgate starts (env.Rows says how many rows the run wants).
type scenario struct {
	name   string
	method string
	// path and body are templates: {pos} is the data set's POS system,
	// {now} (body only) the time the row starts, and $1…$9 are the fields
	// of a key tuple picked at random per request (or of index i's tuple,
	// with seq).
	path string
	body string
	// contentType of the body; application/json when body is set and this
	// is empty.
	contentType string
	// auth is how the request authenticates.
	auth authKind
	// keys lists the key tuples to draw from (nil: one fixed request).
	keys func(e *env) [][]string
	// seq, instead of keys, makes every request distinct (see sequence):
	// request i is rendered from the key tuple of index i, never reused,
	// for requests the server accepts once (a sale). Probe requests are
	// sent whether or not verify is set.
	seq func(e *env) (*sequence, error)
	// setup loads the data the scenario needs, through e.Store, before
	// posgate starts. It runs once per store and must tolerate nothing
	// else having run (only the tenancy data set is there).
	setup func(ctx context.Context, e *env) error
	// before runs right before the load (posgate is up), e.g. to count rows;
	// its state is handed to check.
	before func(ctx context.Context, e *env) (any, error)
	// check verifies the store after the load, against what wrk counted;
	// it returns a note for the table or an error that marks the row failed.
	check func(ctx context.Context, e *env, r *result, state any) (string, error)
	// verify checks the answer body of a request before the load: a few
	// requests from the keys must answer 200 and pass it, so that a row
	// cannot measure fast "not found" or "Disabled" answers unnoticed.
	verify func(body []byte) error
	// run replaces wrk for a measurement that is not a request loop (e.g.
	// one large import): it fills the result itself.
	run func(ctx context.Context, e *env) (*result, error)
	// connections overrides the run's connection count (e.g. 16 for the
	// searches over 1,000,000 rows).
	connections int
	// target is the bar this row must reach.
	target target
	// hugeP99, when set, replaces target's p99 bound for data sets of
	// hugeRows or more (the searches over ten million rows).
	hugeP99 time.Duration
	// instances, when above 1, is how many posgate processes share the
	// database for the row (fleet.go): the row runs on PostgreSQL only,
	// one wrk process per instance with an equal share of the connections.
	instances int
}

// hugeRows is the data-set size from which a row's hugeP99 applies.
const hugeRows = 10_000_000

// authKind says how a scenario's requests authenticate.
type authKind int

const (
	authNone   authKind = iota
	authBearer          // Authorization: Bearer <token of the data set's POS client>
	authClient          // HTTP Basic with the POS client's id and secret (the token endpoint)
)

// target is the bar a row must reach; zero fields are not checked.
type target struct {
	minRPS      float64       // absolute requests/s (the token endpoint)
	minRatio    float64       // requests/s as a fraction of the baseline's
	maxP99      time.Duration // 99th percentile latency
	zeroErrors  bool          // no socket errors and no non-2xx answers
	maxDuration time.Duration // for run scenarios: the whole measurement
	// anyRSS exempts the row from the RSS bar, which is set for request
	// load; the row still reports its peak.
	anyRSS bool
	// maxRSSKB replaces the RSS bar for the row (the overload row's own).
	maxRSSKB int64
	// maxP99Baseline bounds the p99 relative to the machine's own floor:
	// at most this many times the p99 of the bare net/http
	// baseline measured at the row's connection count in the same run.
	maxP99Baseline float64
	// maxShedP99Baseline bounds the p99 of the shed answers (503) the same
	// way (the overload row).
	maxShedP99Baseline float64
	// minFloorRatio is the least rate as a fraction of the row's floor's
	// measured in the same run (floors.go, salefloor.go).
	minFloorRatio float64
	// maxFloorCPU bounds the CPU per request, posgate's and the
	// database's, to this many times the floor's.
	maxFloorCPU float64
	// maxOwnCPU bounds posgate's CPU per request outside the database (on
	// SQLite, whose engine runs inside posgate: posgate's minus the
	// floor program's, which is mostly the engine's).
	maxOwnCPU time.Duration
	// minRowRatio is the least rate as a fraction of row ofRow's on the
	// same store (the sale with webhooks against the sale).
	minRowRatio float64
	ofRow       string
}

// readTarget is the bar for the authenticated POS reads: at least 0.7 ×
// the rate of the row's floor (bare net/http + the row's statements,
// floors.go) and at most twice its CPU per request (posgate and the
// database against the floor server and the database), no error.
var readTarget = target{minFloorRatio: 0.7, maxFloorCPU: 2, zeroErrors: true}

// searchTarget is the bar for the searches: the reads' against their
// floors.
var searchTarget = readTarget

// scenarios is every measured endpoint. Keep it in the order of
// the endpoint table of docs/api.md §1.2, the identity provider first.
var scenarios = []scenario{
	{
		name:   "token",
		method: http.MethodPost,
		path:   "/connect/token",
		body:   "grant_type=client_credentials&scope=pos_integration",
		// The form content type of RFC 6749 §4.4.
		contentType: "application/x-www-form-urlencoded",
		auth:        authClient,
		target:      target{minRPS: 10000, minRatio: 0.35, maxP99Baseline: 1.5, zeroErrors: true},
	},
	{
		name:   "startInteraction",
		method: http.MethodPost,
		path:   "/pos/{pos}/startInteraction",
		body:   `{"terminalId":"$2","posLocationId":"$1"}`,
		auth:   authBearer,
		keys:   func(e *env) [][]string { return e.Data.ActiveTerminals },
		before: countSessions,
		check:  checkSessions,
		target: target{minRatio: 0.35, maxP99Baseline: 1.5, zeroErrors: true},
	},
	{
		// The coupon search by code, e-mail or phone digits of random coupons.
		name:        "couponSearch",
		method:      http.MethodPost,
		path:        "/pos/{pos}/coupon/couponCode/search",
		body:        `{"$1":"$2"}`,
		auth:        authBearer,
		keys:        func(e *env) [][]string { return couponSearchKeys(e, false) },
		setup:       loadCouponData,
		verify:      verifySearch,
		connections: 16,
		target:      searchTarget,
		hugeP99:     20 * time.Millisecond,
	},
	{
		// The coupon search as above, kept to a location where the coupon is valid.
		name:        "couponSearch+location",
		method:      http.MethodPost,
		path:        "/pos/{pos}/coupon/couponCode/search",
		body:        `{"$1":"$2","posLocationId":"$3"}`,
		auth:        authBearer,
		keys:        func(e *env) [][]string { return couponSearchKeys(e, true) },
		setup:       loadCouponData,
		verify:      verifySearch,
		connections: 16,
		target:      searchTarget,
		hugeP99:     20 * time.Millisecond,
	},
	{
		name:   "couponLookupV2",
		method: http.MethodPost,
		path:   "/v2/pos/{pos}/coupon/couponCodes/lookup",
		body:   `{"posLocationId":"$1","code":"$2"}`,
		auth:   authBearer,
		keys:   couponLookupKeys,
		setup:  loadCouponData,
		verify: verifyNonEmpty("couponCodes"),
		target: readTarget,
	},
	{
		name:        "loyaltyUsersLookup",
		method:      http.MethodPost,
		path:        "/v2/pos/{pos}/loyaltyCard/users/lookup",
		body:        `{"posLocationId":"$1","keyword":"$2"}`,
		auth:        authBearer,
		keys:        userKeywordKeys,
		setup:       loadCouponData,
		verify:      verifyNonEmpty("users"),
		connections: 16,
		target:      searchTarget,
		hugeP99:     20 * time.Millisecond,
	},
	{
		name:   "carousel",
		method: http.MethodPost,
		path:   "/v2/pos/{pos}/carousel",
		body:   `{"posLocationId":"$1","terminalId":"$2"}`,
		auth:   authBearer,
		keys:   func(e *env) [][]string { return e.Data.ActiveTerminals },
		verify: verifyAccepted,
		target: readTarget,
	},
	{
		name:   "receiptPromotion",
		method: http.MethodGet,
		path:   "/pos/{pos}/receipt/promotion/location/$1",
		auth:   authBearer,
		keys:   locationKeys,
		setup:  loadReceiptPromotions,
		verify: verifyAccepted,
		target: readTarget,
	},
	{
		// The settings lookup (docs/api.md §15.1) a POS makes when it starts.
		name:   "settingsLookup",
		method: http.MethodPost,
		path:   "/v2/pos/{pos}/settings/lookup",
		body:   `{"posCompanyId":"$1"}`,
		auth:   authBearer,
		keys:   companyKeys,
		verify: verifyActiveAccount,
		target: readTarget,
	},
	{
		// The active coupons of a random location (docs/api.md §15.2), the
		// first page, among 500 anonymous coupons beside the data set's
		// owned ones.
		name:   "activeCoupons",
		method: http.MethodGet,
		path:   "/pos/{pos}/coupon/active/locationId/$1",
		auth:   authBearer,
		keys:   locationKeys,
		setup:  loadActiveCoupons,
		verify: verifySearch,
		target: readTarget,
	},
	{
		// Overload: startInteraction from 2,000 connections.
		// Excess load is shed with fast 503s instead of queued: the
		// answered 200s keep their latency, nothing times out, memory stays
		// bounded. The 503s are the designed answer, not errors.
		name: "overload",
		run:  runOverload,
		// The answered 200s' p99 within 1.5 × the bare server's probe p99
		// at the same connections, the 503s' within the bare server's.
		target: target{maxP99Baseline: 1.5, maxShedP99Baseline: 1, zeroErrors: true, maxRSSKB: 128 << 10},
	},
	{
		// Promotion evaluation (docs/api.md §18): a 20-line basket against
		// 10,000 promotions of a company.
		name:        "promotionEvaluate",
		method:      http.MethodPost,
		path:        "/v2/pos/{pos}/promotions/evaluate",
		body:        evaluateBody(),
		auth:        authBearer,
		keys:        func(e *env) [][]string { return e.Keys["evaluate"] },
		setup:       loadEvaluation,
		verify:      verifyEvaluation,
		connections: 16,
		target:      target{minRatio: 0.1, maxP99: 10 * time.Millisecond, zeroErrors: true},
	},
	{
		// The products import (docs/api.md §17.1): 100,000 new products.
		name:   "productImport",
		setup:  loadProductCompany,
		run:    runProductImport,
		target: target{maxDuration: 2 * time.Second, zeroErrors: true, anyRSS: true},
	},
	{
		// The promotion import: one import of 100,000 new promotions.
		name:   "promotionImport",
		setup:  loadCatalogue,
		run:    runImport,
		target: target{maxDuration: 2 * time.Second, zeroErrors: true, anyRSS: true},
	},
	{
		// A sale with a customer and one coupon: every request a new
		// transactionId on a session of its own (created by setup), its
		// customer the coupon's owner.
		name:   "transaction",
		method: http.MethodPost,
		path:   "/pos/{pos}/transaction",
		body:   txBody,
		auth:   authBearer,
		seq:    txSequence,
		setup:  setupTransactions,
		verify: verifyTransaction,
		before: countTransactions,
		check:  checkTransactions,
		// At least 0.8 × the sale's floor (salefloor.go), posgate's own
		// CPU per sale outside the database at most 250 µs.
		target: target{minFloorRatio: 0.8, maxOwnCPU: 250 * time.Microsecond, zeroErrors: true},
	},
	{
		// The transaction row's sales with their events delivered: an
		// endpoint of the company, subscribed to the events a sale writes
		// (coupon.redeemed, loyalty.balance_changed, transaction.recorded),
		// points at a receiver in this process. Its own sessions and
		// transaction ids; the sales take the second half of the plan, whose
		// coupons the transaction row has not redeemed. The check waits for
		// every event of the row's sales and reports the delivery lag
		// (receipt minus the event's timestamp).
		name:   "transaction+webhooks",
		method: http.MethodPost,
		path:   "/pos/{pos}/transaction",
		body:   txBody,
		auth:   authBearer,
		seq:    whSequence,
		setup:  setupWebhookTransactions,
		verify: verifyWebhookTransaction,
		before: startWebhookReceiver,
		check:  checkWebhookDeliveries,
		// At least 0.7 × the rate of the sale row without webhooks.
		target: target{minRowRatio: 0.7, ofRow: "transaction", zeroErrors: true},
	},
	{
		// The same at half the rate the transaction row reached (each
		// connection paced, wrk's delay()): the delivery lag when the sales
		// leave the sender its share of the machine.
		name:   "transaction+webhooks@half",
		method: http.MethodPost,
		path:   "/pos/{pos}/transaction",
		body:   txBody,
		auth:   authBearer,
		seq:    whPacedSequence,
		setup:  setupPacedWebhookTransactions,
		verify: verifyWebhookTransaction,
		before: startWebhookReceiver,
		check:  checkWebhookDeliveries,
		target: target{zeroErrors: true},
	},
	{
		// The sale with webhooks on three instances sharing one PostgreSQL
		// (fleet.go): one wrk process per instance, a third of the
		// connections each; every instance sends (docs/api.md §19.4,
		// "Several instances"), and the check reports how many events each
		// delivered. Its rate is measured against the one-instance sale
		// without webhooks.
		name:      "transaction+webhooks@3",
		method:    http.MethodPost,
		path:      "/pos/{pos}/transaction",
		body:      txBody,
		auth:      authBearer,
		seq:       whFleetSequence,
		setup:     setupFleetWebhookTransactions,
		verify:    verifyWebhookTransaction,
		before:    startWebhookReceiver,
		check:     checkWebhookDeliveries,
		instances: 3,
		target:    target{minRowRatio: 0.7, ofRow: "transaction", zeroErrors: true},
	},
	{
		// The offline replay: one POST of 1,000 sessionless sales, timed;
		// three of them, the median counts.
		name:   "transactionBatch",
		setup:  setupTransactionBatch,
		run:    runTransactionBatch,
		target: target{maxDuration: time.Second, zeroErrors: true, anyRSS: true},
	},
}

// countSessions counts the stored sessions before a startInteraction run,
// once the warm-up's last requests have been committed.
func countSessions(ctx context.Context, e *env) (any, error) {
	return e.stableCount(ctx, "sessions")
}

// checkSessions proves that no answered session was lost: the store holds
// at least as many new sessions as wrk counted 200 answers, and at most as
// many more as there were requests in flight when wrk stopped (answers it
// never read). Then it starts sessions of its own and finds every one of
// them in the store through the operator API.
func checkSessions(ctx context.Context, e *env, r *result, state any) (string, error) {
	before := state.(int64)
	after, err := e.stableCount(ctx, "sessions")
	if err != nil {
		return "", err
	}
	stored, ok := after-before, r.Requests-r.Status
	if stored < ok || stored > ok+int64(r.Connections) {
		return "", fmt.Errorf("sessions: %d answered with 200, %d stored", ok, stored)
	}
	n, err := verifySessions(ctx, e, 1000, 16)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sessions: %d answered, %d stored; %d of %d re-read", ok, stored, n, n), nil
}
