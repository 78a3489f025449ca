package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/client/offline"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/demo"
)

// TestTransactionCommands: the loyalty program and a sale's refund from
// the command line, through the operator's use cases (docs/api.md §13.8).
func TestTransactionCommands(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, env map[string]string) {
		mustCLI(t, env, "demo", "load")
		co := []string{"--pos", "clover", "--company", "demo-company"}
		with := func(args ...string) []string { return append(args, co...) }
		if out := mustCLI(t, env, with("loyalty-program", "show")...); !strings.HasPrefix(out,
			"loyalty program of clover/demo-company: 1.00 points per currency unit, 1 stamps per sale of at least 5.00, auto-enroll false; set ") {
			t.Fatalf("show: %q", out)
		}
		out := mustCLI(t, env, with("loyalty-program", "set", "--points-per-unit", "2.5", "--stamps-per-sale", "2", "--auto-enroll")...)
		if !strings.HasPrefix(out, "loyalty program of clover/demo-company: 2.50 points per currency unit, 2 stamps per sale of at least 0.00, auto-enroll true; set ") {
			t.Fatalf("set: %q", out)
		}
		mustFail(t, env, "The stampsPerSale field must be an integer from 0 to 1000.", with("loyalty-program", "set", "--stamps-per-sale", "1001")...)
		mustFail(t, env, `--points-per-unit "x" is not a number`, with("loyalty-program", "set", "--points-per-unit", "x")...)

		// A sale recorded through the store's ledger, as the POS API does.
		st, err := app.OpenStore(context.Background(), env["POSGATE_DATABASE"], false, nil)
		if err != nil {
			t.Fatal(err)
		}
		out2, err := st.ApplyTransactions(context.Background(), []*posgate.TransactionInput{{Row: 1, ID: "11111111-1111-4111-8111-111111111111",
			POSSystemID: "clover", CompanyID: "demo-company", LocationID: "LOC123", TerminalID: "TERM-05", TransactionID: "CLI-1",
			Type: posgate.TransactionSale, Amount: 1000, Date: time.Now().Add(-time.Minute), CardNumber: "john-doe", RequestHash: "h",
			Request: json.RawMessage(`{}`)}})
		st.Close()
		if err != nil || out2[0].Status != posgate.OutcomeCreated {
			t.Fatalf("sale: %v %+v", err, out2)
		}
		// The refund's answer for people, with the receipt the POS would
		// print (the location's receipt promotion).
		first := mustCLI(t, env, with("transaction", "refund", "CLI-1", "--id", "CLI-1-R", "--amount", "4")...)
		refunded := regexp.MustCompile(`^refund CLI-1-R of sale CLI-1 recorded\n` +
			`customer john-doe: -10 points, \+0 stamps \(balance 135 points, 5 stamps\)\n` +
			`receipt promotion: "Thank you for shopping at Demo Store Downtown!", "Scan the code for 10% off your next visit.", QR code (http://\S+)\n` +
			`receipt loyalty line: -10 points, balance 135\n$`)
		if m := refunded.FindStringSubmatch(first); m == nil {
			t.Fatalf("refund:\n%s", first)
		}
		var answer struct {
			TransactionID string `json:"transactionId"`
			Receipt       struct {
				PrimaryText string `json:"primaryText"`
				ImageURL    string `json:"imageUrl"`
				PosStatus   string `json:"posStatus"`
			} `json:"receipt"`
		}
		if err := json.Unmarshal([]byte(mustCLI(t, env, with("transaction", "refund", "CLI-1", "--id", "CLI-1-R", "--amount", "4", "--output", "json")...)), &answer); err != nil ||
			answer.TransactionID != "CLI-1-R" || answer.Receipt.PosStatus != "Accepted" || answer.Receipt.PrimaryText == "" || answer.Receipt.ImageURL == "" {
			t.Fatalf("refund --output json: %+v %v", answer, err)
		}
		// The same refund again changes nothing and answers the first answer.
		if out := mustCLI(t, env, with("transaction", "refund", "CLI-1", "--id", "CLI-1-R", "--amount", "4")...); out != "already refunded (nothing changed): "+first {
			t.Fatalf("refund again: %s", out)
		}
		mustFail(t, env, "Refunding 7.00 would exceed sale 'CLI-1': 4.00 of its 10.00 are refunded already.", with("transaction", "refund", "CLI-1", "--id", "CLI-1-S", "--amount", "7")...)
		out = mustCLI(t, env, with("transaction", "list", "--user", "john-doe")...)
		if !strings.Contains(out, " Refund CLI-1-R -4.00 at LOC123/TERM-05, refunds CLI-1, customer john-doe -10 points +0 stamps\n") ||
			!strings.Contains(out, " Sale CLI-1 10.00 at LOC123/TERM-05, 4.00 refunded, customer john-doe +25 points +2 stamps\n") ||
			!strings.HasSuffix(out, "page 1 (50 per page) of 2 transactions\n") {
			t.Fatalf("list: %s", out)
		}
		if out := mustCLI(t, env, with("transaction", "show", "CLI-1")...); !strings.Contains(out, "request: {}\nanswer: {") {
			t.Fatalf("show: %s", out)
		}
		if out := mustCLI(t, env, with("loyalty-user", "show", "john-doe")...); !strings.Contains(out, " Refund CLI-1-R -4.00: -10 points, +0 stamps") {
			t.Fatalf("user: %s", out)
		}
	})
}

