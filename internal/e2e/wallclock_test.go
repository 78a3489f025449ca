package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/app"
)

// standardWebhooks installs the reference Standard Webhooks library
// (npm "standardwebhooks") into a temporary directory and returns a verify
// function that checks one received request with it, against the real
// clock, as a receiver would. Without node or npm the test is skipped.
func standardWebhooks(t *testing.T) func(secret string, r hookRequest) error {
	t.Helper()
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		t.Skip("node and npm are needed for the standardwebhooks library")
	}
	dir := t.TempDir()
	install := exec.Command(npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", dir, "standardwebhooks@1.1.1")
	install.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(dir, ".npm"))
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("npm install standardwebhooks: %v (the npm registry is out of reach?)\n%s", err, out)
	}
	script := filepath.Join(dir, "verify.js")
	if err := os.WriteFile(script, []byte(`
const { Webhook } = require("standardwebhooks");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
try {
  new Webhook(input.secret).verify(input.body, input.headers);
  console.log("ok");
} catch (e) {
  console.log(e.message);
  process.exit(1);
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return func(secret string, r hookRequest) error {
		in, _ := json.Marshal(map[string]any{"secret": secret, "body": string(r.Body), "headers": map[string]string{
			"webhook-id": r.ID, "webhook-timestamp": r.Timestamp, "webhook-signature": r.Signature}})
		cmd := exec.Command(node, script)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(string(in))
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			return &verifyError{strings.TrimSpace(string(out))}
		}
		return nil
	}
}

type verifyError struct{ msg string }

func (e *verifyError) Error() string { return "standardwebhooks: " + e.msg }

// TestWebhooksOnTheRealClock: the sandbox clock drives posgate's own rules,
// never what a receiver checks against its clock. A day after the sandbox
// clock was advanced, deliveries still carry the real time in
// webhook-timestamp, which the reference standardwebhooks library accepts;
// a rotated secret keeps signing beside the new one for 24 hours of real
// time, however far the sandbox clock moves (docs/api.md §20.2).
func TestWebhooksOnTheRealClock(t *testing.T) {
	verify := standardWebhooks(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, allowLoopback, func(c *app.Config) { c.Now = time.Now })
		h := newHookReceiver(t)
		admin := s.adminToken(t)
		adminJSON := func(path, body string) response {
			return s.request(t, req{Method: "POST", Path: path, Token: admin, ContentType: "application/json", Body: body})
		}
		hooks := "/admin/v1/pos-systems/clover/companies/demo-company/webhooks"
		r := adminJSON(hooks, `{"url":"`+h.srv.URL+`/hook","eventTypes":["coupon.issued"]}`)
		mustStatus(t, r, 201)
		var ep struct{ Data struct{ ID, Secret string } }
		json.Unmarshal(r.Body, &ep)

		advance := func(seconds string) {
			t.Helper()
			mustStatus(t, adminJSON("/admin/v1/sandbox/clock/advance", `{"seconds":`+seconds+`}`), 200)
			admin = s.adminToken(t) // the old token expired on the sandbox clock
		}
		advance("86400")
		mustStatus(t, s.request(t, req{Method: "POST", Path: hooks + "/" + ep.Data.ID + "/test", Token: admin}), 202)
		got := h.wait(t, 1)
		if err := verify(ep.Data.Secret, got[0]); err != nil {
			t.Fatalf("a delivery a sandbox day ahead: %v (webhook-timestamp %s, real time %d)", err, got[0].Timestamp, time.Now().Unix())
		}

		// Rotate, then move the sandbox clock past the overlap: the old
		// secret still signs, since only real time ends the overlap.
		r = s.request(t, req{Method: "POST", Path: hooks + "/" + ep.Data.ID + "/rotate-secret", Token: admin})
		mustStatus(t, r, 200)
		var rotated struct {
			Data struct {
				Secret              string
				PreviousSecretUntil time.Time
			}
		}
		json.Unmarshal(r.Body, &rotated)
		if d := time.Until(rotated.Data.PreviousSecretUntil) - 24*time.Hour; d > time.Minute || d < -time.Minute {
			t.Fatalf("previousSecretUntil %s, want 24 hours of real time from now", rotated.Data.PreviousSecretUntil)
		}
		advance("90000")
		mustStatus(t, s.request(t, req{Method: "POST", Path: hooks + "/" + ep.Data.ID + "/test", Token: admin}), 202)
		got = h.wait(t, 2)
		for name, secret := range map[string]string{"the new secret": rotated.Data.Secret, "the old secret": ep.Data.Secret} {
			if err := verify(secret, got[1]); err != nil {
				t.Errorf("after a rotation and 25 sandbox hours, %s: %v (signature %s)", name, err, got[1].Signature)
			}
		}
	})
}
