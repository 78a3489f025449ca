package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// The audit log (posgate.AuditStore): entries come back as appended,
// newest first, filtered and limited to the reader's reach; Atomic makes a
// write of every kind commit or roll back with its entry.

// auditEntry is entry n of a fixed set: three places, two actors, two
// channels, before and after in every combination.
func auditEntry(n int, at time.Time, posSystemID, companyID string) *posgate.AuditEntry {
	e := &posgate.AuditEntry{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), Time: posgate.Timestamp(at),
		Actor:   posgate.AuditActor{Subject: "admin", Kind: posgate.ActorClient, ClientID: "admin"},
		Channel: posgate.ChannelAPI, Action: "company.update",
		Target: posgate.AuditTarget{Type: "company", ID: companyID, POSSystemID: posSystemID, CompanyID: companyID},
		Before: json.RawMessage(fmt.Sprintf(`{"name":"é \u003c%d\u003e","n":%d}`, n, n)), After: json.RawMessage(`null`),
		TraceID: fmt.Sprintf("trace-%d", n), UserAgent: "curl/8.5.0"}
	if n%2 == 0 {
		e.Actor = posgate.AuditActor{Subject: "posgate-cli", Kind: posgate.ActorLocal, ClientID: "posgate-cli"}
		e.Channel, e.Action, e.TraceID, e.UserAgent = posgate.ChannelCLI, "company.create", "", "posgate-cli"
		e.Before, e.After = json.RawMessage(`null`), json.RawMessage(`{"id":"x","list":[1,2]}`)
	}
	return e
}

func testAuditAppendList(t *testing.T, e *env) {
	ctx := t.Context()
	check(t, "ListAudit of an empty store", len(must[[]*posgate.AuditEntry](t, "ListAudit")(e.s.ListAudit(ctx, posgate.AuditQuery{Limit: 10}))), 0)
	places := [][2]string{{"clover", "acme"}, {"clover", "zeta"}, {"pax", "acme"}, {"", ""}}
	var all []*posgate.AuditEntry // newest first
	for n := 1; n <= 8; n++ {
		p := places[(n-1)%len(places)]
		en := auditEntry(n, e.clk.advance(), p[0], p[1])
		if p[0] == "" {
			en.Target = posgate.AuditTarget{Type: "client", ID: "c-" + fmt.Sprint(n)}
		}
		if n == 5 {
			en.Target = posgate.AuditTarget{Type: "terminal", ID: "L1/T1", POSSystemID: "clover", CompanyID: "acme", LocationID: "L1"}
		}
		if err := e.s.AppendAudit(ctx, en); err != nil {
			t.Fatalf("AppendAudit(%d): %v", n, err)
		}
		all = append([]*posgate.AuditEntry{en}, all...)
	}
	err := e.s.AppendAudit(ctx, auditEntry(1, e.clk.Now(), "clover", "acme"))
	checkErr(t, "AppendAudit of a known id", err, posgate.ErrConflict, `audit entry "00000000-0000-4000-8000-000000000001" already exists`)

	list := func(q posgate.AuditQuery) []*posgate.AuditEntry {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = 100
		}
		got := must[[]*posgate.AuditEntry](t, "ListAudit")(e.s.ListAudit(ctx, q))
		for i, g := range got {
			if g.Seq <= 0 || (i > 0 && g.Seq >= got[i-1].Seq) {
				t.Fatalf("ListAudit(%+v): entry %d has seq %d after %d: want positive, descending", q, i, g.Seq, got[max(i-1, 0)].Seq)
			}
		}
		return got
	}
	ids := func(es []*posgate.AuditEntry) []string {
		out := []string{}
		for _, x := range es {
			out = append(out, x.ID[len(x.ID)-1:])
		}
		return out
	}
	got := list(posgate.AuditQuery{})
	seqs := map[string]int64{}
	for _, g := range got {
		seqs[g.ID] = g.Seq
	}
	for i := range got {
		w := *all[i]
		w.Seq = got[i].Seq
		check(t, fmt.Sprintf("ListAudit entry %d", i), got[i], &w)
	}
	cases := []struct {
		name string
		q    posgate.AuditQuery
		want []string
	}{
		{"actor by subject", posgate.AuditQuery{Actor: "admin"}, []string{"7", "5", "3", "1"}},
		{"actor by client id", posgate.AuditQuery{Actor: "posgate-cli"}, []string{"8", "6", "4", "2"}},
		{"unknown actor", posgate.AuditQuery{Actor: "nobody"}, []string{}},
		{"action", posgate.AuditQuery{Action: "company.create"}, []string{"8", "6", "4", "2"}},
		{"target type", posgate.AuditQuery{TargetType: "client"}, []string{"8", "4"}},
		{"target id", posgate.AuditQuery{TargetType: "company", TargetID: "acme"}, []string{"7", "3", "1"}},
		{"location", posgate.AuditQuery{LocationID: "L1"}, []string{"5"}},
		{"POS system", posgate.AuditQuery{POSSystemID: "clover"}, []string{"6", "5", "2", "1"}},
		{"company", posgate.AuditQuery{POSSystemID: "clover", CompanyID: "zeta"}, []string{"6", "2"}},
		{"from", posgate.AuditQuery{From: all[2].Time}, []string{"8", "7", "6"}},
		{"to", posgate.AuditQuery{To: all[5].Time}, []string{"2", "1"}},
		{"from and to", posgate.AuditQuery{From: all[4].Time, To: all[2].Time}, []string{"5", "4"}},
		{"reach of a POS system", posgate.AuditQuery{ReachPOSSystemID: "pax"}, []string{"7", "3"}},
		{"reach of companies", posgate.AuditQuery{ReachPOSSystemID: "clover", ReachCompanyIDs: []string{"acme"}}, []string{"5", "1"}},
		{"reach of a location", posgate.AuditQuery{ReachPOSSystemID: "clover", ReachLocationIDs: []string{"L1"}}, []string{"5"}},
		{"reach of another location", posgate.AuditQuery{ReachPOSSystemID: "clover", ReachLocationIDs: []string{"L2"}}, []string{}},
		{"reach of a location in another POS system", posgate.AuditQuery{ReachPOSSystemID: "pax", ReachLocationIDs: []string{"L1"}}, []string{}},
		{"reach and a filter outside it", posgate.AuditQuery{ReachPOSSystemID: "clover", ReachCompanyIDs: []string{"acme"}, CompanyID: "zeta"}, []string{}},
		{"limit", posgate.AuditQuery{Limit: 3}, []string{"8", "7", "6"}},
		{"cursor", posgate.AuditQuery{BeforeSeq: seqs[all[2].ID], Limit: 2}, []string{"5", "4"}},
		{"cursor past the oldest", posgate.AuditQuery{BeforeSeq: seqs[all[7].ID]}, []string{}},
	}
	for _, c := range cases {
		check(t, "ListAudit("+c.name+")", ids(list(c.q)), c.want)
	}
}

