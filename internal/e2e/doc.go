// Package e2e holds posgate's end-to-end tests: the real server (app.Serve)
// on 127.0.0.1:0, real HTTP, on SQLite and, when POSGATE_TEST_POSTGRES_DSN
// is set, on PostgreSQL; every response is validated against the OpenAPI
// document.
package e2e
