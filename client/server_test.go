package client_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/demo"
)

// recorder keeps the last answer's body, so that a test can hold the typed
// result against what posgate sent.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	last []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	r.mu.Lock()
	r.last = b
	r.mu.Unlock()
	return resp, nil
}

// env is a client of the test server as the POS and as the operator, both
// validating every answer against the OpenAPI document.
type env struct {
	t          *testing.T
	ctx        context.Context
	pos, admin *client.Client
	rec        *recorder
}

func newEnv(t *testing.T) *env {
	rec := &recorder{next: validating(t).Transport}
	hc := &http.Client{Transport: rec}
	pos, err := client.New(serverURL, client.WithHTTPClient(hc), client.WithCredentials(posClientID, posClientSecret, "pos_integration"))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(serverURL, client.WithHTTPClient(hc), client.WithCredentials(adminClientID, adminSecret, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: context.Background(), pos: pos, admin: admin, rec: rec}
}

// same checks that v, encoded again, is the JSON posgate answered (its
// data, when the answer has an envelope and wrapped is false): no field is
// lost or misread by the client's types.
func (e *env) same(v any, err error, whole bool) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	e.rec.mu.Lock()
	raw := e.rec.last
	e.rec.mu.Unlock()
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		e.t.Fatalf("answer: %v", err)
	}
	if !whole {
		want = want.(map[string]any)["data"]
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	var got any
	json.Unmarshal(b, &got)
	if !reflect.DeepEqual(normal(got), normal(want)) {
		e.t.Fatalf("the typed result differs from the answer:\n got %s\nwant %s", b, raw)
	}
}

// normal makes date-times comparable (posgate and encoding/json may write
// fractions differently).
func normal(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			out[k] = normal(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normal(x[i])
		}
		return out
	case string:
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return t.UTC().Format(time.RFC3339Nano)
		}
	}
	return v
}

