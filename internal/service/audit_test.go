package service_test

import (
	"context"
	"encoding/json"
	"iter"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/pgtest"
	"github.com/posgate/posgate/internal/postgres"
	"github.com/posgate/posgate/internal/service"
)

// readOnly are the use cases that change nothing an operator would audit:
// the operator's reads, and the POS API's use cases, whose writes
// (sessions, transactions, imports by the POS) are the POS's traffic, not
// an operator's change (docs/api.md §22). A use case that is neither here
// nor in auditedWrites fails TestEveryWriteIsAudited.
var readOnly = []string{
	// Operator reads.
	"FindCarouselSettings", "FindCatalogue", "FindClient", "FindCompany", "FindCoupon", "FindLocation", "FindLoyaltyProgram",
	"FindLoyaltyUser", "FindPerson", "FindPOSSystem", "FindPromotion", "FindReceiptPromotion", "FindSession", "FindSlide", "FindTerminal",
	"FindTransaction", "FindWebhookEndpoint", "Impressions", "InteractionsPerHour", "ListAudit", "ListImports", "ListWebhookDeliveries", "ListWebhookEndpoints", "ListCategories", "ListClients", "ListCompanies", "ListKeys", "ListLocations",
	"ListOfflineConflicts", "ListPeople", "ListPOSSystems", "ListProducts", "ListPromotions", "ListReceiptPromotions", "ListSlides", "ListTerminals", "ListTransactions", "SearchCompanyCoupons", "SearchCompanyLoyaltyUsers",
	// The POS API, and the Idempotency-Key records of any route.
	"ActiveCoupons", "BeginCategoryImport", "BeginIdempotent", "BeginProductImport", "BeginPromotionImport", "Carousel",
	"EvaluatePromotions", "OpenTerminalChannel", "LookupCoupon", "OfflineKit", "LookupSettings", "LookupUsers", "RateLimitOf", "ReceiptPromotion",
	"RecordTransaction", "RecordTransactionBatch", "SearchCoupons", "StartInteraction", "ValidateCouponByTransaction",
	// The sandbox clock (docs/api.md §20): demo mode's in-memory time, no
	// stored data; the recordings of the POS clients' calls (§20.3), kept in
	// the demo server's memory only.
	"AdvanceSandboxClock", "AuthorizeRecordings", "SandboxClock", "SetSandboxClock",
}

// auditTarget is what an audited write's entry must name.
type auditTarget struct {
	action, typ, id, company string
	before, after            bool // whether the entry has a before and an after
}

