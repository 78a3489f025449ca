package postgres

import (
	"testing"

	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/storetest"
)

// BenchmarkSales measures concurrent single sales (storetest.BenchSales)
// at 64 callers on two cores, as the bench's transaction row sends them,
// in a schema of its own in POSGATE_TEST_POSTGRES_DSN:
//
//	go test ./internal/postgres -run '^$' -bench Sales -benchtime 3000x
func BenchmarkSales(b *testing.B) {
	db, err := Open(b.Context(), pgtest.DSN(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	storetest.BenchSales(b, db, 32)
}
