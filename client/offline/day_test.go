package offline_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/client/offline"
)

// TestOfflineDay is a till's day offline (docs/api.md §24): two terminals
// fetch their kits, lose the network, sell and redeem for a day of the
// server's clock while the operator redeems and cancels coupons online,
// come back and replay. The answers, the balances, the coupons and the
// conflicts are those docs/api.md §24.5 and §24.6 describe.
func TestOfflineDay(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := start(t, dsn)
		e.place()
		a := e.admin.Admin
		hook, err := a.CreateWebhookEndpoint(e.ctx, pos, company, client.CreateWebhookEndpointRequest{URL: "http://127.0.0.1:9/hook",
			EventTypes: []string{"coupon.offline_conflict"}})
		e.must(err)
		for _, code := range []string{"DAY-A", "DAY-B", "DAY-C"} {
			e.coupon(code, time.Time{})
		}
		e.coupon("DAY-E", t0.Add(3*time.Hour))
		_, err = a.CreateCoupon(e.ctx, pos, company, client.CreateCouponRequest{Code: "DAY-OWNED", UserID: userID})
		e.must(err)
		for i := 1; i <= 19; i++ {
			e.coupon(fmt.Sprintf("LIM-%02d", i), time.Time{})
		}

		// Online at T0: each till fetches its kit; asked again, the
		// kit is current (304), and a delta since it carries only the
		// allowance.
		kit1, ans1 := e.kit(locA, till1, nil)
		kit2, _ := e.kit(locA, till2, nil)
		if kit1.Allowance.MaxRedemptions != 20 || len(kit1.Allowance.Coupons) != 23 || kit1.Allowance.ExpiresAt != t0.Add(24*time.Hour) {
			t.Fatalf("allowance: %d redemptions, %d coupons, until %s", kit1.Allowance.MaxRedemptions, len(kit1.Allowance.Coupons), kit1.Allowance.ExpiresAt)
		}
		again, err := e.pos.GetOfflineKit(e.ctx, pos, locA, client.KitQuery{TerminalID: till1, IfNoneMatch: ans1.Version})
		e.must(err)
		if !again.NotModified || again.Version != ans1.Version || again.JWS != "" {
			t.Fatalf("If-None-Match with the kit's version: %+v", again)
		}
		delta, err := e.pos.GetOfflineKit(e.ctx, pos, locA, client.KitQuery{TerminalID: till1, Since: ans1.Version})
		e.must(err)
		jwks, err := e.pos.GetJWKS(e.ctx)
		e.must(err)
		if _, err := offline.Open(delta.JWS, jwks, nil); err == nil {
			t.Fatal("a delta opened without the kit it is a delta of")
		}
		payload := jwsPayload(t, delta.JWS)
		for _, section := range []string{"promotions", "catalogue", "loyalty"} {
			if string(payload[section]) != "null" {
				t.Fatalf("the delta carries %s: %s", section, payload[section])
			}
		}
		merged, err := offline.Open(delta.JWS, jwks, kit1)
		e.must(err)
		if merged.Since != kit1.Version || merged.Promotions != kit1.Promotions || merged.Allowance == nil {
			t.Fatalf("merged delta: since %q, promotions shared %v", merged.Since, merged.Promotions == kit1.Promotions)
		}

		// Offline for a day. T1 sells from kit1, T2 from kit2.
		t1, t2 := offline.NewTill(kit1), offline.NewTill(kit2)
		refused := func(till *offline.Till, code string, at time.Time, want string) {
			t.Helper()
			var r *offline.Refusal
			if err := till.Redeem(code, at); !errors.As(err, &r) || r.Reason != want {
				t.Fatalf("%s at %s: %v, want refused with %q", code, at.Format(time.Kitchen), err, want)
			}
		}
		redeem := func(till *offline.Till, at time.Time, codes ...string) []string {
			t.Helper()
			for _, c := range codes {
				if err := till.Redeem(c, at); err != nil {
					t.Fatalf("%s at %s: %v", c, at.Format(time.Kitchen), err)
				}
			}
			return codes
		}
		sale := func(id string, at time.Time, amount float64, card string, codes []string) client.TransactionRequest {
			r := client.TransactionRequest{TransactionID: id, TerminalID: till1, PosLocationID: locA, TransactionType: "Sale",
				TransactionAmount: amount, TransactionDate: at, CouponCodes: codes}
			if card != "" {
				r.Loyalty = &client.LoyaltyCard{CardNumber: card}
			}
			return r
		}
		at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

		e.must(t1.Sell(sale("S01", at(1), 25, userID, redeem(t1, at(1), "DAY-A"))))
		e.clock.Set(at(2))
		_, err = a.RedeemCoupon(e.ctx, pos, company, "DAY-A") // online, meanwhile
		e.must(err)
		e.clock.Set(at(3))
		_, err = a.CancelCoupon(e.ctx, pos, company, "DAY-B")
		e.must(err)
		e.must(t1.Sell(sale("S02", at(4), 10, "", redeem(t1, at(4), "DAY-B", "day-c"))))
		refused(t1, "DAY-E", at(5), "The coupon expired at "+at(3).Format(time.RFC3339)+".")
		refused(t1, "DAY-OWNED", at(5), "The coupon 'DAY-OWNED' is not in the offline allowance.")
		refused(t1, "NOPE", at(5), "The coupon 'NOPE' is not in the offline allowance.")
		refused(t1, "DAY-C", at(5), "The coupon has already been redeemed.")
		e.must(t1.Sell(sale("S03", at(5), 7.5, userID, nil)))
		for i := 1; i <= 17; i++ {
			when := at(5).Add(time.Duration(i) * 50 * time.Minute)
			e.must(t1.Sell(sale(fmt.Sprintf("S%02d", 3+i), when, 1, "", redeem(t1, when, fmt.Sprintf("LIM-%02d", i)))))
		}
		refused(t1, "LIM-18", at(21), "The offline allowance of 20 redemptions is used up.")
		if t1.Redemptions() != 20 {
			t.Fatalf("T1 redeemed %d coupons offline, want 20", t1.Redemptions())
		}
		t2Sale := sale("S90", at(8), 3, "", redeem(t2, at(8), "DAY-C"))
		t2Sale.TerminalID = till2
		e.must(t2.Sell(t2Sale))

		// Back online near the end of the day: T1 replays, then T2.
		e.clock.Set(at(23))
		sent1 := t1.Pending()
		res1, err := t1.Replay(e.ctx, e.pos, pos)
		e.must(err)
		if len(res1) != 1 || res1[0].Status != "Completed" || res1[0].CreatedCount != 20 || len(t1.Pending()) != 0 {
			t.Fatalf("T1's replay: %+v", res1)
		}
		redeemed := func(code string) []client.TransactionCoupon {
			return []client.TransactionCoupon{{Code: code, Status: "Redeemed"}}
		}
		want := map[string][]client.TransactionCoupon{
			"S01": redeemed("DAY-A"),                                                          // redeemed online meanwhile: honoured, a conflict
			"S02": {{Code: "DAY-B", Status: "Redeemed"}, {Code: "DAY-C", Status: "Redeemed"}}, // DAY-B cancelled meanwhile: a conflict; a code answered as the coupon spells it
			"S03": {},
		}
		for i := 1; i <= 17; i++ {
			want[fmt.Sprintf("S%02d", 3+i)] = redeemed(fmt.Sprintf("LIM-%02d", i))
		}
		for _, r := range res1[0].Results {
			if r.Status != "Created" || r.Data == nil || !reflect.DeepEqual(r.Data.Coupons, want[r.TransactionID]) {
				t.Fatalf("%s: %s %+v, want Created with coupons %+v", r.TransactionID, r.Status, r.Data, want[r.TransactionID])
			}
		}
		byID := map[string]client.BatchItemResult{}
		for _, r := range res1[0].Results {
			byID[r.TransactionID] = r
		}
		if l := byID["S01"].Data.Loyalty; l == nil || *l != (client.TransactionLoyalty{UserID: userID, PointsEarned: 25, StampsEarned: 1, Points: 25, Stamps: 1}) {
			t.Fatalf("S01's loyalty: %+v", l)
		}
		if l := byID["S03"].Data.Loyalty; l == nil || *l != (client.TransactionLoyalty{UserID: userID, PointsEarned: 7, StampsEarned: 1, Points: 32, Stamps: 2}) {
			t.Fatalf("S03's loyalty: %+v", l)
		}
		e.clock.Set(at(23).Add(time.Minute))
		res2s, err := t2.Replay(e.ctx, e.pos, pos)
		e.must(err)
		res2 := res2s[0]
		if r := res2.Results[0]; r.Status != "Created" || !reflect.DeepEqual(r.Data.Coupons, redeemed("DAY-C")) {
			t.Fatalf("T2's sale: %+v", r)
		}

		// The coupons: DAY-A stays the operator's redemption, DAY-B
		// cancelled, DAY-C the redemption of T1's sale, which replayed
		// first.
		for code, status := range map[string]string{"DAY-A": "Redeemed", "DAY-B": "Cancelled", "DAY-C": "Redeemed", "LIM-17": "Redeemed", "LIM-18": "Issued"} {
			c, err := a.GetCoupon(e.ctx, pos, company, code)
			e.must(err)
			if string(c.Status) != status {
				t.Fatalf("%s is %s, want %s", code, c.Status, status)
			}
			if code == "DAY-C" && (c.RedeemedBy == nil || c.RedeemedBy.TransactionID != "S02") {
				t.Fatalf("DAY-C redeemed by %+v, want S02", c.RedeemedBy)
			}
			if code == "DAY-A" && c.RedeemedBy != nil {
				t.Fatalf("DAY-A redeemed by %+v, want the operator's redemption", c.RedeemedBy)
			}
		}
		u, err := a.GetLoyaltyUser(e.ctx, pos, company, userID)
		e.must(err)
		if u.Points != 32 || u.Stamps != 2 {
			t.Fatalf("balances %d points, %d stamps; want 32, 2", u.Points, u.Stamps)
		}

		// The conflicts, newest recorded first, for the operator and as
		// webhook events.
		wantConflicts := []client.OfflineConflict{
			{KitID: kit2.ID, PosSystemID: pos, PosCompanyID: company, PosLocationID: locA, TerminalID: till2, TransactionID: "S90",
				Code: "DAY-C", Conflict: "Coupon 'DAY-C' has already been redeemed.", TransactionDate: at(8), RecordedAt: at(23).Add(time.Minute)},
			{KitID: kit1.ID, PosSystemID: pos, PosCompanyID: company, PosLocationID: locA, TerminalID: till1, TransactionID: "S01",
				Code: "DAY-A", Conflict: "Coupon 'DAY-A' has already been redeemed.", TransactionDate: at(1), RecordedAt: at(23)},
			{KitID: kit1.ID, PosSystemID: pos, PosCompanyID: company, PosLocationID: locA, TerminalID: till1, TransactionID: "S02",
				Code: "DAY-B", Conflict: "Coupon 'DAY-B' has been cancelled.", TransactionDate: at(4), RecordedAt: at(23)},
		}
		conflicts := func() []client.OfflineConflict {
			t.Helper()
			page, err := a.ListOfflineConflicts(e.ctx, pos, company, client.PageOptions{})
			e.must(err)
			if page.Page.Total != len(page.Conflicts) {
				t.Fatalf("total %d for %d conflicts", page.Page.Total, len(page.Conflicts))
			}
			return page.Conflicts
		}
		if got := conflicts(); !reflect.DeepEqual(got, wantConflicts) {
			t.Fatalf("conflicts:\n%+v\nwant\n%+v", got, wantConflicts)
		}
		deliveries, err := a.ListWebhookDeliveries(e.ctx, pos, company, hook.ID, client.DeliveryQuery{})
		e.must(err)
		if len(deliveries.Deliveries) != 3 {
			t.Fatalf("%d deliveries, want one coupon.offline_conflict per conflict", len(deliveries.Deliveries))
		}
		for _, d := range deliveries.Deliveries {
			if d.EventType != "coupon.offline_conflict" {
				t.Fatalf("delivery of %s", d.EventType)
			}
		}

		// The same replay again changes nothing: every sale a
		// Duplicate with its first answer, no new conflict.
		again1, err := e.pos.ReplayTransactions(e.ctx, pos, client.BatchRequest{Items: sent1})
		e.must(err)
		if again1.DuplicateCount != 20 || again1.CreatedCount != 0 {
			t.Fatalf("the replay again: %+v", again1)
		}
		if got := conflicts(); len(got) != 3 {
			t.Fatalf("%d conflicts after the replay again", len(got))
		}

		// A till that oversteps its allowance is not honoured: the
		// 21st coupon under kit1 (redeemed online since) is refused,
		// and so is a sale dated after the kit expired.
		e.clock.Set(at(25))
		for _, code := range []string{"LIM-18", "LIM-19"} {
			_, err = a.RedeemCoupon(e.ctx, pos, company, code)
			e.must(err)
		}
		forged := []client.TransactionRequest{sale("S98", at(21), 1, "", []string{"LIM-18"}), sale("S99", at(24).Add(30*time.Minute), 1, "", []string{"LIM-19"})}
		for i := range forged {
			forged[i].Offline = &client.OfflineRef{KitID: kit1.ID}
		}
		if msg := kit1.CheckCoupon("LIM-19", at(24).Add(30*time.Minute)); !strings.HasPrefix(msg, "The offline kit's allowance is valid from ") {
			t.Fatalf("an expired kit offline: %q", msg)
		}
		res3, err := e.pos.ReplayTransactions(e.ctx, pos, client.BatchRequest{Items: forged})
		e.must(err)
		for i, code := range []string{"LIM-18", "LIM-19"} {
			msg := "Coupon '" + code + "' has already been redeemed."
			if r := res3.Results[i]; r.Status != "Created" || !reflect.DeepEqual(r.Data.Coupons, []client.TransactionCoupon{{Code: code, Status: "Rejected", ErrorMessage: &msg}}) {
				t.Fatalf("%s beyond the allowance: %+v", r.TransactionID, r.Data)
			}
		}
		if got := conflicts(); len(got) != 3 {
			t.Fatalf("%d conflicts after sales beyond the allowance", len(got))
		}
	})
}

// jwsPayload decodes a compact JWS's payload, unverified.
func jwsPayload(t *testing.T, jws string) map[string]json.RawMessage {
	t.Helper()
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", jws)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
