package e2e

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
)

// adminRoute is one operator route the client has: pattern's "*" are path
// parameters, handed to call in order.
type adminRoute struct {
	method, pattern string
	call            func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (err error, ok bool)
}

// routeBare is a route without body or query.
func routeBare(fn func(ctx context.Context, a *client.Admin, p []string) error) func(context.Context, *client.Admin, []string, url.Values, string) (error, bool) {
	return func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		if body != "" || len(q) > 0 {
			return nil, false
		}
		return fn(ctx, a, p), true
	}
}

// routeBody is a route taking a JSON body the client's T holds exactly.
func routeBody[T any](fn func(ctx context.Context, a *client.Admin, p []string, v T) error) func(context.Context, *client.Admin, []string, url.Values, string) (error, bool) {
	return func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		v, ok := decodeFor[T](ctx, body)
		if !ok || len(q) > 0 {
			return nil, false
		}
		return fn(ctx, a, p, v), true
	}
}

// errOf drops a call's result: the routes only need its error (the answer
// is recorded).
func errOf[T any](_ T, err error) error { return err }

const (
	adminCo  = "/admin/v1/pos-systems/*/companies/*"
	adminLoc = "/admin/v1/pos-systems/*/locations/*"
)

// adminRoutes are the operator routes the tests' JSON helpers send through
// the client (queries only where the client's options carry them whole).
var adminRoutes = []adminRoute{
	{"POST", "/admin/v1/pos-systems", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreatePosSystemRequest) error {
		return errOf(a.CreatePosSystem(ctx, v))
	})},
	{"GET", "/admin/v1/pos-systems", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.ListPosSystems(ctx)) })},
	{"GET", "/admin/v1/pos-systems/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.GetPosSystem(ctx, p[0])) })},
	{"POST", "/admin/v1/pos-systems/*/companies", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreateCompanyRequest) error {
		return errOf(a.CreateCompany(ctx, p[0], v))
	})},
	{"GET", "/admin/v1/pos-systems/*/companies", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.ListCompanies(ctx, p[0])) })},
	{"GET", adminCo, routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetCompany(ctx, p[0], p[1]))
	})},
	{"PATCH", adminCo, routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.UpdateCompanyRequest) error {
		return errOf(a.UpdateCompany(ctx, p[0], p[1], v))
	})},
	{"POST", "/admin/v1/pos-systems/*/locations", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreateLocationRequest) error {
		return errOf(a.CreateLocation(ctx, p[0], v))
	})},
	{"GET", adminLoc, routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetLocation(ctx, p[0], p[1]))
	})},
	{"PATCH", adminLoc, routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.UpdateLocationRequest) error {
		return errOf(a.UpdateLocation(ctx, p[0], p[1], v))
	})},
	{"POST", adminLoc + "/terminals", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreateTerminalRequest) error {
		return errOf(a.CreateTerminal(ctx, p[0], p[1], v))
	})},
	{"GET", adminLoc + "/terminals", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.ListTerminals(ctx, p[0], p[1]))
	})},
	{"GET", adminLoc + "/terminals/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetTerminal(ctx, p[0], p[1], p[2]))
	})},
	{"POST", adminLoc + "/terminals/*/disable", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.DisableTerminal(ctx, p[0], p[1], p[2]))
	})},
	{"POST", adminLoc + "/terminals/*/enable", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.EnableTerminal(ctx, p[0], p[1], p[2]))
	})},
	{"POST", "/admin/v1/clients", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreateAPIClientRequest) error {
		return errOf(a.CreateClient(ctx, v))
	})},
	{"GET", "/admin/v1/clients", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.ListClients(ctx)) })},
	{"GET", "/admin/v1/clients/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.GetClient(ctx, p[0])) })},
	{"POST", "/admin/v1/clients/*/rotate-secret", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.RotateClientSecret(ctx, p[0]))
	})},
	{"POST", "/admin/v1/clients/*/disable", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.DisableClient(ctx, p[0])) })},
	{"POST", "/admin/v1/clients/*/enable", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.EnableClient(ctx, p[0])) })},
	{"PUT", "/admin/v1/clients/*/rate-limit", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.RateLimit) error {
		return errOf(a.PutClientRateLimit(ctx, p[0], v))
	})},
	{"PUT", "/admin/v1/clients/*/redirect-uris", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.PutClientRedirectURIsRequest) error {
		return errOf(a.PutClientRedirectURIs(ctx, p[0], v))
	})},
	{"DELETE", "/admin/v1/clients/*/rate-limit", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.DeleteClientRateLimit(ctx, p[0]))
	})},
	{"GET", "/admin/v1/keys", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.ListSigningKeys(ctx)) })},
	{"POST", "/admin/v1/keys/rotate", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.RotateSigningKey(ctx)) })},
	{"GET", "/admin/v1/sessions/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.GetSession(ctx, p[0])) })},
	{"GET", adminCo + "/promotions/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetPromotion(ctx, p[0], p[1], p[2]))
	})},
	{"GET", adminCo + "/catalogue", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetCatalogue(ctx, p[0], p[1]))
	})},
	{"PUT", adminCo + "/catalogue", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.ReplaceCatalogueRequest) error {
		return errOf(a.ReplaceCatalogue(ctx, p[0], p[1], v))
	})},
	{"POST", adminCo + "/slides", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreateSlideRequest) error {
		return errOf(a.CreateSlide(ctx, p[0], p[1], v))
	})},
	{"GET", adminCo + "/slides", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.ListSlides(ctx, p[0], p[1]))
	})},
	{"GET", adminCo + "/slides/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetSlide(ctx, p[0], p[1], p[2]))
	})},
	{"PATCH", adminCo + "/slides/*", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.UpdateSlideRequest) error {
		return errOf(a.UpdateSlide(ctx, p[0], p[1], p[2], v))
	})},
	{"DELETE", adminCo + "/slides/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.DeleteSlide(ctx, p[0], p[1], p[2]))
	})},
	{"GET", adminCo + "/carousel", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetCarouselSettings(ctx, p[0], p[1]))
	})},
	{"PUT", adminCo + "/carousel", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.PutCarouselSettingsRequest) error {
		return errOf(a.PutCarouselSettings(ctx, p[0], p[1], v))
	})},
	{"GET", adminCo + "/receipt-promotion", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetCompanyReceiptPromotion(ctx, p[0], p[1]))
	})},
	{"PUT", adminCo + "/receipt-promotion", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.PutReceiptPromotionRequest) error {
		return errOf(a.PutCompanyReceiptPromotion(ctx, p[0], p[1], v))
	})},
	{"DELETE", adminCo + "/receipt-promotion", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.DeleteCompanyReceiptPromotion(ctx, p[0], p[1]))
	})},
	{"GET", adminCo + "/receipt-promotions", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.ListReceiptPromotions(ctx, p[0], p[1]))
	})},
	{"GET", adminLoc + "/receipt-promotion", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetLocationReceiptPromotion(ctx, p[0], p[1]))
	})},
	{"PUT", adminLoc + "/receipt-promotion", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.PutReceiptPromotionRequest) error {
		return errOf(a.PutLocationReceiptPromotion(ctx, p[0], p[1], v))
	})},
	{"DELETE", adminLoc + "/receipt-promotion", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.DeleteLocationReceiptPromotion(ctx, p[0], p[1]))
	})},
	{"POST", adminCo + "/coupons", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreateCouponRequest) error {
		return errOf(a.CreateCoupon(ctx, p[0], p[1], v))
	})},
	{"POST", adminCo + "/coupons/import", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.ImportCouponsRequest) error {
		return errOf(a.ImportCoupons(ctx, p[0], p[1], v))
	})},
	{"GET", adminCo + "/coupons/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetCoupon(ctx, p[0], p[1], p[2]))
	})},
	{"POST", adminCo + "/coupons/*/cancel", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.CancelCoupon(ctx, p[0], p[1], p[2]))
	})},
	{"POST", adminCo + "/coupons/*/redeem", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.RedeemCoupon(ctx, p[0], p[1], p[2]))
	})},
	{"POST", adminCo + "/loyalty-users", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreateLoyaltyUserRequest) error {
		return errOf(a.CreateLoyaltyUser(ctx, p[0], p[1], v))
	})},
	{"GET", adminCo + "/loyalty-users/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetLoyaltyUser(ctx, p[0], p[1], p[2]))
	})},
	{"PATCH", adminCo + "/loyalty-users/*", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.UpdateLoyaltyUserRequest) error {
		return errOf(a.UpdateLoyaltyUser(ctx, p[0], p[1], p[2], v))
	})},
	{"GET", adminCo + "/loyalty-program", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetLoyaltyProgram(ctx, p[0], p[1]))
	})},
	{"PUT", adminCo + "/loyalty-program", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.PutLoyaltyProgramRequest) error {
		return errOf(a.PutLoyaltyProgram(ctx, p[0], p[1], v))
	})},
	{"GET", adminCo + "/transactions/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetTransaction(ctx, p[0], p[1], p[2]))
	})},
	{"POST", adminCo + "/transactions/*/refund", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.RefundTransactionRequest) error {
		return errOf(a.RefundTransaction(ctx, p[0], p[1], p[2], v))
	})},
	// Lists with a query: sent by the client when it would send the same query.
	{"GET", "/admin/v1/pos-systems/*/locations", func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		if body != "" || !onlyKeys(q, "posCompanyId") {
			return nil, false
		}
		return errOf(a.ListLocations(ctx, p[0], q.Get("posCompanyId"))), true
	}},
	{"GET", adminCo + "/products", func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		pg, ok := pageOptions(q.Encode())
		if body != "" || !ok {
			return nil, false
		}
		return errOf(a.ListProducts(ctx, p[0], p[1], pg)), true
	}},
	{"GET", adminCo + "/categories", func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		pg, ok := pageOptions(q.Encode())
		if body != "" || !ok {
			return nil, false
		}
		return errOf(a.ListCategories(ctx, p[0], p[1], pg)), true
	}},
	{"GET", adminCo + "/promotions", func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		rest := url.Values{}
		for k, v := range q {
			if k != "posLocationId" && k != "validAt" {
				rest[k] = v
			}
		}
		pg, ok := pageOptions(rest.Encode())
		if body != "" || !ok || (q.Has("posLocationId") && q.Get("posLocationId") == "") || len(q["posLocationId"]) > 1 || len(q["validAt"]) > 1 {
			return nil, false
		}
		var validAt time.Time
		if v := q.Get("validAt"); q.Has("validAt") {
			// The client writes validAt in UTC, to the second.
			at, err := time.Parse(time.RFC3339, v)
			if err != nil || at.UTC().Format(time.RFC3339) != v {
				return nil, false
			}
			validAt = at
		}
		return errOf(a.ListPromotions(ctx, p[0], p[1], client.PromotionQuery{ValidAt: validAt, PosLocationID: q.Get("posLocationId"), PageOptions: pg})), true
	}},
	{"GET", adminCo + "/impressions", func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		iq := client.ImpressionQuery{From: q.Get("from"), To: q.Get("to"), PosLocationID: q.Get("posLocationId"), TerminalID: q.Get("terminalId")}
		if body != "" || !onlyKeys(q, "from", "to", "posLocationId", "terminalId") {
			return nil, false
		}
		return errOf(a.GetImpressions(ctx, p[0], p[1], iq)), true
	}},
	// people (docs/api.md §21.1)
	{"POST", "/admin/v1/people", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreatePersonRequest) error {
		return errOf(a.CreatePerson(ctx, v))
	})},
	{"GET", "/admin/v1/people", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.ListPeople(ctx)) })},
	{"GET", "/admin/v1/people/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.GetPerson(ctx, p[0])) })},
	{"POST", "/admin/v1/people/*/disable", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.DisablePerson(ctx, p[0])) })},
	{"POST", "/admin/v1/people/*/enable", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.EnablePerson(ctx, p[0])) })},
	// webhooks (docs/api.md §19)
	{"POST", adminCo + "/webhooks", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.CreateWebhookEndpointRequest) error {
		return errOf(a.CreateWebhookEndpoint(ctx, p[0], p[1], v))
	})},
	{"GET", adminCo + "/webhooks", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.ListWebhookEndpoints(ctx, p[0], p[1]))
	})},
	{"GET", adminCo + "/webhooks/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.GetWebhookEndpoint(ctx, p[0], p[1], p[2]))
	})},
	{"PATCH", adminCo + "/webhooks/*", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.UpdateWebhookEndpointRequest) error {
		return errOf(a.UpdateWebhookEndpoint(ctx, p[0], p[1], p[2], v))
	})},
	{"DELETE", adminCo + "/webhooks/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.DeleteWebhookEndpoint(ctx, p[0], p[1], p[2]))
	})},
	{"POST", adminCo + "/webhooks/*/rotate-secret", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.RotateWebhookSecret(ctx, p[0], p[1], p[2]))
	})},
	{"POST", adminCo + "/webhooks/*/test", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.SendTestWebhook(ctx, p[0], p[1], p[2]))
	})},
	{"GET", adminCo + "/webhooks/*/deliveries", func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		rest := url.Values{}
		for k, v := range q {
			if k != "status" {
				rest[k] = v
			}
		}
		pg, ok := pageOptions(rest.Encode())
		if st, has := q["status"]; body != "" || !ok || has && (len(st) != 1 || st[0] == "") {
			return nil, false
		}
		return errOf(a.ListWebhookDeliveries(ctx, p[0], p[1], p[2], client.DeliveryQuery{Status: q.Get("status"), PageOptions: pg})), true
	}},
	{"POST", adminCo + "/webhooks/*/deliveries/redeliver", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.RedeliverDeadWebhooks(ctx, p[0], p[1], p[2]))
	})},
	{"POST", adminCo + "/webhooks/*/deliveries/*/redeliver", func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		id, err := strconv.ParseInt(p[3], 10, 64)
		if err != nil || strconv.FormatInt(id, 10) != p[3] || body != "" || len(q) > 0 {
			return nil, false
		}
		return errOf(a.RedeliverWebhook(ctx, p[0], p[1], p[2], id)), true
	}},
	// the audit log (docs/api.md §22) and the sandbox clock (§20)
	{"GET", "/admin/v1/audit", func(ctx context.Context, a *client.Admin, p []string, q url.Values, body string) (error, bool) {
		aq := client.AuditQuery{Actor: q.Get("actor"), Action: q.Get("action"), TargetType: q.Get("targetType"), TargetID: q.Get("targetId"),
			PosSystemID: q.Get("posSystemId"), PosCompanyID: q.Get("posCompanyId"), PosLocationID: q.Get("posLocationId"),
			From: q.Get("from"), To: q.Get("to"), Cursor: q.Get("cursor")}
		if v := q.Get("pageSize"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n == 0 || strconv.Itoa(n) != v {
				return nil, false
			}
			aq.PageSize = n
		}
		if body != "" || !onlyKeys(q, "actor", "action", "targetType", "targetId", "posSystemId", "posCompanyId", "posLocationId", "from", "to", "cursor", "pageSize") {
			return nil, false
		}
		return errOf(a.ListAuditEntries(ctx, aq)), true
	}},
	{"GET", "/admin/v1/sandbox/clock", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.GetSandboxClock(ctx)) })},
	{"PUT", "/admin/v1/sandbox/clock", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.SetSandboxClockRequest) error {
		return errOf(a.SetSandboxClock(ctx, v))
	})},
	{"POST", "/admin/v1/sandbox/clock/advance", routeBody(func(ctx context.Context, a *client.Admin, p []string, v client.AdvanceSandboxClockRequest) error {
		return errOf(a.AdvanceSandboxClock(ctx, v))
	})},
	{"GET", "/admin/v1/sandbox/recordings/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error { return errOf(a.GetRecording(ctx, p[0])) })},
	{"DELETE", "/admin/v1/sandbox/recordings/*", routeBare(func(ctx context.Context, a *client.Admin, p []string) error {
		return errOf(a.ForgetRecording(ctx, p[0]))
	})},
}

