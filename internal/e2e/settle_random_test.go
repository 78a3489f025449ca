package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEvaluateAndSaleAgree: on 10,000 random baskets against random
// promotions (both kinds, products, categories and their parents, every
// product, locations, validity windows and recurrences, budgets too large
// to run out, per-customer budgets that keep anonymous sales out), the
// evaluate endpoint's answer and the promotions and totals the sale
// records (docs/api.md §13.9) are the same: one evaluation for both. The
// sales go through the offline replay, the real sale path, 1,000 per
// request; the bulk of the requests skip the OpenAPI check for speed, the
// first of each kind are checked.
func TestEvaluateAndSaleAgree(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		rng := rand.New(rand.NewPCG(seed, 31))
		mustImport(t, e.s.pos(t, e.pos, importPath("demo-company"), items(randomPromotions(rng, e.s.clock.Now())...)))

		const baskets, batch = 10_000, 1000
		plain := &http.Client{Timeout: time.Minute}
		checked := checkedClient(t)
		post := func(c *http.Client, path, body string) []byte {
			r, _ := http.NewRequest("POST", e.s.base+path, strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer "+e.pos)
			resp, err := c.Do(r)
			if err != nil {
				t.Errorf("POST %s: %v", path, err)
				return nil
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				t.Errorf("POST %s: %d %s\n%s", path, resp.StatusCode, b, body)
			}
			return b
		}
		type totals struct {
			Promotions    json.RawMessage `json:"promotions"`
			Subtotal      json.RawMessage `json:"subtotal"`
			TotalDiscount json.RawMessage `json:"totalDiscount"`
		}
		applied := 0
		for first := 0; first < baskets; first += batch {
			sales := make([]string, batch)
			evals := make([]totals, batch)
			var wg sync.WaitGroup
			var mu sync.Mutex
			next := 0
			for range 4 {
				wg.Go(func() {
					for {
						mu.Lock()
						i := next
						next++
						var ev, sale string
						if i < batch {
							ev, sale = randomBasket(rng, fmt.Sprintf("RND-%05d", first+i), e.s.clock.Now())
						}
						mu.Unlock()
						if i >= batch || t.Failed() {
							return
						}
						c := plain
						if first == 0 && i < 20 {
							c = checked
						}
						var env struct{ Data totals }
						if err := json.Unmarshal(post(c, evaluatePath, ev), &env); err != nil {
							t.Errorf("evaluation %d: %v", first+i, err)
						}
						evals[i], sales[i] = env.Data, sale
					}
				})
			}
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			c := plain
			if first == 0 {
				c = checked
			}
			var res struct {
				Data struct {
					CreatedCount int `json:"createdCount"`
					Results      []struct {
						Data struct {
							Promotions json.RawMessage `json:"promotions"`
							Settlement totals          `json:"settlement"`
						} `json:"data"`
					} `json:"results"`
				} `json:"data"`
			}
			body := post(c, "/v2/pos/clover/transactions/batch", `{"items":[`+strings.Join(sales, ",")+`]}`)
			if err := json.Unmarshal(body, &res); err != nil || res.Data.CreatedCount != batch || len(res.Data.Results) != batch {
				t.Fatalf("batch from %d: %v %.2000s", first, err, body)
			}
			for i, r := range res.Data.Results {
				ev, got := evals[i], r.Data
				if !bytes.Equal(ev.Promotions, got.Promotions) || !bytes.Equal(ev.Subtotal, got.Settlement.Subtotal) ||
					!bytes.Equal(ev.TotalDiscount, got.Settlement.TotalDiscount) {
					t.Fatalf("basket %d:\nsale %s\nevaluation %s\n   evaluated %s %s %s\n   sold      %s %s %s", first+i, sales[i], ev.Promotions,
						ev.Promotions, ev.Subtotal, ev.TotalDiscount, got.Promotions, got.Settlement.Subtotal, got.Settlement.TotalDiscount)
				}
				if string(ev.Promotions) != "[]" {
					applied++
				}
			}
		}
		// The baskets are not trivial: most of them get some promotion.
		if applied < baskets/4 {
			t.Fatalf("%d of %d baskets got a promotion", applied, baskets)
		}
	})
}