// errRollBack makes Atomic roll back.
var errRollBack = errors.New("roll back")

func testAuditAtomic(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.terminal("clover", "A1", "T1")
	e.coupon(issued("C1"))
	n := 0
	entry := func() *posgate.AuditEntry {
		n++
		return auditEntry(n, e.clk.Now(), "clover", "acme")
	}
	count := func() int {
		return len(must[[]*posgate.AuditEntry](t, "ListAudit")(e.s.ListAudit(ctx, posgate.AuditQuery{Limit: 1000})))
	}
	// Each write, of every kind the stores have (a single statement, a
	// transaction of its own, a bulk import, the ledger's group commit,
	// a catalogue replacement), is rolled back with Atomic, then committed
	// with its entry; unchanged tells whether the write stayed.
	writes := []struct {
		name      string
		write     func(ctx context.Context) error
		unchanged func() bool
	}{
		{"CreateCompany", func(ctx context.Context) error {
			return e.s.CreateCompany(ctx, &posgate.Company{POSSystemID: "clover", ID: "new", Name: "New", Status: posgate.StatusActive})
		}, func() bool {
			_, err := e.s.FindCompany(ctx, "clover", "new")
			return errors.Is(err, posgate.ErrNotFound)
		}},
		{"UpdateCompany", func(ctx context.Context) error {
			_, err := e.s.UpdateCompany(ctx, "clover", "acme", posgate.CompanyUpdate{Name: ptr("Renamed")})
			return err
		}, func() bool {
			c, err := e.s.FindCompany(ctx, "clover", "acme")
			return err == nil && c.Name != "Renamed"
		}},
		{"CreateClient", func(ctx context.Context) error {
			return e.s.CreateClient(ctx, &posgate.Client{ID: "c1", Name: "C1", SecretHash: secret(1), POSSystemID: "clover",
				Scopes: []string{posgate.ScopePOSIntegration}, CompanyIDs: []string{"acme"}})
		}, func() bool { _, err := e.s.FindClient(ctx, "c1"); return errors.Is(err, posgate.ErrNotFound) }},
		{"ChangeCouponStatus", func(ctx context.Context) error {
			_, err := e.s.ChangeCouponStatus(ctx, "clover", "acme", "C1", posgate.CouponCancelled)
			return err
		}, func() bool {
			c, err := e.s.FindCoupon(ctx, "clover", "acme", "C1")
			return err == nil && c.Status == posgate.CouponIssued
		}},
		{"ImportCoupons", func(ctx context.Context) error {
			_, err := e.s.ImportCoupons(ctx, items(issued("I1"), issued("I2")))
			return err
		}, func() bool {
			_, err := e.s.FindCoupon(ctx, "clover", "acme", "I2")
			return errors.Is(err, posgate.ErrNotFound)
		}},
		{"UpdateLoyaltyUser", func(ctx context.Context) error {
			_, err := e.s.UpdateLoyaltyUser(ctx, "clover", "acme", "u1", posgate.LoyaltyUserUpdate{AddStamps: 5})
			return err
		}, func() bool {
			u, err := e.s.FindLoyaltyUser(ctx, "clover", "acme", "u1")
			return err == nil && u.Stamps == 3
		}},
		{"ReplaceCatalogue", func(ctx context.Context) error {
			return e.s.ReplaceCatalogue(ctx, &posgate.Catalogue{POSSystemID: "clover", CompanyID: "acme", CategoryIDs: []string{"k1"}, ProductIDs: []string{"p1"}})
		}, func() bool {
			c, err := e.s.FindCatalogue(ctx, "clover", "acme")
			return err == nil && len(c.ProductIDs) == 0
		}},
		{"ApplyTransactions", func(ctx context.Context) error {
			in := e.txInput(1, "R1", 500)
			in.ID = uid()
			out, err := e.s.ApplyTransactions(ctx, []*posgate.TransactionInput{in})
			if err == nil && out[0].Status != posgate.OutcomeCreated {
				err = fmt.Errorf("outcome %s: %v", out[0].Status, out[0].Err)
			}
			return err
		}, func() bool {
			_, err := e.s.FindTransaction(ctx, "clover", "acme", "R1")
			return errors.Is(err, posgate.ErrNotFound)
		}},
		{"CreateSigningKey", func(ctx context.Context) error {
			return e.s.CreateSigningKey(ctx, &posgate.SigningKey{ID: "k-audit", Algorithm: "ES256", PrivateKey: []byte("pk"), CreatedAt: e.clk.stamp()})
		}, func() bool {
			ks, err := e.s.ListSigningKeys(ctx)
			return err == nil && len(ks) == 0
		}},
	}
	for _, w := range writes {
		before := count()
		err := e.s.Atomic(ctx, func(ctx context.Context) error {
			if err := w.write(ctx); err != nil {
				t.Fatalf("%s inside Atomic: %v", w.name, err)
			}
			if err := e.s.AppendAudit(ctx, entry()); err != nil {
				t.Fatalf("AppendAudit after %s: %v", w.name, err)
			}
			return errRollBack
		})
		if !errors.Is(err, errRollBack) {
			t.Fatalf("Atomic(%s) rolled back: %v, want fn's error", w.name, err)
		}
		if !w.unchanged() || count() != before {
			t.Fatalf("%s: the write or its entry outlived the rollback (entries %d, were %d)", w.name, count(), before)
		}
		err = e.s.Atomic(ctx, func(ctx context.Context) error {
			if err := w.write(ctx); err != nil {
				return err
			}
			return e.s.AppendAudit(ctx, entry())
		})
		if err != nil {
			t.Fatalf("Atomic(%s): %v", w.name, err)
		}
		if w.unchanged() || count() != before+1 {
			t.Fatalf("%s: committed, but the write or its entry is missing (entries %d, were %d)", w.name, count(), before)
		}
	}

	// A nested Atomic joins the outer one: the outer's rollback takes the
	// inner's writes too.
	err := e.s.Atomic(ctx, func(ctx context.Context) error {
		if err := e.s.Atomic(ctx, func(ctx context.Context) error { return e.s.AppendAudit(ctx, entry()) }); err != nil {
			t.Fatalf("nested Atomic: %v", err)
		}
		return errRollBack
	})
	if !errors.Is(err, errRollBack) || count() != len(writes) {
		t.Fatalf("nested Atomic: %v, %d entries, want the outer error and %d", err, count(), len(writes))
	}
	// A store error inside fn comes back as it is, and rolls back.
	err = e.s.Atomic(ctx, func(ctx context.Context) error {
		if err := e.s.AppendAudit(ctx, entry()); err != nil {
			return err
		}
		return e.s.CreateCompany(ctx, &posgate.Company{POSSystemID: "clover", ID: "acme", Name: "Again", Status: posgate.StatusActive})
	})
	checkErr(t, "Atomic with a conflicting write", err, posgate.ErrConflict, `company "acme" already exists`)
	check(t, "entries after a failed write", count(), len(writes))
	// Writes beside Atomic go on after it (on SQLite the write connection
	// is free again).
	e.coupon(issued("AFTER"))
}
