package postgres

import (
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/storetest"
)

// TestSearchThroughBuckets runs the keyword-search tests with a range
// limit of 3 rows, so that the suite's prefixes are read through their
// buckets too (at 2,000, few of its prefixes have that many rows).
func TestSearchThroughBuckets(t *testing.T) {
	defer func(n int) { rangeScanLimit = n }(rangeScanLimit)
	rangeScanLimit = 3
	storetest.RunLoyaltySearch(t, func(t *testing.T, now func() time.Time) posgate.Store {
		db, err := Open(t.Context(), pgtest.DSN(t), Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}
