package service_test

import (
	"context"
	"slices"
	"testing"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// TestLocationReach: a location manager's principal reaches its location
// on the POS API and the operator API, and every other location and every
// company-wide object answers as if absent (hidden = absent), with the
// very message of an unknown one.
func TestLocationReach(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	str := func(s string) *string { return &s }
	mgr := &posgate.Principal{ClientID: "swagger-ui", PersonID: "p", Scopes: []string{posgate.ScopeServiceAPI, posgate.ScopeAdmin},
		POSSystemID: "clover", LocationIDs: []string{"LOC123"}}
	start := func(loc, term string) error {
		_, err := svc.StartInteraction(ctx, mgr, "clover", &service.StartInteractionRequest{PosLocationID: str(loc), TerminalID: str(term)})
		return err
	}
	if err := start("LOC123", "TERM-05"); err != nil {
		t.Fatalf("own location: %v", err)
	}
	for _, loc := range []string{"LOC456", "LOC-O", "LOC-NONE"} {
		if err := start(loc, "T"); posgate.ErrorMessage(err) != "Location '"+loc+"' is not registered." {
			t.Errorf("startInteraction at %s: %v", loc, err)
		}
	}
	locs, err := svc.ListLocations(ctx, mgr, "clover", "")
	if err != nil || len(locs) != 1 || locs[0].ID != "LOC123" {
		t.Fatalf("ListLocations: %v, %v", locs, err)
	}
	terms, err := svc.ListTerminals(ctx, mgr, "clover", "")
	var ids []string
	for _, x := range terms {
		ids = append(ids, x.LocationID)
	}
	if err != nil || len(ids) == 0 || slices.ContainsFunc(ids, func(s string) bool { return s != "LOC123" }) {
		t.Fatalf("ListTerminals: %v, %v", ids, err)
	}
	if cs, err := svc.ListCompanies(ctx, mgr, "clover"); err != nil || len(cs) != 0 {
		t.Fatalf("ListCompanies: %v, %v", cs, err)
	}
	if _, err := svc.FindCompany(ctx, mgr, "clover", "demo-company"); posgate.ErrorCode(err) != posgate.ENOTFOUND {
		t.Fatalf("FindCompany: %v", err)
	}
	if _, err := svc.FindLocation(ctx, mgr, "clover", "LOC456"); posgate.ErrorCode(err) != posgate.ENOTFOUND {
		t.Fatalf("FindLocation(LOC456): %v", err)
	}
	if _, err := svc.CreateCompany(ctx, mgr, "clover", &service.CreateCompanyRequest{ID: "new", Name: "New"}); posgate.ErrorCode(err) != posgate.EFORBIDDEN {
		t.Fatalf("CreateCompany: %v", err)
	}
	if _, err := svc.ListPOSSystems(ctx, mgr); err != nil {
		t.Fatalf("ListPOSSystems: %v", err)
	}
	// People: the manager sees only people within its own reach.
	op := posgate.LocalOperator()
	for _, req := range []*service.CreatePersonRequest{
		{Email: "a@example.com", Name: "A", Password: "a long password", Role: posgate.RoleLocationManager, POSSystemID: "clover", LocationIDs: []string{"LOC123"}},
		{Email: "b@example.com", Name: "B", Password: "a long password", Role: posgate.RoleLocationManager, POSSystemID: "clover", LocationIDs: []string{"LOC456"}},
		{Email: "c@example.com", Name: "C", Password: "a long password", Role: posgate.RolePOSAdmin, POSSystemID: "clover"},
	} {
		if _, err := svc.CreatePerson(ctx, op, req); err != nil {
			t.Fatalf("CreatePerson(%s): %v", req.Email, err)
		}
	}
	people, err := svc.ListPeople(ctx, mgr)
	var emails []string
	for _, p := range people {
		emails = append(emails, p.Email)
	}
	if err != nil || !slices.Equal(emails, []string{"a@example.com", "manager@demo.posgate"}) {
		t.Fatalf("ListPeople of the manager: %v, %v", emails, err)
	}
	if _, err := svc.SetPersonDisabled(ctx, mgr, "c@example.com", true); posgate.ErrorMessage(err) != "Person 'c@example.com' not found." {
		t.Fatalf("disabling a POS admin as a location manager: %v", err)
	}
}