// TestOperatorAPIAgainstServer calls every operation of the operator API
// on a real posgate and checks each typed result against the answer.
func TestOperatorAPIAgainstServer(t *testing.T) {
	e := newEnv(t)
	a, ctx := e.admin.Admin, e.ctx
	suffix := fmt.Sprint(time.Now().UnixNano())
	sys := "sys-" + suffix

	v1, err := a.CreatePosSystem(ctx, client.CreatePosSystemRequest{ID: sys, Name: "Test system"})
	e.same(v1, err, false)
	v2, err := a.ListPosSystems(ctx)
	e.same(v2, err, false)
	v3, err := a.GetPosSystem(ctx, sys)
	e.same(v3, err, false)
	if v3.Name != "Test system" {
		t.Fatalf("%+v", v3)
	}

	off := false
	co, err := a.CreateCompany(ctx, sys, client.CreateCompanyRequest{PosCompanyID: "co", Name: "Co", Features: &client.FeaturesUpdate{Carousel: &off}})
	e.same(co, err, false)
	if co.Features.Carousel || !co.Features.Coupons {
		t.Fatalf("%+v", co.Features)
	}
	cos, err := a.ListCompanies(ctx, sys)
	e.same(cos, err, false)
	co, err = a.GetCompany(ctx, sys, "co")
	e.same(co, err, false)
	name, disabled := "Co 2", client.StatusDisabled
	co, err = a.UpdateCompany(ctx, sys, "co", client.UpdateCompanyRequest{Name: &name, Status: &disabled})
	e.same(co, err, false)
	if co.Name != "Co 2" || co.Status != client.StatusDisabled {
		t.Fatalf("%+v", co)
	}
	active := client.StatusActive
	co, err = a.UpdateCompany(ctx, sys, "co", client.UpdateCompanyRequest{Status: &active})
	e.same(co, err, false)

	loc, err := a.CreateLocation(ctx, sys, client.CreateLocationRequest{PosLocationID: "L1", PosCompanyID: "co", Name: "Shop"})
	e.same(loc, err, false)
	locs, err := a.ListLocations(ctx, sys, "co")
	e.same(locs, err, false)
	if len(locs) != 1 {
		t.Fatalf("%+v", locs)
	}
	loc, err = a.GetLocation(ctx, sys, "L1")
	e.same(loc, err, false)
	name = "Shop 2"
	loc, err = a.UpdateLocation(ctx, sys, "L1", client.UpdateLocationRequest{Name: &name})
	e.same(loc, err, false)

	term, err := a.CreateTerminal(ctx, sys, "L1", client.CreateTerminalRequest{TerminalID: "T1", Name: "Till"})
	e.same(term, err, false)
	terms, err := a.ListTerminals(ctx, sys, "L1")
	e.same(terms, err, false)
	term, err = a.GetTerminal(ctx, sys, "L1", "T1")
	e.same(term, err, false)
	term, err = a.DisableTerminal(ctx, sys, "L1", "T1")
	e.same(term, err, false)
	if term.Status != client.StatusDisabled {
		t.Fatalf("%+v", term)
	}
	term, err = a.EnableTerminal(ctx, sys, "L1", "T1")
	e.same(term, err, false)

	cl, err := a.CreateClient(ctx, client.CreateAPIClientRequest{ClientID: "cl-" + suffix, PosSystemID: sys,
		Scopes: []client.Scope{client.ScopePosIntegration}})
	e.same(cl, err, false)
	if len(cl.ClientSecret) != 43 {
		t.Fatalf("secret %q", cl.ClientSecret)
	}
	cls, err := a.ListClients(ctx)
	e.same(cls, err, false)
	c1, err := a.GetClient(ctx, cl.ClientID)
	e.same(c1, err, false)
	c1, err = a.PutClientRateLimit(ctx, cl.ClientID, client.RateLimit{RequestsPerSecond: 2.5, Burst: 5})
	e.same(c1, err, false)
	if c1.RateLimit == nil || c1.RateLimit.Burst != 5 {
		t.Fatalf("%+v", c1)
	}
	c1, err = a.DeleteClientRateLimit(ctx, cl.ClientID)
	e.same(c1, err, false)
	c1, err = a.DisableClient(ctx, cl.ClientID)
	e.same(c1, err, false)
	c1, err = a.EnableClient(ctx, cl.ClientID)
	e.same(c1, err, false)
	if c1.Disabled {
		t.Fatalf("%+v", c1)
	}

	keys, err := a.ListSigningKeys(ctx)
	e.same(keys, err, false)
	key, err := a.RotateSigningKey(ctx)
	e.same(key, err, false)
	if !key.Signing {
		t.Fatalf("%+v", key)
	}

	// coupons and loyalty users, on the new company
	cp, err := a.CreateCoupon(ctx, sys, "co", client.CreateCouponRequest{Code: "C-1", Name: "One", Info: []client.CouponInfoInput{{Title: "Terms", Items: map[string]any{"x": "1"}}}})
	e.same(cp, err, false)
	imp, err := a.ImportCoupons(ctx, sys, "co", client.ImportCouponsRequest{Items: []client.CreateCouponRequest{{Code: "C-2"}, {Code: "C-3"}}})
	e.same(imp, err, false)
	if imp.CreatedCount != 2 {
		t.Fatalf("%+v", imp)
	}
	cp, err = a.GetCoupon(ctx, sys, "co", "c-1")
	e.same(cp, err, false)
	cp, err = a.RedeemCoupon(ctx, sys, "co", "C-2")
	e.same(cp, err, false)
	cp, err = a.CancelCoupon(ctx, sys, "co", "C-3")
	e.same(cp, err, false)
	if cp.Status != client.CouponStatusCancelled {
		t.Fatalf("%+v", cp)
	}
	lu, err := a.CreateLoyaltyUser(ctx, sys, "co", client.CreateLoyaltyUserRequest{ID: "u1", FirstName: "Ann", Email: "ann@example.com"})
	e.same(lu, err, false)
	lu, err = a.GetLoyaltyUser(ctx, sys, "co", "u1")
	e.same(lu, err, false)
	delta := 5
	lu, err = a.UpdateLoyaltyUser(ctx, sys, "co", "u1", client.UpdateLoyaltyUserRequest{PointsDelta: &delta})
	e.same(lu, err, false)
	if lu.Points != 5 {
		t.Fatalf("%+v", lu)
	}
	lp, err := a.GetLoyaltyProgram(ctx, sys, "co")
	e.same(lp, err, false)
	lp, err = a.PutLoyaltyProgram(ctx, sys, "co", client.PutLoyaltyProgramRequest{PointsPerCurrencyUnit: 2, StampsPerSale: 1, MinimumAmountForStamp: 5})
	e.same(lp, err, false)
	if lp.PointsPerCurrencyUnit != 2 || lp.UpdatedAt == nil {
		t.Fatalf("%+v", lp)
	}

	// carousel and receipt promotions
	sl, err := a.CreateSlide(ctx, sys, "co", client.CreateSlideRequest{SlideID: "s1", ImageURL: "https://example.com/a.png", Title: "A"})
	e.same(sl, err, false)
	sls, err := a.ListSlides(ctx, sys, "co")
	e.same(sls, err, false)
	sl, err = a.GetSlide(ctx, sys, "co", "s1")
	e.same(sl, err, false)
	title := "B"
	sl, err = a.UpdateSlide(ctx, sys, "co", "s1", client.UpdateSlideRequest{Title: &title})
	e.same(sl, err, false)
	sl, err = a.DeleteSlide(ctx, sys, "co", "s1")
	e.same(sl, err, false)
	cs, err := a.GetCarouselSettings(ctx, sys, "co")
	e.same(cs, err, false)
	cs, err = a.PutCarouselSettings(ctx, sys, "co", client.PutCarouselSettingsRequest{URLTemplate: "https://example.com/c?terminal={terminalId}"})
	e.same(cs, err, false)
	rp, err := a.PutCompanyReceiptPromotion(ctx, sys, "co", client.PutReceiptPromotionRequest{PrimaryText: "Hi", TargetURL: "https://example.com/r"})
	e.same(rp, err, false)
	rp, err = a.GetCompanyReceiptPromotion(ctx, sys, "co")
	e.same(rp, err, false)
	rp, err = a.PutLocationReceiptPromotion(ctx, sys, "L1", client.PutReceiptPromotionRequest{PrimaryText: "Here", TargetURL: "https://example.com/l"})
	e.same(rp, err, false)
	rp, err = a.GetLocationReceiptPromotion(ctx, sys, "L1")
	e.same(rp, err, false)
	rps, err := a.ListReceiptPromotions(ctx, sys, "co")
	e.same(rps, err, false)
	if len(rps) != 2 {
		t.Fatalf("%+v", rps)
	}
	rp, err = a.DeleteLocationReceiptPromotion(ctx, sys, "L1")
	e.same(rp, err, false)
	rp, err = a.DeleteCompanyReceiptPromotion(ctx, sys, "co")
	e.same(rp, err, false)
	ir, err := a.GetImpressions(ctx, sys, "co", client.ImpressionQuery{})
	e.same(ir, err, false)

	// catalogue and promotions, on the demo company
	cat, err := a.GetCatalogue(ctx, "clover", "demo-company")
	e.same(cat, err, false)
	if len(cat.ProductIds) == 0 {
		t.Fatalf("%+v", cat)
	}
	cat2, err := a.ReplaceCatalogue(ctx, sys, "co", client.ReplaceCatalogueRequest{CategoryIds: []string{"K1"}, ProductIds: []string{"P1"}})
	e.same(cat2, err, false)
	pp, err := a.ListProducts(ctx, "clover", "demo-company", client.PageOptions{PageSize: 2})
	e.same(pp, err, true)
	if len(pp.Data) != 2 || pp.Page.PageSize != 2 {
		t.Fatalf("%+v", pp)
	}
	cp2, err := a.ListCategories(ctx, "clover", "demo-company", client.PageOptions{})
	e.same(cp2, err, true)
	pr, err := a.ListPromotions(ctx, "clover", "demo-company", client.PromotionQuery{PosLocationID: "LOC123"})
	e.same(pr, err, true)
	if len(pr.Data) == 0 {
		t.Fatalf("%+v", pr)
	}
	p1, err := a.GetPromotion(ctx, "clover", "demo-company", pr.Data[0].ID)
	e.same(p1, err, false)

	// transactions, sessions
	visit, err := e.pos.StartInteraction(ctx, "clover", client.StartInteractionRequest{PosLocationID: "LOC123", TerminalID: "TERM-06"})
	if err != nil {
		t.Fatal(err)
	}
	se, err := a.GetSession(ctx, *visit.SessionID)
	e.same(se, err, false)
	sale := "S-" + suffix
	if _, err := e.pos.CreateTransaction(ctx, "clover", client.TransactionRequest{SessionID: *visit.SessionID, TransactionID: sale,
		PosLocationID: "LOC123", TerminalID: "TERM-06", TransactionAmount: 20, TransactionDate: time.Now().UTC(),
		Loyalty: &client.LoyaltyCard{CardNumber: "jane-doe"}}); err != nil {
		t.Fatal(err)
	}
	tp, err := a.ListTransactions(ctx, "clover", "demo-company", client.TransactionQuery{UserID: "jane-doe"})
	e.same(tp, err, false)
	tx, err := a.GetTransaction(ctx, "clover", "demo-company", sale)
	e.same(tx, err, false)
	if tx.TransactionAmount != 20 || tx.UserID != "jane-doe" {
		t.Fatalf("%+v", tx)
	}
	rf, err := a.RefundTransaction(ctx, "clover", "demo-company", sale, client.RefundTransactionRequest{TransactionID: "R-" + suffix, Amount: 5})
	e.same(rf, err, false)
	if rf.TransactionType != "Refund" {
		t.Fatalf("%+v", rf)
	}

	ap, err := a.ListAuditEntries(ctx, client.AuditQuery{Action: "pos-system.create", TargetID: sys})
	e.same(ap, err, false)
	if len(ap.Entries) != 1 || ap.Entries[0].Target.ID != sys || ap.Entries[0].Channel != "api" || ap.Entries[0].Actor.ClientID != adminClientID {
		t.Fatalf("audit: %+v", ap)
	}
	clk, err := a.GetSandboxClock(ctx)
	e.same(clk, err, false)
	moved, err := a.AdvanceSandboxClock(ctx, client.AdvanceSandboxClockRequest{Seconds: 1})
	e.same(moved, err, false)
	if moved.OffsetSeconds != clk.OffsetSeconds+1 {
		t.Fatalf("advance 1s: %+v, before %+v", moved, clk)
	}
	set, err := a.SetSandboxClock(ctx, client.SetSandboxClockRequest{Now: moved.Now.Add(time.Second).Format(time.RFC3339Nano)})
	e.same(set, err, false)
	if !set.Now.After(moved.Now) {
		t.Fatalf("set: %+v, before %+v", set, moved)
	}

	// a browser client's redirect URIs
	web, err := a.CreateClient(ctx, client.CreateAPIClientRequest{ClientID: "web-" + suffix, Scopes: []client.Scope{"admin"}})
	if err != nil {
		t.Fatal(err)
	}
	ru, err := a.PutClientRedirectURIs(ctx, web.ClientID, client.PutClientRedirectURIsRequest{RedirectURIs: []string{"https://app.example/cb", "http://localhost:3000/cb"}})
	e.same(ru, err, false)
	if ru.ClientID != web.ClientID || len(ru.RedirectURIs) != 2 {
		t.Fatalf("redirect URIs: %+v", ru)
	}
	ru, err = a.PutClientRedirectURIs(ctx, web.ClientID, client.PutClientRedirectURIsRequest{})
	e.same(ru, err, false)
	if _, err := a.PutClientRedirectURIs(ctx, web.ClientID, client.PutClientRedirectURIsRequest{RedirectURIs: []string{"http://app.example/cb"}}); !errors.Is(err, client.ErrValidation) {
		t.Fatalf("an http redirect URI: %v", err)
	}

	// people
	email := "p" + suffix + "@example.com"
	pe, err := a.CreatePerson(ctx, client.CreatePersonRequest{Email: email, Name: "Pat", Password: "a long enough secret", Role: "location-manager",
		PosSystemID: sys, LocationIds: []string{"L1"}})
	e.same(pe, err, false)
	if pe.Email != email || pe.Role != "location-manager" || len(pe.LocationIds) != 1 || pe.Disabled {
		t.Fatalf("person: %+v", pe)
	}
	people, err := a.ListPeople(ctx)
	e.same(people, err, false)
	pe, err = a.GetPerson(ctx, email)
	e.same(pe, err, false)
	pe, err = a.DisablePerson(ctx, pe.PersonID)
	e.same(pe, err, false)
	if !pe.Disabled {
		t.Fatalf("disabled: %+v", pe)
	}
	pe, err = a.EnablePerson(ctx, email)
	e.same(pe, err, false)
	if _, err := a.CreatePerson(ctx, client.CreatePersonRequest{Email: email, Name: "Pat", Password: "a long enough secret", Role: "admin"}); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("the same e-mail address again: %v", err)
	}

	// webhooks: registered disabled, so that nothing is sent while the test
	// event waits
	startOff := false
	we, err := a.CreateWebhookEndpoint(ctx, sys, "co", client.CreateWebhookEndpointRequest{URL: "https://93.184.216.34/hooks",
		EventTypes: []string{"coupon.issued", "transaction.recorded"}, Enabled: &startOff})
	e.same(we, err, false)
	if !strings.HasPrefix(we.Secret, "whsec_") || we.Enabled || we.PreviousSecretUntil != nil {
		t.Fatalf("webhook endpoint: %+v", we)
	}
	wes, err := a.ListWebhookEndpoints(ctx, sys, "co")
	e.same(wes, err, false)
	w1, err := a.GetWebhookEndpoint(ctx, sys, "co", we.ID)
	e.same(w1, err, false)
	u := "https://93.184.216.34/hooks/v2"
	w1, err = a.UpdateWebhookEndpoint(ctx, sys, "co", we.ID, client.UpdateWebhookEndpointRequest{URL: &u, EventTypes: []string{"coupon.issued"}})
	e.same(w1, err, false)
	if w1.URL != u || len(w1.EventTypes) != 1 || w1.Enabled {
		t.Fatalf("updated: %+v", w1)
	}
	rot, err := a.RotateWebhookSecret(ctx, sys, "co", we.ID)
	e.same(rot, err, false)
	if rot.Secret == we.Secret || rot.PreviousSecretUntil == nil {
		t.Fatalf("rotated: %+v", rot)
	}
	te, err := a.SendTestWebhook(ctx, sys, "co", we.ID)
	e.same(te, err, false)
	dp, err := a.ListWebhookDeliveries(ctx, sys, "co", we.ID, client.DeliveryQuery{Status: "Pending"})
	e.same(dp, err, false)
	if len(dp.Deliveries) != 1 || dp.Deliveries[0].EventID != te.EventID || dp.Deliveries[0].EventType != "webhook.test" {
		t.Fatalf("deliveries: %+v", dp)
	}
	rd, err := a.RedeliverDeadWebhooks(ctx, sys, "co", we.ID)
	e.same(rd, err, false)
	if rd.Redelivered != 0 {
		t.Fatalf("redelivered: %+v", rd)
	}
	if _, err := a.RedeliverWebhook(ctx, sys, "co", we.ID, dp.Deliveries[0].ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("redelivering a pending delivery: %v", err)
	}
	w1, err = a.DeleteWebhookEndpoint(ctx, sys, "co", we.ID)
	e.same(w1, err, false)
	if _, err := a.GetWebhookEndpoint(ctx, sys, "co", we.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("after removal: %v", err)
	}
}

