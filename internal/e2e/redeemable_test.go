package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCouponRedeemableSaleAndPreview drives the one coupon rule
// (posgate.Coupon.Redeemability, docs/api.md §5.4) through both of its
// callers with the same cases: the promotion evaluation's preview
// (§18.3) and a sale that redeems the coupon (§13.4). For every case both
// must give the verdict the rule documents, in their own words, and find
// the same loyalty user.
func TestCouponRedeemableSaleAndPreview(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		e := newTxEnv(t, dsn)
		// Two users sharing an e-mail: that e-mail matches no one.
		for _, u := range []string{`{"id":"twin-1","email":"twins@example.com"}`, `{"id":"twin-2","email":"twins@example.com"}`} {
			mustStatus(t, e.admin_("POST", "/loyalty-users", u), 201)
		}
		const (
			anonymous   = ``
			johnCard    = `,"loyalty":{"cardNumber":"john-doe"}`
			janeCard    = `,"loyalty":{"cardNumber":"jane-doe"}`
			johnByEmail = `,"customer":{"contacts":[{"email":"JOHN.DOE@example.com"}]}`
			janeByEmail = `,"customer":{"contacts":[{"type":"Email","value":"jane.doe@example.com"}]}`
			walkIn      = `,"customer":{"contacts":[{"email":"walk.in@example.com"}]}` // enrolled nowhere
			walkInCard  = `,"loyalty":{"cardNumber":"nobody"},"customer":{"contacts":[{"email":"Walk.In@example.com"}]}`
			stranger    = `,"customer":{"contacts":[{"email":"someone.else@example.com"},{"phone":"+1 555 000 1111"}]}`
			walkInPhone = `,"customer":{"contacts":[{"phone":"(555) 010-2030"}]}`
			twins       = `,"customer":{"contacts":[{"email":"twins@example.com"}]}`
		)
		cases := []struct {
			name     string
			coupon   string // the coupon's fields beyond its code; "" with demo set
			demo     string // a demo coupon's code instead of a new one
			customer string
			want     string
		}{
			{name: "nobody's coupon, anonymous sale", coupon: `{}`, customer: anonymous, want: "redeemable"},
			{name: "nobody's coupon, any customer", coupon: `{}`, customer: janeCard, want: "redeemable"},
			{name: "user's coupon, the user's card", coupon: `{"userId":"john-doe"}`, customer: johnCard, want: "redeemable"},
			{name: "user's coupon, the user matched by e-mail", coupon: `{"userId":"john-doe"}`, customer: johnByEmail, want: "redeemable"},
			{name: "user's coupon, another user's card", coupon: `{"userId":"john-doe"}`, customer: janeCard, want: "another customer"},
			{name: "user's coupon, nobody identified", coupon: `{"userId":"john-doe"}`, customer: anonymous, want: "needs customer"},
			{name: "user's coupon, a contact that matches no user", coupon: `{"userId":"john-doe"}`, customer: walkIn, want: "needs customer"},
			// A coupon held by a user is that user's alone: the owner e-mail it
			// also carries gives it to no one else.
			{name: "user's coupon with an e-mail, another user matched by that e-mail", coupon: `{"userId":"jane-doe","email":"john.doe@example.com"}`,
				customer: johnByEmail, want: "another customer"},
			{name: "user's coupon with an e-mail, another user's card with that e-mail", coupon: `{"userId":"jane-doe","email":"john.doe@example.com"}`,
				customer: johnCard, want: "another customer"},
			// An owner e-mail or phone without a user: whoever is known by it,
			// enrolled or not.
			{name: "e-mail-only coupon, a customer not enrolled with that e-mail", coupon: `{"email":"WALK.IN@example.com"}`, customer: walkIn, want: "redeemable"},
			{name: "e-mail-only coupon, an unknown card and that e-mail", coupon: `{"email":"walk.in@example.com"}`, customer: walkInCard, want: "redeemable"},
			{name: "e-mail-only coupon, a user's card with that e-mail", coupon: `{"email":"john.doe@example.com"}`, customer: johnCard, want: "redeemable"},
			{name: "e-mail-only coupon, an e-mail two users share", coupon: `{"email":"twins@example.com"}`, customer: twins, want: "redeemable"},
			{name: "e-mail-only coupon, another customer", coupon: `{"email":"walk.in@example.com"}`, customer: stranger, want: "another customer"},
			{name: "e-mail-only coupon, nobody identified", coupon: `{"email":"walk.in@example.com"}`, customer: anonymous, want: "needs customer"},
			{name: "phone-only coupon, the user matched by e-mail whose phone it is", coupon: `{"phone":"15555559876"}`, customer: janeByEmail, want: "redeemable"},
			{name: "phone-only coupon, that phone in another format", coupon: `{"phone":"555-010-2030"}`, customer: walkInPhone, want: "redeemable"},
			{name: "phone-only coupon, another user's card", coupon: `{"phone":"15555559876"}`, customer: johnCard, want: "another customer"},
			{name: "coupon of another location", coupon: `{"locationIds":["LOC456"]}`, customer: anonymous, want: "not here"},
			{name: "redeemed", demo: "FREECOFFEE1", customer: johnCard, want: "redeemed"},
			{name: "cancelled", demo: "5OFFcx21pq", customer: johnCard, want: "cancelled"},
			{name: "expired", demo: "SUMMER24", customer: johnCard, want: "expired"},
		}
		for i, tc := range cases {
			code := tc.demo
			if code == "" {
				code = fmt.Sprintf("RULE-%02d", i)
				body := `{"code":"` + code + `",` + strings.TrimPrefix(tc.coupon, "{")
				if tc.coupon == `{}` {
					body = `{"code":"` + code + `"}`
				}
				mustStatus(t, e.s.call(t, e.admin, "POST", companyPath+"/coupons", body), 201)
			}
			// The preview first: it changes nothing.
			r := e.s.pos(t, e.pos, "/v2/pos/clover/promotions/evaluate",
				`{"posLocationId":"LOC123","couponCodes":["`+code+`"]`+tc.customer+`}`)
			mustStatus(t, r, 200)
			var ev struct {
				Data struct {
					Coupons []struct {
						Redeemable   bool
						ErrorMessage *string
					}
					Loyalty *struct{ UserID string }
				}
			}
			if err := json.Unmarshal(r.Body, &ev); err != nil || len(ev.Data.Coupons) != 1 {
				t.Fatalf("%s: preview: %s", tc.name, r.Body)
			}
			preview := previewVerdict(code, ev.Data.Coupons[0].Redeemable, ev.Data.Coupons[0].ErrorMessage)
			// The sale, with the same customer.
			r = e.sale(`{"sessionId":"` + e.session("TERM-05") + `","transactionId":"RULE-SALE-` + fmt.Sprint(i) + `","terminalId":"TERM-05",` +
				`"posLocationId":"LOC123","transactionAmount":5,"transactionDate":"` + e.date(0) + `","couponCodes":["` + code + `"]` + tc.customer + `}`)
			mustStatus(t, r, 200)
			var tx struct {
				Data struct {
					Coupons []struct {
						Status       string
						ErrorMessage *string
					}
					Loyalty *struct{ UserID string }
				}
			}
			if err := json.Unmarshal(r.Body, &tx); err != nil || len(tx.Data.Coupons) != 1 {
				t.Fatalf("%s: sale: %s", tc.name, r.Body)
			}
			sale := saleVerdict(code, tx.Data.Coupons[0].Status, tx.Data.Coupons[0].ErrorMessage)
			if preview != sale || sale != tc.want {
				t.Errorf("%s: preview %q, sale %q; want both %q", tc.name, preview, sale, tc.want)
			}
			// The same customer too (posgate.MatchCustomer).
			if user := func(l *struct{ UserID string }) string {
				if l == nil {
					return "no one"
				}
				return l.UserID
			}; user(ev.Data.Loyalty) != user(tx.Data.Loyalty) {
				t.Errorf("%s: the preview's customer is %s, the sale's %s", tc.name, user(ev.Data.Loyalty), user(tx.Data.Loyalty))
			}
		}
	})
}

