// Package suite is a black-box test of the interface's rules (the POS
// endpoints of docs/api.md §1.2 that the interface describes, their
// statuses, answer shapes and content types, and the token endpoint)
// against any server that implements it: posgate, or the real service's
// demo environment. Each check names its rule and the section of
// docs/api.md it comes from, and keeps the request and the answer when it
// fails.
package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/posgate/posgate/internal/conformance/record"
)

// Config says which server to examine, with which client, at which place.
type Config struct {
	BaseURL string
	// AuthURL is the identity provider's address; empty: BaseURL.
	AuthURL                string
	ClientID, ClientSecret string
	// POSSystem, Company, Location and Terminal name a registered, active
	// place the client may use (defaults: the demo's clover,
	// demo-company, LOC123, TERM-05).
	POSSystem, Company, Location, Terminal string
	// Email is what the coupon search looks for (default: the demo's
	// john.doe@example.com, who holds coupons there).
	Email string
	// HTTP sends the requests; nil: a client with a 30 s timeout.
	HTTP *http.Client
}

// Exchange is a request and its answer, as a failed check shows them. No
// secret is shown: a token by its fingerprint, Basic credentials by the
// client id.
type Exchange struct {
	Method         string            `json:"method"`
	URL            string            `json:"url"`
	RequestHeaders map[string]string `json:"requestHeaders"`
	RequestBody    string            `json:"requestBody"`
	Status         int               `json:"status"`
	AnswerHeaders  map[string]string `json:"answerHeaders"`
	AnswerBody     string            `json:"answerBody"`
	// Error is why there was no answer.
	Error string `json:"error,omitempty"`
}

// Check is one rule checked.
type Check struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Cite    string `json:"cite"`
	Section string `json:"section"`
	Passed  bool   `json:"passed"`
	// Problem says what differed; Exchange is the call it differed in.
	Problem  string    `json:"problem,omitempty"`
	Exchange *Exchange `json:"exchange,omitempty"`
}

// Result is a run of the suite.
type Result struct {
	BaseURL string   `json:"baseUrl"`
	Passed  bool     `json:"passed"`
	Failed  []string `json:"failed"`
	Checks  []Check  `json:"checks"`
}

// maxShown is how much of a body a failed check shows.
const maxShown = 4 << 10

// run is the state of one run: the config and the token fetched.
type run struct {
	ctx   context.Context
	cfg   Config
	token string
}

// failure is a check's failure: what differed, in which exchange.
type failure struct {
	problem string
	ex      *Exchange
}

func (f *failure) Error() string { return f.problem }

func failf(ex *Exchange, format string, args ...any) error {
	return &failure{problem: fmt.Sprintf(format, args...), ex: ex}
}

type check struct {
	id, title, cite, section string
	run                      func(r *run) error
}

// Checks are the suite's checks, in the order they run.
func checks() []check {
	return []check{
		{"token-endpoint", "The token endpoint issues a Bearer JWT by the client credentials grant", "docs/api.md#32-token-endpoint", "§3.2", (*run).tokenEndpoint},
		{"token-wrong-secret", "A wrong client secret is refused with 401", "docs/api.md#33-token-endpoint-errors", "§3.3", (*run).tokenWrongSecret},
		{"authentication-required", "Every endpoint answers 401 without an access token", "docs/api.md#36-calling-the-api-with-a-token", "§3.6", (*run).authRequired},
		{"invalid-token", "A token that is not valid is refused with 401", "docs/api.md#36-calling-the-api-with-a-token", "§3.6", (*run).invalidToken},
		{"start-interaction", "startInteraction echoes the place and answers a new session id", "docs/api.md#41-startinteraction", "§4.1", (*run).startInteraction},
		{"start-interaction-unknown-terminal", "startInteraction at a terminal that is not registered is a 404", "docs/api.md#41-startinteraction", "§4.1", (*run).unknownTerminal},
		{"request-content-types", "Request bodies are read in every JSON and XML content type of the interface", "docs/api.md#21-content-types-of-request-bodies", "§2.1", (*run).requestTypes},
		{"coupon-search", "The coupon search answers data, page and posStatus at the top level", "docs/api.md#52-coupon-search", "§5.2", (*run).couponSearch},
		{"coupon-search-answer-types", "The coupon search answers in application/json, text/json and text/plain as Accept asks", "docs/api.md#25-responses", "§2.5", (*run).couponSearchTypes},
		{"coupon-lookup", "The v2 coupon lookup answers data.couponCodes", "docs/api.md#53-coupon-lookup-v2", "§5.3", (*run).couponLookup},
		{"loyalty-user-lookup", "The v2 loyalty-card user lookup answers data.users", "docs/api.md#61-loyalty-card-user-lookup-v2", "§6.1", (*run).loyaltyLookup},
		{"carousel", "The v2 carousel answers data.url", "docs/api.md#71-carousel-url-v2", "§7.1", (*run).carousel},
		{"receipt-promotion", "The receipt promotion answers its texts, image and posStatus", "docs/api.md#81-receipt-promotion", "§8.1", (*run).receiptPromotion},
		{"promotion-import", "The promotion import answers its status, counts, errors and warnings", "docs/api.md#94-result", "§9.4", (*run).promotionImport},
	}
}

