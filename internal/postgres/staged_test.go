package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/postgres"
)

// TestStagedSaleRaces: sales with one transaction id that all found it free
// and then wait (here on their customer's row, which another connection
// holds) race to insert it once released. One is recorded; each other's
// staged insert fails on the taken key, its apply runs again and answers
// the first's answer as a duplicate; the points are added once.
func TestStagedSaleRaces(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := open(t, dsn, postgres.Options{})
	for _, err := range []error{
		db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "pos"}),
		db.CreateCompany(ctx, &posgate.Company{POSSystemID: "pos", ID: "co", Status: posgate.StatusActive}),
		db.CreateLoyaltyUser(ctx, &posgate.LoyaltyUser{POSSystemID: "pos", CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: "u1"}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	holder, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	hold, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(ctx, `SELECT 1 FROM loyalty_users WHERE user_id = 'u1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}

	const n = 4
	outs := make([]*posgate.TransactionOutcome, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := &posgate.TransactionInput{Row: 1, ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1),
				POSSystemID: "pos", CompanyID: "co", LocationID: "L1", TerminalID: "T1", TransactionID: "SAME",
				Type: posgate.TransactionSale, Amount: 1000, Date: time.Now().Add(-time.Minute), CardNumber: "u1", CouponsEnabled: true,
				RequestHash: "h", Request: json.RawMessage(`{"transactionId":"SAME"}`),
				Answer: posgate.TransactionAnswer{TransactionID: "SAME", TransactionType: posgate.TransactionSale, PosStatus: posgate.PosAccepted}}
			o, err := db.ApplyTransactions(ctx, []*posgate.TransactionInput{in})
			if err == nil {
				outs[i] = o[0]
			}
			errs[i] = err
		}()
	}
	// Every sale has checked the id (free) and waits for the customer.
	deadline := time.Now().Add(10 * time.Second)
	for {
		waiting := query[int64](t, dsn, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'`)
		if waiting[0] == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sales wait for the customer, want %d", waiting[0], n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("sale %d: %v", i, errs[i])
		}
		switch outs[i].Status {
		case posgate.OutcomeCreated:
			created++
		case posgate.OutcomeDuplicate:
		default:
			t.Fatalf("sale %d: %+v", i, outs[i])
		}
		if string(outs[i].Answer) != string(outs[0].Answer) {
			t.Fatalf("answers differ: %s / %s", outs[i].Answer, outs[0].Answer)
		}
	}
	u, err := db.FindLoyaltyUser(ctx, "pos", "co", "u1")
	if err != nil {
		t.Fatal(err)
	}
	if created != 1 || u.Points != 10 {
		t.Fatalf("created %d, points %d; want 1, 10", created, u.Points)
	}
}
