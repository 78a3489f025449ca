package postgres

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/storetest"
)

// TestTransactionListIndexes: the operator's transaction list reads the
// index of the filter it is given (storetest.TransactionListPlans), on its
// generic plan too, not the company's whole list.
func TestTransactionListIndexes(t *testing.T) {
	db, err := Open(t.Context(), pgtest.DSN(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// An empty table is read whole by any plan that may: only an index
	// the statement can use is chosen without sequential scans.
	if _, err := conn.Exec(t.Context(), `SET enable_seqscan = off; SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(t.Context(), `RESET enable_seqscan; RESET plan_cache_mode`)
	for _, c := range storetest.TransactionListPlans {
		q := c.Query
		q.POSSystemID, q.CompanyID, q.Limit = "clover", "acme", 50
		filter, args := transactionListFilter(q)
		rows, err := conn.Query(t.Context(), `EXPLAIN `+transactionPageSQL(filter, len(args)), append(args, q.Limit, q.Offset)...)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(plan, "\n"); !strings.Contains(got, " "+c.WantIndex+" ") {
			t.Errorf("%+v: plan\n%s\nwant %s", q, got, c.WantIndex)
		}
	}
}
