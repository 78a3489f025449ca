package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	ctx context.Context // the calls' context: t's, or one with an Idempotency-Key
	rec *answerRecorder
}

// answerRecorder keeps the last exchange that went through it.
type answerRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	last response
	n    int
	sent *atomic.Int64 // the server's count of requests the client sent
}

// clientRequests counts, per server, the requests its clients sent (for
// TestRoutesUseTheClient).
var clientRequests sync.Map // *server → *atomic.Int64

func (s *server) clientRequests() *atomic.Int64 {
	n, _ := clientRequests.LoadOrStore(s, new(atomic.Int64))
	return n.(*atomic.Int64)
}

func (r *answerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
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
	if r.sent != nil {
		r.sent.Add(1)
	}
	return resp, nil
}

// api returns a client of s that sends token. It makes one attempt per
// call (a retry would hide what the server answered) with generous time
// limits for this loaded machine.
func (s *server) api(t *testing.T, token string, opts ...client.Option) *api {
	t.Helper()
	rec := &answerRecorder{next: s.http.Transport, sent: s.clientRequests()}
	c, err := client.New(s.base, append([]client.Option{
		client.WithHTTPClient(&http.Client{Transport: rec}),
		client.WithToken(token),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 1}),
		client.WithTimeouts(20*time.Second, 60*time.Second),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &api{Client: c, t: t, ctx: t.Context(), rec: rec}
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

// decodeExact decodes body into a T and reports whether T carries all of it:
// the body is one JSON object without repeated properties, every property
// is one of T's, and T encodes back to the same JSON (numbers by value,
// nothing dropped or added). A body for which it reports false (malformed,
// unknown or misspelt properties, nulls, values the client's types cannot
// hold) is one a test must send as raw HTTP.
func decodeExact[T any](body string) (T, bool) {
	var v T
	if !oneObject(body) {
		return v, false
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if dec.Decode(&v) != nil || dec.More() {
		return v, false
	}
	again, err := json.Marshal(v)
	if err != nil {
		return v, false
	}
	a, okA := canonical(body)
	b, okB := canonical(string(again))
	return v, okA && okB && reflect.DeepEqual(a, b)
}

// oneObject reports whether body is a single JSON object whose objects
// never repeat a property (encoding/json would keep the last silently).
func oneObject(body string) bool {
	dec := json.NewDecoder(strings.NewReader(body))
	var walk func(first bool) bool
	walk = func(first bool) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		d, isDelim := tok.(json.Delim)
		if first && d != '{' {
			return false
		}
		if !isDelim {
			return true
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil || seen[k.(string)] {
					return false
				}
				seen[k.(string)] = true
				if !walk(false) {
					return false
				}
			}
		case '[':
			for dec.More() {
				if !walk(false) {
					return false
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err == nil
	}
	if !walk(true) {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF
}

// canonical is body as a generic value with its numbers as exact decimals,
// so that 12.50 and 12.5 compare equal and 12.345 does not meet 12.35.
func canonical(body string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	var fix func(any) any
	fix = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k := range x {
				x[k] = fix(x[k])
			}
		case []any:
			for i := range x {
				x[i] = fix(x[i])
			}
		case json.Number:
			r, ok := new(big.Rat).SetString(string(x))
			if ok {
				return r.RatString()
			}
		case string:
			// Date-times written with another offset or fraction are the
			// same instant; the client writes them in UTC.
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil && strings.Contains(x, "T") {
				return "time:" + t.UTC().Format(time.RFC3339Nano)
			}
		}
		return v
	}
	return fix(v), true
}

// sendJSON posts body through the client as a T with call when decodeExact
// accepts it, and as raw JSON to path with token otherwise; either way it
// returns the answer (E2E_TRACE_RAW=1 logs the bodies sent raw). Tests whose bodies are written out as JSON (the exact
// text matters to the reader) use it: the well-formed ones go through the
// client like an integration's, the malformed ones stay raw.
func sendJSON[T any](a *api, s *server, token, path, body string, call func(ctx context.Context, v T) error) response {
	a.t.Helper()
	if v, ok := decodeFor[T](a.ctx, body); ok {
		a.rec.mu.Lock()
		before := a.rec.n
		a.rec.mu.Unlock()
		err := call(a.ctx, v)
		a.rec.mu.Lock()
		sent := a.rec.n > before
		a.rec.mu.Unlock()
		if sent {
			return a.answer(err)
		}
		a.t.Fatalf("the client sent nothing: %v", err)
	}
	if os.Getenv("E2E_TRACE_RAW") != "" {
		a.t.Logf("RAWSEND %s %.150s", path, body)
	}
	return s.do(a.t, rawReq(a.ctx, req{Method: "POST", Path: path, Token: token, ContentType: "application/json", Body: body}))
}

// decodeFor is decodeExact, and with an Idempotency-Key in ctx also
// demands that the client would send body byte for byte (the key's
// fingerprint is the bytes, docs/api.md §14).
func decodeFor[T any](ctx context.Context, body string) (T, bool) {
	v, ok := decodeExact[T](body)
	if _, keyed := ctx.Value(keyCtx{}).(string); ok && keyed {
		b, err := json.Marshal(v)
		ok = err == nil && string(b) == body
	}
	return v, ok
}

// TestDecodeExact: only bodies the client's types carry whole go through
// the client; the rest stay raw HTTP, as malformed input must.
func TestDecodeExact(t *testing.T) {
	type T = client.TransactionRequest
	for body, want := range map[string]bool{
		`{"transactionId":"T-1","terminalId":"A","posLocationId":"L","transactionAmount":12.50,"transactionDate":"2026-01-02T03:04:05Z"}`:                                                            true,
		`{"transactionId":"T-1","terminalId":"A","posLocationId":"L","transactionAmount":12.345,"transactionDate":"2026-01-02T03:04:05.000Z","products":[{"productId":"P","price":1,"quantity":2}]}`: true,
		`{"transactionId":"T-1","terminalId":"A","posLocationId":"L","transactionAmount":0,"transactionDate":"2026-01-02T03:04:05Z"}`:                                                                true,
		// missing required amount: the client would send 0
		`{"transactionId":"T-1","terminalId":"A","posLocationId":"L","transactionDate":"2026-01-02T03:04:05Z"}`:                                             false,
		`{"transactionId":"T-1","terminalId":"A","posLocationId":"L","transactionAmount":1,"transactionDate":"2026-01-02T03:04:05Z","x":1}`:                 false,
		`{"transactionId":"T-1","TerminalId":"A","posLocationId":"L","transactionAmount":1,"transactionDate":"2026-01-02T03:04:05Z"}`:                       false,
		`{"transactionId":"T-1","transactionId":"T-2","terminalId":"A","posLocationId":"L","transactionAmount":1,"transactionDate":"2026-01-02T03:04:05Z"}`: false,
		`{"transactionId":"T-1","terminalId":"A","posLocationId":"L","transactionAmount":1,"transactionDate":"2026-01-02T03:04:05Z","sessionId":null}`:      false,
		`{"transactionId":"T-1","terminalId":"A","posLocationId":"L","transactionAmount":1,"transactionDate":"2026-01-02T03:04:05Z","sessionId":""}`:        false,
		`{"transactionId":"T-1","terminalId":"A","posLocationId":"L","transactionAmount":"1","transactionDate":"2026-01-02T03:04:05Z"}`:                     false,
		`{"transactionId":"T-1","terminalId":"A","posLocationId":"L","transactionAmount":1,"transactionDate":"2026-01-02T03:04:05Z"} {}`:                    false,
		`[{"transactionId":"T-1"}]`: false,
		`{"transactionId":"T-1"`:    false,
	} {
		if _, got := decodeExact[T](body); got != want {
			t.Errorf("decodeExact(%s) = %v, want %v", body, got, want)
		}
	}
}

// pos sends a JSON body to a POS route (POST) with token, through the
// client when it has the route, the path is one the client would build and
// the body and query are ones its types carry exactly; as raw HTTP
// otherwise. The tests that write their bodies out as JSON call it where
// they called s.pos(t, …).
func (s *server) pos(t *testing.T, token, target, body string) response {
	t.Helper()
	return s.posWith(t.Context(), t, token, target, body)
}

// posWith is pos with the calls' context (WithIdempotencyKey).
func (s *server) posWith(ctx context.Context, t *testing.T, token, target, body string) response {
	t.Helper()
	p, rawQuery, _ := strings.Cut(target, "?")
	seg := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i := range seg {
		u, err := url.PathUnescape(seg[i])
		if err != nil {
			return s.do(t, rawReq(ctx, posJSON(token, target, body)))
		}
		seg[i] = u
	}
	a := s.api(t, token)
	a.ctx = ctx
	match := func(pattern string, params ...*string) bool {
		ps := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
		if len(ps) != len(seg) {
			return false
		}
		var got []string
		for i := range ps {
			if ps[i] == "*" {
				got = append(got, seg[i])
			} else if ps[i] != seg[i] {
				return false
			}
		}
		// The client escapes each parameter itself: the path must be the one
		// it would send.
		esc := make([]any, len(got))
		for i, g := range got {
			esc[i] = url.PathEscape(g)
		}
		if fmt.Sprintf(strings.ReplaceAll(pattern, "*", "%s"), esc...) != p {
			return false
		}
		for i := range params {
			*params[i] = got[i]
		}
		return true
	}
	var sys, co string
	noQuery := rawQuery == ""
	switch {
	case noQuery && match("/pos/*/startInteraction", &sys):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.StartInteractionRequest) error {
			_, err := a.StartInteraction(ctx, sys, v)
			return err
		})
	case match("/pos/*/coupon/couponCode/search", &sys):
		if pg, ok := pageOptions(rawQuery); ok {
			return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.CouponSearchRequest) error {
				_, err := a.SearchCoupons(ctx, sys, v, pg)
				return err
			})
		}
	case noQuery && match("/v2/pos/*/coupon/couponCodes/lookup", &sys):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.CouponLookupRequest) error {
			_, err := a.LookupCouponCodes(ctx, sys, v)
			return err
		})
	case noQuery && match("/v2/pos/*/loyaltyCard/users/lookup", &sys):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.LoyaltyUserLookupRequest) error {
			_, err := a.LookupLoyaltyUsers(ctx, sys, v)
			return err
		})
	case noQuery && match("/v2/pos/*/carousel", &sys):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.CarouselRequest) error {
			_, err := a.GetCarouselURL(ctx, sys, v)
			return err
		})
	case noQuery && match("/v2/pos/*/promotions/evaluate", &sys):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.EvaluateRequest) error {
			_, err := a.EvaluatePromotions(ctx, sys, v)
			return err
		})
	case noQuery && match("/v2/pos/*/settings/lookup", &sys):
		type lookup struct {
			PosCompanyID string `json:"posCompanyId"`
		}
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v lookup) error {
			_, err := a.LookupSettings(ctx, sys, v.PosCompanyID)
			return err
		})
	case noQuery && match("/pos/*/company/*/import/promotions", &sys, &co):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.PromotionImport) error {
			_, err := a.ImportPromotions(ctx, sys, co, v)
			return err
		})
	case noQuery && match("/pos/*/company/*/import/products", &sys, &co):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.ProductImport) error {
			_, err := a.ImportProducts(ctx, sys, co, v)
			return err
		})
	case noQuery && match("/pos/*/company/*/import/productCategories", &sys, &co):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.CategoryImport) error {
			_, err := a.ImportProductCategories(ctx, sys, co, v)
			return err
		})
	case noQuery && match("/pos/*/transaction", &sys):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.TransactionRequest) error {
			_, err := a.CreateTransaction(ctx, sys, v)
			return err
		})
	case noQuery && match("/v2/pos/*/transactions/batch", &sys):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.BatchRequest) error {
			_, err := a.ReplayTransactions(ctx, sys, v)
			return err
		})
	case noQuery && match("/pos/*/coupon/validate/byTransaction", &sys):
		return sendJSON(a, s, token, target, body, func(ctx context.Context, v client.ValidateCouponRequest) error {
			_, err := a.ValidateCouponByTransaction(ctx, sys, v)
			return err
		})
	}
	return s.do(t, rawReq(ctx, posJSON(token, target, body)))
}

// pageOptions reads page and pageSize from a query the client would send
// unchanged.
func pageOptions(rawQuery string) (client.PageOptions, bool) {
	var p client.PageOptions
	vals, err := url.ParseQuery(rawQuery)
	if err != nil {
		return p, false
	}
	p.Page, _ = strconv.Atoi(vals.Get("page"))
	p.PageSize, _ = strconv.Atoi(vals.Get("pageSize"))
	want := url.Values{}
	if p.Page != 0 {
		want.Set("page", strconv.Itoa(p.Page))
	}
	if p.PageSize != 0 {
		want.Set("pageSize", strconv.Itoa(p.PageSize))
	}
	return p, want.Encode() == rawQuery
}
