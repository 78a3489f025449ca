package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
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
