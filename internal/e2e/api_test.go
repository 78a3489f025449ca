package e2e

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate/client"
)

// api is the public Go client (package client) with one access token: the
// e2e tests send their well-formed requests with it, as an integration
// would, and keep raw HTTP (s.do) for malformed input. Every answer passes
// the OpenAPI validation of the harness and is recorded, so that a test
// still asserts exact bodies: answer returns the exchange a call made.
type api struct {
	*client.Client
	t   *testing.T
	rec *recorder
}

// recorder keeps the last exchange that went through it.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	last response
	n    int
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	r.mu.Lock()
	r.last = response{Status: resp.StatusCode, Header: resp.Header, Body: b, Close: resp.Close}
	r.n++
	r.mu.Unlock()
	return resp, nil
}

// api returns a client of s that sends token. It makes one attempt per
// call (a retry would hide what the server answered) with generous time
// limits for this loaded machine.
func (s *server) api(t *testing.T, token string, opts ...client.Option) *api {
	t.Helper()
	rec := &recorder{next: s.http.Transport}
	c, err := client.New(s.base, append([]client.Option{
		client.WithHTTPClient(&http.Client{Transport: rec}),
		client.WithToken(token),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 1}),
		client.WithTimeouts(20*time.Second, 60*time.Second),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &api{Client: c, t: t, rec: rec}
}

// posAPI and adminAPI are clients with the demo POS and operator tokens.
func (s *server) posAPI(t *testing.T) *api   { return s.api(t, s.posToken(t)) }
func (s *server) adminAPI(t *testing.T) *api { return s.api(t, s.adminToken(t)) }

// answer returns the exchange the call that returned err made: its answer
// when err is nil or a *client.Error (a problem document), for the
// harness's mustBody and mustProblem. Any other error (no answer at all)
// fails the test.
func (a *api) answer(err error) response {
	a.t.Helper()
	var pe *client.Error
	if err != nil && !errors.As(err, &pe) {
		a.t.Fatalf("no answer: %v", err)
	}
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	if pe != nil && (pe.StatusCode != a.rec.last.Status || !bytes.Equal(pe.Body, a.rec.last.Body)) {
		a.t.Fatalf("the recorded answer (%d) is not the error's (%d)", a.rec.last.Status, pe.StatusCode)
	}
	return a.rec.last
}

// ok fails the test unless err is nil, and returns the answer.
func (a *api) ok(err error) response {
	a.t.Helper()
	if err != nil {
		a.t.Fatalf("%v", err)
	}
	return a.answer(nil)
}

// start starts an interaction at terminal of location and returns the
// answer (for mustInteraction).
func (a *api) start(terminal, location string) response {
	a.t.Helper()
	_, err := a.StartInteraction(a.t.Context(), "clover", client.StartInteractionRequest{TerminalID: terminal, PosLocationID: location})
	return a.answer(err)
}
