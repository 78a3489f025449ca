package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/demo"
	"github.com/posgate/posgate/internal/service"
	"github.com/posgate/posgate/internal/sqlite"
)

// newService returns the use cases over a fresh SQLite store holding the
// demo data set and a second company, "other", with location LOC-O and
// terminal T-O, so that tenancy can be tried.
func newService(t *testing.T) *service.Service {
	t.Helper()
	return service.New(newServiceStore(t), service.Config{BaseURL: "http://posgate.test"})
}

// newServiceStore is newService's store.
func newServiceStore(t *testing.T) posgate.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "service.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seedServiceStore(t, st)
	return st
}

// seedServiceStore loads newService's data set into st.
func seedServiceStore(t *testing.T, st posgate.Store) {
	t.Helper()
	ctx := context.Background()
	if err := demo.Load(ctx, st); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		st.CreateCompany(ctx, &posgate.Company{POSSystemID: "clover", ID: "other", Name: "Other", Status: posgate.StatusActive, Features: posgate.AllFeaturesOn()}),
		st.CreateLocation(ctx, &posgate.Location{POSSystemID: "clover", ID: "LOC-O", CompanyID: "other", Name: "Other's", Status: posgate.StatusActive}),
		st.CreateTerminal(ctx, &posgate.Terminal{POSSystemID: "clover", LocationID: "LOC-O", ID: "T-O", Name: "T-O", Status: posgate.StatusActive}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// linkAuthorised are the exported methods that take no principal because
// a signed link authorises them (the customer screen and the printer hold
// no token), and the access checks themselves. Every other exported method
// must take a *posgate.Principal.
var linkAuthorised = []string{"AuthorizeOperator", "AuthorizePOS", "CarouselContent", "CheckCarouselLink", "QRTarget", "Ready", "RecordImpression"}

// TestNoPrincipalNoAccess calls every use case that takes a principal with
// none (and zero values for everything else): each must refuse with
// EUNAUTHORIZED before it looks at its arguments or the store. A new use case
// is covered without being listed; one that takes no principal fails the
// test unless a signed link authorises it.
func TestNoPrincipalNoAccess(t *testing.T) {
	svc := reflect.ValueOf(newService(t))
	principalType := reflect.TypeFor[*posgate.Principal]()
	ctxType := reflect.TypeFor[context.Context]()
	checked := 0
	for i := range svc.NumMethod() {
		name := svc.Type().Method(i).Name
		m := svc.Method(i)
		mt := m.Type()
		takesPrincipal := mt.NumIn() >= 2 && mt.In(0) == ctxType && mt.In(1) == principalType
		if !takesPrincipal {
			if !slices.Contains(linkAuthorised, name) {
				t.Errorf("%s takes no principal: every use case must (or be authorised by a signed link and listed in linkAuthorised)", name)
			}
			continue
		}
		args := []reflect.Value{reflect.ValueOf(context.Background())}
		for j := 1; j < mt.NumIn(); j++ {
			args = append(args, reflect.Zero(mt.In(j)))
		}
		out := m.Call(args)
		err, _ := out[len(out)-1].Interface().(error)
		if code := posgate.ErrorCode(err); code != posgate.EUNAUTHORIZED {
			t.Errorf("%s with no principal: error %v (code %q), want code %q", name, err, code, posgate.EUNAUTHORIZED)
		}
		checked++
	}
	if checked < 7 {
		t.Fatalf("only %d use cases take a principal; the POS API alone has 7", checked)
	}
}

// TestLinkAuthorisedUseCasesRefuseNoLink: the use cases authorised by a
// signed carousel link refuse an empty or forged one.
func TestLinkAuthorisedUseCasesRefuseNoLink(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	forged := service.CarouselLink{POSSystemID: "clover", CompanyID: "demo-company", LocationID: "LOC123", TerminalID: "TERM-05",
		Expires: time.Now().Add(time.Hour).Unix(), Sig: "AAAA"}
	for _, l := range []service.CarouselLink{{}, forged} {
		if _, err := svc.CarouselContent(ctx, l); posgate.ErrorCode(err) != posgate.EFORBIDDEN {
			t.Errorf("CarouselContent(%+v): %v, want EFORBIDDEN", l, err)
		}
		slide := "welcome"
		if _, err := svc.RecordImpression(ctx, l, &service.ImpressionRequest{SlideID: &slide}); posgate.ErrorCode(err) != posgate.EFORBIDDEN {
			t.Errorf("RecordImpression(%+v): %v, want EFORBIDDEN", l, err)
		}
	}
	if _, err := svc.QRTarget(ctx, map[string][]string{"d": {"aHR0cHM6Ly9lLmNv"}, "sig": {"AAAA"}}); posgate.ErrorCode(err) != posgate.EFORBIDDEN {
		t.Errorf("QRTarget with a forged signature: %v, want EFORBIDDEN", err)
	}
}

// TestPOSAccess applies the POS API's access rules in the service itself:
// scope, POS system, and company restrictions (hidden = absent, with the
// very message of an unknown location).
func TestPOSAccess(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	str := func(s string) *string { return &s }
	start := func(p *posgate.Principal, loc, term string) (*service.Interaction, error) {
		return svc.StartInteraction(ctx, p, "clover", &service.StartInteractionRequest{PosLocationID: str(loc), TerminalID: str(term)})
	}
	pos := &posgate.Principal{ClientID: "pos", Scopes: []string{posgate.ScopePOSIntegration}, POSSystemID: "clover"}
	restricted := &posgate.Principal{ClientID: "r", Scopes: []string{posgate.ScopeServiceAPI}, POSSystemID: "clover", CompanyIDs: []string{"demo-company"}}
	admin := &posgate.Principal{ClientID: "admin", Scopes: []string{posgate.ScopeAdmin}}
	otherPOS := &posgate.Principal{ClientID: "pax", Scopes: []string{posgate.ScopePOSIntegration}, POSSystemID: "pax"}

	if out, err := start(pos, "LOC-O", "T-O"); err != nil || out.PosStatus != posgate.PosAccepted || out.SessionID == nil {
		t.Fatalf("unrestricted client at another company's terminal: %+v, %v", out, err)
	}
	if out, err := start(restricted, "LOC123", "TERM-05"); err != nil || out.PosStatus != posgate.PosAccepted {
		t.Fatalf("restricted client at its own company: %+v, %v", out, err)
	}
	_, hidden := start(restricted, "LOC-O", "T-O")
	_, unknown := start(restricted, "LOC-NONE", "T-O")
	if posgate.ErrorCode(hidden) != posgate.ENOTFOUND || posgate.ErrorMessage(hidden) != "Location 'LOC-O' is not registered." ||
		posgate.ErrorMessage(unknown) != "Location 'LOC-NONE' is not registered." {
		t.Fatalf("hidden location: %v; unknown location: %v", hidden, unknown)
	}
	for name, p := range map[string]*posgate.Principal{"admin scope": admin, "another POS system": otherPOS} {
		if _, err := start(p, "LOC123", "TERM-05"); posgate.ErrorCode(err) != posgate.EFORBIDDEN {
			t.Errorf("%s: %v, want EFORBIDDEN", name, err)
		}
	}
	// A restricted client's search without a location never sees the other
	// company's coupons; with the hidden location it gets the same 404.
	res, err := svc.SearchCoupons(ctx, restricted, "clover", &service.SearchCouponsRequest{Code: str("Sl75Ev")})
	if err != nil || res.Page.Total != 1 {
		t.Fatalf("restricted search of its own company's coupon: %+v, %v", res, err)
	}
	if _, err := svc.SearchCoupons(ctx, restricted, "clover", &service.SearchCouponsRequest{Code: str("Sl75Ev"), PosLocationID: str("LOC-O")}); !errors.Is(err, posgate.ErrNotFound) {
		t.Fatalf("restricted search at a hidden location: %v, want ENOTFOUND", err)
	}
	if _, err := svc.BeginPromotionImport(ctx, restricted, "clover", "other"); posgate.ErrorMessage(err) != "Company 'other' is not registered." {
		t.Fatalf("restricted import into a hidden company: %v", err)
	}
}
