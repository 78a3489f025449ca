package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/posgate/posgate"
)

// Shape of the transaction rows (docs/api.md §13). Every sale is 25.00 with
// a customer and one coupon: under the default loyalty program (1 point per
// currency unit, 1 stamp per sale; the bench company sets none) it earns
// txPoints points and txStamps stamps, so a customer's balance afterwards
// is known from the sales the store holds.
const (
	txAmount = "25.00"
	txPoints = 25
	txStamps = 1
	// txPeakRate bounds the sales per second posgate records on the machines
	// the benchmark runs on (startInteraction, which only inserts a session,
	// reaches about 11,000/s on 2 cores): setup creates a session for each
	// sale at this rate over the warm-up and the measurement, and the row
	// fails, rather than measure refused sales, if the run uses them all.
	txPeakRate = 8000
	// txSessionFormat makes session i's id, UUID-shaped like posgate's own,
	// from its index: the wrk script derives the same id.
	txSessionFormat = "00000000-0000-4000-8000-%012d"
	// txIDFormat is sale i's transactionId.
	txIDFormat = "TX%d"
	// txBalanceSample is how many customers the check re-reads.
	txBalanceSample = 500
	// The offline replay row: batchRuns POSTs of batchItems transactions.
	batchItems = 1000
	batchRuns  = 3
	// saleFloorMax bounds the sales reserved for the floors: the sale
	// floor's and, after them, one replay's.
	saleFloorMax = 24000
)

// txBody is a sale: $1 session, $2 transactionId, $3 location, $4 terminal,
// $5 the customer's loyalty user id, $6 a coupon code ({now}: the time the
// row's script was rendered).
const txBody = `{"sessionId":"$1","transactionId":"$2","posLocationId":"$3","terminalId":"$4","transactionType":"Sale",` +
	`"transactionAmount":` + txAmount + `,"transactionDate":"{now}","loyalty":{"cardNumber":"$5"},"couponCodes":["$6"]}`

// txPlan lists, once per store run, the sales the transaction rows make:
// one per coupon of the data set that a sale can redeem (Issued, unexpired,
// owned by a loyalty user), as (location, terminal, owner, code) with a
// location where the coupon is usable. The last batchRuns × batchItems go
// to the offline replay, the others to the transaction row, which takes
// them in turn (past the end, their coupons are redeemed already and come
// back Rejected; the sale is recorded all the same).
func txPlan(e *env) (sales, batch [][]string, err error) {
	if s, ok := e.Keys["transaction"]; ok {
		return s, e.Keys["transactionBatch"], nil
	}
	d, now := e.Data, time.Now()
	var all [][]string
	for j := range e.Rows {
		c := genCoupon(d, e.Rows, j)
		if c.UserID == "" || c.Status != posgate.CouponIssued || (c.AvailableUntil != nil && c.AvailableUntil.Before(now.Add(24*time.Hour))) {
			continue
		}
		loc := d.Locations[j%len(d.Locations)]
		if len(c.LocationIDs) > 0 {
			loc = c.LocationIDs[j%len(c.LocationIDs)]
		}
		all = append(all, []string{loc, fmt.Sprintf("T%02d", j%d.TerminalsPerLocation+1), c.UserID, c.Code})
	}
	reserve := batchRuns * batchItems
	floor := min(saleFloorMax, len(all)/5)
	if len(all) < reserve+floor+1000 {
		return nil, nil, fmt.Errorf("the data set has %d coupons a sale can redeem; the transaction rows want %d (use more -rows)", len(all), reserve+floor+1000)
	}
	// The floors' sales (salefloor.go) come before the replay's: no
	// posgate row reaches them.
	sales, batch = all[:len(all)-reserve-floor], all[len(all)-reserve:]
	e.Keys["transaction"], e.Keys["transactionBatch"], e.Keys["floor"] = sales, batch, all[len(all)-reserve-floor:len(all)-reserve]
	return sales, batch, nil
}

// txSessions is how many sessions the transaction row gets: txPeakRate
// over its warm-up and measurement, its probe, and a tenth more.
func txSessions(e *env) int {
	return int(math.Ceil(txPeakRate*e.RowTime.Seconds()*1.1)) + probeRequests
}

// txSequence is the transaction row's requests: sale i on session i.
func txSequence(e *env) (*sequence, error) {
	sales, _, err := txPlan(e)
	if err != nil {
		return nil, err
	}
	// No more records than sessions: the script holds them all (with
	// -large the plan has 770,000).
	n := txSessions(e)
	return &sequence{Size: n, Formats: []string{txSessionFormat, txIDFormat}, Records: sales[:min(len(sales), n)]}, nil
}