// onlyKeys reports whether q holds nothing but single, non-empty values of
// keys (what the client's options can express).
func onlyKeys(q url.Values, keys ...string) bool {
	n := 0
	for _, k := range keys {
		if v, ok := q[k]; ok {
			if len(v) != 1 || v[0] == "" {
				return false
			}
			n++
		}
	}
	return n == len(q)
}

// admin sends an operator request (method, target, JSON body) with token:
// through the client when adminRoutes has the route, the path is the one
// the client builds and the body and query are ones it carries exactly; as
// raw HTTP otherwise. The tests that write operator requests out call it
// where they called s.do.
func (s *server) admin(t *testing.T, token, method, target, body string) response {
	t.Helper()
	return s.adminWith(t.Context(), t, token, method, target, body)
}

// adminWith is admin with the calls' context (WithIdempotencyKey).
func (s *server) adminWith(ctx context.Context, t *testing.T, token, method, target, body string) response {
	t.Helper()
	p, rawQuery, _ := strings.Cut(target, "?")
	q, qerr := url.ParseQuery(rawQuery)
	seg := strings.Split(strings.TrimPrefix(p, "/"), "/")
	raw := func() response {
		r := req{Method: method, Path: target, Token: token, Body: body}
		if body != "" {
			r.ContentType = "application/json"
		}
		return s.do(t, rawReq(ctx, r))
	}
	_, keyed := ctx.Value(keyCtx{}).(string)
	// The client writes its queries sorted; a keyed request's target is part
	// of its fingerprint, so it must be the client's to begin with.
	if qerr != nil || (keyed && rawQuery != q.Encode()) {
		return raw()
	}
	for _, rt := range adminRoutes {
		if rt.method != method {
			continue
		}
		params, ok := matchPath(rt.pattern, p, seg)
		if !ok {
			continue
		}
		a := s.api(t, token)
		before := a.rec.n
		err, ok := rt.call(ctx, a.Admin, params, q, body)
		if !ok {
			break
		}
		if a.rec.n == before {
			t.Fatalf("the client sent nothing for %s %s: %v", method, target, err)
		}
		return a.answer(err)
	}
	return raw()
}

