package grade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/conformance/conftest"
	"github.com/posgate/posgate/internal/conformance/grade"
	"github.com/posgate/posgate/internal/conformance/record"
)

// recording fetches what the server recorded of a client, through the
// operator API, as grade reads it.
func recording(t *testing.T, base, id string) record.Recording {
	t.Helper()
	rec, err := conftest.Operator(t, base).GetRecording(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rec)
	var out record.Recording
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sale(session, tx, terminal string, at time.Time) string {
	s := ""
	if session != "" {
		s = fmt.Sprintf(`"sessionId":%q,`, session)
	}
	return fmt.Sprintf(`{%s"transactionId":%q,"terminalId":%q,"posLocationId":"LOC123","transactionAmount":12.50,"transactionDate":%q}`,
		s, tx, terminal, at.UTC().Format(time.RFC3339))
}

func start(t *testing.T, s *conftest.Till, terminal string) (string, string) {
	t.Helper()
	status, body, _ := s.JSON("POST", "/pos/clover/startInteraction", fmt.Sprintf(`{"terminalId":%q,"posLocationId":"LOC123"}`, terminal))
	var a struct {
		Data struct {
			SessionID *string `json:"sessionId"`
			PosStatus string  `json:"posStatus"`
		} `json:"data"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &a) != nil {
		t.Fatalf("startInteraction %s: %d %s", terminal, status, body)
	}
	if a.Data.SessionID == nil {
		return "", a.Data.PosStatus
	}
	return *a.Data.SessionID, a.Data.PosStatus
}

func expect(t *testing.T, what string, status, want int, body string) {
	t.Helper()
	if status != want {
		t.Fatalf("%s: %d, want %d: %s", what, status, want, body)
	}
}

// retryAfter waits out the Retry-After of an answer.
func retryAfter(t *testing.T, h http.Header) {
	t.Helper()
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil {
		t.Fatalf("Retry-After %q", h.Get("Retry-After"))
	}
	time.Sleep(time.Duration(secs)*time.Second + 200*time.Millisecond)
}

// sloppy are tills that each break one rule, and nothing else.
var sloppy = []struct {
	name, rule string
	run        func(t *testing.T, base string, s *conftest.Till)
}{
	{"a token per call", "token-reuse", func(t *testing.T, base string, s *conftest.Till) {
		for range 3 {
			s.FetchToken()
			status, body, _ := s.Call("GET", "/pos/clover/receipt/promotion/location/LOC123", "")
			expect(t, "receipt", status, 200, body)
		}
	}},
	{"a call after the token expired", "token-renewal", func(t *testing.T, base string, s *conftest.Till) {
		s.FetchToken() // on a server whose tokens live a second
		status, body, _ := s.Call("GET", "/pos/clover/receipt/promotion/location/LOC123", "")
		expect(t, "receipt", status, 200, body)
		time.Sleep(1100 * time.Millisecond)
		status, body, _ = s.Call("GET", "/pos/clover/receipt/promotion/location/LOC123", "")
		expect(t, "receipt with the expired token", status, 401, body)
	}},
	{"a retried sale with a new transactionId", "retry-same-id", func(t *testing.T, base string, s *conftest.Till) {
		s.FetchToken()
		session, _ := start(t, s, "TERM-05")
		now := time.Now()
		status, body, h := s.JSON("POST", "/pos/clover/transaction", sale(session, s.ID+"-1", "TERM-05", now))
		expect(t, "sale beyond the rate limit", status, 429, body)
		retryAfter(t, h)
		status, body, _ = s.JSON("POST", "/pos/clover/transaction", sale(session, s.ID+"-2", "TERM-05", now))
		expect(t, "retried sale", status, 200, body)
	}},
	{"a sale after Disabled", "disabled-handled", func(t *testing.T, base string, s *conftest.Till) {
		op := conftest.Operator(t, base)
		terminal := s.ID + "-T"
		if _, err := op.CreateTerminal(context.Background(), "clover", "LOC123", client.CreateTerminalRequest{TerminalID: terminal}); err != nil {
			t.Fatal(err)
		}
		s.FetchToken()
		session, _ := start(t, s, terminal)
		if _, err := op.DisableTerminal(context.Background(), "clover", "LOC123", terminal); err != nil {
			t.Fatal(err)
		}
		if _, st := start(t, s, terminal); st != "Disabled" {
			t.Fatalf("startInteraction at the disabled terminal: %s", st)
		}
		status, body, _ := s.JSON("POST", "/pos/clover/transaction", sale(session, s.ID+"-1", terminal, time.Now()))
		expect(t, "sale", status, 200, body)
	}},
	{"NotAvailable asked again at once", "disabled-handled", func(t *testing.T, base string, s *conftest.Till) {
		s.FetchToken()
		for range 2 {
			status, body, _ := s.Call("GET", "/pos/clover/receipt/promotion/location/LOC456", "")
			expect(t, "receipt", status, 200, body)
		}
	}},
	{"a sale without its session", "session-linked", func(t *testing.T, base string, s *conftest.Till) {
		s.FetchToken()
		start(t, s, "TERM-05")
		status, body, _ := s.JSON("POST", "/pos/clover/transaction", sale("", s.ID+"-1", "TERM-05", time.Now()))
		expect(t, "sale", status, 400, body)
	}},
	{"a body sent as text/plain", "content-types", func(t *testing.T, base string, s *conftest.Till) {
		s.FetchToken()
		status, body, _ := s.Call("POST", "/pos/clover/startInteraction", `{"terminalId":"TERM-05","posLocationId":"LOC123"}`, "Content-Type: text/plain")
		expect(t, "startInteraction", status, 415, body)
	}},
	{"an offline batch newest first", "offline-replay-order", func(t *testing.T, base string, s *conftest.Till) {
		s.FetchToken()
		now := time.Now()
		batch := `{"items":[` + sale("", s.ID+"-2", "TERM-06", now.Add(-time.Hour)) + "," + sale("", s.ID+"-1", "TERM-06", now.Add(-2*time.Hour)) + `]}`
		status, body, _ := s.JSON("POST", "/v2/pos/clover/transactions/batch", batch)
		expect(t, "batch", status, 200, body)
	}},
	{"a call right after a 429", "backoff-retry-after", func(t *testing.T, base string, s *conftest.Till) {
		s.FetchToken()
		status, body, _ := s.Call("GET", "/pos/clover/receipt/promotion/location/LOC123", "")
		expect(t, "receipt", status, 200, body)
		for range 2 {
			status, body, _ = s.Call("GET", "/pos/clover/receipt/promotion/location/LOC123", "")
			expect(t, "receipt beyond the rate limit", status, 429, body)
		}
	}},
}

// TestGradeFailsSloppyTills: each sloppy till fails exactly its rule, the
// failing call named in the JSON report and shown in the HTML one; the
// recording keeps neither the client's secret nor its token.
func TestGradeFailsSloppyTills(t *testing.T) {
	conftest.ForEachStoreKind(t, func(t *testing.T, demo func(*testing.T, app.Config) string) {
		shared := demo(t, app.Config{})
		for i, tc := range sloppy {
			t.Run(tc.name, func(t *testing.T) {
				base := shared
				if tc.rule == "token-renewal" {
					base = demo(t, app.Config{TokenTTL: time.Second}) // tokens that expire (in real time) without a long wait
				}
				s := conftest.NewTill(t, base, fmt.Sprintf("sloppy-%d", i))
				if tc.rule == "retry-same-id" || tc.rule == "backoff-retry-after" {
					if _, err := conftest.Operator(t, base).PutClientRateLimit(context.Background(), s.ID, client.RateLimit{RequestsPerSecond: 1, Burst: 1}); err != nil {
						t.Fatal(err)
					}
				}
				tc.run(t, base, s)
				rec := recording(t, base, s.ID)
				raw, _ := json.Marshal(rec)
				if bytes.Contains(raw, []byte(s.Secret)) || bytes.Contains(raw, []byte(s.Token)) {
					t.Fatalf("the recording holds the secret or the token: %s", raw)
				}
				r := grade.Grade(rec, base, time.Now())
				if r.Passed || !slices.Equal(r.Failed, []string{tc.rule}) {
					var b bytes.Buffer
					r.WriteJSON(&b)
					t.Fatalf("failed %v, want [%s]:\n%s", r.Failed, tc.rule, b.String())
				}
				var failing grade.Result
				for _, res := range r.Rules {
					if res.ID == tc.rule {
						failing = res
					}
				}
				if failing.Status != grade.Fail || len(failing.Failures) == 0 || failing.Failures[0].Reason == "" || failing.Failures[0].Call.Seq == 0 {
					t.Fatalf("rule %s: %+v", tc.rule, failing)
				}
				var page bytes.Buffer
				if err := r.WriteHTML(&page); err != nil {
					t.Fatal(err)
				}
				if reason := html.EscapeString(failing.Failures[0].Reason); !strings.Contains(page.String(), reason) {
					t.Fatalf("the HTML report does not show %q:\n%s", reason, page.String())
				}
			})
		}
	})
}

// TestGradePassesTheGoClient: the Go client (client/) doing a checkout, and
// replaying an offline batch, passes every rule; under a rate limit of one
// request a second, its retries (same Idempotency-Key and transactionId,
// after Retry-After) pass the retry and backoff rules too.
func TestGradePassesTheGoClient(t *testing.T) {
	conftest.ForEachStore(t, func(t *testing.T, base string) {
		for _, tc := range []struct {
			name    string
			limited bool
		}{{"go-client", false}, {"go-client-limited", true}} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				till := conftest.NewTill(t, base, tc.name)
				if tc.limited {
					if _, err := conftest.Operator(t, base).PutClientRateLimit(ctx, till.ID, client.RateLimit{RequestsPerSecond: 1, Burst: 1}); err != nil {
						t.Fatal(err)
					}
				}
				c, err := client.New(base, client.WithCredentials(till.ID, till.Secret, "pos_integration"))
				if err != nil {
					t.Fatal(err)
				}
				checkout(t, c, tc.name)
				r := grade.Grade(recording(t, base, till.ID), base, time.Now())
				var b bytes.Buffer
				r.WriteJSON(&b)
				// A token and five calls; under the limit, their retries too.
				retried := r.Calls > 6
				if !r.Passed || len(r.Failed) != 0 || r.Calls < 6 || retried != tc.limited {
					t.Fatalf("the Go client:\n%s", b.String())
				}
				status := map[string]string{}
				for _, res := range r.Rules {
					status[res.ID] = res.Status
				}
				limited := map[bool]string{true: grade.Pass, false: grade.NotExercised}[tc.limited]
				want := map[string]string{"token-reuse": grade.Pass, "token-renewal": grade.Pass, "retry-same-id": limited,
					"disabled-handled": grade.Pass, "session-linked": grade.Pass, "content-types": grade.Pass,
					"offline-replay-order": grade.Pass, "backoff-retry-after": limited}
				if fmt.Sprint(status) != fmt.Sprint(want) {
					t.Fatalf("statuses %v, want %v\n%s", status, want, b.String())
				}
			})
		}
	})
}

// checkout is a till's day with the Go client: an interaction, a coupon
// lookup, a receipt promotion (NotAvailable at LOC456), a sale with the
// session and a coupon, and two offline sales replayed oldest first.
func checkout(t *testing.T, c *client.Client, prefix string) {
	t.Helper()
	ctx := context.Background()
	si, err := c.StartInteraction(ctx, "clover", client.StartInteractionRequest{TerminalID: "TERM-06", PosLocationID: "LOC123"})
	if err != nil || si.SessionID == nil {
		t.Fatalf("startInteraction: %+v %v", si, err)
	}
	if _, err := c.LookupCouponCodes(ctx, "clover", client.CouponLookupRequest{PosLocationID: "LOC123", Code: "Sl75Ev"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetReceiptPromotion(ctx, "clover", "LOC456"); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := c.CreateTransaction(ctx, "clover", client.TransactionRequest{SessionID: *si.SessionID, TransactionID: prefix + "-1",
		TerminalID: "TERM-06", PosLocationID: "LOC123", TransactionAmount: 12.5, TransactionDate: now}); err != nil {
		t.Fatal(err)
	}
	offline := func(id string, at time.Time) client.TransactionRequest {
		return client.TransactionRequest{TransactionID: prefix + id, TerminalID: "TERM-07", PosLocationID: "LOC456", TransactionAmount: 3, TransactionDate: at}
	}
	if _, err := c.ReplayTransactions(ctx, "clover", client.BatchRequest{Items: []client.TransactionRequest{
		offline("-OFF-1", now.Add(-2*time.Hour)), offline("-OFF-2", now.Add(-time.Hour))}}); err != nil {
		t.Fatal(err)
	}
}
