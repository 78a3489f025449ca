package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/webhook"
	"github.com/posgate/posgate/internal/webhook/endpoint"
)

// Sales benchmark data (BenchSales): one company of the POS system
// LedgerBenchPOS with LedgerBenchUsers loyalty users, and a coupon held by
// nobody for every sale, as the bench's transaction row makes them.
const (
	LedgerBenchPOS   = "ledger"
	LedgerBenchUsers = 1000
)

// BenchSales measures distinct single sales (a loyalty card and one
// coupon each) recorded by concurrent callers through ApplyTransactions,
// the store's part of POST /pos/{posSystemId}/transaction. It reports the
// process's CPU time per sale (cpu-µs/op) beside the wall time, since the
// CPU a sale costs is what bounds a loaded instance. parallelism
// multiplies GOMAXPROCS into the number of callers (the bench's 64
// connections on two cores: 32).
func BenchSales(b *testing.B, st posgate.Store, parallelism int) {
	benchSales(b, st, parallelism, false)
}

// BenchSalesWithWebhooks is BenchSales with an endpoint of the company
// subscribed to the three events a sale writes, a webhook.Sender delivering
// them to a receiver in this process, and each run waiting until every
// event arrived: cpu-µs/op is a sale's and its three deliveries' (the
// receiver's included).
func BenchSalesWithWebhooks(b *testing.B, st posgate.Store, parallelism int) {
	benchSales(b, st, parallelism, true)
}

func benchSales(b *testing.B, st posgate.Store, parallelism int, hooks bool) {
	ctx := b.Context()
	for _, err := range []error{
		st.CreatePOSSystem(ctx, &posgate.POSSystem{ID: LedgerBenchPOS, Name: "Ledger"}),
		st.CreateCompany(ctx, &posgate.Company{POSSystemID: LedgerBenchPOS, ID: "co", Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()}),
		st.CreateLocation(ctx, &posgate.Location{POSSystemID: LedgerBenchPOS, ID: "L1", CompanyID: "co", Status: posgate.StatusActive}),
		st.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: LedgerBenchPOS, LocationID: "L1", ID: "T1", Status: posgate.StatusActive}),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	_, err := st.ImportLoyaltyUsers(ctx, func(yield func(*posgate.LoyaltyUser, error) bool) {
		for i := range LedgerBenchUsers {
			if !yield(&posgate.LoyaltyUser{POSSystemID: LedgerBenchPOS, CompanyID: "co", LoyaltyCard: posgate.LoyaltyCard{ID: fmt.Sprintf("u%04d", i)}}, nil) {
				return
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	var received atomic.Int64
	if hooks {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			received.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}))
		b.Cleanup(srv.Close)
		if err := st.CreateWebhookEndpoint(ctx, &posgate.WebhookEndpoint{ID: "wh_bench", POSSystemID: LedgerBenchPOS, CompanyID: "co",
			URL: srv.URL, Enabled: true, Secret: endpoint.NewSecret(),
			EventTypes: []string{posgate.EventCouponRedeemed, posgate.EventLoyaltyBalanceChanged, posgate.EventTransactionRecorded}}); err != nil {
			b.Fatal(err)
		}
		sender := webhook.New(webhook.Config{Store: st, AllowLoopback: true})
		st.NotifyWebhooks(sender.Notify)
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { sender.Run(sctx); close(done) }()
		b.Cleanup(func() { stop(); <-done; st.NotifyWebhooks(nil) })
	}
	run, delivered := 0, int64(0)
	b.Run("sale", func(b *testing.B) {
		run++
		prefix := fmt.Sprintf("r%d-", run)
		_, err := st.ImportCoupons(ctx, func(yield func(*posgate.Coupon, error) bool) {
			for i := range b.N {
				if !yield(&posgate.Coupon{POSSystemID: LedgerBenchPOS, CompanyID: "co", Code: fmt.Sprintf("%sC%d", prefix, i)}, nil) {
					return
				}
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		var next, redeemed atomic.Int64
		b.SetParallelism(parallelism)
		cpu := cpuTime()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := next.Add(1) - 1
				id := fmt.Sprintf("%sT%d", prefix, i)
				in := &posgate.TransactionInput{Row: 1, ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", run*100_000_000+int(i)),
					POSSystemID: LedgerBenchPOS, CompanyID: "co", LocationID: "L1", TerminalID: "T1", TransactionID: id,
					Type: posgate.TransactionSale, Amount: 2500, Date: time.Now().Add(-time.Minute),
					CardNumber: fmt.Sprintf("u%04d", i%LedgerBenchUsers), CouponCodes: []string{fmt.Sprintf("%sC%d", prefix, i)}, CouponsEnabled: true,
					RequestHash: "h-" + id, Request: json.RawMessage(`{"transactionId":"` + id + `"}`),
					Answer: posgate.TransactionAnswer{TransactionID: id, TransactionType: posgate.TransactionSale, PosStatus: posgate.PosAccepted}}
				out, err := st.ApplyTransactions(ctx, []*posgate.TransactionInput{in})
				if err != nil {
					b.Error(err)
					return
				}
				if out[0].Status != posgate.OutcomeCreated {
					b.Errorf("sale %s: %+v", id, out[0])
					return
				}
				redeemed.Add(1)
			}
		})
		if hooks {
			// Every sale's three events delivered: the sender's work is the
			// sale's too.
			for deadline := time.Now().Add(time.Minute); received.Load() < delivered+3*int64(b.N); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d events delivered within a minute", received.Load()-delivered, 3*b.N)
				}
			}
			delivered += 3 * int64(b.N)
		}
		b.StopTimer()
		b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		if redeemed.Load() != int64(b.N) {
			b.Fatalf("%d sales recorded, want %d", redeemed.Load(), b.N)
		}
	})
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