// matchPath matches the unescaped segments of path p against pattern and
// answers the "*" segments, when the client, escaping them, would build p.
func matchPath(pattern, p string, seg []string) ([]string, bool) {
	ps := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	if len(ps) != len(seg) {
		return nil, false
	}
	var params []string
	var built strings.Builder
	for i := range ps {
		built.WriteString("/")
		if ps[i] == "*" {
			u, err := url.PathUnescape(seg[i])
			if err != nil || u == "" {
				return nil, false
			}
			params = append(params, u)
			built.WriteString(url.PathEscape(u))
		} else if ps[i] != seg[i] {
			return nil, false
		} else {
			built.WriteString(ps[i])
		}
	}
	return params, built.String() == p
}

// call sends any request a test writes out (method, target, JSON body)
// with token: POS and operator routes through the client where it carries
// the request exactly (s.pos, s.admin, the POS GETs below), anything else
// as raw HTTP.
func (s *server) call(t *testing.T, token, method, target, body string) response {
	t.Helper()
	return s.callWith(t.Context(), t, token, method, target, body)
}

// callWith is call with the calls' context (WithIdempotencyKey).
func (s *server) callWith(ctx context.Context, t *testing.T, token, method, target, body string) response {
	t.Helper()
	p, rawQuery, _ := strings.Cut(target, "?")
	switch {
	case method == "POST" && (strings.HasPrefix(p, "/pos/") || strings.HasPrefix(p, "/v2/pos/")):
		return s.posWith(ctx, t, token, target, body)
	case strings.HasPrefix(p, "/admin/"):
		return s.adminWith(ctx, t, token, method, target, body)
	case method == "GET" && body == "":
		seg := strings.Split(strings.TrimPrefix(p, "/"), "/")
		q, err := url.ParseQuery(rawQuery)
		if err != nil || (rawQuery != "" && q.Encode() != rawQuery) {
			break
		}
		a := s.api(t, token)
		if ps, ok := matchPath("/pos/*/receipt/promotion/location/*", p, seg); ok && rawQuery == "" {
			_, err := a.GetReceiptPromotion(ctx, ps[0], ps[1])
			return a.answer(err)
		}
		if ps, ok := matchPath("/pos/*/coupon/active/locationId/*", p, seg); ok {
			if pg, ok := pageOptions(rawQuery); ok {
				_, err := a.ListActiveCoupons(ctx, ps[0], ps[1], pg)
				return a.answer(err)
			}
		}
		if ps, ok := matchPath("/v2/pos/*/settings/lookup", p, seg); ok && onlyKeys(q, "posCompanyId") && q.Has("posCompanyId") {
			_, err := a.GetSettings(ctx, ps[0], q.Get("posCompanyId"))
			return a.answer(err)
		}
		// The carousel page's and the QR code's signed links: the client takes
		// the link as posgate handed it out.
		if rawQuery != "" && q.Encode() == rawQuery {
			switch p {
			case "/carousel":
				_, err := a.GetCarouselPage(ctx, s.base+target)
				return a.answer(err)
			case "/carousel/content":
				_, err := a.GetCarouselContent(ctx, s.base+target)
				return a.answer(err)
			case "/receipt/qr.png":
				_, err := a.GetReceiptQRCode(ctx, s.base+target)
				return a.answer(err)
			}
		}
	case method == "POST" && p == "/carousel/impressions" && rawQuery != "":
		q, err := url.ParseQuery(rawQuery)
		v, ok := decodeExact[client.ImpressionRequest](body)
		if err != nil || q.Encode() != rawQuery || !ok {
			break
		}
		a := s.api(t, token)
		_, err = a.RecordCarouselImpression(ctx, s.base+target, v.SlideID)
		return a.answer(err)
	}
	r := req{Method: method, Path: target, Token: token, Body: body}
	if body != "" {
		r.ContentType = "application/json"
	}
	return s.do(t, rawReq(ctx, r))
}

