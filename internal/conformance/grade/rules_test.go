package grade

import (
	"slices"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/conformance/record"
)

// TestRulesOnRecordedCalls grades recordings written by hand for the cases
// a live till hardly produces: XML bodies, a client that gave up, refunds,
// batches out of order across calls, one restart.
func TestRulesOnRecordedCalls(t *testing.T) {
	t0 := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	tok := &record.Token{Fingerprint: "sha256:1", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour), RealExpiresAt: t0.Add(time.Hour)}
	seq := int64(0)
	call := func(at time.Duration, method, path, ct, body string, status int, answer string) record.Call {
		seq++
		return record.Call{Seq: seq, At: t0.Add(at), RealAt: t0.Add(at), Method: method, Path: path, Token: tok, Status: status,
			RequestHeaders: map[string]string{"Content-Type": ct}, RequestBody: body, AnswerBody: answer, AnswerHeaders: map[string]string{}}
	}
	fetch := func(at time.Duration) record.Call {
		seq++
		return record.Call{Seq: seq, At: t0.Add(at), RealAt: t0.Add(at), Method: "POST", Path: record.TokenPath, Status: 200,
			Issued: &record.Token{Fingerprint: "sha256:f", IssuedAt: t0.Add(at), ExpiresAt: t0.Add(at + time.Hour), RealExpiresAt: t0.Add(at + time.Hour)}}
	}
	const sale, batch = "/pos/clover/transaction", "/v2/pos/clover/transactions/batch"
	gone := func(c record.Call) record.Call { c.ClientGone, c.Status = true, 0; return c }
	withAccept := func(c record.Call, a string) record.Call { c.RequestHeaders["Accept"] = a; return c }
	for _, tc := range []struct {
		name  string
		calls []record.Call
		fail  []string
	}{
		{"one early token fetch is a restart", []record.Call{fetch(0), fetch(time.Minute)}, nil},
		{"two are a token per call", []record.Call{fetch(0), fetch(time.Minute), fetch(2 * time.Minute)}, []string{"token-reuse"}},
		{"an XML sale without a session", []record.Call{
			call(0, "POST", "/pos/clover/startInteraction", "application/xml", "<S><terminalId>T</terminalId><posLocationId>L</posLocationId></S>", 200, `{"data":{"sessionId":"s1","posStatus":"Accepted"}}`),
			call(time.Second, "POST", sale, "text/xml", "<S><transactionId>X</transactionId><terminalId>T</terminalId><posLocationId>L</posLocationId></S>", 400, ""),
		}, []string{"session-linked"}},
		{"a refund needs no session", []record.Call{
			call(0, "POST", sale, "application/json", `{"transactionId":"R","originalTransactionId":"X","terminalId":"T","posLocationId":"L","transactionAmount":-1}`, 200, ""),
		}, nil},
		{"a retry after the client gave up keeps its transactionId", []record.Call{
			gone(call(0, "POST", sale, "application/json", `{"transactionId":"A","transactionDate":"2030-05-01T10:00:00Z","sessionId":"s"}`, 0, "")),
			call(time.Second, "POST", sale, "application/json", `{"transactionId":"A","transactionDate":"2030-05-01T10:00:00Z","sessionId":"s"}`, 200, ""),
		}, nil},
		{"a retry after the client gave up with a new transactionId and date", []record.Call{
			gone(call(0, "POST", sale, "application/json", `{"transactionId":"A","transactionDate":"2030-05-01T10:00:00Z","sessionId":"s"}`, 0, "")),
			call(time.Second, "POST", sale, "application/json", `{"transactionId":"B","transactionDate":"2030-05-01T10:00:01Z","sessionId":"s"}`, 200, ""),
		}, []string{"retry-same-id"}},
		{"batches out of order across calls", []record.Call{
			call(0, "POST", batch, "application/json", `{"items":[{"terminalId":"T","posLocationId":"L","transactionDate":"2030-05-01T09:00:00Z"}]}`, 200, ""),
			call(time.Second, "POST", batch, "application/json", `{"items":[{"terminalId":"T","posLocationId":"L","transactionDate":"2030-05-01T08:00:00Z"}]}`, 200, ""),
		}, []string{"offline-replay-order"}},
		{"another terminal's older sale is in order", []record.Call{
			call(0, "POST", batch, "application/json", `{"items":[{"terminalId":"T","posLocationId":"L","transactionDate":"2030-05-01T09:00:00Z"},{"terminalId":"U","posLocationId":"L","transactionDate":"2030-05-01T08:00:00Z"}]}`, 200, ""),
		}, nil},
		{"Accept asks for XML", []record.Call{withAccept(call(0, "GET", "/pos/clover/receipt/promotion/location/L", "", "", 200, ""), "application/xml")}, []string{"content-types"}},
		{"Accept with a wildcard and a quality", []record.Call{withAccept(call(0, "GET", "/pos/clover/receipt/promotion/location/L", "", "", 200, ""), "application/xml, */*;q=0.1")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Grade(record.Recording{ClientID: "c", Calls: tc.calls}, "s", t0)
			if !slices.Equal(r.Failed, tc.fail) {
				t.Fatalf("failed %v, want %v: %+v", r.Failed, tc.fail, r.Rules)
			}
		})
	}
}
