// Package e2e holds posgate's end-to-end tests: the real server (app.Serve)
// on 127.0.0.1:0, real HTTP, on SQLite and, when POSGATE_TEST_POSTGRES_DSN
// is set, on PostgreSQL; every response is validated against the OpenAPI
// document.
//
// The tests call posgate through its public Go client (package client), as
// an integration does: s.api(t, token) is a client whose answers are
// validated and recorded for exact-body checks (api.answer), and s.call,
// s.pos, s.admin and s.request send a request a test writes out as JSON
// through the client whenever the client's types carry it exactly. Raw HTTP
// (s.do) stays for malformed input, other content types, odd headers and
// undocumented routes; TestRoutesUseTheClient checks that split.
package e2e
