package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// batchCrashBody is an offline replay of n sales of 1.00 for john-doe at
// TERM-06, ids prefix-0 … prefix-(n-1), dated before now.
func batchCrashBody(prefix string, n int, now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"transactionId":"%s-%d","terminalId":"TERM-06","posLocationId":"LOC123","transactionAmount":1,`+
			`"transactionDate":"%s","loyalty":{"cardNumber":"john-doe"},"products":[{"productId":"SKU-LATTE-M","quantity":1,"price":1}]}`,
			prefix, i, now.Add(-time.Duration(n-i)*time.Second).UTC().Format(time.RFC3339))
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// ledger returns the company's transaction count and john-doe's points.
func (p *process) ledger(t *testing.T) (count, points int) {
	t.Helper()
	admin := p.token(t, "demo-admin", "demo-admin-secret", "admin")
	get := func(path string, v any) {
		r, _ := http.NewRequest("GET", p.base+companyPath+path, nil)
		r.Header.Set("Authorization", "Bearer "+admin)
		resp, err := checkedClient(t).Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
	}
	var page struct {
		Data struct {
			Page struct{ Total int } `json:"page"`
		} `json:"data"`
	}
	get("/transactions?pageSize=1", &page)
	var user struct {
		Data struct{ Points int } `json:"data"`
	}
	get("/loyalty-users/john-doe", &user)
	return page.Data.Page.Total, user.Data.Points
}

// TestTransactionBatchCrash kills the server (SIGKILL) while it applies a
// batch of 1,000 transactions, at several moments after it has read the
// body, restarts it and checks each time that all of the batch or none of
// it is recorded (and the points with it); then a batch that was answered
// survives a kill.
func TestTransactionBatchCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds posgate and replays 1,000 transactions several times")
	}
	const n = 1000
	forEachStore(t, func(t *testing.T, dsn string) {
		database := dsn
		if !strings.HasPrefix(dsn, "postgres") {
			database = filepath.Join(t.TempDir(), "crash.db")
		}
		p := startProcess(t, database)
		count, points := p.ledger(t)
		killedDuring := 0
		for attempt, wait := range []time.Duration{0, 20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond, 250 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond} {
			body := batchCrashBody(fmt.Sprintf("K%d", attempt), n, time.Now())
			pos := p.token(t, "demo-pos", "demo-pos-secret", "pos_integration")
			r, _ := http.NewRequest("POST", p.base+"/v2/pos/clover/transactions/batch", bytes.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+pos)
			r.Header.Set("Content-Type", "application/json")
			answered := make(chan int, 1)
			go func() {
				resp, err := checkedClient(t).Do(r)
				if err != nil {
					answered <- 0
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answered <- resp.StatusCode
			}()
			select {
			case <-p.applying:
			case st := <-answered:
				t.Fatalf("attempt %d: answered %d before it was applied", attempt, st)
			}
			time.Sleep(wait)
			p.kill()
			if st := <-answered; st == 0 {
				killedDuring++
			}
			p = startProcess(t, database)
			c, pts := p.ledger(t)
			if (c != count && c != count+n) || pts-points != c-count {
				t.Fatalf("attempt %d (kill %v after the body): %d transactions (were %d), %d points (were %d): not all or nothing",
					attempt, wait, c, count, pts, points)
			}
			t.Logf("attempt %d, kill %v after the body was read: %d of %d recorded", attempt, wait, c-count, n)
			count, points = c, pts
		}
		if killedDuring == 0 {
			t.Fatal("no kill came before the answer: the crash was never tested")
		}
		// Answered, then killed: every transaction stays.
		body := batchCrashBody("DONE", n, time.Now())
		r, _ := http.NewRequest("POST", p.base+"/v2/pos/clover/transactions/batch", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+p.token(t, "demo-pos", "demo-pos-secret", "pos_integration"))
		r.Header.Set("Content-Type", "application/json")
		resp, err := checkedClient(t).Do(r)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("batch: %v %v", resp, err)
		}
		resp.Body.Close()
		p.kill()
		p = startProcess(t, database)
		if c, pts := p.ledger(t); c != count+n || pts != points+n {
			t.Fatalf("after an answered batch and a kill: %d transactions, %d points; want %d, %d", c, pts, count+n, points+n)
		}
	})
}
