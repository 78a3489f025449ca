package service_test

import (
	"context"
	"testing"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// TestRateLimitOf: a client's own limit applies; without it and without a
// default there is none; only an unrestricted operator changes it.
func TestRateLimitOf(t *testing.T) {
	ctx := context.Background()
	svc := newService(t)
	pos := &posgate.Principal{ClientID: "demo-pos", Scopes: []string{posgate.ScopePOSIntegration}, POSSystemID: "clover"}
	if l, err := svc.RateLimitOf(ctx, pos); err != nil || l != nil {
		t.Fatalf("no default, no own limit: %v, %v", l, err)
	}
	own := posgate.RateLimit{RequestsPerSecond: 2, Burst: 4}
	if _, err := svc.SetClientRateLimit(ctx, posgate.LocalOperator(), "demo-pos", &own); err != nil {
		t.Fatal(err)
	}
	if l, err := svc.RateLimitOf(ctx, pos); err != nil || l == nil || *l != own {
		t.Fatalf("own limit: %v, %v", l, err)
	}
	if _, err := svc.SetClientRateLimit(ctx, posgate.LocalOperator(), "demo-pos", nil); posgate.ErrorCode(err) != posgate.EINVALID {
		t.Fatalf("nil limit: %v", err)
	}
	restricted := &posgate.Principal{ClientID: "r", Scopes: []string{posgate.ScopeAdmin}, POSSystemID: "clover"}
	if _, err := svc.ClearClientRateLimit(ctx, restricted, "demo-pos"); posgate.ErrorCode(err) != posgate.EFORBIDDEN {
		t.Fatalf("restricted operator: %v", err)
	}
	if _, err := svc.ClearClientRateLimit(ctx, posgate.LocalOperator(), "demo-pos"); err != nil {
		t.Fatal(err)
	}
	if l, err := svc.RateLimitOf(ctx, pos); err != nil || l != nil {
		t.Fatalf("after clearing: %v, %v", l, err)
	}
}

// TestRateLimitOfDefault: the default applies to clients without their
// own limit, and to clients the store does not know.
func TestRateLimitOfDefault(t *testing.T) {
	ctx := context.Background()
	def := posgate.RateLimit{RequestsPerSecond: 100, Burst: 200}
	svc := service.New(newServiceStore(t), service.Config{RateLimit: def})
	for _, id := range []string{"demo-pos", "deleted-client"} {
		if l, err := svc.RateLimitOf(ctx, &posgate.Principal{ClientID: id}); err != nil || l == nil || *l != def {
			t.Fatalf("%s: %v, %v", id, l, err)
		}
	}
}
