package suite_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/posgate/posgate/internal/conformance/conftest"
	"github.com/posgate/posgate/internal/conformance/suite"
)

func ids(r suite.Result) []string {
	var out []string
	for _, c := range r.Checks {
		out = append(out, c.ID)
	}
	return out
}

// TestRunPassesPosgate: posgate, on each store, passes every check.
func TestRunPassesPosgate(t *testing.T) {
	conftest.ForEachStore(t, func(t *testing.T, base string) {
		r := suite.Run(context.Background(), suite.Config{BaseURL: base, ClientID: "demo-pos", ClientSecret: "demo-pos-secret"})
		if !r.Passed || len(r.Failed) != 0 || len(r.Checks) != 14 {
			b, _ := json.MarshalIndent(r, "", "  ")
			t.Fatalf("%s", b)
		}
	})
}

// TestRunFailsAStub: a server that answers 200 {} to everything fails every
// check, each naming its rule and showing the request and the answer; the
// client's secret is never shown.
func TestRunFailsAStub(t *testing.T) {
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer stub.Close()
	r := suite.Run(context.Background(), suite.Config{BaseURL: stub.URL, ClientID: "till", ClientSecret: "the-secret"})
	if r.Passed || strings.Join(r.Failed, ",") != strings.Join(ids(r), ",") || len(r.Checks) != 14 {
		t.Fatalf("failed %v of %v", r.Failed, ids(r))
	}
	for _, c := range r.Checks {
		if c.Problem == "" || c.Cite == "" || c.Exchange == nil || c.Exchange.Status != 200 || c.Exchange.AnswerBody != "{}" || c.Exchange.URL == "" {
			t.Fatalf("check %s: %+v", c.ID, c)
		}
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "the-secret") {
		t.Fatalf("the secret is shown: %s", b)
	}
	byID := map[string]suite.Check{}
	for _, c := range r.Checks {
		byID[c.ID] = c
	}
	for id, want := range map[string]string{
		"token-endpoint":                     "the answer has no access_token",
		"token-wrong-secret":                 "answered 200, want 401",
		"start-interaction-unknown-terminal": "answered 200, want 404",
		"coupon-search":                      "the answer has no data",
		"request-content-types":              "sent as application/json-patch+json: the answer has no data.posLocationId",
	} {
		if got := byID[id].Problem; got != want {
			t.Errorf("%s: problem %q, want %q", id, got, want)
		}
	}
}
