package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/conformance/conftest"
)

// TestConformanceGradeCommand: grade fails (exit 1) a till that fetches a
// token per call, naming the rule and the calls, and writes the HTML and
// JSON reports; after forget, a session that follows the rules passes.
func TestConformanceGradeCommand(t *testing.T) {
	base, _ := serveDemo(t)
	env := map[string]string{"POSGATE_SERVER": base}
	till := conftest.NewTill(t, base, "cli-till")
	for range 3 {
		till.FetchToken()
		if status, body, _ := till.Call("GET", "/pos/clover/receipt/promotion/location/LOC123", ""); status != 200 {
			t.Fatalf("receipt: %d %s", status, body)
		}
	}
	dir := t.TempDir()
	htmlPath, jsonPath := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.json")
	out, err := runCLI(t, env, "conformance", "grade", "cli-till", "--html", htmlPath, "--json", jsonPath)
	if exitCode(err) != 1 || describe(err) != "1 of 8 rules failed: token-reuse" {
		t.Fatalf("grade: %v\n%s", err, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^client cli-till on ` + regexp.QuoteMeta(base) + `: 6 calls recorded$`),
		regexp.MustCompile(`(?m)^FAIL  token-reuse +The access token is reused until near its expiry \(docs/api.md §3.2\)$`),
		regexp.MustCompile(`(?m)^      call \d+ POST /connect/token → 200: a new token while the previous one \(sha256:[0-9a-f]{16}, call \d+\) had \S+ of its 1h0m0s left: reuse it until it nears its expiry$`),
		regexp.MustCompile(`(?m)^PASS  token-renewal `),
		regexp.MustCompile(`(?m)^-     backoff-retry-after .*: not exercised$`),
	} {
		if !want.MatchString(out) {
			t.Fatalf("grade output lacks %s:\n%s", want, out)
		}
	}
	var report struct {
		ClientID string   `json:"clientId"`
		Passed   bool     `json:"passed"`
		Failed   []string `json:"failed"`
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil || json.Unmarshal(b, &report) != nil || report.ClientID != "cli-till" || report.Passed || strings.Join(report.Failed, ",") != "token-reuse" {
		t.Fatalf("report.json: %v %s", err, b)
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil || !strings.Contains(string(page), "<title>posgate conformance: cli-till</title>") || !strings.Contains(string(page), "a new token while the previous one") {
		t.Fatalf("report.html: %v\n%s", err, page)
	}

	if out := mustCLI(t, env, "conformance", "forget", "cli-till"); out != "forgot the recorded calls of client cli-till: its next calls are recorded afresh\n" {
		t.Fatalf("forget: %q", out)
	}
	for range 2 {
		if status, body, _ := till.Call("GET", "/pos/clover/receipt/promotion/location/LOC123", ""); status != 200 {
			t.Fatalf("receipt: %d %s", status, body)
		}
	}
	out = mustCLI(t, env, "conformance", "grade", "cli-till", "--output", "json")
	if err := json.Unmarshal([]byte(out), &report); err != nil || !report.Passed || len(report.Failed) != 0 {
		t.Fatalf("grade after forget: %v\n%s", err, out)
	}

	// A server that is no demo records nothing.
	db := filepath.Join(t.TempDir(), "plain.db")
	boot := mustCLI(t, map[string]string{"POSGATE_DATABASE": db}, "client", "bootstrap", "--id", "ops")
	secret := regexp.MustCompile(`client_secret: (\S+)`).FindStringSubmatch(boot)[1]
	plain := serveOn(t, app.Config{Database: db})
	mustFail(t, nil, "this server records no calls: only a demo server (posgate serve --demo) does (server "+plain+")",
		"conformance", "grade", "x", "--server", plain, "--client-id", "ops", "--client-secret", secret)
}

// TestConformanceRunCommand: run passes posgate (exit 0) and fails a stub
// that answers 200 {} to everything (exit 1), naming every rule and showing
// the requests and answers; it needs its flags.
func TestConformanceRunCommand(t *testing.T) {
	base, _ := serveDemo(t)
	out := mustCLI(t, nil, "conformance", "run", "--base-url", base, "--client-id", "demo-pos", "--client-secret", "demo-pos-secret")
	if !strings.HasPrefix(out, "PASS  token-endpoint ") || !strings.HasSuffix(out, "\n14 checks: 14 passed, 0 failed\n") || strings.Contains(out, "FAIL") {
		t.Fatalf("run against posgate:\n%s", out)
	}

	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer stub.Close()
	out, err := runCLI(t, nil, "conformance", "run", "--base-url", stub.URL, "--client-id", "till", "--client-secret", "s3cret")
	if exitCode(err) != 1 || !strings.HasPrefix(describe(err), "14 of 14 checks failed: token-endpoint, token-wrong-secret, authentication-required, ") {
		t.Fatalf("run against the stub: %v\n%s", err, out)
	}
	want := "FAIL  token-wrong-secret                 A wrong client secret is refused with 401 (docs/api.md §3.3)\n" +
		"      answered 200, want 401\n" +
		"      > POST " + stub.URL + "/connect/token\n" +
		"      > Authorization: Basic <till:a wrong secret>\n" +
		"      > Content-Type: application/x-www-form-urlencoded\n" +
		"      > grant_type=client_credentials&scope=pos_integration\n" +
		"      < 200\n" +
		"      < Content-Type: application/json\n" +
		"      < {}\n"
	if !strings.Contains(out, want) || strings.Contains(out, "s3cret") || !strings.HasSuffix(out, "\n14 checks: 0 passed, 14 failed\n") {
		t.Fatalf("run against the stub:\n%s", out)
	}
	if _, err := runCLI(t, nil, "conformance", "run", "--client-id", "a", "--client-secret", "b"); exitCode(err) != 2 || describe(err) != "conformance run needs --base-url (the server's {base_url}) (see 'posgate conformance run --help')" {
		t.Fatalf("no --base-url: %v", err)
	}
}
