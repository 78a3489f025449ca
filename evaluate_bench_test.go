package posgate_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/benchkeys"
)

// BenchmarkEvaluate evaluates the benchmark's 20-line baskets against its
// 10,000 promotions (benchkeys.EvalPromotion, the evaluate row of go run
// ./bench); it reports the index's live heap too, which every instance
// holds per company while the company is evaluated.
func BenchmarkEvaluate(b *testing.B) {
	var cats []*posgate.Category
	for top := range 10 {
		cats = append(cats, &posgate.Category{ID: fmt.Sprintf("CAT-%d", top)})
		for child := range 5 {
			cats = append(cats, &posgate.Category{ID: fmt.Sprintf("CAT-%d-%d", top, child), ParentID: fmt.Sprintf("CAT-%d", top)})
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	promos := make([]*posgate.Promotion, benchkeys.EvalPromotions)
	for i := range promos {
		promos[i] = benchkeys.EvalPromotion(i)
	}
	ix := posgate.NewPromotionIndex(promos, cats)
	promos = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	at := time.Date(2030, 7, 6, 9, 0, 0, 0, time.UTC)
	var baskets [][]posgate.BasketLine
	for a := range benchkeys.EvalFamilies {
		var lines []posgate.BasketLine
		for k := range benchkeys.EvalLines {
			l := posgate.BasketLine{ProductID: fmt.Sprintf("P-%d-%02d", a, k), Quantity: int64(1+k%3) * 1000, UnitPrice: posgate.MinorUnits(125 + 100*(k%9))}
			if k%2 == 0 {
				l.Category = fmt.Sprintf("CAT-%d-%d", a%10, k%5)
			}
			lines = append(lines, l)
		}
		baskets = append(baskets, lines)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := ix.Evaluate(benchkeys.EvalLocation(i), at, baskets[i%len(baskets)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "index-MiB")
	runtime.KeepAlive(ix)
}