// previewVerdict and saleVerdict name a coupon's verdict from the words of
// the preview (docs/api.md §18.3) and of a sale (§13.4); any other message
// is a verdict of its own, so that it cannot pass for a known one.
func previewVerdict(code string, redeemable bool, msg *string) string {
	if redeemable && msg == nil {
		return "redeemable"
	}
	if msg == nil {
		return "refused without a message"
	}
	for verdict, m := range map[string]string{
		"redeemed":         "The coupon has already been redeemed.",
		"cancelled":        "The coupon has been cancelled.",
		"not here":         "The coupon cannot be used at location 'LOC123'.",
		"needs customer":   "The coupon belongs to a loyalty customer; name the customer to use it.",
		"another customer": "The coupon belongs to another customer.",
	} {
		if *msg == m {
			return verdict
		}
	}
	if strings.HasPrefix(*msg, "The coupon expired at ") {
		return "expired"
	}
	return "preview: " + *msg
}

func saleVerdict(code, status string, msg *string) string {
	if status == "Redeemed" && msg == nil {
		return "redeemable"
	}
	if status != "Rejected" || msg == nil {
		return "sale status " + status
	}
	for verdict, m := range map[string]string{
		"redeemed":         "Coupon '%s' has already been redeemed.",
		"cancelled":        "Coupon '%s' has been cancelled.",
		"not here":         "Coupon '%s' cannot be used at location 'LOC123'.",
		"needs customer":   "Coupon '%s' belongs to a loyalty customer; identify the customer to redeem it.",
		"another customer": "Coupon '%s' belongs to another customer.",
	} {
		if *msg == fmt.Sprintf(m, code) {
			return verdict
		}
	}
	if strings.HasPrefix(*msg, fmt.Sprintf("Coupon '%s' expired at ", code)) {
		return "expired"
	}
	return "sale: " + *msg
}