// setupTransactions loads the users and coupons and creates the sessions of
// the transaction row through the store, as startInteraction would: session
// i at the terminal sale i is made at, expiring a day later.
func setupTransactions(ctx context.Context, e *env) error {
	if err := loadCouponData(ctx, e); err != nil {
		return err
	}
	seq, err := txSequence(e)
	if err != nil {
		return err
	}
	return createSessions(ctx, e, seq, "transaction")
}

// createSessions creates session i of seq at the terminal of its sale i,
// through the store, for the row named row.
func createSessions(ctx context.Context, e *env, seq *sequence, row string) error {
	t0, now := time.Now(), time.Now()
	// The stores commit concurrent CreateSession calls together: many
	// workers make the load quick.
	const workers = 64
	idx := make(chan int)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				k := seq.key(i)
				if err := e.Store.CreateSession(ctx, &posgate.Session{ID: k[0], POSSystemID: e.Data.POSSystem, CompanyID: e.Data.Company,
					LocationID: k[2], TerminalID: k[3], CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}); err != nil {
					errc <- fmt.Errorf("session %d: %w", i, err)
					return
				}
			}
		}()
	}
	var ferr error
feed:
	for i := range seq.Size {
		select {
		case idx <- i:
		case ferr = <-errc:
			break feed
		}
	}
	close(idx)
	wg.Wait()
	close(errc)
	if ferr == nil {
		ferr = <-errc
	}
	if ferr != nil {
		return ferr
	}
	logf("%s: %d sessions for the %s row (%d sales at %d/s over %s) in %s", e.Kind, seq.Size, row, len(seq.Records),
		txPeakRate, e.RowTime, time.Since(t0).Round(time.Millisecond))
	return nil
}

// setupTransactionBatch loads the users and coupons the replay's sales
// name.
func setupTransactionBatch(ctx context.Context, e *env) error {
	if err := loadCouponData(ctx, e); err != nil {
		return err
	}
	_, _, err := txPlan(e)
	return err
}

// txAnswer is the part of a transaction's answer the rows check.
type txAnswer struct {
	ID        *string `json:"id"`
	PosStatus string  `json:"posStatus"`
	Loyalty   *struct {
		UserID       string `json:"userId"`
		PointsEarned int32  `json:"pointsEarned"`
		StampsEarned int32  `json:"stampsEarned"`
	} `json:"loyalty"`
	Coupons []struct {
		Code, Status string
	} `json:"coupons"`
}

// check wants a recorded sale that credited its customer and redeemed its
// coupon (or, when redeemed is false, answered its fate).
func (a *txAnswer) check(redeemed bool) error {
	switch {
	case a.PosStatus != "Accepted" || a.ID == nil:
		return fmt.Errorf("posStatus %q, id %v: not recorded", a.PosStatus, a.ID)
	case a.Loyalty == nil:
		return errors.New("no customer was credited")
	case a.Loyalty.PointsEarned != txPoints || a.Loyalty.StampsEarned != txStamps:
		return fmt.Errorf("earned %d points and %d stamps, want %d and %d", a.Loyalty.PointsEarned, a.Loyalty.StampsEarned, txPoints, txStamps)
	case len(a.Coupons) != 1:
		return fmt.Errorf("%d coupon results, want 1", len(a.Coupons))
	case redeemed && a.Coupons[0].Status != "Redeemed":
		return fmt.Errorf("coupon %s %s, want Redeemed", a.Coupons[0].Code, a.Coupons[0].Status)
	}
	return nil
}

