package demo_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/sqlite"
)

// TestLoadPromotionsTwice loads the demo data set twice, the second time
// after the operator changed the catalogue and a promotion: nothing changes.
func TestLoadPromotionsTwice(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "demo.db"), sqlite.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := demo.Load(ctx, st); err != nil {
		t.Fatal(err)
	}
	first, total, err := st.ListPromotions(ctx, demo.POSSystemID, demo.CompanyID, 0, 0)
	if err != nil || total != 3 {
		t.Fatalf("demo promotions: %d, %v", total, err)
	}
	at := time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC) // a Saturday morning
	valid, err := st.ListPromotionsValidAt(ctx, demo.POSSystemID, demo.CompanyID, "LOC123", at)
	if err != nil || len(valid) != 2 || valid[0].ID != "DEMO-COFFEE-2OFF" || valid[1].ID != "DEMO-WEEKEND-BREAKFAST" {
		t.Fatalf("valid at LOC123 on a Saturday morning: %v %v", valid, err)
	}
	changed := &posgate.Catalogue{POSSystemID: demo.POSSystemID, CompanyID: demo.CompanyID, CategoryIDs: []string{"MINE"}, ProductIDs: []string{}}
	if err := st.ReplaceCatalogue(ctx, changed); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if err := demo.Load(ctx, st); err != nil {
		t.Fatal(err)
	}
	second, _, err := st.ListPromotions(ctx, demo.POSSystemID, demo.CompanyID, 0, 0)
	if err != nil || !reflect.DeepEqual(first, second) {
		t.Fatalf("promotions changed by a second load:\n%v\n%v", first, second)
	}
	if cat, err := st.FindCatalogue(ctx, demo.POSSystemID, demo.CompanyID); err != nil || !reflect.DeepEqual(cat, changed) {
		t.Fatalf("the operator's catalogue was replaced: %+v %v", cat, err)
	}
}