// auditedWrites calls every operator write once, successfully, as the
// admin; each must append exactly one entry.
func auditedWrites(admin *posgate.Principal) map[string]struct {
	call func(ctx context.Context, svc *service.Service) error
	want auditTarget
} {
	str := func(s string) *string { return &s }
	err := func(_ any, err error) error { return err }
	const pos, co = demo.POSSystemID, demo.CompanyID
	type w = struct {
		call func(ctx context.Context, svc *service.Service) error
		want auditTarget
	}
	return map[string]w{
		"CreatePOSSystem": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.CreatePOSSystem(ctx, admin, &service.CreatePOSSystemRequest{ID: "square", Name: "Square"}))
		}, auditTarget{"pos-system.create", "pos-system", "square", "", false, true}},
		"CreateCompany": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.CreateCompany(ctx, admin, pos, &service.CreateCompanyRequest{ID: "new-co", Name: "New"}))
		}, auditTarget{"company.create", "company", "new-co", "new-co", false, true}},
		"UpdateCompany": {func(ctx context.Context, svc *service.Service) error {
			off := false
			return err(svc.UpdateCompany(ctx, admin, pos, co, &service.UpdateCompanyRequest{Name: str("Renamed"), Features: &service.FeaturePatch{Carousel: &off}}))
		}, auditTarget{"company.update", "company", co, co, true, true}},
		"CreateLocation": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.CreateLocation(ctx, admin, pos, &service.CreateLocationRequest{ID: "LOC-NEW", CompanyID: co, Name: "New"}))
		}, auditTarget{"location.create", "location", "LOC-NEW", co, false, true}},
		"UpdateLocation": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.UpdateLocation(ctx, admin, pos, "LOC123", &service.UpdateLocationRequest{Name: str("Main street")}))
		}, auditTarget{"location.update", "location", "LOC123", co, true, true}},
		"CreateTerminal": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.CreateTerminal(ctx, admin, pos, "LOC123", &service.CreateTerminalRequest{ID: "T-NEW", Name: "New"}))
		}, auditTarget{"terminal.create", "terminal", "LOC123/T-NEW", co, false, true}},
		"SetTerminalStatus": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.SetTerminalStatus(ctx, admin, pos, "LOC123", "TERM-05", posgate.StatusDisabled))
		}, auditTarget{"terminal.disable", "terminal", "LOC123/TERM-05", co, true, true}},
		"CreateClient": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.CreateClient(ctx, admin, &service.CreateClientRequest{ID: "c-new", Name: "New", POSSystemID: pos, Scopes: []string{posgate.ScopePOSIntegration}}))
		}, auditTarget{"client.create", "client", "c-new", "", false, true}},
		"SetClientDisabled": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.SetClientDisabled(ctx, admin, demo.POSClientID, true))
		}, auditTarget{"client.disable", "client", demo.POSClientID, "", true, true}},
		"RotateClientSecret": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.RotateClientSecret(ctx, admin, demo.POSClientID))
		}, auditTarget{"client.secret.rotate", "client", demo.POSClientID, "", true, true}},
		"SetClientRateLimit": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.SetClientRateLimit(ctx, admin, demo.POSClientID, &posgate.RateLimit{RequestsPerSecond: 5, Burst: 10}))
		}, auditTarget{"client.rate-limit.set", "client", demo.POSClientID, "", true, true}},
		"ClearClientRateLimit": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.ClearClientRateLimit(ctx, admin, demo.POSClientID))
		}, auditTarget{"client.rate-limit.clear", "client", demo.POSClientID, "", true, true}},
		"RotateKey": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.RotateKey(ctx, admin))
		}, auditTarget{"key.rotate", "key", "", "", false, true}},
		"CreateSlide": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.CreateSlide(ctx, admin, pos, co, &service.CreateSlideRequest{ID: "s-new", ImageURL: "https://example.com/s.png", Title: "New"}))
		}, auditTarget{"slide.create", "slide", "s-new", co, false, true}},
		"UpdateSlide": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.UpdateSlide(ctx, admin, pos, co, "coffee", &service.UpdateSlideRequest{Title: str("Hello")}))
		}, auditTarget{"slide.update", "slide", "coffee", co, true, true}},
		"DeleteSlide": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.DeleteSlide(ctx, admin, pos, co, "welcome"))
		}, auditTarget{"slide.delete", "slide", "welcome", co, true, false}},
		"PutCarouselSettings": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.PutCarouselSettings(ctx, admin, pos, co, &service.PutCarouselSettingsRequest{URLTemplate: str("https://example.com/c?t={terminalId}")}))
		}, auditTarget{"carousel.update", "carousel", co, co, false, true}},
		"PutReceiptPromotion": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.PutReceiptPromotion(ctx, admin, pos, co, "LOC456", &service.PutReceiptPromotionRequest{PrimaryText: "Hi", TargetURL: "https://example.com/r"}))
		}, auditTarget{"receipt-promotion.put", "receipt-promotion", "LOC456", co, false, true}},
		"DeleteReceiptPromotion": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.DeleteReceiptPromotion(ctx, admin, pos, co, "LOC123"))
		}, auditTarget{"receipt-promotion.delete", "receipt-promotion", "LOC123", co, true, false}},
		"IssueCoupon": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.IssueCoupon(ctx, admin, pos, co, &service.CouponInput{Code: "NEW1", RewardProvider: posgate.ProviderPJM}))
		}, auditTarget{"coupon.issue", "coupon", "NEW1", co, false, true}},
		"IssueCouponBatch": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.IssueCouponBatch(ctx, admin, pos, co, couponInputs("B1", "B2")))
		}, auditTarget{"coupon.import", "coupons", co, co, false, true}},
		"ImportCoupons": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.ImportCoupons(ctx, admin, pos, co, couponInputs("I1", "I2", "I3")))
		}, auditTarget{"coupon.import", "coupons", co, co, false, true}},
		"SetCouponStatus": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.SetCouponStatus(ctx, admin, pos, co, demo.DemoEverywhere, posgate.CouponCancelled))
		}, auditTarget{"coupon.cancel", "coupon", demo.DemoEverywhere, co, true, true}},
		"CreateLoyaltyUser": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.CreateLoyaltyUser(ctx, admin, pos, co, &posgate.LoyaltyCard{ID: "u-new", FirstName: "New"}))
		}, auditTarget{"loyalty-user.create", "loyalty-user", "u-new", co, false, true}},
		"UpdateLoyaltyUser": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.UpdateLoyaltyUser(ctx, admin, pos, co, demo.DemoUserID, &service.UpdateLoyaltyUserRequest{PointsDelta: 10}))
		}, auditTarget{"loyalty-user.update", "loyalty-user", demo.DemoUserID, co, true, true}},
		"PutLoyaltyProgram": {func(ctx context.Context, svc *service.Service) error {
			n := int32(2)
			return err(svc.PutLoyaltyProgram(ctx, admin, pos, co, &service.PutLoyaltyProgramRequest{StampsPerSale: &n}))
		}, auditTarget{"loyalty-program.update", "loyalty-program", co, co, true, true}},
		"ReplaceCatalogue": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.ReplaceCatalogue(ctx, admin, pos, co, &service.ReplaceCatalogueRequest{CategoryIDs: []string{"K"}, ProductIDs: []string{"P"}}))
		}, auditTarget{"catalogue.replace", "catalogue", co, co, true, true}},
		"CreatePerson": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.CreatePerson(ctx, admin, &service.CreatePersonRequest{Email: "new@example.com", Name: "New", Password: "a-long-password",
				Role: posgate.RoleCompanyAdmin, POSSystemID: pos, CompanyIDs: []string{co}}))
		}, auditTarget{"person.create", "person", "", co, false, true}},
		"SetPersonDisabled": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.SetPersonDisabled(ctx, admin, demo.ManagerEmail, true))
		}, auditTarget{"person.disable", "person", "demo-manager-person", co, true, true}},
		"SetClientRedirectURIs": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.SetClientRedirectURIs(ctx, admin, demo.SwaggerClientID, []string{"https://example.com/cb"}))
		}, auditTarget{"client.redirect-uris.set", "client", demo.SwaggerClientID, "", true, true}},
		"PutClientRedirectURIs": {func(ctx context.Context, svc *service.Service) error {
			uris := []string{"https://example.com/cb"}
			return err(svc.PutClientRedirectURIs(ctx, admin, demo.SwaggerClientID, &service.ClientRedirectURIsRequest{RedirectURIs: &uris}))
		}, auditTarget{"client.redirect-uris.set", "client", demo.SwaggerClientID, "", true, true}},
		"RefundTransaction": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.RefundTransaction(ctx, admin, pos, co, "SALE-1", &service.OperatorRefundRequest{TransactionID: str("REFUND-1")}))
		}, auditTarget{"transaction.refund", "transaction", "REFUND-1", co, false, true}},
		// Webhook endpoints (docs/api.md §19): auditService seeds wh_audit
		// and wh_gone.
		"CreateWebhookEndpoint": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.CreateWebhookEndpoint(ctx, admin, pos, co, &service.CreateWebhookEndpointRequest{URL: "http://127.0.0.1:9/hook",
				EventTypes: []string{posgate.EventTransactionRecorded}}))
		}, auditTarget{"webhook-endpoint.create", "webhook-endpoint", "", co, false, true}},
		"UpdateWebhookEndpoint": {func(ctx context.Context, svc *service.Service) error {
			off := false
			return err(svc.UpdateWebhookEndpoint(ctx, admin, pos, co, "wh_audit", &service.UpdateWebhookEndpointRequest{Enabled: &off}))
		}, auditTarget{"webhook-endpoint.update", "webhook-endpoint", "wh_audit", co, true, true}},
		"DeleteWebhookEndpoint": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.DeleteWebhookEndpoint(ctx, admin, pos, co, "wh_gone"))
		}, auditTarget{"webhook-endpoint.delete", "webhook-endpoint", "wh_gone", co, true, false}},
		"RotateWebhookSecret": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.RotateWebhookSecret(ctx, admin, pos, co, "wh_audit"))
		}, auditTarget{"webhook-endpoint.rotate-secret", "webhook-endpoint", "wh_audit", co, true, true}},
		"RedeliverWebhooks": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.RedeliverWebhooks(ctx, admin, pos, co, "wh_audit", 0))
		}, auditTarget{"webhook-endpoint.redeliver", "webhook-endpoint", "wh_audit", co, false, true}},
		"SendTestWebhook": {func(ctx context.Context, svc *service.Service) error {
			return err(svc.SendTestWebhook(ctx, admin, pos, co, "wh_audit"))
		}, auditTarget{"webhook-endpoint.test", "webhook-endpoint", "wh_audit", co, false, true}},
	}
}

