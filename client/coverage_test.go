package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/posgate/posgate/client"
	"github.com/posgate/posgate/internal/openapi/openapitest"
)

// operations maps every operationId of the OpenAPI document to a call of the
// client method that reaches it.
var operations = map[string]func(ctx context.Context, c *client.Client) error{
	// identity provider, health
	"requestToken": func(ctx context.Context, c *client.Client) error {
		_, err := c.RequestToken(ctx, client.TokenRequest{ClientID: "id", ClientSecret: "s"})
		return err
	},
	"getDiscovery": func(ctx context.Context, c *client.Client) error { _, err := c.GetDiscovery(ctx); return err },
	"getJwks":      func(ctx context.Context, c *client.Client) error { _, err := c.GetJWKS(ctx); return err },
	"getHealth":    func(ctx context.Context, c *client.Client) error { _, err := c.GetHealth(ctx); return err },
	"getReadiness": func(ctx context.Context, c *client.Client) error { _, err := c.GetReadiness(ctx); return err },
	// POS API
	"startInteraction": func(ctx context.Context, c *client.Client) error {
		_, err := c.StartInteraction(ctx, "p", client.StartInteractionRequest{})
		return err
	},
	"getTerminalEvents": func(ctx context.Context, c *client.Client) error {
		s, err := c.GetTerminalEvents(ctx, "p", "l", "t", "")
		if err == nil {
			s.Close()
		}
		return err
	},
	"getCarouselUrl": func(ctx context.Context, c *client.Client) error {
		_, err := c.GetCarouselURL(ctx, "p", client.CarouselRequest{})
		return err
	},
	"getReceiptPromotion": func(ctx context.Context, c *client.Client) error {
		_, err := c.GetReceiptPromotion(ctx, "p", "l")
		return err
	},
	"getCarouselPage": func(ctx context.Context, c *client.Client) error {
		_, err := c.GetCarouselPage(ctx, "http://x/carousel?pos=p&sig=s")
		return err
	},
	"getCarouselContent": func(ctx context.Context, c *client.Client) error {
		_, err := c.GetCarouselContent(ctx, "http://x/carousel?pos=p&sig=s")
		return err
	},
	"recordCarouselImpression": func(ctx context.Context, c *client.Client) error {
		_, err := c.RecordCarouselImpression(ctx, "http://x/carousel?pos=p&sig=s", "s1")
		return err
	},
	"getReceiptQrCode": func(ctx context.Context, c *client.Client) error {
		_, err := c.GetReceiptQRCode(ctx, "http://x/receipt/qr.png?d=1&sig=2")
		return err
	},
	"importPromotions": func(ctx context.Context, c *client.Client) error {
		_, err := c.ImportPromotions(ctx, "p", "c", client.PromotionImport{})
		return err
	},
	"importProducts": func(ctx context.Context, c *client.Client) error {
		_, err := c.ImportProducts(ctx, "p", "c", client.ProductImport{})
		return err
	},
	"importProductCategories": func(ctx context.Context, c *client.Client) error {
		_, err := c.ImportProductCategories(ctx, "p", "c", client.CategoryImport{})
		return err
	},
	"evaluatePromotions": func(ctx context.Context, c *client.Client) error {
		_, err := c.EvaluatePromotions(ctx, "p", client.EvaluateRequest{})
		return err
	},
	"searchCouponCodes": func(ctx context.Context, c *client.Client) error {
		_, err := c.SearchCoupons(ctx, "p", client.CouponSearchRequest{}, client.PageOptions{Page: 2})
		return err
	},
	"lookupCouponCodes": func(ctx context.Context, c *client.Client) error {
		_, err := c.LookupCouponCodes(ctx, "p", client.CouponLookupRequest{})
		return err
	},
	"lookupLoyaltyUsers": func(ctx context.Context, c *client.Client) error {
		_, err := c.LookupLoyaltyUsers(ctx, "p", client.LoyaltyUserLookupRequest{})
		return err
	},
	"listActiveCoupons": func(ctx context.Context, c *client.Client) error {
		_, err := c.ListActiveCoupons(ctx, "p", "l", client.PageOptions{})
		return err
	},
	"getSettings": func(ctx context.Context, c *client.Client) error { _, err := c.GetSettings(ctx, "p", "c"); return err },
	"lookupSettings": func(ctx context.Context, c *client.Client) error {
		_, err := c.LookupSettings(ctx, "p", "c")
		return err
	},
	"createPosTransaction": func(ctx context.Context, c *client.Client) error {
		_, err := c.CreateTransaction(ctx, "p", client.TransactionRequest{})
		return err
	},
	"replayPosTransactions": func(ctx context.Context, c *client.Client) error {
		_, err := c.ReplayTransactions(ctx, "p", client.BatchRequest{})
		return err
	},
	"validateCouponByTransaction": func(ctx context.Context, c *client.Client) error {
		_, err := c.ValidateCouponByTransaction(ctx, "p", client.ValidateCouponRequest{})
		return err
	},
	// operator API
	"createPosSystem": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreatePosSystem(ctx, client.CreatePosSystemRequest{})
		return err
	},
	"listPosSystems": func(ctx context.Context, c *client.Client) error { _, err := c.Admin.ListPosSystems(ctx); return err },
	"getPosSystem": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetPosSystem(ctx, "p")
		return err
	},
	"createCompany": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreateCompany(ctx, "p", client.CreateCompanyRequest{})
		return err
	},
	"listCompanies": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListCompanies(ctx, "p")
		return err
	},
	"getCompany": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetCompany(ctx, "p", "c")
		return err
	},
	"updateCompany": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.UpdateCompany(ctx, "p", "c", client.UpdateCompanyRequest{})
		return err
	},
	"createLocation": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreateLocation(ctx, "p", client.CreateLocationRequest{})
		return err
	},
	"listLocations": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListLocations(ctx, "p", "c")
		return err
	},
	"getLocation": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetLocation(ctx, "p", "l")
		return err
	},
	"updateLocation": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.UpdateLocation(ctx, "p", "l", client.UpdateLocationRequest{})
		return err
	},
	"createTerminal": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreateTerminal(ctx, "p", "l", client.CreateTerminalRequest{})
		return err
	},
	"listTerminals": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListTerminals(ctx, "p", "l")
		return err
	},
	"getTerminal": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetTerminal(ctx, "p", "l", "t")
		return err
	},
	"disableTerminal": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.DisableTerminal(ctx, "p", "l", "t")
		return err
	},
	"enableTerminal": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.EnableTerminal(ctx, "p", "l", "t")
		return err
	},
	"createClient": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreateClient(ctx, client.CreateAPIClientRequest{})
		return err
	},
	"listClients": func(ctx context.Context, c *client.Client) error { _, err := c.Admin.ListClients(ctx); return err },
	"getClient":   func(ctx context.Context, c *client.Client) error { _, err := c.Admin.GetClient(ctx, "i"); return err },
	"disableClient": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.DisableClient(ctx, "i")
		return err
	},
	"rotateClientSecret": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.RotateClientSecret(ctx, "i")
		return err
	},
	"enableClient": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.EnableClient(ctx, "i")
		return err
	},
	"putClientRateLimit": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.PutClientRateLimit(ctx, "i", client.RateLimit{})
		return err
	},
	"deleteClientRateLimit": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.DeleteClientRateLimit(ctx, "i")
		return err
	},
	"listSigningKeys":  func(ctx context.Context, c *client.Client) error { _, err := c.Admin.ListSigningKeys(ctx); return err },
	"rotateSigningKey": func(ctx context.Context, c *client.Client) error { _, err := c.Admin.RotateSigningKey(ctx); return err },
	"getSession":       func(ctx context.Context, c *client.Client) error { _, err := c.Admin.GetSession(ctx, "s"); return err },
	"listPromotions": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListPromotions(ctx, "p", "c", client.PromotionQuery{})
		return err
	},
	"getPromotion": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetPromotion(ctx, "p", "c", "x")
		return err
	},
	"getCatalogue": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetCatalogue(ctx, "p", "c")
		return err
	},
	"replaceCatalogue": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ReplaceCatalogue(ctx, "p", "c", client.ReplaceCatalogueRequest{})
		return err
	},
	"listProducts": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListProducts(ctx, "p", "c", client.PageOptions{})
		return err
	},
	"listCategories": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListCategories(ctx, "p", "c", client.PageOptions{})
		return err
	},
	"createSlide": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreateSlide(ctx, "p", "c", client.CreateSlideRequest{})
		return err
	},
	"listSlides": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListSlides(ctx, "p", "c")
		return err
	},
	"getSlide": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetSlide(ctx, "p", "c", "s")
		return err
	},
	"updateSlide": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.UpdateSlide(ctx, "p", "c", "s", client.UpdateSlideRequest{})
		return err
	},
	"deleteSlide": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.DeleteSlide(ctx, "p", "c", "s")
		return err
	},
	"getCarouselSettings": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetCarouselSettings(ctx, "p", "c")
		return err
	},
	"putCarouselSettings": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.PutCarouselSettings(ctx, "p", "c", client.PutCarouselSettingsRequest{})
		return err
	},
	"getCompanyReceiptPromotion": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetCompanyReceiptPromotion(ctx, "p", "c")
		return err
	},
	"putCompanyReceiptPromotion": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.PutCompanyReceiptPromotion(ctx, "p", "c", client.PutReceiptPromotionRequest{})
		return err
	},
	"deleteCompanyReceiptPromotion": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.DeleteCompanyReceiptPromotion(ctx, "p", "c")
		return err
	},
	"listReceiptPromotions": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListReceiptPromotions(ctx, "p", "c")
		return err
	},
	"getImpressions": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetImpressions(ctx, "p", "c", client.ImpressionQuery{From: "2026-01-01"})
		return err
	},
	"getLocationReceiptPromotion": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetLocationReceiptPromotion(ctx, "p", "l")
		return err
	},
	"putLocationReceiptPromotion": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.PutLocationReceiptPromotion(ctx, "p", "l", client.PutReceiptPromotionRequest{})
		return err
	},
	"deleteLocationReceiptPromotion": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.DeleteLocationReceiptPromotion(ctx, "p", "l")
		return err
	},
	"createCoupon": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreateCoupon(ctx, "p", "c", client.CreateCouponRequest{})
		return err
	},
	"importCoupons": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ImportCoupons(ctx, "p", "c", client.ImportCouponsRequest{})
		return err
	},
	"getCoupon": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetCoupon(ctx, "p", "c", "X")
		return err
	},
	"cancelCoupon": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CancelCoupon(ctx, "p", "c", "X")
		return err
	},
	"redeemCoupon": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.RedeemCoupon(ctx, "p", "c", "X")
		return err
	},
	"createLoyaltyUser": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreateLoyaltyUser(ctx, "p", "c", client.CreateLoyaltyUserRequest{})
		return err
	},
	"getLoyaltyUser": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetLoyaltyUser(ctx, "p", "c", "u")
		return err
	},
	"updateLoyaltyUser": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.UpdateLoyaltyUser(ctx, "p", "c", "u", client.UpdateLoyaltyUserRequest{})
		return err
	},
	"getLoyaltyProgram": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetLoyaltyProgram(ctx, "p", "c")
		return err
	},
	"putLoyaltyProgram": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.PutLoyaltyProgram(ctx, "p", "c", client.PutLoyaltyProgramRequest{})
		return err
	},
	"listOfflineConflicts": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListOfflineConflicts(ctx, "p", "c", client.PageOptions{})
		return err
	},
	"getOfflineKit": func(ctx context.Context, c *client.Client) error {
		_, err := c.GetOfflineKit(ctx, "p", "l", client.KitQuery{TerminalID: "t"})
		return err
	},
	"listTransactions": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListTransactions(ctx, "p", "c", client.TransactionQuery{})
		return err
	},
	"getTransaction": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetTransaction(ctx, "p", "c", "t")
		return err
	},
	"refundTransaction": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.RefundTransaction(ctx, "p", "c", "t", client.RefundTransactionRequest{})
		return err
	},
	"listAuditEntries": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListAuditEntries(ctx, client.AuditQuery{Actor: "a", PageSize: 10})
		return err
	},
	"getRecording": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetRecording(ctx, "demo-pos")
		return err
	},
	"forgetRecording": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ForgetRecording(ctx, "demo-pos")
		return err
	},
	"getSandboxClock": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetSandboxClock(ctx)
		return err
	},
	"setSandboxClock": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.SetSandboxClock(ctx, client.SetSandboxClockRequest{Now: "2030-01-01T00:00:00Z"})
		return err
	},
	"advanceSandboxClock": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.AdvanceSandboxClock(ctx, client.AdvanceSandboxClockRequest{Seconds: 60})
		return err
	},
	"getAuthorizationServerMetadata": func(ctx context.Context, c *client.Client) error {
		_, err := c.GetAuthorizationServerMetadata(ctx)
		return err
	},
	"putClientRedirectUris": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.PutClientRedirectURIs(ctx, "c1", client.PutClientRedirectURIsRequest{RedirectURIs: []string{"https://a.example/cb"}})
		return err
	},
	"createPerson": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreatePerson(ctx, client.CreatePersonRequest{})
		return err
	},
	"listPeople": func(ctx context.Context, c *client.Client) error { _, err := c.Admin.ListPeople(ctx); return err },
	"getPerson": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetPerson(ctx, "someone@example.com")
		return err
	},
	"disablePerson": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.DisablePerson(ctx, "p1")
		return err
	},
	"enablePerson": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.EnablePerson(ctx, "p1")
		return err
	},
	"createWebhookEndpoint": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.CreateWebhookEndpoint(ctx, "p", "c", client.CreateWebhookEndpointRequest{})
		return err
	},
	"listWebhookEndpoints": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListWebhookEndpoints(ctx, "p", "c")
		return err
	},
	"getWebhookEndpoint": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.GetWebhookEndpoint(ctx, "p", "c", "e")
		return err
	},
	"updateWebhookEndpoint": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.UpdateWebhookEndpoint(ctx, "p", "c", "e", client.UpdateWebhookEndpointRequest{})
		return err
	},
	"deleteWebhookEndpoint": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.DeleteWebhookEndpoint(ctx, "p", "c", "e")
		return err
	},
	"rotateWebhookSecret": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.RotateWebhookSecret(ctx, "p", "c", "e")
		return err
	},
	"sendTestWebhook": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.SendTestWebhook(ctx, "p", "c", "e")
		return err
	},
	"listWebhookDeliveries": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.ListWebhookDeliveries(ctx, "p", "c", "e", client.DeliveryQuery{Status: "Dead", PageOptions: client.PageOptions{Page: 2}})
		return err
	},
	"redeliverDeadWebhooks": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.RedeliverDeadWebhooks(ctx, "p", "c", "e")
		return err
	},
	"redeliverWebhook": func(ctx context.Context, c *client.Client) error {
		_, err := c.Admin.RedeliverWebhook(ctx, "p", "c", "e", 7)
		return err
	},
}

