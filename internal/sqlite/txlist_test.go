package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// TestTransactionListIndexes: the operator's transaction list reads the
// index of the filter it is given (a customer's, a location's, a day's
// transactions), not the company's whole list.
func TestTransactionListIndexes(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "posgate.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	day := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	from, to := formatTime(day), formatTime(day.Add(24*time.Hour))
	for _, c := range []struct {
		q         posgate.TransactionQuery
		day       bool
		wantIndex string
	}{
		{posgate.TransactionQuery{UserID: "u1"}, false, "transactions_by_user"},
		{posgate.TransactionQuery{UserID: "u1"}, true, "transactions_by_user"},
		{posgate.TransactionQuery{LocationID: "L1"}, false, "transactions_by_location"},
		{posgate.TransactionQuery{LocationID: "L1"}, true, "transactions_by_location"},
		{posgate.TransactionQuery{}, true, "transactions_by_date"},
	} {
		c.q.POSSystemID, c.q.CompanyID, c.q.Limit = "clover", "acme", 50
		f, u := "", ""
		if c.day {
			f, u = from, to
		}
		where, args := transactionListWhere(c.q, f, u)
		rows, err := db.read.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+transactionPageSQL(where), append(args, c.q.Limit, c.q.Offset)...)
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
		if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX "+c.wantIndex+" ") {
			t.Errorf("%+v (day %t): plan %q, want %s", c.q, c.day, got, c.wantIndex)
		}
	}
}
