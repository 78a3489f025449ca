package record_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/conformance/record"
)

// jwt is a token shaped like posgate's, with iat and exp.
func jwt(iat, exp int64, nonce string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"ES256"}`)) + "." + enc([]byte(fmt.Sprintf(`{"iat":%d,"exp":%d,"jti":%q}`, iat, exp, nonce))) + ".sig"
}

// TestRecorderKeepsTheLastCallsWithoutSecrets: a client's calls are
// recorded once its token was seen issued, bounded per client and per body,
// with the token and the secret never kept; other requests pass untouched.
func TestRecorderKeepsTheLastCallsWithoutSecrets(t *testing.T) {
	now := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	token := jwt(now.Unix(), now.Add(time.Hour).Unix(), "1")
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == record.TokenPath {
			fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600,"scope":"pos_integration"}`, token)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTeapot)
		w.Write(body) // echo: the answer is as long as the request
	})
	rec := record.New(clock, clock, 3)
	h := rec.Wrap(app)
	send := func(method, path, auth, body string) string {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Body.String()
	}
	// Before its token is seen, a call is not recorded, and it is served.
	if got := send("POST", "/pos/clover/startInteraction", "Bearer "+token, "x"); got != "x" {
		t.Fatalf("unrecorded call answered %q", got)
	}
	req := httptest.NewRequest("POST", record.TokenPath, strings.NewReader("grant_type=client_credentials&scope=pos_integration&client_secret=s3cret&client_id=till"))
	h.ServeHTTP(httptest.NewRecorder(), req)
	big := strings.Repeat("a", record.BodyCap+10)
	send("POST", "/pos/clover/startInteraction", "Bearer "+token, big)
	send("GET", "/admin/v1/clients", "Bearer "+token, "")                     // an operator route: not recorded
	send("POST", "/pos/clover/startInteraction", "Bearer forged.token.x", "") // a token never issued: not recorded
	for i := range 3 {
		send("POST", "/v2/pos/clover/carousel", "bearer "+token, fmt.Sprint(i))
	}
	r := rec.Recording("till")
	if r.Capacity != 3 || r.Dropped != 2 || len(r.Calls) != 3 {
		t.Fatalf("capacity %d, dropped %d, %d calls", r.Capacity, r.Dropped, len(r.Calls))
	}
	for i, c := range r.Calls {
		if c.Path != "/v2/pos/clover/carousel" || c.RequestBody != fmt.Sprint(i) || c.Status != http.StatusTeapot || c.Token == nil ||
			c.Token.Fingerprint != record.Fingerprint(token) || !c.Token.ExpiresAt.Equal(now.Add(time.Hour)) ||
			c.AnswerHeaders["Retry-After"] != "1" || c.RequestHeaders["Content-Type"] != "application/json" || c.Seq != int64(i+3) {
			t.Fatalf("call %d: %+v", i, c)
		}
	}
	// Seen before it was dropped: the token request and the capped body.
	rec2 := record.New(clock, clock, 0)
	h = rec2.Wrap(app)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", record.TokenPath, strings.NewReader("grant_type=client_credentials&client_secret=s3cret&client_id=till")))
	send("POST", "/pos/clover/startInteraction", "Bearer "+token, big)
	r = rec2.Recording("till")
	if len(r.Calls) != 2 {
		t.Fatalf("%d calls", len(r.Calls))
	}
	tok, call := r.Calls[0], r.Calls[1]
	if tok.Issued == nil || tok.RequestBody != "grant_type=client_credentials" || strings.Contains(tok.AnswerBody, token) ||
		!strings.Contains(tok.AnswerBody, record.Fingerprint(token)) {
		t.Fatalf("token call: %+v", tok)
	}
	if len(call.RequestBody) != record.BodyCap || !call.RequestBodyTruncated || len(call.AnswerBody) != record.BodyCap || !call.AnswerBodyTruncated {
		t.Fatalf("capped call: %d %v %d %v", len(call.RequestBody), call.RequestBodyTruncated, len(call.AnswerBody), call.AnswerBodyTruncated)
	}
	if f := rec2.Forget("till"); len(f.Calls) != 0 {
		t.Fatalf("after Forget: %+v", f)
	}
	send("POST", "/pos/clover/startInteraction", "Bearer "+token, "y")
	if r := rec2.Recording("till"); len(r.Calls) != 1 || r.Calls[0].RequestBody != "y" {
		t.Fatalf("after Forget, the next call: %+v", r)
	}
}
