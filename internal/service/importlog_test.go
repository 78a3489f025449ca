package service_test

import (
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/service"
)

// TestImportLogReach: an import through the service logs who ran it and
// the items it failed; ListImports shows an unrestricted operator every
// import of the POS system, newest first, a company-restricted one its
// company's, and a location manager or another POS system's operator none.
func TestImportLogReach(t *testing.T) {
	now := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	svc := service.New(newServiceStore(t), service.Config{BaseURL: "http://posgate.test", Now: func() time.Time { return now }})
	ctx := t.Context()
	pos := &posgate.Principal{ClientID: "pos-x", Scopes: []string{posgate.ScopePOSIntegration}, POSSystemID: demo.POSSystemID}
	imp, err := svc.BeginProductImport(ctx, pos, demo.POSSystemID, "other")
	if err != nil {
		t.Fatal(err)
	}
	imp.Add(1, &posgate.ProductItem{ProductID: "X1", ProductName: "Tea"})
	imp.Add(2, &posgate.ProductItem{ProductID: "", ProductName: "no id"})
	if r, err := imp.Commit(ctx); err != nil || r.CreatedCount != 1 || len(r.Errors) != 1 {
		t.Fatalf("Commit: %+v, %v", r, err)
	}
	kinds := func(p *posgate.Principal) []string {
		t.Helper()
		list, err := svc.ListImports(ctx, p, demo.POSSystemID, 10)
		if err != nil {
			t.Fatalf("ListImports: %v", err)
		}
		out := []string{}
		for _, r := range list {
			out = append(out, r.CompanyID+" "+r.Kind)
		}
		return out
	}
	admin := &posgate.Principal{ClientID: "ops", Scopes: []string{posgate.ScopeAdmin}}
	want := []string{"other products", demo.CompanyID + " promotions", demo.CompanyID + " products", demo.CompanyID + " categories"}
	checkStrings(t, "unrestricted", kinds(admin), want)
	checkStrings(t, "restricted to other", kinds(&posgate.Principal{ClientID: "r", Scopes: []string{posgate.ScopeAdmin}, POSSystemID: demo.POSSystemID, CompanyIDs: []string{"other"}}), want[:1])
	checkStrings(t, "a location manager", kinds(&posgate.Principal{ClientID: "portal", PersonID: "m", Scopes: []string{posgate.ScopeAdmin},
		POSSystemID: demo.POSSystemID, LocationIDs: []string{"LOC123"}}), []string{})
	checkStrings(t, "another POS system", kinds(&posgate.Principal{ClientID: "p", Scopes: []string{posgate.ScopeAdmin}, POSSystemID: "pax"}), []string{})

	list, err := svc.ListImports(ctx, admin, demo.POSSystemID, 1)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListImports(1): %v, %v", list, err)
	}
	got := *list[0]
	// The times are the store's clock's (here the real one).
	if got.StartedAt.IsZero() || got.FinishedAt.Before(got.StartedAt) {
		t.Fatalf("the logged import's times: %v, %v", got.StartedAt, got.FinishedAt)
	}
	got.Seq, got.StartedAt, got.FinishedAt = 0, time.Time{}, time.Time{}
	if want := (posgate.ImportRecord{POSSystemID: demo.POSSystemID, CompanyID: "other", Kind: posgate.ImportKindProducts, Created: 1, Failed: 1,
		ClientID: "pos-x", Channel: posgate.ChannelAPI}); got != want {
		t.Fatalf("the logged import:\n got %+v\nwant %+v", got, want)
	}
	for _, limit := range []int{0, service.MaxImportLogSize + 1} {
		if _, err := svc.ListImports(ctx, admin, demo.POSSystemID, limit); posgate.ErrorCode(err) != posgate.EINVALID {
			t.Errorf("ListImports(limit %d): %v, want EINVALID", limit, err)
		}
	}
	if _, err := svc.ListImports(ctx, nil, demo.POSSystemID, 10); posgate.ErrorCode(err) != posgate.EUNAUTHORIZED {
		t.Errorf("ListImports(nil): %v, want EUNAUTHORIZED", err)
	}
	if _, err := svc.ListImports(ctx, pos, demo.POSSystemID, 10); posgate.ErrorCode(err) != posgate.EFORBIDDEN {
		t.Errorf("ListImports(a POS client): %v, want EFORBIDDEN", err)
	}
}

func checkStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}
}
