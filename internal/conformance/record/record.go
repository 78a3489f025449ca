// Package record keeps, on a demo server, the recent calls of each POS
// client (docs/api.md §20.3): the token requests that issued it a token and
// the POS API calls made with those tokens, each bounded, with no secret
// kept (a token is known by its fingerprint and expiry). internal/conformance/grade
// grades them against the interface's rules.
package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Limits of a recording.
const (
	// DefaultCallsPerClient is how many calls of one client are kept: the
	// older ones are dropped (and counted).
	DefaultCallsPerClient = 500
	// BodyCap is how much of a request's and of an answer's body is kept.
	BodyCap = 16 << 10
	// maxClients and maxTokens bound the recorder as a whole: beyond them
	// the least recently heard client and the oldest token are forgotten.
	maxClients = 1000
	maxTokens  = 10000
)

// Token is an access token as a recording shows it: never the token, only
// the first 16 hex digits of its SHA-256 and its lifetime: IssuedAt and
// ExpiresAt as the server reads them (sandbox time), RealExpiresAt the
// real time it expires at for a client that counts expires_in on its own
// clock (the sandbox clock's offset when it was issued taken away).
type Token struct {
	Fingerprint   string    `json:"fingerprint"`
	IssuedAt      time.Time `json:"issuedAt"`
	ExpiresAt     time.Time `json:"expiresAt"`
	RealExpiresAt time.Time `json:"realExpiresAt"`
}

// Call is one recorded call. At is the sandbox time it arrived (the clock
// of every rule about tokens and dates, docs/api.md §20.2), RealAt the real
// time (the clock of waiting: Retry-After).
type Call struct {
	Seq                  int64             `json:"seq"`
	At                   time.Time         `json:"at"`
	RealAt               time.Time         `json:"realAt"`
	DurationMs           float64           `json:"durationMs"`
	Method               string            `json:"method"`
	Path                 string            `json:"path"`
	Query                string            `json:"query"`
	RequestHeaders       map[string]string `json:"requestHeaders"`
	Token                *Token            `json:"token"`
	RequestBody          string            `json:"requestBody"`
	RequestBodyTruncated bool              `json:"requestBodyTruncated"`
	Status               int               `json:"status"`
	ClientGone           bool              `json:"clientGone"`
	AnswerHeaders        map[string]string `json:"answerHeaders"`
	AnswerBody           string            `json:"answerBody"`
	AnswerBodyTruncated  bool              `json:"answerBodyTruncated"`
	Issued               *Token            `json:"issued"`
}

// Recording is what the recorder holds of one client, oldest call first.
type Recording struct {
	ClientID string `json:"clientId"`
	Capacity int    `json:"capacity"`
	Dropped  int64  `json:"dropped"`
	Calls    []Call `json:"calls"`
}

// The headers a call keeps; every other one (Authorization above all) is
// left out.
var (
	requestHeaders = []string{"Content-Type", "Accept", "Idempotency-Key", "User-Agent"}
	answerHeaders  = []string{"Content-Type", "Retry-After", "Idempotent-Replayed", "Location"}
)

// TokenPath is the token endpoint's path ({auth_url}, docs/api.md §3.2).
const TokenPath = "/connect/token"

// Recorder records calls; its zero value is not usable (New).
type Recorder struct {
	now, wall func() time.Time
	perClient int

	mu      sync.Mutex
	seq     int64
	tick    int64 // use counter, for forgetting the least recently heard client
	tokens  map[string]issued
	order   []string // fingerprints, oldest first
	clients map[string]*ring
}

type issued struct {
	client string
	token  Token
}

type ring struct {
	calls   []Call // at most perClient, oldest at start
	start   int
	dropped int64
	used    int64
}

// New returns a recorder keeping perClient calls of each client (0:
// DefaultCallsPerClient). now is the sandbox clock, wall the real one.
func New(now, wall func() time.Time, perClient int) *Recorder {
	if perClient <= 0 {
		perClient = DefaultCallsPerClient
	}
	return &Recorder{now: now, wall: wall, perClient: perClient, tokens: map[string]issued{}, clients: map[string]*ring{}}
}

// Fingerprint is how a recording names a token: "sha256:" and the first
// 16 hex digits of its SHA-256.
func Fingerprint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// isPOS reports whether path is one of the POS API's (docs/api.md §1.2).
func isPOS(path string) bool {
	return strings.HasPrefix(path, "/pos/") || strings.HasPrefix(path, "/v2/pos/")
}

