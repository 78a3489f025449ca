package storekit

import "testing"

func TestPageTotal(t *testing.T) {
	for _, c := range []struct {
		offset, limit, n, total int
		ok                      bool
	}{
		{0, 20, 0, 0, true},   // nothing found
		{0, 20, 3, 3, true},   // the only page
		{40, 20, 5, 45, true}, // the last page
		{0, 20, 20, 0, false}, // a full page: more may follow
		{20, 20, 0, 0, false}, // past the end: the rows before it are not counted
		{-5, 20, 2, 2, true},  // a negative offset reads from the start
	} {
		total, ok := PageTotal(c.offset, c.limit, c.n)
		if total != c.total || ok != c.ok {
			t.Errorf("PageTotal(%d, %d, %d) = %d, %v; want %d, %v", c.offset, c.limit, c.n, total, ok, c.total, c.ok)
		}
	}
}
