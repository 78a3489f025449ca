package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// testTerminalEvents: the terminal channel's log (posgate.TerminalEventStore)
// gives increasing ids; a terminal reads the rows of its company that are
// company-wide, of its location or its own, after a cursor; a rolled-back
// append leaves nothing and takes no id a reader could have skipped; the
// retention deletes old rows and remembers the newest deleted id; the
// terminal customers are kept per terminal, the newest replacing the old.
func testTerminalEvents(t *testing.T, e *env) {
	ctx := t.Context()
	if last, deleted, err := e.s.TerminalEventHorizon(ctx); err != nil || last != 0 || deleted != 0 {
		t.Fatalf("empty horizon: %d, %d, %v", last, deleted, err)
	}
	at := e.clk.stamp()
	ev := func(company, loc, term, user, typ string) *posgate.TerminalEvent {
		return &posgate.TerminalEvent{POSSystemID: "clover", CompanyID: company, LocationID: loc, TerminalID: term, UserID: user,
			Type: typ, Data: []byte(`{"n":"` + company + loc + term + `"}`), Time: at}
	}
	evs := []*posgate.TerminalEvent{ev("acme", "", "", "", "SettingsChanged"), ev("acme", "S1", "", "", "SettingsChanged"),
		ev("acme", "S2", "", "", "SettingsChanged"), ev("acme", "S1", "T1", "", "TerminalDisabled"), ev("acme", "S1", "T2", "", "TerminalDisabled"),
		ev("other", "", "", "", "SettingsChanged"), ev("acme", "", "", "u1", "CouponIssued")}
	if err := e.s.AppendTerminalEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].ID <= evs[i-1].ID {
			t.Fatalf("ids not increasing: %d then %d", evs[i-1].ID, evs[i].ID)
		}
	}
	ids := func(got []*posgate.TerminalEvent, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, g := range got {
			s += fmt.Sprintf("%d ", g.ID)
		}
		return s
	}
	want := func(is ...int) string {
		s := ""
		for _, i := range is {
			s += fmt.Sprintf("%d ", evs[i].ID)
		}
		return s
	}
	if got := ids(e.s.TerminalEvents(ctx, "clover", "acme", "S1", "T1", 0, 100)); got != want(0, 1, 3, 6) {
		t.Fatalf("T1's events: %s, want %s", got, want(0, 1, 3, 6))
	}
	if got := ids(e.s.TerminalEvents(ctx, "clover", "acme", "S1", "T1", evs[1].ID, 1)); got != want(3) {
		t.Fatalf("T1's events after the second, one: %s, want %s", got, want(3))
	}
	if got := ids(e.s.TerminalEventsAfter(ctx, evs[4].ID, 100)); got != want(5, 6) {
		t.Fatalf("every event after the fifth: %s, want %s", got, want(5, 6))
	}
	all, err := e.s.TerminalEvents(ctx, "clover", "acme", "S1", "T1", evs[5].ID, 100)
	if err != nil || len(all) != 1 {
		t.Fatalf("the last: %v, %v", all, err)
	}
	if g := all[0]; g.UserID != "u1" || g.Type != "CouponIssued" || string(g.Data) != `{"n":"acme"}` || !g.Time.Equal(at) ||
		g.LocationID != "" || g.TerminalID != "" {
		t.Fatalf("the coupon event read back: %+v", g)
	}

	// A rolled-back append leaves nothing.
	refused := errors.New("refused")
	err = e.s.Atomic(ctx, func(ctx context.Context) error {
		if err := e.s.AppendTerminalEvents(ctx, []*posgate.TerminalEvent{ev("acme", "", "", "", "SettingsChanged")}); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Atomic: %v", err)
	}
	if got := ids(e.s.TerminalEventsAfter(ctx, evs[6].ID, 100)); got != "" {
		t.Fatalf("a rolled-back append left %s", got)
	}
	last, _, err := e.s.TerminalEventHorizon(ctx)
	if err != nil || last < evs[6].ID {
		t.Fatalf("horizon: %d, %v", last, err)
	}

	// Retention: the rows made before the cut go, and the horizon says
	// up to which id.
	later := posgate.Timestamp(e.clk.advance())
	newer := ev("acme", "", "", "", "SettingsChanged")
	newer.Time = later
	if err := e.s.AppendTerminalEvents(ctx, []*posgate.TerminalEvent{newer}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.s.DeleteTerminalEventsBefore(ctx, later); err != nil || n != int64(len(evs)) {
		t.Fatalf("DeleteTerminalEventsBefore: %d, %v", n, err)
	}
	if got := ids(e.s.TerminalEventsAfter(ctx, 0, 100)); got != fmt.Sprintf("%d ", newer.ID) {
		t.Fatalf("after the retention: %s", got)
	}
	if last, deleted, err := e.s.TerminalEventHorizon(ctx); err != nil || last != newer.ID || deleted != evs[6].ID {
		t.Fatalf("horizon after the retention: %d, %d, %v (want %d, %d)", last, deleted, err, newer.ID, evs[6].ID)
	}

	// Terminal customers.
	if _, err := e.s.FindTerminalCustomer(ctx, "clover", "S1", "T1"); posgate.ErrorCode(err) != posgate.ENOTFOUND {
		t.Fatalf("no customer: %v", err)
	}
	exp := posgate.Timestamp(at.Add(24 * time.Hour))
	for _, c := range []*posgate.TerminalCustomer{{POSSystemID: "clover", LocationID: "S1", TerminalID: "T1", SessionID: "s-1", UserID: "u1", ExpiresAt: exp},
		{POSSystemID: "clover", LocationID: "S1", TerminalID: "T1", SessionID: "s-2", UserID: "u2", ExpiresAt: exp.Add(time.Hour)},
		{POSSystemID: "clover", LocationID: "S1", TerminalID: "T2", SessionID: "s-3", UserID: "u3", ExpiresAt: exp}} {
		if err := e.s.SetTerminalCustomer(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	c, err := e.s.FindTerminalCustomer(ctx, "clover", "S1", "T1")
	if err != nil || c.SessionID != "s-2" || c.UserID != "u2" || !c.ExpiresAt.Equal(exp.Add(time.Hour)) || c.ExpiresAt.Location() != time.UTC {
		t.Fatalf("T1's customer: %+v, %v", c, err)
	}
}
