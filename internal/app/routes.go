package app

import (
	"net/http"

	"github.com/posgate/posgate/internal/auth"
)

// routes mounts posgate's public HTTP surface side by side: the identity
// provider ({auth_url}, internal/auth), the health checks, the OpenAPI
// document and Swagger UI, the POS and operator APIs (internal/httpapi)
// and the portal (internal/portal). It returns the handler of the API
// listener and, when the identity provider has a listener of its own
// (ownIdentity), that listener's handler; otherwise the identity provider
// is on the API listener and identity is nil. Both go through the API's
// middleware (trace ids, access log, metrics, load shedding), and what no
// route takes is a problem document (404, or 405 with Allow).
func routes(p *parts, ownIdentity bool) (api, identity http.Handler) {
	mux := http.NewServeMux()
	if !ownIdentity {
		identityRoutes(mux, p.auth)
	}
	mux.HandleFunc("GET /healthz", p.api.Healthz)
	mux.HandleFunc("GET /readyz", p.api.Readyz)
	p.api.SwaggerRoutes(mux)
	p.api.Routes(mux)
	// The web portal of the people who sign in (docs/api.md §23): its
	// pages, under /portal, are listed in internal/portal.
	p.portal.Routes(mux)
	mux.HandleFunc("/", p.api.NotFound(mux))
	api = p.recorded(p.api.Middleware(mux))
	if !ownIdentity {
		return api, nil
	}

	own := http.NewServeMux()
	identityRoutes(own, p.auth)
	own.HandleFunc("GET /healthz", p.api.Healthz)
	own.HandleFunc("/", p.api.NotFound(own))
	return api, p.recorded(p.api.Middleware(own))
}

// recorded wraps h in the demo server's recorder (outside the middleware,
// so that a shed request is recorded too); elsewhere h is served as it is.
func (p *parts) recorded(h http.Handler) http.Handler {
	if p.recorder == nil {
		return h
	}
	return p.recorder.Wrap(h)
}

// identityRoutes mounts the identity provider's routes ({auth_url},
// docs/api.md §3, §21).
func identityRoutes(mux *http.ServeMux, a *auth.Auth) {
	mux.Handle("/connect/token", a.TokenHandler())
	mux.Handle("GET /.well-known/openid-configuration", a.DiscoveryHandler())
	mux.Handle("GET /.well-known/openid-configuration/jwks", a.JWKSHandler())
	// The browser side (docs/api.md §21): RFC 8414 metadata, sign-in and
	// the browser flows.
	mux.Handle("GET /.well-known/oauth-authorization-server", a.DiscoveryHandler())
	mux.Handle("GET /connect/authorize", a.AuthorizeHandler())
	mux.Handle("GET "+auth.LoginPath, a.LoginHandler())
	mux.Handle("POST "+auth.LoginPath, a.LoginHandler())
	mux.Handle("POST "+auth.LogoutPath, a.LogoutHandler())
}
