package storetest

import (
	"errors"
	"testing"

	"github.com/posgate/posgate"
)

// testImportLog: every committed import of promotions, products and
// categories leaves one log row, with its counts, times, who and channel
// (from the context); a rolled-back import leaves none; ListImports is
// newest first, per POS system, filtered by company and limited.
func testImportLog(t *testing.T, e *env) {
	ctx := t.Context()
	couponFixture(e)
	e.posSystem("pax")
	e.company("pax", "pco", posgate.AllFeaturesOn())

	cli := posgate.WithAuditOrigin(ctx, posgate.AuditOrigin{Channel: posgate.ChannelCLI})
	cli = posgate.WithImportMeta(cli, posgate.ImportMeta{ClientID: "ops", PersonID: "p-1", Failed: 2})
	at1 := e.clk.stamp()
	if c, u, err := e.s.ImportCategories(cli, "clover", "acme", func(map[string]string) ([]*posgate.Category, error) {
		return []*posgate.Category{{ID: "C1", Name: "Drinks"}, {ID: "C2", Name: "Food"}}, nil
	}); err != nil || c != 2 || u != 0 {
		t.Fatalf("ImportCategories: %d, %d, %v", c, u, err)
	}
	// A rolled-back import writes nothing.
	refused := errors.New("refused")
	if _, _, err := e.s.ImportCategories(cli, "clover", "acme", func(map[string]string) ([]*posgate.Category, error) {
		return nil, refused
	}); !errors.Is(err, refused) {
		t.Fatalf("refused ImportCategories: %v", err)
	}
	at2 := posgate.Timestamp(e.clk.advance())
	portal := posgate.WithAuditOrigin(ctx, posgate.AuditOrigin{Channel: posgate.ChannelPortal})
	portal = posgate.WithImportMeta(portal, posgate.ImportMeta{PersonID: "p-2"})
	if _, _, err := e.s.ImportProducts(portal, "clover", "acme", []*posgate.Product{{ID: "P1", Name: "Tea", CategoryID: "C1"}, {ID: "P2", Name: "Coffee", CategoryID: "C1"}}); err != nil {
		t.Fatal(err)
	}
	at3 := posgate.Timestamp(e.clk.advance())
	if _, _, err := e.s.ImportProducts(ctx, "clover", "acme", []*posgate.Product{{ID: "P1", Name: "Green tea", CategoryID: "C1"}, {ID: "P3", Name: "Cake", CategoryID: "C2"}}); err != nil {
		t.Fatal(err)
	}
	at4 := posgate.Timestamp(e.clk.advance())
	p := promo("Z", "Z1")
	accept(t, "zeta", []string{"Z1"}, p)
	e.importPromotions("clover", "zeta", 1, 0, p)
	at5 := posgate.Timestamp(e.clk.advance())
	e.importCategories("pax", "pco", 1, 0, &posgate.Category{ID: "X", Name: "Other POS"})

	all := []*posgate.ImportRecord{
		{POSSystemID: "clover", CompanyID: "zeta", Kind: posgate.ImportKindPromotions, Created: 1, StartedAt: at4, FinishedAt: at4, Channel: posgate.ChannelAPI},
		{POSSystemID: "clover", CompanyID: "acme", Kind: posgate.ImportKindProducts, Created: 1, Updated: 1, StartedAt: at3, FinishedAt: at3, Channel: posgate.ChannelAPI},
		{POSSystemID: "clover", CompanyID: "acme", Kind: posgate.ImportKindProducts, Created: 2, StartedAt: at2, FinishedAt: at2, PersonID: "p-2", Channel: posgate.ChannelPortal},
		{POSSystemID: "clover", CompanyID: "acme", Kind: posgate.ImportKindCategories, Created: 2, Failed: 2, StartedAt: at1, FinishedAt: at1, ClientID: "ops", PersonID: "p-1", Channel: posgate.ChannelCLI},
	}
	list := func(pos string, companies []string, limit int) []*posgate.ImportRecord {
		t.Helper()
		got, err := e.s.ListImports(ctx, pos, companies, limit)
		if err != nil {
			t.Fatalf("ListImports(%s, %v, %d): %v", pos, companies, limit, err)
		}
		prev := int64(-1)
		for _, r := range got {
			if r.Seq <= 0 || prev >= 0 && r.Seq >= prev {
				t.Fatalf("ListImports: seq %d not below the previous row's (%d)", r.Seq, prev)
			}
			prev, r.Seq = r.Seq, 0
		}
		return got
	}
	check(t, "the POS system's imports", list("clover", nil, 10), all)
	check(t, "limited", list("clover", nil, 2), all[:2])
	check(t, "one company", list("clover", []string{"acme"}, 10), all[1:])
	check(t, "companies", list("clover", []string{"zeta", "nope"}, 10), all[:1])
	check(t, "another POS system", list("pax", nil, 10), []*posgate.ImportRecord{
		{POSSystemID: "pax", CompanyID: "pco", Kind: posgate.ImportKindCategories, Created: 1, StartedAt: at5, FinishedAt: at5, Channel: posgate.ChannelAPI}})
	check(t, "an unknown POS system", len(list("nope", nil, 10)), 0)
}