// request sends q through the client (s.call) when it is a plain JSON
// request the client can make, an Idempotency-Key on a POST included (a
// bare key, sent with WithIdempotencyKey; the client must then send the
// body byte for byte, since the key's fingerprint is the bytes), and as raw
// HTTP when it sets other headers, is undocumented or has another content
// type.
func (s *server) request(t *testing.T, q req) response {
	t.Helper()
	key, keyed := q.Header["Idempotency-Key"]
	plain := !q.Undocumented && (len(q.Header) == 0 || keyed && len(q.Header) == 1 && q.Method == "POST" && bareKey(key)) &&
		(q.Body == "") == (q.ContentType == "") && (q.ContentType == "" || q.ContentType == "application/json")
	if !plain {
		return s.do(t, q)
	}
	ctx := t.Context()
	if keyed {
		ctx = withKey(ctx, key)
	}
	return s.callWith(ctx, t, q.Token, q.Method, q.Path, q.Body)
}

type keyCtx struct{}

// withKey is ctx with an Idempotency-Key for the client, remembered so that
// a request that falls back to raw HTTP sends it too.
func withKey(ctx context.Context, key string) context.Context {
	return context.WithValue(client.WithIdempotencyKey(ctx, key), keyCtx{}, key)
}

// rawReq is q as raw HTTP with ctx's Idempotency-Key, if any.
func rawReq(ctx context.Context, q req) req {
	if key, ok := ctx.Value(keyCtx{}).(string); ok {
		q.Header = map[string]string{"Idempotency-Key": key}
	}
	return q
}

