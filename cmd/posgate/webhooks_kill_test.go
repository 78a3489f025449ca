package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/pgtest"
)

// TestWebhooksSurviveSIGKILL kills posgate (SIGKILL) while deliveries are
// in flight at a receiver that does not answer, then starts it again on
// the same store: every event of every answered check-in reaches the
// receiver, none is lost. On both stores.
func TestWebhooksSurviveSIGKILL(t *testing.T) {
	stores := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "kill.db") },
		"postgres": func(t *testing.T) string { return pgtest.DSN(t) },
	}
	for name, db := range stores {
		t.Run(name, func(t *testing.T) { webhooksSurviveSIGKILL(t, db(t)) })
	}
}

func webhooksSurviveSIGKILL(t *testing.T, db string) {
	var mu sync.Mutex
	stall := true
	inFlight := make(chan struct{}, 1000)
	delivered := map[string]bool{} // webhook-id answered 2xx
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		s := stall
		mu.Unlock()
		if s {
			inFlight <- struct{}{}
			<-release // never answered before the kill
			return
		}
		mu.Lock()
		delivered[r.Header.Get("webhook-id")] = true
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	defer close(release)

	dir := t.TempDir()
	args := []string{"--database", db, "--webhooks-allow-loopback", "--webhook-timeout", "2s", "--drain-delay", "0"}
	p := startProcess(t, dir, args...)
	admin := token(t, p.base, "demo-admin", "demo-admin-secret")
	st, body := call(t, "POST", p.base+"/admin/v1/pos-systems/clover/companies/demo-company/webhooks", admin,
		`{"url":"`+srv.URL+`","eventTypes":["interaction.started"]}`)
	if st != 201 {
		t.Fatalf("register: %d %s", st, body)
	}
	var ep struct{ Data struct{ ID string } }
	json.Unmarshal([]byte(body), &ep)
	pos := token(t, p.base, "demo-pos", "demo-pos-secret")
	const checkins = 40
	for range checkins {
		if st, body := call(t, "POST", p.base+"/pos/clover/startInteraction", pos, `{"terminalId":"TERM-05","posLocationId":"LOC123"}`); st != 200 {
			t.Fatalf("startInteraction: %d %s", st, body)
		}
	}
	select {
	case <-inFlight:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery reached the receiver")
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	mu.Lock()
	stall = false
	mu.Unlock()

	p = startProcess(t, dir, args...)
	// The killed instance's leases run out (timeout + 5 s), then its
	// deliveries are sent again.
	eventually(t, 60*time.Second, "every event delivered after the restart", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(delivered) == checkins
	})
	admin = token(t, p.base, "demo-admin", "demo-admin-secret")
	// The receiver sees a delivery before the sender records its answer, so
	// the last record may come a moment after the last request.
	eventually(t, 30*time.Second, "every delivery recorded as Delivered", func() bool {
		st, body := call(t, "GET", p.base+"/admin/v1/pos-systems/clover/companies/demo-company/webhooks/"+ep.Data.ID+"/deliveries?status=Delivered&pageSize=500", admin, "")
		var page struct {
			Data struct{ Page struct{ Total int } }
		}
		json.Unmarshal([]byte(body), &page)
		if st != 200 {
			t.Fatalf("delivered deliveries: %d %s", st, body)
		}
		return page.Data.Page.Total == checkins
	})
}
