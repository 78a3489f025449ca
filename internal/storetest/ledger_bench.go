package storetest

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/posgate/posgate"
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
	run := 0
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