// TestBrowserFlowAgainstServer runs the authorization code flow with PKCE
// as a browser application would: a person signs in (the sign-in form,
// with a cookie jar), the browser opens AuthorizeURL, and the code that
// comes back is exchanged with ExchangeCode, its refresh token with
// RefreshToken.
func TestBrowserFlowAgainstServer(t *testing.T) {
	e := newEnv(t)
	c, ctx := e.pos, e.ctx
	md, err := c.GetAuthorizationServerMetadata(ctx)
	e.same(md, err, true)
	if md.AuthorizationEndpoint != serverURL+"/connect/authorize" || len(md.CodeChallengeMethodsSupported) != 1 {
		t.Fatalf("metadata: %+v", md)
	}

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) *http.Response {
		t.Helper()
		resp, err := browser.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	page := get(serverURL + "/Account/Login")
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no sign-in form: %s", body)
	}
	form := url.Values{"csrf": {string(m[1])}, "email": {demo.ManagerEmail}, "password": {demo.ManagerPassword}, "ReturnUrl": {"/swagger"}}
	req, _ := http.NewRequest("POST", serverURL+"/Account/Login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", serverURL)
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 {
		t.Fatalf("sign-in: %d", resp.StatusCode)
	}

	verifier := "a-verifier-of-enough-length-0123456789-abcdefghij"
	sum := sha256.Sum256([]byte(verifier))
	redirect := serverURL + demo.SwaggerRedirectPath
	resp = get(c.AuthorizeURL(client.AuthorizeRequest{ResponseType: "code", ClientID: demo.SwaggerClientID, RedirectURI: redirect,
		Scope: "service_api", State: "st-1", CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:]), CodeChallengeMethod: "S256"}))
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 302 || err != nil || !strings.HasPrefix(loc.String(), redirect+"?") || loc.Query().Get("state") != "st-1" || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	tok, err := c.ExchangeCode(ctx, client.CodeExchange{ClientID: demo.SwaggerClientID, Code: loc.Query().Get("code"), RedirectURI: redirect, CodeVerifier: verifier})
	e.same(tok, err, true)
	if tok.AccessToken == "" || tok.RefreshToken == "" || tok.Scope != "service_api" {
		t.Fatalf("token: %+v", tok)
	}
	again, err := c.RefreshToken(ctx, demo.SwaggerClientID, "", tok.RefreshToken)
	e.same(again, err, true)
	if again.AccessToken == "" || again.RefreshToken == "" || again.RefreshToken == tok.RefreshToken {
		t.Fatalf("refreshed: %+v", again)
	}
	// A code used twice is refused, and revokes what it gave.
	var ce *client.Error
	if _, err := c.ExchangeCode(ctx, client.CodeExchange{ClientID: demo.SwaggerClientID, Code: loc.Query().Get("code"), RedirectURI: redirect,
		CodeVerifier: verifier}); !errors.As(err, &ce) || ce.OAuthError != "invalid_grant" {
		t.Fatalf("a code exchanged twice: %v", err)
	}
	if _, err := c.RefreshToken(ctx, demo.SwaggerClientID, "", again.RefreshToken); !errors.As(err, &ce) || ce.OAuthError != "invalid_grant" {
		t.Fatalf("refreshing after the code's reuse: %v", err)
	}
}

