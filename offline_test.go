package posgate_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
)

func TestKitCodeHash(t *testing.T) {
	const salt = "AAECAwQFBgcICQoLDA0ODw" // 16 bytes, base64url
	h := posgate.KitCodeHash(salt, "Sl75Ev")
	if len(h) != 22 || h != posgate.KitCodeHash(salt, "sl75ev") {
		t.Fatalf("hash %q: codes are matched without regard to case", h)
	}
	if h == posgate.KitCodeHash("DwAOAA0ADAALAAoACQAIAA", "Sl75Ev") {
		t.Fatal("two salts give one hash")
	}
	if h == posgate.KitCodeHash(salt, "Sl75Ew") {
		t.Fatal("two codes give one hash")
	}
}

func TestAllowanceVerdict(t *testing.T) {
	t0 := time.Date(2030, 6, 3, 7, 0, 0, 0, time.UTC)
	until := t0.Add(3 * time.Hour)
	a := &posgate.OfflineAllowance{Salt: "AAECAwQFBgcICQoLDA0ODw", IssuedAt: t0, ExpiresAt: t0.Add(24 * time.Hour)}
	for _, c := range []struct {
		code  string
		until *time.Time
	}{{"A", nil}, {"B", &until}, {"C", nil}} {
		a.Coupons = append(a.Coupons, posgate.AllowedCoupon{CodeHash: posgate.KitCodeHash(a.Salt, c.code), AvailableUntil: c.until})
	}
	slices.SortFunc(a.Coupons, func(x, y posgate.AllowedCoupon) int { return strings.Compare(x.CodeHash, y.CodeHash) })
	for _, c := range []struct {
		code string
		at   time.Time
		ok   bool
		msg  string
	}{
		{"a", t0.Add(time.Hour), true, ""},
		{"B", t0.Add(2 * time.Hour), true, ""},
		{"B", t0.Add(4 * time.Hour), true, "The coupon expired at 2030-06-03T10:00:00Z."},
		{"D", t0.Add(time.Hour), false, ""},
		{"A", t0.Add(-time.Second), false, ""},
		{"A", t0.Add(24 * time.Hour), true, ""},
		{"A", t0.Add(24*time.Hour + time.Second), false, ""},
	} {
		v, coupon, ok := a.Verdict(c.code, "L1", c.at)
		if ok != c.ok || (ok && posgate.CouponPreviewMessage(v, coupon, "L1") != c.msg) {
			t.Errorf("%s at %s: %v %v, want %v %q", c.code, c.at, v, ok, c.ok, c.msg)
		}
	}
}

func TestKitMerge(t *testing.T) {
	prev := &posgate.OfflineKit{Version: "v1", PosStatus: posgate.PosAccepted, Promotions: &posgate.KitPromotions{},
		Catalogue: &posgate.KitCatalogue{}, Loyalty: &posgate.KitLoyalty{}, Allowance: &posgate.OfflineAllowance{}}
	delta := &posgate.OfflineKit{Version: "v2", Since: "v1", PosStatus: posgate.PosAccepted, Allowance: &posgate.OfflineAllowance{}}
	if err := delta.Merge(prev); err != nil || delta.Promotions != prev.Promotions || delta.Loyalty != prev.Loyalty {
		t.Fatalf("merge: %v", err)
	}
	other := &posgate.OfflineKit{Version: "v3", Since: "v0", PosStatus: posgate.PosAccepted, Allowance: &posgate.OfflineAllowance{}}
	if err := other.Merge(prev); err == nil {
		t.Fatal("a delta of another kit merged")
	}
	lacking := &posgate.OfflineKit{Version: "v4", PosStatus: posgate.PosAccepted}
	if err := lacking.Merge(nil); err == nil {
		t.Fatal("a whole kit without its sections merged")
	}
}
