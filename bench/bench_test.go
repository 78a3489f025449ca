package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

func TestLuaTemplate(t *testing.T) {
	for in, want := range map[string]string{
		"/pos/x/startInteraction":                  `"/pos/x/startInteraction"`,
		`{"terminalId":"$2","posLocationId":"$1"}`: `"{\"terminalId\":\"" .. k[2] .. "\",\"posLocationId\":\"" .. k[1] .. "\"}"`,
		"$1":    `k[1]`,
		"a$1$2": `"a" .. k[1] .. k[2]`,
		"$0 $x": `"$0 $x"`,
		"":      `""`,
	} {
		if got := luaTemplate(in); got != want {
			t.Errorf("luaTemplate(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParseWrk(t *testing.T) {
	out := "Running 1s test @ http://127.0.0.1:1\n  1 threads and 2 connections\nBENCH_RESULT 2000 1000000 1 2 3 4 5 1500 9000\nRequests/sec: 2000\n"
	r, err := parseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	want := result{Requests: 2000, Duration: time.Second, Socket: 1 + 2 + 3 + 5, Status: 4, RPS: 2000,
		P50: 1500 * time.Microsecond, P99: 9 * time.Millisecond}
	if r.Requests != want.Requests || r.Duration != want.Duration || r.Socket != want.Socket || r.Status != want.Status ||
		r.RPS != want.RPS || r.P50 != want.P50 || r.P99 != want.P99 {
		t.Errorf("parseWrk = %+v, want %+v", *r, want)
	}
	if _, err := parseWrk("Requests/sec: 2000\n"); err == nil {
		t.Error("output without a summary line parsed")
	}
}

func TestLuaScriptRefusesUnsafeKeys(t *testing.T) {
	if _, err := luaScript("POST", "/x/$1", "", nil, [][]string{{`a"b`}}); err == nil {
		t.Error("a key with a quote was accepted")
	}
}

// TestWrkScript runs a generated script in wrk for a second: every request
// must carry the headers and one of the key tuples, rendered into the path
// and the body.
func TestWrkScript(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk not installed")
	}
	var mu sync.Mutex
	seen := map[string]int{}
	bad := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		loc := strings.TrimPrefix(r.URL.Path, "/loc/")
		if r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer t0k" ||
			r.Header.Get("Content-Type") != "application/json" || string(body) != `{"l":"`+loc+`","t":"T-`+loc+`"}` {
			bad++
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		seen[loc]++
	}))
	defer srv.Close()
	keys := [][]string{{"L1", "T-L1"}, {"L2", "T-L2"}, {"L3", "T-L3"}}
	script, err := luaScript("POST", "/loc/$1", `{"l":"$1","t":"$2"}`,
		[][2]string{{"Authorization", "Bearer t0k"}, {"Content-Type", "application/json"}}, keys)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runWrk(context.Background(), srv.URL, script, load{Threads: 1, Connections: 2, Duration: time.Second}, t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if bad > 0 || r.Status > 0 {
		t.Errorf("%d malformed requests (wrk counted %d non-2xx)", bad, r.Status)
	}
	if len(seen) != len(keys) {
		t.Errorf("keys used: %v, want all of %v", seen, keys)
	}
	if r.Requests == 0 || r.RPS <= 0 || r.P99 < r.P50 {
		t.Errorf("implausible result %+v", *r)
	}
}

func TestCommandLineHidesThePostgresURL(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "go run ./bench"},
		{[]string{"-postgres", "postgres://u:secret@h/db", "-doc", ""}, `go run ./bench -postgres "$POSGATE_BENCH_POSTGRES_DSN" -doc ''`},
		{[]string{"--postgres=postgres://u:secret@h/db", "-serve-args", "--cache-ttl 0"}, `go run ./bench --postgres="$POSGATE_BENCH_POSTGRES_DSN" -serve-args '--cache-ttl 0'`},
	} {
		if got := commandLine(tc.args); got != tc.want {
			t.Errorf("commandLine(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}

func TestRenderMatchesLuaTemplate(t *testing.T) {
	k := []string{"code", "CP0001", "L0001"}
	if got, want := render(`{"$1":"$2","posLocationId":"$3"}`, k), `{"code":"CP0001","posLocationId":"L0001"}`; got != want {
		t.Errorf("render = %s, want %s", got, want)
	}
	if got := render("/x/$1/$0", []string{"a"}); got != "/x/a/$0" {
		t.Errorf("render = %s", got)
	}
}

// TestGeneratedDataSet checks that rows are a function of their index, that
// codes are unique, that every generated row passes posgate's validation
// and that every key the scenarios derive is safe for the wrk script.
func TestGeneratedDataSet(t *testing.T) {
	d, err := newDataset()
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	codes := map[string]bool{}
	for i := range n {
		u, c := genUser(d, i), genCoupon(d, n, i)
		if err := u.Validate(); err != nil {
			t.Fatalf("user %d: %v", i, err)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("coupon %d: %v", i, err)
		}
		if *genUser(d, i) != *u || genCoupon(d, n, i).Code != c.Code {
			t.Fatalf("row %d differs between two generations", i)
		}
		if codes[strings.ToLower(c.Code)] {
			t.Fatalf("code %s repeated", c.Code)
		}
		codes[strings.ToLower(c.Code)] = true
	}
	e := &env{Rows: n, Data: d}
	for name, keys := range map[string][][]string{
		"search": couponSearchKeys(e, false), "search+location": couponSearchKeys(e, true),
		"lookup": couponLookupKeys(e), "users": userKeywordKeys(e),
	} {
		if len(keys) != n {
			t.Errorf("%s: %d keys, want %d", name, len(keys), n)
		}
		if _, err := luaScript("POST", "/$1", `{"a":"$2"}`, nil, keys); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, k := range keys {
			if name == "users" && len(k[1]) < 3 {
				t.Errorf("keyword %q shorter than 3 characters", k[1])
			}
		}
	}
}

func TestParseWrkSequence(t *testing.T) {
	r, err := parseWrk("BENCH_SEQ 40 79\nBENCH_RESULT 70 1000000 0 0 0 0 0 1500 9000\n")
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 70 || r.IssuedMost != 40 || r.Issued != 79 {
		t.Errorf("parseWrk = %+v", *r)
	}
	if _, err := parseWrk("BENCH_SEQ 40 79\n"); err == nil {
		t.Error("output without a summary line parsed")
	}
	s := &sequence{Size: 100}
	if next, err := s.advance(20, 2, &result{IssuedMost: 40}); next != 100 || err != nil {
		t.Errorf("advance to the last index = %d, %v", next, err)
	}
	if _, err := s.advance(21, 2, &result{IssuedMost: 40}); err == nil {
		t.Error("a run past Size did not fail")
	}
}

// TestSeqScript runs a sequence script in wrk for a second: every request
// must be distinct, rendered from its index exactly as key(i) renders it in
// Go (records cycling, padding stripped), from the start index on, and the
// BENCH_SEQ line must account for every request sent.
func TestSeqScript(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk not installed")
	}
	seq := &sequence{Size: 1 << 30, Formats: []string{"00000000-0000-4000-8000-%012d", "TX%d"},
		Records: [][]string{{"L1", "a", "CP1"}, {"L0022", "bbb", "C"}, {"L3", "", "CP333"}}}
	const path, body, start, threads = "/s/$2", `{"s":"$1","l":"$3","u":"$4","c":"$5"}`, 1000, 2
	var mu sync.Mutex
	seen := map[int]bool{}
	var bad []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/s/TX%d", &i); err != nil || seen[i] || i < start ||
			string(got) != render(body, seq.key(i)) || r.Header.Get("Authorization") != "Bearer t0k" {
			bad = append(bad, r.URL.Path+" "+string(got))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		seen[i] = true
	}))
	defer srv.Close()
	script, err := seqScript("POST", path, body, [][2]string{{"Authorization", "Bearer t0k"}}, seq, start, threads)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runWrk(context.Background(), srv.URL, script, load{Threads: threads, Connections: 4, Duration: time.Second}, t.TempDir(), "seq")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 || r.Status > 0 {
		t.Fatalf("%d bad requests (wrk counted %d non-2xx), first: %s", len(bad), r.Status, bad[0])
	}
	next, err := seq.advance(start, threads, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range seen {
		if i >= next {
			t.Errorf("index %d sent, beyond %d", i, next)
		}
	}
	if int64(len(seen)) < r.Requests || r.Issued < int64(len(seen)) || r.Requests < 100 {
		t.Errorf("%d distinct requests served, wrk read %d answers and built %d requests", len(seen), r.Requests, r.Issued)
	}
	if _, err := seqScript("POST", path, body, nil, &sequence{Size: 1, Formats: []string{"%s"}}, 0, 1); err == nil {
		t.Error("a format with a string verb was accepted")
	}
	if _, err := seqScript("POST", path, body, nil, &sequence{Size: 1, Records: [][]string{{`a"`}}}, 0, 1); err == nil {
		t.Error("a record with a quote was accepted")
	}
}

// TestTransactionPlan checks that every sale of the plan can redeem its
// coupon (a coupon of the customer, Issued, unexpired, usable at the sale's
// location, at an existing terminal), that no coupon is planned twice, and
// that the offline replay's body holds batchItems distinct sales with
// distinct dates, in another order than their dates.
func TestTransactionPlan(t *testing.T) {
	d, err := newDataset()
	if err != nil {
		t.Fatal(err)
	}
	const n = 10000
	e := &env{Rows: n, Data: d, Keys: map[string][][]string{}, RowTime: 3 * time.Second}
	sales, batch, err := txPlan(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != batchRuns*batchItems || len(sales)+len(batch) < n/2 {
		t.Fatalf("%d sales and %d replayed, from %d coupons", len(sales), len(batch), n)
	}
	coupons := map[string]*posgate.Coupon{}
	for i := range n {
		c := genCoupon(d, n, i)
		coupons[c.Code] = c
	}
	terminals := map[string]bool{}
	for _, lt := range d.ActiveTerminals {
		terminals[lt[0]+"/"+lt[1]] = true
	}
	planned := map[string]bool{}
	for _, s := range append(slices.Clone(sales), batch...) {
		c := coupons[s[3]]
		switch {
		case c == nil || planned[s[3]]:
			t.Fatalf("sale %v: coupon unknown or planned twice", s)
		case c.UserID != s[2] || c.Status != posgate.CouponIssued || c.AvailableUntil.Before(time.Now()):
			t.Fatalf("sale %v: coupon %+v cannot be redeemed by its customer", s, c)
		case len(c.LocationIDs) > 0 && !slices.Contains(c.LocationIDs, s[0]), !terminals[s[0]+"/"+s[1]]:
			t.Fatalf("sale %v: not at a terminal where coupon %+v is usable", s, c)
		}
		planned[s[3]] = true
	}
	seq, err := txSequence(e)
	if err != nil {
		t.Fatal(err)
	}
	if seq.Size < txPeakRate*3 {
		t.Errorf("%d sessions for 3 s at %d/s", seq.Size, txPeakRate)
	}
	if _, err := seqScript("POST", "/x", txBody, nil, seq, 0, 2); err != nil {
		t.Fatal(err)
	}
	if k := seq.key(7); k[0] != "00000000-0000-4000-8000-000000000007" || k[1] != "TX7" || k[3] != sales[7][1] {
		t.Errorf("key(7) = %v", k)
	}
	var body struct {
		Items []struct {
			TransactionID   string    `json:"transactionId"`
			TransactionDate time.Time `json:"transactionDate"`
		} `json:"items"`
	}
	if err := json.Unmarshal(batchBody(batch, batchRuns-1, time.Now()), &body); err != nil {
		t.Fatal(err)
	}
	ids, dates, sorted := map[string]bool{}, map[time.Time]bool{}, true
	for i, it := range body.Items {
		ids[it.TransactionID], dates[it.TransactionDate] = true, true
		if i > 0 && it.TransactionDate.Before(body.Items[i-1].TransactionDate) {
			sorted = false
		}
	}
	if len(body.Items) != batchItems || len(ids) != batchItems || len(dates) != batchItems || sorted {
		t.Errorf("replay of %d items, %d ids, %d dates, sorted by date: %v", len(body.Items), len(ids), len(dates), sorted)
	}
}

// TestMissesNeverReadAsTheirBar: a rate or an RSS just beyond its bar is
// printed with the precision that shows it beyond, never as
// "0.50× baseline < 0.50×" or "64 MB > 64 MB".
func TestMissesNeverReadAsTheirBar(t *testing.T) {
	rep := &report{
		Baselines: []*result{{RPS: 1000}},
		Rows: []*result{{
			Scenario: "x", RPS: 497, PeakRSSKB: 64*1024 + 400,
			target: target{minRatio: 0.5},
		}},
	}
	rep.finish()
	got := strings.Join(rep.Rows[0].Failed, "; ")
	want := "0.497× baseline < 0.50×; peak RSS 64.4 MB > 64 MB"
	if got != want {
		t.Fatalf("failed = %q, want %q", got, want)
	}
}

// TestVerifyData: a row's check of a string in the answer's data.
func TestVerifyData(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"data":{"posStatus":"Accepted","sessionId":"x"}}`: true,
		`{"data":{"posStatus":"Disabled"}}`:                 false,
		`{"data":{}}`:                                       false,
		`{"data":{"posStatus":7}}`:                          false,
		`not json`:                                          false,
	} {
		if err := verifyAccepted([]byte(body)); (err == nil) != ok {
			t.Errorf("verifyAccepted(%s) = %v, want ok %v", body, err, ok)
		}
	}
	if err := verifyActiveAccount([]byte(`{"data":{"accountStatus":"Active"}}`)); err != nil {
		t.Error(err)
	}
}
