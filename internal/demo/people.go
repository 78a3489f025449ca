package demo

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
)

// The demo's people and its browser client (docs/api.md §21.5, README).
// Their passwords are documented, so they are no secret; their hashes are
// fixed here so that loading the demo (which every end-to-end test does)
// costs no argon2id run.
const (
	AdminEmail      = "admin@demo.posgate"
	AdminPassword   = "demo-admin-password"
	ManagerEmail    = "manager@demo.posgate"
	ManagerPassword = "demo-manager-password"
	// ManagerLocation is the one location the demo's location manager reaches.
	ManagerLocation = "LOC123"

	// SwaggerClientID is the public client of the Swagger UI at /swagger:
	// implicit flow and authorization code flow with PKCE.
	SwaggerClientID = "swagger-ui"
	// SwaggerRedirectPath is its redirect URI's path under {base_url}.
	SwaggerRedirectPath = "/swagger/oauth2-redirect.html"
	// DefaultBaseURL is the base URL of `posgate serve` on its default
	// --listen, registered for the Swagger UI by Load.
	DefaultBaseURL = "http://localhost:8080"

	adminPasswordHash   = "$argon2id$v=19$m=65536,t=3,p=2$+MW2uU0x38xOX3wTWUQbtA$euNXvsujnRZTY3z05LB1JJHpugRrCHtNysRu+DJ3mSg"
	managerPasswordHash = "$argon2id$v=19$m=65536,t=3,p=2$hDof2T21OQyHYdoVY/hjqg$orGGProYmXtBIwodN4qusYgBX3UMzSlLiEOX86YloKw"
)

// loadPeople adds the demo admin, the location manager of LOC123 and the
// Swagger UI client (redirect URI on DefaultBaseURL).
func loadPeople(ctx context.Context, st posgate.Store) error {
	for _, p := range []*posgate.Person{
		{ID: "demo-admin-person", Email: AdminEmail, Name: "Demo admin", PasswordHash: adminPasswordHash, Role: posgate.RoleAdmin},
		{ID: "demo-manager-person", Email: ManagerEmail, Name: "Demo location manager", PasswordHash: managerPasswordHash,
			Role: posgate.RoleLocationManager, POSSystemID: POSSystemID, LocationIDs: []string{ManagerLocation}},
	} {
		if err := st.CreatePerson(ctx, p); err != nil && !errors.Is(err, posgate.ErrConflict) {
			return err
		}
	}
	// A browser cannot keep a secret: the client gets a random one that
	// nobody learns (the client credentials grant refuses it anyway).
	secret, err := credential.GenerateSecret()
	if err != nil {
		return err
	}
	c := &posgate.Client{ID: SwaggerClientID, Name: "Swagger UI", POSSystemID: POSSystemID,
		Scopes: []string{posgate.ScopeServiceAPI, posgate.ScopeAdmin}, SecretHash: credential.HashSecret(secret)}
	if err := st.CreateClient(ctx, c); err != nil && !errors.Is(err, posgate.ErrConflict) {
		return err
	}
	return RegisterSwaggerUI(ctx, st, DefaultBaseURL)
}

// RegisterSwaggerUI adds baseURL's Swagger UI redirect URI to the demo's
// swagger-ui client, keeping those registered before: `posgate serve
// --demo` calls it with its own base URL.
func RegisterSwaggerUI(ctx context.Context, st posgate.Store, baseURL string) error {
	uris, err := st.ClientRedirectURIs(ctx, SwaggerClientID)
	if err != nil {
		return err
	}
	u := strings.TrimSuffix(baseURL, "/") + SwaggerRedirectPath
	if slices.Contains(uris, u) {
		return nil
	}
	return st.SetClientRedirectURIs(ctx, SwaggerClientID, append(uris, u))
}
