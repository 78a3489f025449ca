// Package credential holds the rules of the credentials posgate issues
// and checks: client secrets (generated, stored as SHA-256), people's
// passwords (argon2id) and the redirect URIs a client may register. It
// knows nothing of HTTP, so that the use cases (internal/service) share
// these rules with the identity provider (internal/auth) without
// depending on net/http.
package credential