// Wrap records the calls next serves: the token requests that issue a
// token, and the POS API calls whose bearer token this recorder saw issued.
// Every other request passes untouched.
func (rec *Recorder) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokenCall := r.Method == http.MethodPost && r.URL.Path == TokenPath
		var client string
		var tok *Token
		if !tokenCall {
			if !isPOS(r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			var ok bool
			if client, tok, ok = rec.bearer(r); !ok {
				next.ServeHTTP(w, r)
				return
			}
		}
		c := Call{At: rec.now().UTC(), RealAt: rec.wall().UTC(), Method: r.Method, Path: r.URL.Path,
			Query: r.URL.RawQuery, RequestHeaders: pick(r.Header, requestHeaders), Token: tok}
		// The handler gets a copy of the request whose body keeps what it
		// reads: the server's own request (and its handling of a body
		// left unread) stays as it was, and nothing waits for a body
		// that the handler does not read.
		tee := &teeBody{ReadCloser: r.Body}
		inner := *r
		inner.Body = tee
		cw := &captureWriter{ResponseWriter: w}
		next.ServeHTTP(cw, &inner)
		c.DurationMs = float64(rec.wall().Sub(c.RealAt).Microseconds()) / 1000
		c.Status = cw.status
		if c.Status == 0 {
			c.Status = http.StatusOK
			if !cw.wrote {
				c.Status = 0
			}
		}
		c.ClientGone = r.Context().Err() != nil
		if (c.Status == http.StatusTooManyRequests || c.Status == http.StatusServiceUnavailable) && !c.ClientGone {
			readRefused(w, r, tee)
		}
		body, truncated := tee.kept()
		c.AnswerHeaders = pick(cw.Header(), answerHeaders)
		if tokenCall {
			var ok bool
			if client, ok = rec.tokenIssued(r, body, cw.body.Bytes(), &c); !ok {
				return
			}
		} else {
			c.RequestBody, c.RequestBodyTruncated = text(body), truncated
			c.AnswerBody, c.AnswerBodyTruncated = text(cw.body.Bytes()), cw.truncated
		}
		rec.add(client, c)
	})
}

// bearer finds the client of r's bearer token among the tokens seen issued.
func (rec *Recorder) bearer(r *http.Request) (string, *Token, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", nil, false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	is, ok := rec.tokens[Fingerprint(token)]
	if !ok {
		return "", nil, false
	}
	t := is.token
	return is.client, &t, true
}

// tokenIssued fills c from a token request and its answer when the answer
// issued a token (200 with an access_token), keeping of the request only
// its grant_type and scope and of the answer the token's fingerprint; it
// remembers the token's client and reports it.
func (rec *Recorder) tokenIssued(r *http.Request, reqBody, answer []byte, c *Call) (string, bool) {
	if c.Status != http.StatusOK {
		return "", false
	}
	var a struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Scope       string `json:"scope"`
	}
	if json.Unmarshal(answer, &a) != nil || a.AccessToken == "" {
		return "", false
	}
	form, _ := url.ParseQuery(string(reqBody))
	client := form.Get("client_id")
	if user, _, ok := r.BasicAuth(); ok {
		if u, err := url.QueryUnescape(user); err == nil {
			client = u
		}
	}
	if client == "" {
		return "", false
	}
	t := Token{Fingerprint: Fingerprint(a.AccessToken), IssuedAt: c.At, ExpiresAt: c.At.Add(time.Duration(a.ExpiresIn) * time.Second)}
	if iat, exp, ok := claimTimes(a.AccessToken); ok {
		t.IssuedAt, t.ExpiresAt = iat, exp
	}
	t.RealExpiresAt = c.RealAt.Add(t.ExpiresAt.Sub(c.At))
	c.Issued = &t
	kept := url.Values{}
	for _, k := range []string{"grant_type", "scope"} {
		if v, ok := form[k]; ok {
			kept[k] = v
		}
	}
	c.RequestBody = kept.Encode()
	out, _ := json.Marshal(map[string]any{"access_token": t.Fingerprint, "token_type": a.TokenType, "expires_in": a.ExpiresIn, "scope": a.Scope})
	c.AnswerBody = string(out)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if _, seen := rec.tokens[t.Fingerprint]; !seen {
		rec.order = append(rec.order, t.Fingerprint)
	}
	rec.tokens[t.Fingerprint] = issued{client: client, token: t}
	for len(rec.order) > maxTokens {
		delete(rec.tokens, rec.order[0])
		rec.order = rec.order[1:]
	}
	return client, true
}

