package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, for counting rows

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/auth/credential"
)

// env is what a scenario sees of one store's run.
type env struct {
	// Kind is "sqlite" or "postgres"; DSN is what posgate was given.
	Kind, DSN string
	// Rows is the size of the generated data sets (coupons, loyalty users):
	// 100,000 by default, 1,000,000 with -large.
	Rows int
	// RowTime is the warm-up and measurement of one wrk row: a setup that
	// makes data the requests use up (a sale's session) sizes it to this.
	RowTime time.Duration
	// Store is open during setup only (posgate is not running yet).
	Store posgate.Store
	Data  *dataset
	// BaseURL is the running posgate; Token a POS token for Data.POSSystem
	// and AdminToken an operator token.
	BaseURL, Token, AdminToken string
	HTTP                       *http.Client
	// Keys holds key tuples that setup functions generated, by a name of
	// their choosing, for their scenario's keys function.
	Keys map[string][][]string
	// loaded names the data sets setup functions have loaded, so that
	// scenarios sharing one (the coupon searches) load it once.
	loaded map[string]bool
	// Conns is the run's wrk connection count; Rates holds the req/s of
	// the rows measured so far, by scenario name (a paced row runs at a
	// share of another row's rate).
	Conns int
	Rates map[string]float64
	// db is the PostgreSQL server whose CPU time the rows count (nil on
	// SQLite, which runs inside posgate).
	db *dbServer
	// bin is the posgate binary; instances are the posgate processes of
	// the row being measured (the store's first, fleet.go).
	bin       string
	instances []*proc
}

// dataset is the tenancy data every run loads: one POS system with one
// company (every feature on), locations × terminals, a POS client and an
// operator client.
type dataset struct {
	POSSystem, Company       string
	ClientID, ClientSecret   string
	AdminID, AdminSecret     string
	Locations                []string
	ActiveTerminals          [][]string // (location, terminal)
	TerminalsPerLocation     int
	locationCount, termCount int
}

// Sizes of the tenancy data set: 1,000 terminals, so that startInteraction
// spreads over many rows as a fleet of tills would.
const (
	benchLocations          = 100
	benchTerminalsPerLocale = 10
)

// newDataset names the data set; secrets are fresh for every run.
func newDataset() (*dataset, error) {
	d := &dataset{POSSystem: "bench", Company: "bench-co", ClientID: "bench-pos", AdminID: "bench-admin",
		TerminalsPerLocation: benchTerminalsPerLocale}
	var err error
	if d.ClientSecret, err = credential.GenerateSecret(); err != nil {
		return nil, err
	}
	if d.AdminSecret, err = credential.GenerateSecret(); err != nil {
		return nil, err
	}
	for i := 1; i <= benchLocations; i++ {
		loc := fmt.Sprintf("L%04d", i)
		d.Locations = append(d.Locations, loc)
		for j := 1; j <= benchTerminalsPerLocale; j++ {
			d.ActiveTerminals = append(d.ActiveTerminals, []string{loc, fmt.Sprintf("T%02d", j)})
		}
	}
	return d, nil
}

// load stores the data set through the Store interface (posgate's own
// validation and migrations apply).
func (d *dataset) load(ctx context.Context, st posgate.Store) error {
	if err := st.CreatePOSSystem(ctx, &posgate.POSSystem{ID: d.POSSystem, Name: "Benchmark POS"}); err != nil {
		return fmt.Errorf("data set: %w", err)
	}
	if err := st.CreateCompany(ctx, &posgate.Company{POSSystemID: d.POSSystem, ID: d.Company, Name: "Benchmark company",
		Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()}); err != nil {
		return fmt.Errorf("data set: %w", err)
	}
	for _, loc := range d.Locations {
		if err := st.CreateLocation(ctx, &posgate.Location{POSSystemID: d.POSSystem, ID: loc, CompanyID: d.Company,
			Name: "Store " + loc, Status: posgate.StatusActive}); err != nil {
			return fmt.Errorf("data set: %w", err)
		}
	}
	for _, lt := range d.ActiveTerminals {
		if err := st.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: d.POSSystem, LocationID: lt[0], ID: lt[1],
			Name: "Till " + lt[1], Status: posgate.StatusActive}); err != nil {
			return fmt.Errorf("data set: %w", err)
		}
	}
	for _, c := range []*posgate.Client{
		{ID: d.ClientID, Name: "Benchmark POS", POSSystemID: d.POSSystem, Scopes: []string{posgate.ScopePOSIntegration},
			SecretHash: credential.HashSecret(d.ClientSecret)},
		{ID: d.AdminID, Name: "Benchmark operator", Scopes: []string{posgate.ScopeAdmin}, SecretHash: credential.HashSecret(d.AdminSecret)},
	} {
		if err := st.CreateClient(ctx, c); err != nil {
			return fmt.Errorf("data set: %w", err)
		}
	}
	return nil
}