// Run runs every check against cfg's server.
func Run(ctx context.Context, cfg Config) Result {
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	cfg.AuthURL = strings.TrimSuffix(cfg.AuthURL, "/")
	if cfg.AuthURL == "" {
		cfg.AuthURL = cfg.BaseURL
	}
	for p, def := range map[*string]string{&cfg.POSSystem: "clover", &cfg.Company: "demo-company", &cfg.Location: "LOC123", &cfg.Terminal: "TERM-05", &cfg.Email: "john.doe@example.com"} {
		if *p == "" {
			*p = def
		}
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	r := &run{ctx: ctx, cfg: cfg}
	res := Result{BaseURL: cfg.BaseURL, Passed: true, Failed: []string{}, Checks: []Check{}}
	for _, c := range checks() {
		out := Check{ID: c.id, Title: c.title, Cite: c.cite, Section: c.section, Passed: true}
		if err := c.run(r); err != nil {
			out.Passed, out.Problem = false, err.Error()
			if f, ok := err.(*failure); ok {
				out.Exchange = f.ex
			}
			res.Passed = false
			res.Failed = append(res.Failed, c.id)
		}
		res.Checks = append(res.Checks, out)
	}
	return res
}

// --- sending

// send makes one call; auth is "bearer", "basic", "basic-wrong" or "".
func (r *run) send(method, target, contentType, body, auth string, headers ...string) (*Exchange, any) {
	ex := &Exchange{Method: method, URL: target, RequestHeaders: map[string]string{}, RequestBody: body, AnswerHeaders: map[string]string{}}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(r.ctx, method, target, rd)
	if err != nil {
		ex.Error = err.Error()
		return ex, nil
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
		ex.RequestHeaders["Content-Type"] = contentType
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
		ex.RequestHeaders[k] = v
	}
	switch auth {
	case "bearer":
		req.Header.Set("Authorization", "Bearer "+r.token)
		ex.RequestHeaders["Authorization"] = "Bearer <token " + record.Fingerprint(r.token) + ">"
	case "bearer-invalid":
		req.Header.Set("Authorization", "Bearer not-a-valid-token")
		ex.RequestHeaders["Authorization"] = "Bearer not-a-valid-token"
	case "basic", "basic-wrong":
		secret := r.cfg.ClientSecret
		if auth == "basic-wrong" {
			secret += "-wrong"
		}
		req.SetBasicAuth(url.QueryEscape(r.cfg.ClientID), url.QueryEscape(secret))
		ex.RequestHeaders["Authorization"] = "Basic <" + r.cfg.ClientID + ":" + map[bool]string{true: "a wrong secret", false: "its secret"}[auth == "basic-wrong"] + ">"
	}
	resp, err := r.cfg.HTTP.Do(req)
	if err != nil {
		ex.Error = err.Error()
		return ex, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	ex.Status = resp.StatusCode
	for _, k := range []string{"Content-Type", "WWW-Authenticate", "Retry-After"} {
		if v := resp.Header.Get(k); v != "" {
			ex.AnswerHeaders[k] = v
		}
	}
	// A token is shown by its fingerprint, never as it is.
	ex.AnswerBody = accessToken.ReplaceAllStringFunc(string(b), func(m string) string {
		return `"access_token":"<token ` + record.Fingerprint(accessToken.FindStringSubmatch(m)[1]) + `>"`
	})
	if len(ex.AnswerBody) > maxShown {
		ex.AnswerBody = ex.AnswerBody[:maxShown] + "…"
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		v = nil
	}
	return ex, v
}

func (r *run) pos(path string) string {
	return r.cfg.BaseURL + "/pos/" + url.PathEscape(r.cfg.POSSystem) + path
}
func (r *run) v2(path string) string {
	return r.cfg.BaseURL + "/v2/pos/" + url.PathEscape(r.cfg.POSSystem) + path
}

func jsonBody(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// status requires ex to have been answered want.
func status(ex *Exchange, want int) error {
	switch {
	case ex.Error != "":
		return failf(ex, "no answer: %s", ex.Error)
	case ex.Status != want:
		return failf(ex, "answered %d, want %d", ex.Status, want)
	}
	return nil
}

// okJSON requires a 200 whose Content-Type is want (application/json when
// empty) and whose body is a JSON object.
func okJSON(ex *Exchange, v any, want string) (map[string]any, error) {
	if err := status(ex, http.StatusOK); err != nil {
		return nil, err
	}
	if want == "" {
		want = "application/json"
	}
	if mt, _, _ := strings.Cut(ex.AnswerHeaders["Content-Type"], ";"); !strings.EqualFold(strings.TrimSpace(mt), want) {
		return nil, failf(ex, "Content-Type %q, want %s", ex.AnswerHeaders["Content-Type"], want)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, failf(ex, "the answer is not a JSON object")
	}
	return m, nil
}

// --- shapes

var accessToken = regexp.MustCompile(`"access_token"\s*:\s*"([^"]*)"`)

var uuidShape = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// field is the value at a dotted path of v, and whether it is there.
func field(v any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// shape requires each path of v to hold its kind: "string", "string?"
// (or null), "integer", "number", "boolean", "array", "object", or an enum
// "enum:A|B|C".
func shape(ex *Exchange, v any, kinds map[string]string) error {
	paths := make([]string, 0, len(kinds))
	for p := range kinds {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		kind := kinds[p]
		got, ok := field(v, p)
		if !ok {
			return failf(ex, "the answer has no %s", p)
		}
		if !holds(got, kind) {
			return failf(ex, "%s is %s, want %s", p, jsonBody(got), strings.TrimSuffix(kind, "?")+map[bool]string{true: " or null", false: ""}[strings.HasSuffix(kind, "?")])
		}
	}
	return nil
}

func holds(v any, kind string) bool {
	if strings.HasSuffix(kind, "?") {
		if v == nil {
			return true
		}
		kind = strings.TrimSuffix(kind, "?")
	}
	if values, ok := strings.CutPrefix(kind, "enum:"); ok {
		s, isStr := v.(string)
		return isStr && slices.Contains(strings.Split(values, "|"), s)
	}
	switch kind {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

// each applies shape to every element of the array at path.
func each(ex *Exchange, v any, path string, kinds map[string]string) error {
	arr, _ := field(v, path)
	for i, e := range arr.([]any) {
		if err := shape(ex, e, kinds); err != nil {
			f := err.(*failure)
			f.problem = fmt.Sprintf("%s[%d]: %s", path, i, f.problem)
			return f
		}
	}
	return nil
}

const posStatuses = "enum:Accepted|Disabled|NotAvailable"

var couponShape = map[string]string{
	"rewardProvider": "enum:TwoReward|PJM|Dummy", "code": "string?", "name": "string?", "title": "string?",
	"pictureUrl": "string?", "availableUntil": "string?", "status": "enum:Issued|Redeemed|Cancelled|Expired", "info": "array?",
}