// TestPOSAPIAgainstServer calls every operation of the POS API, the
// identity provider and the health routes on a real posgate.
func TestPOSAPIAgainstServer(t *testing.T) {
	e := newEnv(t)
	c, ctx := e.pos, e.ctx
	suffix := fmt.Sprint(time.Now().UnixNano())

	d, err := c.GetDiscovery(ctx)
	e.same(d, err, true)
	j, err := c.GetJWKS(ctx)
	e.same(j, err, true)
	h, err := c.GetHealth(ctx)
	e.same(h, err, true)
	ready, err := c.GetReadiness(ctx)
	e.same(ready, err, true)
	tok, err := c.RequestToken(ctx, client.TokenRequest{ClientID: posClientID, ClientSecret: posClientSecret})
	e.same(tok, err, true)

	visit, err := c.StartInteraction(ctx, "clover", client.StartInteractionRequest{PosLocationID: "LOC123", TerminalID: "TERM-05"})
	e.same(visit, err, false)
	sr, err := c.SearchCoupons(ctx, "clover", client.CouponSearchRequest{Email: "john.doe@example.com"}, client.PageOptions{PageSize: 2})
	e.same(sr, err, true)
	if sr.Page.Total != 5 || len(sr.Data) != 2 {
		t.Fatalf("%+v", sr)
	}
	lk, err := c.LookupCouponCodes(ctx, "clover", client.CouponLookupRequest{PosLocationID: "LOC123", Code: "10OFFmq8kl8"})
	e.same(lk, err, false)
	us, err := c.LookupLoyaltyUsers(ctx, "clover", client.LoyaltyUserLookupRequest{PosLocationID: "LOC123", Keyword: "doe"})
	e.same(us, err, false)
	if len(us.Users) == 0 {
		t.Fatalf("%+v", us)
	}
	ac, err := c.ListActiveCoupons(ctx, "clover", "LOC123", client.PageOptions{})
	e.same(ac, err, true)
	st, err := c.GetSettings(ctx, "clover", "demo-company")
	e.same(st, err, false)
	st, err = c.LookupSettings(ctx, "clover", "demo-company")
	e.same(st, err, false)
	if !st.CompanySettings.IsCouponsEnabled {
		t.Fatalf("%+v", st)
	}

	cu, err := c.GetCarouselURL(ctx, "clover", client.CarouselRequest{PosLocationID: "LOC123", TerminalID: "TERM-05"})
	e.same(cu, err, false)
	page, err := c.GetCarouselPage(ctx, cu.URL)
	if err != nil || !bytes.Contains(page, []byte("<html")) {
		t.Fatalf("%v %.200s", err, page)
	}
	cc, err := c.GetCarouselContent(ctx, cu.URL)
	e.same(cc, err, false)
	if len(cc.Slides) == 0 {
		t.Fatalf("%+v", cc)
	}
	im, err := c.RecordCarouselImpression(ctx, cu.URL, cc.Slides[0].SlideID)
	e.same(im, err, false)
	if !im.Recorded {
		t.Fatalf("%+v", im)
	}
	rp, err := c.GetReceiptPromotion(ctx, "clover", "LOC123")
	e.same(rp, err, false)
	png, err := c.GetReceiptQRCode(ctx, rp.ImageURL)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("%v %q", err, rp.ImageURL)
	}

	ev, err := c.EvaluatePromotions(ctx, "clover", client.EvaluateRequest{PosLocationID: "LOC123",
		Products: []client.EvaluateProduct{{ProductID: "SKU-LATTE-L", Price: 4.20}}, CouponCodes: []string{"10OFFmq8kl8"},
		Loyalty: &client.LoyaltyCard{CardNumber: "john-doe"}})
	e.same(ev, err, false)
	if ev.Subtotal != 4.20 || len(ev.Promotions) == 0 || ev.Loyalty == nil {
		t.Fatalf("%+v", ev)
	}

	sale := "S-" + suffix
	tx, err := c.CreateTransaction(ctx, "clover", client.TransactionRequest{SessionID: *visit.SessionID, TransactionID: sale,
		PosLocationID: "LOC123", TerminalID: "TERM-05", TransactionAmount: 4.20, TransactionDate: time.Now().UTC(),
		Products: []client.TransactionProduct{{ProductID: "SKU-LATTE-L", Price: 4.20}},
		Customer: &client.Customer{Contacts: []client.CustomerContact{{Email: "mary.johnson@example.com"}}}})
	e.same(tx, err, false)
	if tx.Loyalty == nil || tx.Loyalty.UserID != "mary-johnson" {
		t.Fatalf("%+v", tx)
	}
	vc, err := c.ValidateCouponByTransaction(ctx, "clover", client.ValidateCouponRequest{SessionID: *visit.SessionID, TransactionID: sale, Code: "nope"})
	e.same(vc, err, true)
	b, err := c.ReplayTransactions(ctx, "clover", client.BatchRequest{Items: []client.TransactionRequest{{TransactionID: "B-" + suffix,
		PosLocationID: "LOC123", TerminalID: "TERM-05", TransactionAmount: 3, TransactionDate: time.Now().UTC()}}})
	e.same(b, err, false)
	if b.CreatedCount+b.DuplicateCount+len(b.Errors) != 1 {
		t.Fatalf("%+v", b)
	}

	ir, err := c.ImportProductCategories(ctx, "clover", "demo-company", client.CategoryImport{Items: []client.CategoryItem{{PosProductCategoryID: "TEA", Name: "Tea"}}})
	e.same(ir, err, false)
	price := 2.0
	ir, err = c.ImportProducts(ctx, "clover", "demo-company", client.ProductImport{Items: []client.ProductItem{{ProductID: "SKU-TEA", ProductName: "Tea", ProductCategoryID: "TEA", Price: &price}}})
	e.same(ir, err, false)
	if ir.Status != "Completed" {
		t.Fatalf("%+v", ir)
	}
	ir, err = c.ImportPromotions(ctx, "clover", "demo-company", client.PromotionImport{Items: []client.PromotionItem{{ID: "P-" + suffix, Name: "Tea day",
		ProductIds: []string{"SKU-TEA"}, PromotionResults: []client.PromotionResult{{PromotionType: "Percentage", Value: 10}}}}})
	e.same(ir, err, false)
}

