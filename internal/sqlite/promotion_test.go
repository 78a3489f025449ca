package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

// TestImportStepsAside checks that an import whose body keeps arriving
// gives SQLite's write lock back after its budget, lets other writes
// through, and still commits everything, all at once.
func TestImportStepsAside(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "posgate.db"), Options{})
	db.importStall = 50 * time.Millisecond
	for _, err := range []error{
		db.CreatePOSSystem(ctx, &posgate.POSSystem{ID: "clover"}),
		db.CreateCompany(ctx, &posgate.Company{POSSystemID: "clover", ID: "acme", Status: posgate.StatusActive}),
		db.CreateLocation(ctx, &posgate.Location{POSSystemID: "clover", ID: "L1", CompanyID: "acme", Status: posgate.StatusActive}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	checker := posgate.NewPromotionChecker("acme", []string{"L1"}, nil)
	row := 0
	add := func(imp posgate.PromotionImport, n int) {
		t.Helper()
		for range n {
			row++
			p := &posgate.Promotion{ID: fmt.Sprintf("P%04d", row), Name: "p", LocationIDs: []string{"L1"}}
			if !checker.Check(row, p) {
				t.Fatal("rejected")
			}
			if err := imp.Add(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	imp, err := db.BeginPromotionImport(ctx, "clover", "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer imp.Rollback()
	add(imp, 1500) // more than one of the writer's batches
	time.Sleep(200 * time.Millisecond)
	// The writer has stepped aside: another write goes through at once.
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := db.CreateLocation(wctx, &posgate.Location{POSSystemID: "clover", ID: "L2", CompanyID: "acme", Status: posgate.StatusActive}); err != nil {
		t.Fatalf("a write while the import's body arrives: %v", err)
	}
	if _, total, _ := db.ListPromotions(ctx, "clover", "acme", 0, 0); total != 0 {
		t.Fatalf("%d promotions visible before the commit", total)
	}
	add(imp, 700)
	created, updated, err := imp.Commit(ctx)
	if err != nil || created != 2200 || updated != 0 {
		t.Fatalf("Commit: %d, %d, %v", created, updated, err)
	}
	ps, err := db.ListPromotionsValidAt(ctx, "clover", "acme", "L1", time.Now())
	if err != nil || len(ps) != 2200 {
		t.Fatalf("valid at L1: %d, %v", len(ps), err)
	}
}
