package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	swaggerFiles "github.com/swaggo/files/v2"
)

// The Swagger UI at {base_url}/swagger (docs/api.md §21.5): swagger-ui-dist
// as embedded by the github.com/swaggo/files/v2 module (nothing copied into
// this repository, nothing from a CDN), with posgate's own page and
// initializer, which point it at /swagger/v1/swagger.json and preconfigure
// the demo's browser client "swagger-ui" (implicit flow, and authorization
// code with PKCE).

// swaggerIndex is posgate's page for the Swagger UI; every script is a file
// of the same origin, so the Content-Security-Policy allows only 'self'.
const swaggerIndex = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>posgate API – Swagger UI</title>
<link rel="stylesheet" href="/swagger/swagger-ui.css">
<link rel="stylesheet" href="/swagger/index.css">
<link rel="icon" type="image/png" href="/swagger/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/swagger/swagger-ui-bundle.js"></script>
<script src="/swagger/swagger-ui-standalone-preset.js"></script>
<script src="/swagger/swagger-initializer.js"></script>
</body>
</html>
`

// swaggerInitializer configures the UI: the served document, and the
// "Authorize" dialog filled in for the client swagger-ui with PKCE.
const swaggerInitializer = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "/swagger/v1/swagger.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: "StandaloneLayout",
    oauth2RedirectUrl: window.location.origin + "/swagger/oauth2-redirect.html",
    persistAuthorization: false,
    validatorUrl: null
  });
  window.ui.initOAuth({
    clientId: "swagger-ui",
    scopes: "service_api",
    usePkceWithAuthorizationCodeGrant: true
  });
};
`

// swaggerAssets are the swagger-ui-dist files served as they are: those
// the page loads, and the OAuth2 redirect page (the dist's own index and
// initializer are replaced by posgate's).
var swaggerAssets = map[string]bool{
	"swagger-ui.css": true, "index.css": true, "swagger-ui-bundle.js": true, "swagger-ui-standalone-preset.js": true,
	"favicon-16x16.png": true, "favicon-32x32.png": true, "oauth2-redirect.html": true,
}

// redirectScriptCSP is the Content-Security-Policy of oauth2-redirect.html,
// whose one inline script is allowed by its hash (computed from the
// embedded file, so that an update of the module keeps working).
var redirectScriptCSP = sync.OnceValue(func() string {
	b, _ := fs.ReadFile(swaggerFiles.FS, "oauth2-redirect.html")
	m := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindSubmatch(b)
	if m == nil {
		return "default-src 'none'"
	}
	h := sha256.Sum256(m[1])
	return "default-src 'none'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'; base-uri 'none'; frame-ancestors 'none'"
})

// swaggerCSP lets the UI load only posgate's own files and call only
// posgate (the API and, when it is elsewhere, the identity provider).
func (s *Server) swaggerCSP() string {
	connect := "'self'"
	if u, err := url.Parse(s.cfg.AuthURL); err == nil && u.Host != "" && s.cfg.AuthURL != s.cfg.BaseURL {
		connect += " " + u.Scheme + "://" + u.Host
	}
	return "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
		"connect-src " + connect + "; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

func pageHeaders(w http.ResponseWriter, contentType, csp string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
}

// swaggerPage serves the UI's page at /swagger and /swagger/.
func (s *Server) swaggerPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w, "text/html; charset=utf-8", s.swaggerCSP())
	w.Header().Set("Cache-Control", "no-cache")
	w.Write([]byte(swaggerIndex))
}

// swaggerFile serves the initializer and the swagger-ui-dist files.
func (s *Server) swaggerFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	switch {
	case name == "index.html":
		s.swaggerPage(w, r)
		return
	case name == "swagger-initializer.js":
		pageHeaders(w, "text/javascript; charset=utf-8", s.swaggerCSP())
		w.Header().Set("Cache-Control", "no-cache")
		w.Write([]byte(swaggerInitializer))
		return
	case !swaggerAssets[name]:
		writeProblem(w, r, http.StatusNotFound, "No such route: "+r.Method+" "+r.URL.Path+".", nil)
		return
	}
	b, err := fs.ReadFile(swaggerFiles.FS, name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if strings.HasPrefix(ct, "text/") && !strings.Contains(ct, "charset") {
		ct += "; charset=utf-8"
	}
	csp := s.swaggerCSP()
	if name == "oauth2-redirect.html" {
		csp = redirectScriptCSP()
	}
	pageHeaders(w, ct, csp)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeContent(w, r, name, swaggerModTime, bytes.NewReader(b))
}

// swaggerModTime is zero: the files carry no useful time (embedded), so
// ServeContent sends no Last-Modified and caching rests on max-age.
var swaggerModTime time.Time

// startPage sends a visitor of / (or /docs) to the Swagger UI: the one page
// that shows what posgate offers and lets a person try it.
func (s *Server) startPage(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/swagger", http.StatusFound)
}
