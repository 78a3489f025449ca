package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/posgate/posgate/internal/storetest"
)

// TestTransactionListIndexes: the operator's transaction list reads the
// index of the filter it is given (storetest.TransactionListPlans), not
// the company's whole list.
func TestTransactionListIndexes(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "posgate.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range storetest.TransactionListPlans {
		q := c.Query
		q.POSSystemID, q.CompanyID, q.Limit = "clover", "acme", 50
		where, args := transactionListWhere(q)
		rows, err := db.read.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+transactionPageSQL(where), append(args, q.Limit, q.Offset)...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX "+c.WantIndex+" ") {
			t.Errorf("%+v: plan %q, want %s", q, got, c.WantIndex)
		}
	}
}