// locationOf is the target location of the writes of something of a
// location; the others name none.
var locationOf = map[string]string{"CreateLocation": "LOC-NEW", "UpdateLocation": "LOC123", "CreateTerminal": "LOC123",
	"SetTerminalStatus": "LOC123", "SetPersonDisabled": "LOC123", "PutReceiptPromotion": "LOC456", "DeleteReceiptPromotion": "LOC123", "RefundTransaction": "LOC123"}

// couponInputs yields minimal coupon inputs.
func couponInputs(codes ...string) iter.Seq2[*service.CouponInput, error] {
	return func(yield func(*service.CouponInput, error) bool) {
		for _, c := range codes {
			if !yield(&service.CouponInput{Code: c, RewardProvider: posgate.ProviderPJM}, nil) {
				return
			}
		}
	}
}

// auditService is newService with a key rotator, a fixed clock, a sale to
// refund, and the CLI's origin.
func auditService(t *testing.T, now time.Time, st posgate.Store) (*service.Service, posgate.Store) {
	t.Helper()
	svc := service.New(st, service.Config{BaseURL: "http://posgate.test", Now: func() time.Time { return now },
		Keys: rotator{st}, Origin: posgate.AuditOrigin{Channel: posgate.ChannelCLI, UserAgent: "posgate-cli"}, WebhookAllowLoopback: true})
	for _, id := range []string{"wh_audit", "wh_gone"} {
		if err := st.CreateWebhookEndpoint(t.Context(), &posgate.WebhookEndpoint{ID: id, POSSystemID: demo.POSSystemID, CompanyID: demo.CompanyID,
			URL: "http://127.0.0.1:9/" + id, EventTypes: []string{posgate.EventTransactionRecorded}, Enabled: true, Secret: "whsec_dGVzdA=="}); err != nil {
			t.Fatal(err)
		}
	}
	str := func(s string) *string { return &s }
	amount := posgate.Amount(1250)
	date := now.Add(-time.Minute)
	sale := "Sale"
	pos := &posgate.Principal{ClientID: "pos", Scopes: []string{posgate.ScopePOSIntegration}, POSSystemID: demo.POSSystemID}
	in, err := svc.StartInteraction(t.Context(), pos, demo.POSSystemID, &service.StartInteractionRequest{PosLocationID: str("LOC123"), TerminalID: str("TERM-05")})
	if err != nil {
		t.Fatalf("StartInteraction: %v", err)
	}
	if _, err := svc.RecordTransaction(t.Context(), pos, demo.POSSystemID, &service.TransactionRequest{SessionID: in.SessionID, TransactionID: str("SALE-1"),
		TerminalID: str("TERM-05"), PosLocationID: str("LOC123"), TransactionType: &sale, TransactionAmount: &amount, TransactionDate: &date}); err != nil {
		t.Fatalf("RecordTransaction: %v", err)
	}
	return svc, st
}