// claimTimes reads iat and exp from a token this server just issued (its
// own signature: nothing to verify).
func claimTimes(token string) (iat, exp time.Time, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return iat, exp, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return iat, exp, false
	}
	var claims struct{ Iat, Exp int64 }
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == 0 {
		return iat, exp, false
	}
	return time.Unix(claims.Iat, 0).UTC(), time.Unix(claims.Exp, 0).UTC(), true
}

func (rec *Recorder) add(client string, c Call) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.seq++
	rec.tick++
	c.Seq = rec.seq
	rg := rec.clients[client]
	if rg == nil {
		if len(rec.clients) >= maxClients {
			rec.forgetLeastRecent()
		}
		rg = &ring{}
		rec.clients[client] = rg
	}
	rg.used = rec.tick
	if len(rg.calls) < rec.perClient {
		rg.calls = append(rg.calls, c)
		return
	}
	rg.calls[rg.start] = c
	rg.start = (rg.start + 1) % len(rg.calls)
	rg.dropped++
}

func (rec *Recorder) forgetLeastRecent() {
	var oldest string
	least := int64(-1)
	for id, rg := range rec.clients {
		if least < 0 || rg.used < least {
			oldest, least = id, rg.used
		}
	}
	delete(rec.clients, oldest)
}

// Recording answers what is kept of client's calls, oldest first (no calls:
// an empty recording).
func (rec *Recorder) Recording(client string) Recording {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := Recording{ClientID: client, Capacity: rec.perClient, Calls: []Call{}}
	if rg := rec.clients[client]; rg != nil {
		out.Dropped = rg.dropped
		out.Calls = append(append(out.Calls, rg.calls[rg.start:]...), rg.calls[:rg.start]...)
	}
	return out
}

// Forget drops client's calls (its tokens stay known, so that its next
// calls are recorded), and answers the now empty recording.
func (rec *Recorder) Forget(client string) Recording {
	rec.mu.Lock()
	delete(rec.clients, client)
	rec.mu.Unlock()
	return rec.Recording(client)
}

// teeBody keeps the first BodyCap bytes the handler reads of a body.
type teeBody struct {
	io.ReadCloser
	buf  bytes.Buffer
	more bool // more than BodyCap bytes were read
	eof  bool
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if room := BodyCap - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(n, room)])
		t.more = t.more || n > room
	} else if n > 0 {
		t.more = true
	}
	t.eof = t.eof || err == io.EOF
	return n, err
}

func (t *teeBody) kept() ([]byte, bool) { return t.buf.Bytes(), t.more }

// refusedBodyWait bounds the read of a refused request's body.
const refusedBodyWait = 500 * time.Millisecond

// readRefused reads the body of a request refused before its body was read
// (a 429 or a shed 503), so that a retry can be compared with it: only a
// small body (a Content-Length of at most BodyCap) that the client sends
// without waiting (no Expect: 100-continue), read before the answer leaves
// and for at most refusedBodyWait; a client that does not send it in time
// has its connection closed after the answer, as the server does for a
// body it cannot discard.
func readRefused(w http.ResponseWriter, r *http.Request, tee *teeBody) {
	if tee.eof || r.ContentLength <= 0 || r.ContentLength > BodyCap || r.Header.Get("Expect") != "" || tee.ReadCloser == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(refusedBodyWait)) != nil {
		return
	}
	io.Copy(io.Discard, io.LimitReader(tee, BodyCap))
	rc.SetReadDeadline(time.Time{})
}

// text is b as a string of valid UTF-8.
func text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func pick(h http.Header, names []string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		if v := h.Values(n); len(v) > 0 {
			out[n] = strings.Join(v, ", ")
		}
	}
	return out
}

// captureWriter keeps the status and the first BodyCap bytes of an answer.
type captureWriter struct {
	http.ResponseWriter
	status    int
	wrote     bool
	body      bytes.Buffer
	truncated bool
}

func (w *captureWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *captureWriter) Write(b []byte) (int, error) {
	w.wrote = true
	if room := BodyCap - w.body.Len(); room > 0 {
		w.body.Write(b[:min(room, len(b))])
		w.truncated = w.truncated || len(b) > room
	} else if len(b) > 0 {
		w.truncated = true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *captureWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