// Random promotions and baskets of demo-company: its catalogue's products
// (SKU-…, in categories BAKERY and COFFEE) and others (R-P…), at LOC123 and
// LOC456.
var (
	randomProducts   = []string{"SKU-LATTE-L", "SKU-LATTE-M", "SKU-CROISSANT", "SKU-MUFFIN", "SKU-SANDWICH-BLT", "R-P1", "R-P2", "R-P3", "R-P4", "R-P5", "R-P6"}
	randomCategories = []string{"BAKERY", "COFFEE", "R-C1", "R-C2"}
	randomCards      = []string{"", "", "john-doe", "mary-johnson", "nobody"}
)

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// randomPromotions are 40 import items.
func randomPromotions(rng *rand.Rand, now time.Time) []string {
	day := func(d int) string { return now.AddDate(0, 0, d).UTC().Format(time.RFC3339) }
	var out []string
	for n := range 40 {
		var b strings.Builder
		fmt.Fprintf(&b, `{"id":"R-%02d","name":"random %d"`, n, n)
		switch k := rng.IntN(10); {
		case k == 0:
			// Every product, but only at the airport: LOC123's baskets
			// may get nothing.
			b.WriteString(`,"useForAllProducts":true,"locationIds":["LOC456"]`)
		case k < 4:
			fmt.Fprintf(&b, `,"categoryIds":[%q]`, pick(rng, randomCategories))
		default:
			fmt.Fprintf(&b, `,"productIds":[%q,%q]`, pick(rng, randomProducts), pick(rng, randomProducts))
		}
		switch rng.IntN(4) {
		case 0:
			if !strings.Contains(b.String(), "locationIds") {
				b.WriteString(`,"locationIds":["LOC123"]`)
			}
		case 1:
			if !strings.Contains(b.String(), "locationIds") {
				b.WriteString(`,"locationIds":["LOC456"]`)
			}
		}
		switch rng.IntN(4) {
		case 0:
			fmt.Fprintf(&b, `,"promotionValidities":[{"startDate":%q,"endDate":%q}]`, day(-rng.IntN(8)), day(-rng.IntN(8)+4))
		case 1:
			from, to := rng.IntN(24), rng.IntN(24)
			fmt.Fprintf(&b, `,"promotionValidities":[{"recurrence":{"daysOfWeek":[%q,%q],"startDate":"2030-01-01T%02d:00:00Z","endDate":"2030-01-01T%02d:00:00Z"}}]`,
				pick(rng, []string{"Monday", "Tuesday", "Wednesday", "Thursday"}), pick(rng, []string{"Friday", "Saturday", "Sunday"}), from, to)
		}
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, `,"promotionResults":[{"promotionType":"Percentage","value":%d.%02d}]`, 1+rng.IntN(50), rng.IntN(100))
		} else {
			fmt.Fprintf(&b, `,"promotionResults":[{"promotionType":"Amount","value":%d.%02d}]`, rng.IntN(5), 5+rng.IntN(95))
		}
		switch rng.IntN(5) {
		case 0:
			b.WriteString(`,"redemption":{"quantity":1000000000}`)
		case 1:
			b.WriteString(`,"redemption":{"perCustomer":1000000000}`)
		}
		b.WriteString("}")
		out = append(out, b.String())
	}
	return out
}

// randomBasket is one basket as an evaluation and as a batch item of a sale.
func randomBasket(rng *rand.Rand, id string, now time.Time) (evaluation, sale string) {
	loc, term := "LOC123", "TERM-05"
	if rng.IntN(3) == 0 {
		loc, term = "LOC456", "TERM-07"
	}
	date := now.Add(-time.Duration(rng.Int64N(int64(7 * 24 * time.Hour)))).UTC().Format(time.RFC3339)
	var lines []string
	for range 1 + rng.IntN(6) {
		line := fmt.Sprintf(`{"productId":%q,"quantity":%s,"price":%d.%02d`, pick(rng, randomProducts),
			pick(rng, []string{"1", "2", "3", "0.5", "1.25", "0.333"}), rng.IntN(20), rng.IntN(100))
		if rng.IntN(4) == 0 {
			line += fmt.Sprintf(`,"productCategory":%q`, pick(rng, append([]string{"Bakery", "elsewhere"}, randomCategories...)))
		}
		lines = append(lines, line+"}")
	}
	products := `"products":[` + strings.Join(lines, ",") + `]`
	loyalty := ""
	if card := pick(rng, randomCards); card != "" {
		loyalty = `,"loyalty":{"cardNumber":"` + card + `"}`
	}
	evaluation = `{"posLocationId":"` + loc + `","transactionDate":"` + date + `",` + products + loyalty + `}`
	sale = `{"transactionId":"` + id + `","terminalId":"` + term + `","posLocationId":"` + loc + `","transactionAmount":` +
		fmt.Sprintf("%d.%02d", rng.IntN(50), rng.IntN(100)) + `,"transactionDate":"` + date + `",` + products + loyalty + `}`
	return evaluation, sale
}