// openStore opens the store posgate will use, migrating it.
func openStore(ctx context.Context, dsn string) (posgate.Store, error) {
	return app.OpenStore(ctx, dsn, false, time.Now)
}

// count returns the number of rows of table, read straight from the
// database so that it does not depend on posgate's answers.
func (e *env) count(ctx context.Context, table string) (int64, error) {
	var n int64
	q := "SELECT count(*) FROM " + table
	if e.Kind == "postgres" {
		conn, err := pgx.Connect(ctx, e.DSN)
		if err != nil {
			return 0, fmt.Errorf("count %s: %w", table, err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			return 0, fmt.Errorf("count %s: %w", table, err)
		}
		return n, nil
	}
	db, err := sql.Open("sqlite", e.DSN+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", table, err)
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", table, err)
	}
	return n, nil
}

// exec runs one statement on the PostgreSQL database of the run.
func (e *env) exec(ctx context.Context, stmt string) error {
	conn, err := pgx.Connect(ctx, e.DSN)
	if err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}

// stableCount counts the rows of table once the count has stopped moving
// (two counts 100 ms apart agree), so that requests still in flight when wrk
// stopped are committed or gone.
func (e *env) stableCount(ctx context.Context, table string) (int64, error) {
	last, err := e.count(ctx, table)
	for i := 0; err == nil && i < 50; i++ {
		time.Sleep(100 * time.Millisecond)
		var n int64
		if n, err = e.count(ctx, table); err == nil && n == last {
			return n, nil
		}
		last = n
	}
	if err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("count %s: still changing after 5 s", table)
}

// token gets an access token from the running posgate by the client
// credentials grant, as a POS system would.
func (e *env) token(ctx context.Context, id, secret, scope string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.BaseURL+"/connect/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(id, secret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if err := e.doJSON(req, &out); err != nil {
		return "", fmt.Errorf("token for %s: %w", id, err)
	}
	return out.AccessToken, nil
}

// doJSON sends req and decodes a 200 answer into out.
func (e *env) doJSON(req *http.Request, out any) error {
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d: %.300s", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	return json.Unmarshal(body, out)
}

// verifySessions starts n sessions (conc at a time) at random terminals and
// reads every one back through the operator API; it returns how many it
// found and an error unless that is all of them.
func verifySessions(ctx context.Context, e *env, n, conc int) (int, error) {
	ids := make(chan string, n)
	errc := make(chan error, conc)
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		per := n / conc
		if w < n%conc {
			per++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				lt := e.Data.ActiveTerminals[randInt(len(e.Data.ActiveTerminals))]
				body := fmt.Sprintf(`{"terminalId":%q,"posLocationId":%q}`, lt[1], lt[0])
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.BaseURL+"/pos/"+e.Data.POSSystem+"/startInteraction", strings.NewReader(body))
				if err != nil {
					errc <- err
					return
				}
				req.Header.Set("Authorization", "Bearer "+e.Token)
				req.Header.Set("Content-Type", "application/json")
				var out struct {
					Data struct {
						SessionID *string `json:"sessionId"`
						PosStatus string  `json:"posStatus"`
					} `json:"data"`
				}
				if err := e.doJSON(req, &out); err != nil {
					errc <- err
					return
				}
				if out.Data.SessionID == nil || out.Data.PosStatus != "Accepted" {
					errc <- fmt.Errorf("startInteraction at %v answered %+v", lt, out.Data)
					return
				}
				ids <- *out.Data.SessionID
			}
		}()
	}
	wg.Wait()
	close(ids)
	select {
	case err := <-errc:
		return 0, err
	default:
	}
	found, total := 0, 0
	for id := range ids {
		total++
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.BaseURL+"/admin/v1/sessions/"+id, nil)
		if err != nil {
			return found, err
		}
		req.Header.Set("Authorization", "Bearer "+e.AdminToken)
		var out struct {
			Data struct {
				SessionID string `json:"sessionId"`
			} `json:"data"`
		}
		if err := e.doJSON(req, &out); err != nil {
			return found, fmt.Errorf("session %s answered but not found: %w", id, err)
		}
		if out.Data.SessionID == id {
			found++
		}
	}
	if found != total {
		return found, fmt.Errorf("sessions: %d answered, %d found", total, found)
	}
	return found, nil
}

// randInt returns a uniform random int in [0, n).
func randInt(n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		panic(errors.Join(errors.New("crypto/rand failed"), err))
	}
	return int(v.Int64())
}

// timedPost sends one JSON body with the data set's POS token and times it
// until the whole answer has been read: the measurement of the rows that
// time a single request (imports, batch replays) rather than a wrk loop.
func timedPost(ctx context.Context, e *env, url string, body []byte) (status int, answer []byte, elapsed time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+e.Token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return 0, nil, 0, err
	}
	answer, err = io.ReadAll(resp.Body)
	elapsed = time.Since(start)
	resp.Body.Close()
	return resp.StatusCode, answer, elapsed, err
}