// browserOnly are the operations a program does not call but sends a
// person's browser to, each with a function answering that address: the
// authorization endpoint answers a sign-in page and a redirect, never JSON
// (docs/api.md §21.3), so the client builds its URL (AuthorizeURL) and
// exchanges what comes back (ExchangeCode).
var browserOnly = map[string]func(c *client.Client) string{
	"authorize": func(c *client.Client) string {
		return c.AuthorizeURL(client.AuthorizeRequest{ResponseType: "code", ClientID: "spa", RedirectURI: "http://x/cb",
			State: "s", CodeChallenge: "abc", CodeChallengeMethod: "S256"})
	},
}

// TestEveryOperationHasAMethod checks, against the parsed OpenAPI document,
// that every operation has a client method and that the method's request
// reaches that operation (method and path), so that a new operation without
// a method, or a method with a wrong path, fails here.
func TestEveryOperationHasAMethod(t *testing.T) {
	doc := openapitest.Document(t)
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			want[op.OperationID] = true
		}
	}
	var (
		mu   sync.Mutex
		seen []*http.Request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithToken("t"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id := range operations {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !want[id] {
			t.Errorf("the table names %s, which the document does not have", id)
			continue
		}
		mu.Lock()
		seen = nil
		mu.Unlock()
		if err := operations[id](context.Background(), c); err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		mu.Lock()
		got := seen
		mu.Unlock()
		if len(got) != 1 {
			t.Errorf("%s: %d requests, want 1", id, len(got))
			continue
		}
		route, _, err := router.FindRoute(got[0])
		if err != nil {
			t.Errorf("%s: %s %s matches no operation: %v", id, got[0].Method, got[0].URL.Path, err)
			continue
		}
		if route.Operation.OperationID != id {
			t.Errorf("%s: %s %s is operation %s", id, got[0].Method, got[0].URL.Path, route.Operation.OperationID)
		}
	}
	for id, u := range browserOnly {
		req, err := http.NewRequest("GET", u(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Errorf("%s: %s matches no operation: %v", id, req.URL, err)
			continue
		}
		if route.Operation.OperationID != id {
			t.Errorf("%s: %s is operation %s", id, req.URL, route.Operation.OperationID)
		}
		if err := openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: req,
			PathParams: params, Route: route, Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}); err != nil {
			t.Errorf("%s: %s is not a valid request: %v", id, req.URL, err)
		}
	}
	for id := range want {
		if operations[id] == nil && browserOnly[id] == nil {
			t.Errorf("operation %s has no client method in the table", id)
		}
	}
}
