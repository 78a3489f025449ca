package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/posgate/posgate/internal/storetest"
)

// BenchmarkSales measures concurrent single sales (storetest.BenchSales)
// at 64 callers on two cores, as the bench's transaction row sends them:
//
//	go test ./internal/sqlite -run '^$' -bench Sales -benchtime 3000x
func BenchmarkSales(b *testing.B) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "sales.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	storetest.BenchSales(b, db, 32)
}

// BenchmarkSalesWithWebhooks is BenchmarkSales with the three events of
// each sale delivered (storetest.BenchSalesWithWebhooks):
//
//	go test ./internal/sqlite -run '^$' -bench SalesWithWebhooks -benchtime 3000x
func BenchmarkSalesWithWebhooks(b *testing.B) {
	db, err := Open(b.Context(), filepath.Join(b.TempDir(), "sales.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	storetest.BenchSalesWithWebhooks(b, db, 32)
}
