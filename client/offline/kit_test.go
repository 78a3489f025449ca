package offline_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/client/offline"
)

// problem requires err to be posgate's answer with status and detail.
func problem(t *testing.T, err error, status int, detail string) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) || e.StatusCode != status || e.Detail != detail {
		t.Fatalf("%v, want %d %q", err, status, detail)
	}
}

// TestKitRefusals: what a kit is not (docs/api.md §24.1, §24.2): another
// POS system's or an unknown place is refused, a disabled terminal gets a
// Disabled kit, the coupons switch empties the allowance, a tampered kit
// or a kit of an unknown key does not open, and a kit is no access token.
func TestKitRefusals(t *testing.T) {
	e := start(t, t.TempDir()+"/posgate.db")
	e.place()
	a := e.admin.Admin
	_, err := a.CreatePosSystem(e.ctx, client.CreatePosSystemRequest{ID: "pax"})
	e.must(err)
	_, err = a.CreateCompany(e.ctx, "pax", client.CreateCompanyRequest{PosCompanyID: "pax-co"})
	e.must(err)
	_, err = a.CreateLocation(e.ctx, "pax", client.CreateLocationRequest{PosLocationID: "PAX-1", PosCompanyID: "pax-co"})
	e.must(err)
	_, err = a.CreateTerminal(e.ctx, "pax", "PAX-1", client.CreateTerminalRequest{TerminalID: "T"})
	e.must(err)

	get := func(posSystem, loc, term string) error {
		_, err := e.pos.GetOfflineKit(e.ctx, posSystem, loc, client.KitQuery{TerminalID: term})
		return err
	}
	problem(t, get(pos, "PAX-1", "T"), http.StatusNotFound, "Location 'PAX-1' is not registered.")
	var ce *client.Error
	if err := get("pax", "PAX-1", "T"); !errors.As(err, &ce) || ce.StatusCode != http.StatusForbidden {
		t.Fatalf("another POS system's kit: %v, want 403", err)
	}
	problem(t, get(pos, locA, "NOPE"), http.StatusNotFound, "Terminal 'NOPE' is not registered at location 'KIT-A'.")
	if err := get(pos, locA, ""); !errors.As(err, &ce) || ce.StatusCode != http.StatusBadRequest || len(ce.Errors["terminalId"]) != 1 {
		t.Fatalf("no terminalId: %v", err)
	}
	_, err = e.pos.GetOfflineKit(e.ctx, pos, locA, client.KitQuery{TerminalID: till1, Since: "nope"})
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusBadRequest || len(ce.Errors["since"]) != 1 {
		t.Fatalf("a bad since: %v", err)
	}

	// A disabled terminal: a signed kit saying Disabled, nothing else.
	_, err = a.DisableTerminal(e.ctx, pos, locA, till2)
	e.must(err)
	disabled, ans := e.kit(locA, till2, nil)
	if disabled.PosStatus != "Disabled" || ans.Version != "disabled" || disabled.Allowance != nil || disabled.Promotions != nil {
		t.Fatalf("a disabled terminal's kit: %+v", disabled.OfflineKit)
	}
	if msg := disabled.CheckCoupon("X", t0); msg != "The offline kit has no allowance (posStatus Disabled)." {
		t.Fatalf("a disabled kit's coupon: %q", msg)
	}
	sale := client.TransactionRequest{TransactionID: "OFF-X", TerminalID: till2, PosLocationID: locA, TransactionType: "Sale",
		TransactionAmount: 1, TransactionDate: t0}
	if err := offline.NewTill(disabled).Sell(sale); err == nil || err.Error() != "The offline kit's place is disabled (posStatus Disabled): nothing would be recorded." {
		t.Fatalf("a disabled kit's sale: %v", err)
	}

	// The coupons switch off: no allowance to redeem from.
	e.coupon("SWITCH-1", t0.Add(48*time.Hour))
	off := false
	_, err = a.UpdateCompany(e.ctx, pos, company, client.UpdateCompanyRequest{Features: &client.FeaturesUpdate{Coupons: &off}})
	e.must(err)
	k, _ := e.kit(locA, till1, nil)
	if k.Allowance.MaxRedemptions != 0 || len(k.Allowance.Coupons) != 0 || k.Loyalty.CouponsEnabled {
		t.Fatalf("coupons off: %+v, %+v", k.Allowance, k.Loyalty)
	}
	if msg := k.CheckCoupon("SWITCH-1", t0); msg != "Coupons are switched off for this company." {
		t.Fatalf("coupons off offline: %q", msg)
	}

	// The transactions switch off: the till records no sale, as posgate
	// would not; on again, it does.
	_, err = a.UpdateCompany(e.ctx, pos, company, client.UpdateCompanyRequest{Features: &client.FeaturesUpdate{Transactions: &off}})
	e.must(err)
	k, _ = e.kit(locA, till1, nil)
	till := offline.NewTill(k)
	sale.TerminalID = till1
	if err := till.Sell(sale); err == nil || err.Error() != "Transactions are switched off for this company: nothing would be recorded." || len(till.Pending()) != 0 {
		t.Fatalf("transactions off offline: %v, %d pending", err, len(till.Pending()))
	}
	on := true
	_, err = a.UpdateCompany(e.ctx, pos, company, client.UpdateCompanyRequest{Features: &client.FeaturesUpdate{Transactions: &on}})
	e.must(err)
	k, _ = e.kit(locA, till1, nil)
	till.SetKit(k)
	if err := till.Sell(sale); err != nil || len(till.Pending()) != 1 {
		t.Fatalf("transactions on again: %v, %d pending", err, len(till.Pending()))
	}

	// Signature: a changed payload, or a JWKS without the kit's key.
	ans2, err := e.pos.GetOfflineKit(e.ctx, pos, locA, client.KitQuery{TerminalID: till1})
	e.must(err)
	jwks, err := e.pos.GetJWKS(e.ctx)
	e.must(err)
	parts := strings.Split(ans2.JWS, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	e.must(err)
	forged := strings.Replace(string(payload), `"maxRedemptions":0`, `"maxRedemptions":1000`, 1)
	if forged == string(payload) {
		t.Fatal("no maxRedemptions to forge")
	}
	parts[1] = base64.RawURLEncoding.EncodeToString([]byte(forged))
	if _, err := offline.Open(strings.Join(parts, "."), jwks, nil); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("a forged kit opened: %v", err)
	}
	if _, err := offline.Open(ans2.JWS, &client.JWKS{}, nil); err == nil || !strings.Contains(err.Error(), "has no key") {
		t.Fatalf("a kit opened without its key: %v", err)
	}
	if _, err := offline.Open(ans2.JWS, jwks, nil); err != nil {
		t.Fatal(err)
	}

	// A kit is signed by the token key, but is no access token.
	asToken, err := client.New(e.base, client.WithToken(ans2.JWS))
	e.must(err)
	_, err = asToken.GetSettings(e.ctx, pos, company)
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a kit as a bearer token: %v, want 401", err)
	}
}