// forEachServiceStore runs fn over newService's data set in a SQLite
// store and, when configured, a PostgreSQL one: each store joins the
// writes to Atomic's transaction its own way.
func forEachServiceStore(t *testing.T, fn func(t *testing.T, st posgate.Store)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, newServiceStore(t)) })
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		seedServiceStore(t, st)
		fn(t, st)
	})
}

// rotator rotates signing keys on the store, as the CLI's does.
type rotator struct{ st posgate.Store }

func (r rotator) Rotate(ctx context.Context) (*posgate.SigningKey, error) {
	return auth.Rotate(ctx, r.st, nil, time.Now().UTC(), time.Hour)
}

// TestEveryWriteIsAudited: every use case is either a read (or the POS's),
// or an operator write that appends exactly one entry naming its action,
// target, actor, channel and time, with the resource before and after.
func TestEveryWriteIsAudited(t *testing.T) {
	forEachServiceStore(t, testEveryWriteIsAudited)
}

func testEveryWriteIsAudited(t *testing.T, st posgate.Store) {
	now := time.Date(2031, 2, 3, 4, 5, 6, 789000000, time.UTC)
	svc, st := auditService(t, now, st)
	admin := &posgate.Principal{ClientID: "ops", Scopes: []string{posgate.ScopeAdmin}}
	writes := auditedWrites(admin)
	principalType := reflect.TypeFor[*posgate.Principal]()
	v := reflect.ValueOf(svc)
	for i := range v.NumMethod() {
		m := v.Type().Method(i)
		mt := m.Type
		if mt.NumIn() < 3 || mt.In(2) != principalType {
			continue
		}
		_, audited := writes[m.Name]
		if audited == slices.Contains(readOnly, m.Name) {
			t.Errorf("%s: list it either in auditedWrites (an operator write, with its audit entry) or in readOnly", m.Name)
		}
	}
	ctx := t.Context()
	names := make([]string, 0, len(writes))
	for name := range writes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w := writes[name]
		before := allEntries(t, st)
		if err := w.call(ctx, svc); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		after := allEntries(t, st)
		if len(after) != len(before)+1 {
			t.Errorf("%s appended %d entries, want 1", name, len(after)-len(before))
			continue
		}
		e := after[0]
		got := auditTarget{e.Action, e.Target.Type, e.Target.ID, e.Target.CompanyID, string(e.Before) != "null", string(e.After) != "null"}
		want := w.want
		if name == "RotateKey" || name == "CreatePerson" || name == "CreateWebhookEndpoint" { // a new id
			want.id = e.Target.ID
		}
		if got != want || e.Time != now.Truncate(time.Microsecond) || e.Channel != posgate.ChannelCLI || e.UserAgent != "posgate-cli" ||
			e.Actor != (posgate.AuditActor{Subject: "ops", Kind: posgate.ActorClient, ClientID: "ops"}) || e.ID == "" ||
			(e.Target.CompanyID != "" && e.Target.POSSystemID != demo.POSSystemID) {
			t.Errorf("%s: entry %+v\n(%+v), want %+v at %s by ops over cli", name, e, got, want, now)
		}
		if want := locationOf[name]; e.Target.LocationID != want {
			t.Errorf("%s: target location %q, want %q", name, e.Target.LocationID, want)
		}
		for _, b := range [][]byte{e.Before, e.After} {
			// An endpoint's previousSecretUntil is when its rotation
			// overlap ends, not a secret.
			text := strings.ReplaceAll(string(b), `"previousSecretUntil"`, "")
			if !json.Valid(b) || strings.Contains(strings.ToLower(text), "secret") || strings.Contains(string(b), "privateKey") ||
				strings.Contains(string(b), "argon2") || strings.Contains(strings.ToLower(string(b)), "password") {
				t.Errorf("%s: before/after %s: want JSON without secrets", name, b)
			}
		}
	}
}