// bareKey reports whether key is an Idempotency-Key the client sends as it
// is: 1-255 printable ASCII characters, not a quoted string.
func bareKey(key string) bool {
	if key == "" || len(key) > 255 || key[0] == '"' {
		return false
	}
	for _, c := range []byte(key) {
		if c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

// TestRoutesUseTheClient: each route the tests' request helpers know is
// sent by the client when the request is well formed, and as raw HTTP when
// it is not, so that a helper that quietly fell back to raw HTTP (or sent
// malformed input through the client) fails here.
func TestRoutesUseTheClient(t *testing.T) {
	s := start(t, t.TempDir()+"/p.db")
	pos, admin := s.posToken(t), s.adminToken(t)
	co := demoCompanyPath
	loc := "/admin/v1/pos-systems/clover/locations/LOC123"
	now := s.clock.Now().UTC().Format(time.RFC3339)
	var session string
	steps := []struct {
		token, method, target, body string
		viaClient                   bool
	}{
		{pos, "POST", "/pos/clover/startInteraction", `{"terminalId":"TERM-05","posLocationId":"LOC123"}`, true},
		{pos, "POST", "/pos/clover/startInteraction", `{"terminalId":"TERM-05","posLocationId":"LOC123","x":1}`, false},
		{pos, "POST", "/pos/clover/startInteraction", `{"terminalId":5}`, false},
		{pos, "POST", "/pos/clover/coupon/couponCode/search?page=2&pageSize=1", `{"email":"john.doe@example.com"}`, true},
		{pos, "POST", "/pos/clover/coupon/couponCode/search?page=0", `{"email":"john.doe@example.com"}`, false},
		{pos, "POST", "/v2/pos/clover/coupon/couponCodes/lookup", `{"posLocationId":"LOC123","code":"Sl75Ev"}`, true},
		{pos, "POST", "/v2/pos/clover/loyaltyCard/users/lookup", `{"posLocationId":"LOC123","keyword":"john"}`, true},
		{pos, "POST", "/v2/pos/clover/carousel", `{"posLocationId":"LOC123","terminalId":"TERM-05"}`, true},
		{pos, "POST", "/v2/pos/clover/promotions/evaluate", `{"posLocationId":"LOC123","products":[{"productId":"SKU-LATTE-L","price":4.2}]}`, true},
		{pos, "POST", "/v2/pos/clover/settings/lookup", `{"posCompanyId":"demo-company"}`, true},
		{pos, "POST", "/pos/clover/company/demo-company/import/productCategories", `{"items":[{"posProductCategoryId":"TEA","name":"Tea"}]}`, true},
		{pos, "POST", "/pos/clover/company/demo-company/import/products", `{"items":[{"productId":"SKU-TEA","productName":"Tea","price":2}]}`, true},
		{pos, "POST", "/pos/clover/company/demo-company/import/promotions", `{"items":[{"id":"P1","name":"x","productIds":["SKU-TEA"],"promotionResults":[{"promotionType":"Amount","value":1}]}]}`, true},
		{pos, "POST", "/pos/clover/transaction", "SALE", true},
		{pos, "POST", "/v2/pos/clover/transactions/batch", `{"items":[{"transactionId":"B-1","terminalId":"TERM-05","posLocationId":"LOC123","transactionAmount":3,"transactionDate":"` + now + `"}]}`, true},
		{pos, "POST", "/pos/clover/coupon/validate/byTransaction", "VALIDATE", true},
		{pos, "GET", "/pos/clover/receipt/promotion/location/LOC123", "", true},
		{pos, "GET", "/pos/clover/coupon/active/locationId/LOC123?pageSize=5", "", true},
		{pos, "GET", "/v2/pos/clover/settings/lookup?posCompanyId=demo-company", "", true},
		{pos, "GET", "/v2/pos/clover/settings/lookup?posCompanyId=demo-company&x=1", "", false},
		{admin, "POST", "/admin/v1/pos-systems", `{"id":"pax"}`, true},
		{admin, "GET", "/admin/v1/pos-systems", "", true},
		{admin, "GET", "/admin/v1/pos-systems/pax", "", true},
		{admin, "POST", "/admin/v1/pos-systems/pax/companies", `{"posCompanyId":"c"}`, true},
		{admin, "GET", "/admin/v1/pos-systems/pax/companies", "", true},
		{admin, "PATCH", "/admin/v1/pos-systems/pax/companies/c", `{"name":"C"}`, true},
		{admin, "PATCH", "/admin/v1/pos-systems/pax/companies/c", `{"name":null}`, false},
		{admin, "POST", "/admin/v1/pos-systems/pax/locations", `{"posLocationId":"L","posCompanyId":"c"}`, true},
		{admin, "GET", "/admin/v1/pos-systems/pax/locations?posCompanyId=c", "", true},
		{admin, "PATCH", "/admin/v1/pos-systems/pax/locations/L", `{"status":"Disabled"}`, true},
		{admin, "POST", "/admin/v1/pos-systems/pax/locations/L/terminals", `{"terminalId":"T"}`, true},
		{admin, "GET", "/admin/v1/pos-systems/pax/locations/L/terminals/T", "", true},
		{admin, "POST", "/admin/v1/pos-systems/pax/locations/L/terminals/T/disable", "", true},
		{admin, "POST", "/admin/v1/clients", `{"clientId":"c1","posSystemId":"pax","scopes":["pos_integration"]}`, true},
		{admin, "PUT", "/admin/v1/clients/c1/rate-limit", `{"requestsPerSecond":5,"burst":10}`, true},
		{admin, "DELETE", "/admin/v1/clients/c1/rate-limit", "", true},
		{admin, "PUT", "/admin/v1/clients/c1/redirect-uris", `{"redirectUris":["https://app.example/cb"]}`, true},
		{admin, "PUT", "/admin/v1/clients/c1/redirect-uris", `{}`, false},
		{admin, "POST", "/admin/v1/clients/c1/disable", "", true},
		{admin, "GET", "/admin/v1/keys", "", true},
		{admin, "POST", co + "/coupons", `{"code":"R-1"}`, true},
		{admin, "POST", co + "/coupons", `{"code":"R-1","colour":"red"}`, false},
		{admin, "POST", co + "/coupons/import", `{"items":[{"code":"R-2"}]}`, true},
		{admin, "POST", co + "/coupons/R-2/cancel", "", true},
		{admin, "POST", co + "/loyalty-users", `{"id":"u1"}`, true},
		{admin, "PATCH", co + "/loyalty-users/u1", `{"pointsDelta":3}`, true},
		{admin, "PUT", co + "/loyalty-program", `{"pointsPerCurrencyUnit":1,"stampsPerSale":1,"minimumAmountForStamp":0,"autoEnroll":false}`, true},
		{admin, "PUT", co + "/loyalty-program", `{}`, false},
		{admin, "POST", co + "/slides", `{"slideId":"s9","imageUrl":"https://example.com/s.png","title":"S"}`, true},
		{admin, "PATCH", co + "/slides/s9", `{"title":"T"}`, true},
		{admin, "DELETE", co + "/slides/s9", "", true},
		{admin, "PUT", co + "/carousel", `{"urlTemplate":"https://example.com/c"}`, true},
		{admin, "PUT", loc + "/receipt-promotion", `{"primaryText":"Hi","targetUrl":"https://example.com/r"}`, true},
		{admin, "GET", co + "/receipt-promotions", "", true},
		{admin, "GET", co + "/impressions?from=2026-01-01", "", true},
		{admin, "GET", co + "/promotions?posLocationId=LOC123&pageSize=2", "", true},
		{admin, "GET", co + "/promotions?validAt=2026-01-01T00:00:00Z", "", true},
		{admin, "GET", co + "/promotions?validAt=2026-01-01T01:00:00%2B01:00", "", false},
		{admin, "GET", co + "/products?page=1", "", true},
		{admin, "GET", co + "/catalogue", "", true},
		{admin, "GET", co + "/transactions/B-1", "", true},
		{admin, "POST", co + "/transactions/B-1/refund", `{"transactionId":"R-B-1","amount":1}`, true},
		{admin, "POST", "/admin/v1/people", `{"email":"ann@example.com","name":"Ann","password":"a long enough secret","role":"admin"}`, true},
		{admin, "POST", "/admin/v1/people", `{"email":"bo@example.com","name":"Bo","password":"a long enough secret","role":"admin","x":1}`, false},
		{admin, "GET", "/admin/v1/people", "", true},
		{admin, "GET", "/admin/v1/people/ann@example.com", "", true},
		{admin, "POST", "/admin/v1/people/ann@example.com/disable", "", true},
		{admin, "POST", co + "/webhooks", `{"url":"https://93.184.216.34/h","eventTypes":["coupon.issued"]}`, true},
		{admin, "POST", co + "/webhooks", `{"url":"https://93.184.216.34/h","eventTypes":"coupon.issued"}`, false},
		{admin, "GET", co + "/webhooks", "", true},
		{admin, "GET", "/admin/v1/audit?action=person.create&pageSize=5", "", true},
		{admin, "GET", "/admin/v1/audit?pageSize=05", "", false},
	}
	// The signed links, as posgate hands them out and tampered with.
	link := s.carouselURL(t, pos, "TERM-05", "LOC123")
	link = strings.TrimPrefix(link, s.base)
	receipt := s.call(t, pos, "GET", "/pos/clover/receipt/promotion/location/LOC123", "").JSON(t)["data"].(map[string]any)["imageUrl"].(string)
	qr := strings.TrimPrefix(receipt, s.base)
	_, linkQuery, _ := strings.Cut(link, "?")
	steps = append(steps, []struct {
		token, method, target, body string
		viaClient                   bool
	}{
		{"", "GET", link, "", true},
		{"", "GET", link + "&sig=x", "", false},
		{"", "GET", "/carousel/content?" + linkQuery, "", true},
		{"", "POST", "/carousel/impressions?" + linkQuery, `{"slideId":"welcome"}`, true},
		{"", "POST", "/carousel/impressions?" + linkQuery, `{"slideId":7}`, false},
		{"", "GET", qr, "", true},
	}...)
	for _, st := range steps {
		body := st.body
		switch body {
		case "SALE":
			session = sessionOf(t, s.api(t, pos).start("TERM-06", "LOC123"))
			body = `{"sessionId":"` + session + `","transactionId":"S-1","terminalId":"TERM-06","posLocationId":"LOC123","transactionAmount":5,"transactionDate":"` + now + `"}`
		case "VALIDATE":
			body = `{"sessionId":"` + session + `","transactionId":"S-1","code":"NOPE"}`
		}
		before := s.clientRequests().Load()
		r := s.call(t, st.token, st.method, st.target, body)
		viaClient := s.clientRequests().Load() > before
		if viaClient != st.viaClient {
			t.Errorf("%s %s %s: through the client %v, want %v", st.method, st.target, body, viaClient, st.viaClient)
		}
		if st.viaClient && (r.Status < 200 || r.Status > 299) {
			t.Errorf("%s %s: %d %s", st.method, st.target, r.Status, r.Body)
		}
	}
}