// TestTypedErrorsAgainstServer: posgate's problems come back as *Error that
// errors.Is matches by status, with the document's fields.
func TestTypedErrorsAgainstServer(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx
	var pe *client.Error

	_, err := e.admin.Admin.GetCompany(ctx, "clover", "nope")
	if !errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrConflict) || !errors.As(err, &pe) ||
		pe.StatusCode != 404 || pe.Detail != `company "nope" not found` || !strings.HasPrefix(pe.TraceID, "00-") || pe.Title != "Not Found" {
		t.Fatalf("%#v", err)
	}
	_, err = e.admin.Admin.CreatePosSystem(ctx, client.CreatePosSystemRequest{ID: "clover"})
	if !errors.Is(err, client.ErrConflict) {
		t.Fatalf("%v", err)
	}
	_, err = e.pos.Admin.ListPosSystems(ctx)
	if !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("%v", err)
	}
	_, err = e.pos.SearchCoupons(ctx, "clover", client.CouponSearchRequest{}, client.PageOptions{})
	need := []string{"One of code, email and phone is required."}
	if !errors.Is(err, client.ErrValidation) || !errors.As(err, &pe) ||
		!reflect.DeepEqual(pe.Errors, map[string][]string{"code": need, "email": need, "phone": need}) {
		t.Fatalf("%#v", err)
	}
	// The same key with another request is refused, with the client's key.
	kctx := client.WithIdempotencyKey(ctx, "dup-"+fmt.Sprint(time.Now().UnixNano()))
	if _, err := e.pos.StartInteraction(kctx, "clover", client.StartInteractionRequest{PosLocationID: "LOC123", TerminalID: "TERM-05"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.pos.StartInteraction(kctx, "clover", client.StartInteractionRequest{PosLocationID: "LOC123", TerminalID: "TERM-06"})
	if !errors.Is(err, client.ErrIdempotencyKeyReused) {
		t.Fatalf("%v", err)
	}
	noToken, _ := client.New(serverURL)
	_, err = noToken.StartInteraction(ctx, "clover", client.StartInteractionRequest{PosLocationID: "LOC123", TerminalID: "TERM-05"})
	if !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("%v", err)
	}
}
