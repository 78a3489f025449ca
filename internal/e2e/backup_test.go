package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/sqlite"
)

// answeredSale is a sale the server answered 200, with the points it
// said it credited.
type answeredSale struct {
	id     string
	points int
}

// TestBackupUnderLoad takes an online backup of the SQLite store while
// four clients record sales through the server, restores it into a new
// database and serves that: every sale answered before the backup began
// is there, none answered after it ended is, and the customer's balance
// is exactly the points of the sales the copy holds (no sale without its
// points, no points without their sale).
func TestBackupUnderLoad(t *testing.T) {
	dir := t.TempDir()
	s := start(t, filepath.Join(dir, "live.db"))
	pos, admin := s.posToken(t), s.adminToken(t)
	count0, points0 := s.salesAndPoints(t, admin)

	var (
		mu       sync.Mutex
		answered []answeredSale
		phase    atomic.Int32 // 0 before the backup, 1 during, 2 after
		byPhase  [3]atomic.Int32
		stop     = make(chan struct{})
		failures = make(chan error, 4)
		wg       sync.WaitGroup
	)
	post := func(path, body string) (map[string]any, error) {
		r, _ := http.NewRequest("POST", s.base+path, bytes.NewReader([]byte(body)))
		r.Header.Set("Authorization", "Bearer "+pos)
		r.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		var out struct{ Data map[string]any }
		return out.Data, json.Unmarshal(b, &out)
	}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				in, err := post("/pos/clover/startInteraction", `{"terminalId":"TERM-05","posLocationId":"LOC123"}`)
				if err != nil {
					failures <- err
					return
				}
				id := fmt.Sprintf("BACKUP-%d-%d", w, i)
				p := phase.Load()
				sale, err := post("/pos/clover/transaction", fmt.Sprintf(`{"sessionId":%q,"transactionId":%q,"terminalId":"TERM-05","posLocationId":"LOC123",`+
					`"transactionType":"Sale","transactionAmount":1,"transactionDate":%q,"loyalty":{"cardNumber":"john-doe"}}`,
					in["sessionId"], id, s.clock.Now().UTC().Format(time.RFC3339)))
				if err != nil {
					failures <- err
					return
				}
				earned := int(sale["loyalty"].(map[string]any)["pointsEarned"].(float64))
				mu.Lock()
				answered = append(answered, answeredSale{id, earned})
				mu.Unlock()
				// A sale counts in the phase it was both sent and answered in.
				if phase.Load() == p {
					byPhase[p].Add(1)
				}
			}
		}()
	}
	waitFor := func(n int) {
		for deadline := time.Now().Add(30 * time.Second); byPhase[0].Load() < int32(n); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("only %d sales answered in 30 s", byPhase[0].Load())
			}
		}
	}
	waitFor(100)
	mu.Lock()
	before := len(answered) // every one of these was answered before the backup began
	mu.Unlock()
	phase.Store(1)
	backup := filepath.Join(dir, "backup.db")
	began := time.Now()
	info, err := sqlite.Backup(context.Background(), s.cfg.Database, backup)
	took := time.Since(began)
	phase.Store(2)
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	mu.Lock()
	ended := len(answered)
	mu.Unlock()
	for byPhase[2].Load() < 20 {
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Fatalf("a sale failed under the backup: %v", err)
	}
	t.Logf("backup of %d bytes in %v; %d sales answered before it, %d during, %d after",
		info.Bytes, took, before, ended-before, len(answered)-ended)
	if ended == before {
		t.Fatal("no sale was answered while the backup ran: it was not taken under load")
	}

	restored := filepath.Join(dir, "restored.db")
	if _, err := sqlite.Restore(context.Background(), backup, restored, false); err != nil {
		t.Fatalf("restore: %v", err)
	}
	r := start(t, restored, func(c *app.Config) { c.Demo = false })
	admin = r.adminToken(t)
	present, points := 0, 0
	for i, sale := range answered {
		resp := r.admin(t, admin, "GET", companyPath+"/transactions/"+sale.id, "")
		switch {
		case resp.Status == 200:
			present++
			points += sale.points
		case resp.Status == 404 && i < before:
			t.Fatalf("sale %s, answered before the backup began, is not in it", sale.id)
		case resp.Status != 404:
			t.Fatalf("GET transaction %s: %d %s", sale.id, resp.Status, resp.Body)
		}
		// Each worker has one sale in flight: of the answers after the
		// backup ended, the first four may have been committed during it;
		// every later one was sent after it.
		if resp.Status == 200 && i >= ended+4 {
			t.Fatalf("sale %s, sent after the backup ended, is in it", sale.id)
		}
	}
	count, balance := r.salesAndPoints(t, admin)
	if count-count0 != present || balance-points0 != points {
		t.Fatalf("the restored database holds %d sales and %d points more than at the start; the answered sales it holds are %d with %d points",
			count-count0, balance-points0, present, points)
	}
	t.Logf("restored: %d of %d answered sales, with their %d points", present, len(answered), points)
}

// salesAndPoints returns the demo company's transaction count and
// john-doe's points.
func (s *server) salesAndPoints(t *testing.T, admin string) (count, points int) {
	t.Helper()
	var page struct {
		Data struct {
			Page struct{ Total int } `json:"page"`
		} `json:"data"`
	}
	if r := s.admin(t, admin, "GET", companyPath+"/transactions?pageSize=1", ""); r.Status != 200 || json.Unmarshal(r.Body, &page) != nil {
		t.Fatalf("transactions: %d %s", r.Status, r.Body)
	}
	var user struct {
		Data struct{ Points int } `json:"data"`
	}
	if r := s.admin(t, admin, "GET", companyPath+"/loyalty-users/john-doe", ""); r.Status != 200 || json.Unmarshal(r.Body, &user) != nil {
		t.Fatalf("john-doe: %d %s", r.Status, r.Body)
	}
	return page.Data.Page.Total, user.Data.Points
}