// TestCouponOfflineConflicts: a coupon redeemed offline under a kit and
// online meanwhile is honoured at the replay, and coupon offline-conflicts
// lists it (docs/api.md §24.5, §24.6).
func TestCouponOfflineConflicts(t *testing.T) {
	forEachStore(t, true, func(t *testing.T, s *server, env map[string]string) {
		ctx := context.Background()
		co := []string{"--pos", "clover", "--company", "demo-company"}
		with := func(args ...string) []string { return append(args, co...) }
		if out := mustCLI(t, env, with("coupon", "offline-conflicts")...); out != "page 1 (50 per page) of 0 offline conflicts\n" {
			t.Fatalf("no conflicts: %q", out)
		}
		mustCLI(t, env, with("coupon", "issue", "KIT-1", "--until", "2099-01-01T00:00:00Z")...)
		pos, err := client.New(s.base, client.WithCredentials(demo.POSClientID, demo.POSSecret))
		if err != nil {
			t.Fatal(err)
		}
		ans, err := pos.GetOfflineKit(ctx, "clover", "LOC123", client.KitQuery{TerminalID: "TERM-05"})
		if err != nil {
			t.Fatal(err)
		}
		jwks, err := pos.GetJWKS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		kit, err := offline.Open(ans.JWS, jwks, nil)
		if err != nil {
			t.Fatal(err)
		}
		sold := kit.Allowance.IssuedAt.UTC() // sold as the kit came
		till := offline.NewTill(kit)
		if err := till.Redeem("KIT-1", sold); err != nil {
			t.Fatal(err)
		}
		if err := till.Sell(client.TransactionRequest{TransactionID: "OFF-1", TerminalID: "TERM-05", PosLocationID: "LOC123",
			TransactionType: "Sale", TransactionAmount: 5, TransactionDate: sold, CouponCodes: []string{"KIT-1"}}); err != nil {
			t.Fatal(err)
		}
		mustCLI(t, env, with("coupon", "redeem", "KIT-1")...) // online, meanwhile
		if res, err := till.Replay(ctx, pos, "clover"); err != nil || len(res) != 1 || res[0].CreatedCount != 1 {
			t.Fatalf("replay: %+v %v", res, err)
		}
		out := mustCLI(t, env, with("coupon", "offline-conflicts")...)
		want := regexp.MustCompile(`^\S+Z coupon KIT-1 honoured for sale OFF-1 of ` + regexp.QuoteMeta(sold.Format(time.RFC3339)) +
			` at LOC123/TERM-05 under kit ` + regexp.QuoteMeta(kit.ID) + `: Coupon 'KIT-1' has already been redeemed.\n` +
			`page 1 \(50 per page\) of 1 offline conflicts\n$`)
		if !want.MatchString(out) {
			t.Fatalf("conflicts:\n%s", out)
		}
		var page struct {
			Conflicts []struct {
				Code, TransactionID string
			}
		}
		if err := json.Unmarshal([]byte(mustCLI(t, env, with("coupon", "offline-conflicts", "--output", "json")...)), &page); err != nil ||
			len(page.Conflicts) != 1 || page.Conflicts[0].Code != "KIT-1" || page.Conflicts[0].TransactionID != "OFF-1" {
			t.Fatalf("--output json: %+v %v", page, err)
		}
		mustFail(t, env, "pageSize: The pageSize parameter must be an integer from 1 to 500.", with("coupon", "offline-conflicts", "--page-size", "100000")...)
	})
}
