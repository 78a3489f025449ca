package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/pgtest"
)

// TestTransactionListIndexes: the operator's transaction list reads the
// index of the filter it is given (a customer's, a location's, a day's
// transactions), on its generic plan too, not the company's whole list.
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
	day := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	next := day.Add(24 * time.Hour)
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
		var from, to *time.Time
		if c.day {
			from, to = &day, &next
		}
		filter, args := transactionListFilter(c.q, from, to)
		rows, err := conn.Query(t.Context(), `EXPLAIN `+transactionPageSQL(filter, len(args)), append(args, c.q.Limit, c.q.Offset)...)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(plan, "\n"); !strings.Contains(got, " "+c.wantIndex+" ") {
			t.Errorf("%+v (day %t): plan\n%s\nwant %s", c.q, c.day, got, c.wantIndex)
		}
	}
}