// verifyTransaction wants the probe's sales recorded, credited and their
// coupons redeemed: the first sales of the plan have coupons nobody used.
func verifyTransaction(body []byte) error {
	var out struct {
		Data txAnswer `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return err
	}
	return out.Data.check(true)
}

// txCounts is what the store holds before the transaction row's
// measurement.
type txCounts struct{ transactions, redemptions int64 }

// countTransactions counts the stored transactions and coupon redemptions
// once the warm-up's last sales are committed.
func countTransactions(ctx context.Context, e *env) (any, error) {
	t, err := e.stableCount(ctx, "transactions")
	if err != nil {
		return nil, err
	}
	c, err := e.count(ctx, "transaction_coupons")
	return txCounts{t, c}, err
}

// checkTransactions proves that no answered sale was lost and that every
// customer's balance is what the stored sales made it: the store holds at
// least as many new transactions as wrk counted 200 answers and at most as
// many more as requests were in flight when wrk stopped; then, for a
// sample of the customers of the row's sales, the balance read through the
// operator API equals the generated one plus what their stored sales
// earned (each txPoints points and txStamps stamps).
func checkTransactions(ctx context.Context, e *env, r *result, state any) (string, error) {
	before := state.(txCounts)
	after, err := e.stableCount(ctx, "transactions")
	if err != nil {
		return "", err
	}
	redeemedAfter, err := e.count(ctx, "transaction_coupons")
	if err != nil {
		return "", err
	}
	stored, ok := after-before.transactions, r.Requests-r.Status
	redeemed := redeemedAfter - before.redemptions
	note := fmt.Sprintf("sales: %d answered with 200, %d stored; coupons redeemed %d (%.1f%%); %d of %d sessions used",
		ok, stored, redeemed, 100*float64(redeemed)/float64(max(stored, 1)), r.SeqNext, r.SeqSize)
	if stored < ok || stored > ok+int64(r.Connections) {
		return note, fmt.Errorf("transactions: %d answered with 200, %d stored", ok, stored)
	}
	seq, err := txSequence(e)
	if err != nil {
		return note, err
	}
	seen := map[string]bool{}
	var users []string
	for i := range r.SeqNext {
		if u := seq.key(i)[4]; !seen[u] {
			seen[u] = true
			users = append(users, u)
		}
	}
	for i := range users { // a partial shuffle: the sample's users first
		j := i + randInt(len(users)-i)
		users[i], users[j] = users[j], users[i]
		if i == txBalanceSample {
			break
		}
	}
	users = users[:min(len(users), txBalanceSample)]
	sales, err := checkBalances(ctx, e, users)
	if err != nil {
		return note, err
	}
	return note + fmt.Sprintf("; balances of %d customers = generated + %d × their %d stored sales", len(users), txPoints, sales), nil
}

// checkBalances re-reads each user's balance and stored sales through the
// operator API, 16 at a time, and returns how many sales they hold.
func checkBalances(ctx context.Context, e *env, users []string) (int64, error) {
	var (
		mu    sync.Mutex
		sales int64
		errs  []error
		wg    sync.WaitGroup
	)
	work := make(chan string)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				n, err := checkBalance(ctx, e, u)
				mu.Lock()
				sales += n
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	for _, u := range users {
		work <- u
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		return sales, fmt.Errorf("%d of %d customers: %w", len(errs), len(users), errs[0])
	}
	return sales, nil
}

// checkBalance compares user u's stored balance with its generated one
// plus the points and stamps of its stored sales, each of which must have
// earned txPoints and txStamps; it returns how many sales u has (none when
// the row's index of u was never sent: a thread's last indices, or a
// request in flight when wrk stopped).
func checkBalance(ctx context.Context, e *env, u string) (int64, error) {
	var i int
	if _, err := fmt.Sscanf(u, "U%d", &i); err != nil {
		return 0, fmt.Errorf("user id %q: %w", u, err)
	}
	initial := genUser(e.Data, i)
	company := fmt.Sprintf("%s/admin/v1/pos-systems/%s/companies/%s", e.BaseURL, e.Data.POSSystem, e.Data.Company)
	var user struct {
		Data struct{ Points, Stamps int32 } `json:"data"`
	}
	if err := e.adminGet(ctx, company+"/loyalty-users/"+u, &user); err != nil {
		return 0, err
	}
	var list struct {
		Data struct {
			Transactions []struct {
				TransactionID   string `json:"transactionId"`
				TransactionType string `json:"transactionType"`
				PointsEarned    int32  `json:"pointsEarned"`
				StampsEarned    int32  `json:"stampsEarned"`
			} `json:"transactions"`
			Page struct{ Total int } `json:"page"`
		} `json:"data"`
	}
	if err := e.adminGet(ctx, company+"/transactions?"+url.Values{"userId": {u}, "pageSize": {"500"}}.Encode(), &list); err != nil {
		return 0, err
	}
	txs := list.Data.Transactions
	if list.Data.Page.Total != len(txs) {
		return 0, fmt.Errorf("%s: %d transactions, more than one page", u, list.Data.Page.Total)
	}
	points, stamps := initial.Points, initial.Stamps
	for _, t := range txs {
		if t.TransactionType != "Sale" || t.PointsEarned != txPoints || t.StampsEarned != txStamps {
			return 0, fmt.Errorf("%s: transaction %s is a %s that earned %d points and %d stamps, want a Sale of %d and %d",
				u, t.TransactionID, t.TransactionType, t.PointsEarned, t.StampsEarned, txPoints, txStamps)
		}
		points += t.PointsEarned
		stamps += t.StampsEarned
	}
	if user.Data.Points != points || user.Data.Stamps != stamps {
		return 0, fmt.Errorf("%s: balance %d points, %d stamps; generated %d and %d plus %d sales make %d and %d",
			u, user.Data.Points, user.Data.Stamps, initial.Points, initial.Stamps, len(txs), points, stamps)
	}
	return int64(len(txs)), nil
}

// adminGet gets url with the operator token and decodes a 200 answer.
func (e *env) adminGet(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+e.AdminToken)
	return e.doJSON(req, out)
}

// batchBody is offline replay run of batchItems sessionless sales, of
// customers and coupons of the plan's batch part: sale k is dated k minutes
// after a day ago, and the items are listed in a shuffled order (the
// server applies them by date).
func batchBody(batch [][]string, run int, now time.Time) []byte {
	base := now.Add(-24 * time.Hour).UTC()
	order := make([]int, batchItems)
	for i := range order {
		order[i] = i
	}
	for i := len(order) - 1; i > 0; i-- {
		j := randInt(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for n, k := range order {
		if n > 0 {
			b.WriteByte(',')
		}
		s := batch[run*batchItems+k]
		fmt.Fprintf(&b, `{"transactionId":"OB%d-%04d","posLocationId":%q,"terminalId":%q,"transactionType":"Sale","transactionAmount":%s,`+
			`"transactionDate":%q,"loyalty":{"cardNumber":%q},"couponCodes":[%q]}`,
			run, k, s[0], s[1], txAmount, base.Add(time.Duration(k)*time.Minute).Format(time.RFC3339), s[2], s[3])
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// runTransactionBatch times batchRuns offline replays of batchItems sales
// each, from the request's first byte to the answer's last, and checks that
// each is Completed with every item created and credited. The row's time
// is the median replay; its req/s column holds items/s at that time.
func runTransactionBatch(ctx context.Context, e *env) (*result, error) {
	_, batch, err := txPlan(e)
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("%s/v2/pos/%s/transactions/batch", e.BaseURL, e.Data.POSSystem)
	var times []time.Duration
	var failed []string
	redeemed := 0
	for run := range batchRuns {
		body := batchBody(batch, run, time.Now())
		status, answer, elapsed, err := timedPost(ctx, e, url, body)
		if err != nil {
			return nil, err
		}
		times = append(times, elapsed)
		if status != http.StatusOK {
			failed = append(failed, fmt.Sprintf("replay %d: status %d: %.200s", run+1, status, answer))
			continue
		}
		var out struct {
			Data struct {
				Status         string            `json:"status"`
				CreatedCount   int               `json:"createdCount"`
				DuplicateCount int               `json:"duplicateCount"`
				Errors         []json.RawMessage `json:"errors"`
				Results        []struct {
					Status string   `json:"status"`
					Data   txAnswer `json:"data"`
				} `json:"results"`
			} `json:"data"`
		}
		if err := json.Unmarshal(answer, &out); err != nil {
			return nil, fmt.Errorf("replay answer: %w", err)
		}
		d := out.Data
		if d.Status != "Completed" || d.CreatedCount != batchItems || d.DuplicateCount != 0 || len(d.Errors) > 0 || len(d.Results) != batchItems {
			failed = append(failed, fmt.Sprintf("replay %d: %s, created %d, duplicates %d, %d errors (%.200s)",
				run+1, d.Status, d.CreatedCount, d.DuplicateCount, len(d.Errors), joinRaw(d.Errors)))
			continue
		}
		for _, res := range d.Results {
			if err := res.Data.check(false); err != nil {
				failed = append(failed, fmt.Sprintf("replay %d: an item %s: %v", run+1, res.Status, err))
				break
			}
			if res.Data.Coupons[0].Status == "Redeemed" {
				redeemed++
			}
		}
	}
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	r := &result{Connections: 1, Duration: median, Requests: batchItems * batchRuns, RPS: batchItems / median.Seconds(),
		P50: median, P99: sorted[len(sorted)-1], Unit: "items/s", Failed: failed}
	each := make([]string, len(times))
	for i, t := range times {
		each[i] = fmtDur(t)
	}
	r.Note = fmt.Sprintf("%d replays of %d sessionless sales (%.1f MB of JSON each, dates shuffled): %s, median %s; coupons redeemed %d of %d",
		batchRuns, batchItems, float64(len(batchBody(batch, 0, time.Now())))/1e6, strings.Join(each, " / "), fmtDur(median), redeemed, batchItems*batchRuns)
	if len(failed) == 0 {
		r.Note += fmt.Sprintf("; each Completed with %d created", batchItems)
	}
	if len(failed) > 0 {
		r.Status = int64(len(failed))
	}
	return r, nil
}

// joinRaw lists JSON values, comma-separated, for a message.
func joinRaw(list []json.RawMessage) string {
	parts := make([]string, len(list))
	for i, m := range list {
		parts[i] = string(m)
	}
	return strings.Join(parts, ",")
}