// allEntries lists the whole log, newest first.
func allEntries(t *testing.T, st posgate.Store) []*posgate.AuditEntry {
	t.Helper()
	es, err := st.ListAudit(t.Context(), posgate.AuditQuery{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestFailedWritesAreNotAudited: a write refused by validation, by the
// store (a conflict) or by a rule checked inside the transaction leaves no
// entry, and a change that rolled back leaves neither itself nor its entry.
func TestFailedWritesAreNotAudited(t *testing.T) {
	forEachServiceStore(t, testFailedWritesAreNotAudited)
}

func testFailedWritesAreNotAudited(t *testing.T, st posgate.Store) {
	svc, st := auditService(t, time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC), st)
	admin := &posgate.Principal{ClientID: "ops", Scopes: []string{posgate.ScopeAdmin}}
	ctx := t.Context()
	bad := posgate.Status("Sleeping")
	str := func(s string) *string { return &s }
	for name, call := range map[string]func() error{
		"invalid status": func() error {
			_, err := svc.UpdateCompany(ctx, admin, demo.POSSystemID, demo.CompanyID, &service.UpdateCompanyRequest{Status: &bad})
			return err
		},
		"existing company": func() error {
			_, err := svc.CreateCompany(ctx, admin, demo.POSSystemID, &service.CreateCompanyRequest{ID: demo.CompanyID, Name: "Again"})
			return err
		},
		"slide invalid after the update (checked inside the transaction)": func() error {
			_, err := svc.UpdateSlide(ctx, admin, demo.POSSystemID, demo.CompanyID, "welcome", &service.UpdateSlideRequest{ImageURL: str("not a URL")})
			return err
		},
		"a batch with a duplicate code rolls back its coupons": func() error {
			_, err := svc.IssueCouponBatch(ctx, admin, demo.POSSystemID, demo.CompanyID, couponInputs("DUP-A", demo.DemoEverywhere))
			return err
		},
		"unknown loyalty user": func() error {
			_, err := svc.UpdateLoyaltyUser(ctx, admin, demo.POSSystemID, demo.CompanyID, "nobody", &service.UpdateLoyaltyUserRequest{PointsDelta: 1})
			return err
		},
		"hidden company": func() error {
			r := &posgate.Principal{ClientID: "r", Scopes: []string{posgate.ScopeAdmin}, POSSystemID: demo.POSSystemID, CompanyIDs: []string{"other"}}
			_, err := svc.UpdateCompany(ctx, r, demo.POSSystemID, demo.CompanyID, &service.UpdateCompanyRequest{Name: str("Mine")})
			return err
		},
	} {
		if err := call(); err == nil {
			t.Errorf("%s: no error", name)
		}
		if n := len(allEntries(t, st)); n != 0 {
			t.Fatalf("%s: %d entries, want none", name, n)
		}
	}
	if _, err := st.FindCoupon(ctx, demo.POSSystemID, demo.CompanyID, "DUP-A"); posgate.ErrorCode(err) != posgate.ENOTFOUND {
		t.Fatalf("the failed batch's first coupon: %v, want ENOTFOUND", err)
	}
}

// TestAuditReach: an operator restricted to a company sees the entries of
// its company only; one bound to a POS system those of the POS system; the
// installation's entries (clients, keys) only an unrestricted one.
func TestAuditReach(t *testing.T) {
	svc, _ := auditService(t, time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC), newServiceStore(t))
	admin := &posgate.Principal{ClientID: "ops", Scopes: []string{posgate.ScopeAdmin}}
	ctx := t.Context()
	str := func(s string) *string { return &s }
	for _, co := range []string{demo.CompanyID, "other"} {
		if _, err := svc.UpdateCompany(ctx, admin, demo.POSSystemID, co, &service.UpdateCompanyRequest{Name: str("Renamed " + co)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.SetClientDisabled(ctx, admin, demo.POSClientID, true); err != nil {
		t.Fatal(err)
	}
	targets := func(p *posgate.Principal, req *service.ListAuditRequest) []string {
		t.Helper()
		page, err := svc.ListAudit(ctx, p, req)
		if err != nil {
			t.Fatalf("ListAudit(%+v): %v", req, err)
		}
		out := []string{}
		for _, e := range page.Entries {
			out = append(out, e.Target.Type+":"+e.Target.ID)
		}
		return out
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	onlyOther := &posgate.Principal{ClientID: "r", Scopes: []string{posgate.ScopeAdmin}, POSSystemID: demo.POSSystemID, CompanyIDs: []string{"other"}}
	clover := &posgate.Principal{ClientID: "c", Scopes: []string{posgate.ScopeAdmin}, POSSystemID: demo.POSSystemID}
	pax := &posgate.Principal{ClientID: "p", Scopes: []string{posgate.ScopeAdmin}, POSSystemID: "pax"}
	check("unrestricted", targets(admin, &service.ListAuditRequest{}), []string{"client:" + demo.POSClientID, "company:other", "company:" + demo.CompanyID})
	check("bound to the POS system", targets(clover, &service.ListAuditRequest{}), []string{"company:other", "company:" + demo.CompanyID})
	check("restricted to one company", targets(onlyOther, &service.ListAuditRequest{}), []string{"company:other"})
	check("restricted, asking for another company", targets(onlyOther, &service.ListAuditRequest{CompanyID: demo.CompanyID}), []string{})
	check("another POS system", targets(pax, &service.ListAuditRequest{}), []string{})

	// Paging: one entry a page, by cursor, to the end.
	one := 1
	var seen []string
	req := &service.ListAuditRequest{PageSize: &one}
	for {
		page, err := svc.ListAudit(ctx, admin, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			seen = append(seen, e.Target.ID)
		}
		if page.NextCursor == nil {
			break
		}
		req = &service.ListAuditRequest{PageSize: &one, Cursor: *page.NextCursor}
	}
	check("paged one by one", seen, []string{demo.POSClientID, "other", demo.CompanyID})
	for _, bad := range []*service.ListAuditRequest{{Cursor: "nope"}, {From: "yesterday"}, {PageSize: new(int)}} {
		if _, err := svc.ListAudit(ctx, admin, bad); posgate.ErrorCode(err) != posgate.EINVALID {
			t.Errorf("ListAudit(%+v): %v, want EINVALID", bad, err)
		}
	}

	// A location manager (a person) sees only the entries of its locations.
	manager := &posgate.Principal{ClientID: "portal", PersonID: "demo-manager-person", Scopes: []string{posgate.ScopeAdmin},
		POSSystemID: demo.POSSystemID, LocationIDs: []string{"LOC123"}}
	check("a location manager before any change at its location", targets(manager, &service.ListAuditRequest{}), []string{})
	if _, err := svc.SetTerminalStatus(ctx, admin, demo.POSSystemID, "LOC-O", "T-O", posgate.StatusDisabled); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetTerminalStatus(ctx, manager, demo.POSSystemID, "LOC123", "TERM-06", posgate.StatusDisabled); err != nil {
		t.Fatal(err)
	}
	check("a location manager", targets(manager, &service.ListAuditRequest{}), []string{"terminal:LOC123/TERM-06"})
	check("a location manager asking for another location", targets(manager, &service.ListAuditRequest{LocationID: "LOC-O"}), []string{})
	check("a location manager of no POS system", targets(&posgate.Principal{ClientID: "x", Scopes: []string{posgate.ScopeAdmin},
		LocationIDs: []string{"LOC123"}}, &service.ListAuditRequest{}), []string{})
	page, err := svc.ListAudit(ctx, admin, &service.ListAuditRequest{TargetType: "terminal", TargetID: "LOC123/TERM-06"})
	if err != nil || len(page.Entries) != 1 {
		t.Fatalf("the manager's change: %v %v", page, err)
	}
	if got, want := page.Entries[0].Actor, (posgate.AuditActor{Subject: "demo-manager-person", Kind: posgate.ActorPerson, ClientID: "portal"}); got != want {
		t.Errorf("a person's change is recorded by %+v, want %+v", got, want)
	}
}

// TestAuditedWritesNeedOneConnection: on PostgreSQL every operator write
// but the imports runs on the one connection of its Atomic transaction, its
// reads included, so that concurrent writes cannot take the whole pool and
// then wait for a second connection each. (A coupon import checks its
// companies on a second connection while its own copies, as it did before
// the audit log.)
func TestAuditedWritesNeedOneConnection(t *testing.T) {
	st, err := postgres.Open(context.Background(), pgtest.DSN(t)+"&pool_max_conns=1", postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seedServiceStore(t, st)
	svc, _ := auditService(t, time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC), st)
	admin := &posgate.Principal{ClientID: "ops", Scopes: []string{posgate.ScopeAdmin}}
	for name, w := range auditedWrites(admin) {
		if name == "IssueCouponBatch" || name == "ImportCoupons" {
			continue
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		err := w.call(ctx, svc)
		cancel()
		if err != nil {
			t.Errorf("%s on a pool of one connection: %v", name, err)
		}
	}
}
