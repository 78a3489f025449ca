package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/posgate/posgate/internal/app"
)

// chromium returns the path of Debian's chromium, skipping the test when it
// is not installed (CI installs it, so the test runs there) and under -short
// (a browser test takes seconds).
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the browser test")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium): skipping the browser test")
	return ""
}

// TestCarouselInBrowser opens the URL of the carousel endpoint in headless
// Chromium, watches the slides change and the page pick up an operator's
// change, and finds the slides it showed in the operator API's impressions.
func TestCarouselInBrowser(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn, func(c *app.Config) { c.CarouselPoll = time.Second })
		admin := s.adminToken(t)
		slides := "/admin/v1/pos-systems/clover/companies/demo-company/slides/"
		for _, id := range []string{"welcome", "coffee", "loyalty"} {
			mustStatus(t, s.call(t, admin, "PATCH", slides+id, `{"durationSeconds":5}`), 200)
		}
		pageURL := s.carouselURL(t, s.posToken(t), "TERM-05", "LOC123")

		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
			chromedp.ExecPath(chrome),
			chromedp.Flag("headless", true),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.NoFirstRun,
			chromedp.Flag("disable-sync", true),
			chromedp.UserDataDir(t.TempDir()),
			chromedp.WindowSize(1024, 600),
		)
		defer cancelAlloc()
		bctx, cancelBrowser := chromedp.NewContext(actx)
		defer cancelBrowser()

		attr := func(name string) string {
			t.Helper()
			v, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.documentElement.getAttribute("`+name+`") || ""`))
			if err != nil {
				t.Fatalf("reading %s: %v", name, err)
			}
			return v
		}
		// waitFor polls the page until cond holds or the time is up.
		waitFor := func(what string, limit time.Duration, cond func() bool) {
			t.Helper()
			deadline := time.Now().Add(limit)
			for !cond() {
				if time.Now().After(deadline) {
					t.Fatalf("timed out waiting for %s (slide %q, content version %q)", what, attr("data-slide-id"), attr("data-content-version"))
				}
				time.Sleep(100 * time.Millisecond)
			}
		}

		if err := chromedp.Do(bctx, chromedp.Navigate(pageURL)); err != nil {
			t.Fatalf("opening %s: %v", pageURL, err)
		}
		waitFor("the first slide", 5*time.Second, func() bool { return attr("data-slide-id") == "welcome" })
		// The title is drawn and the (data: URL) image loaded: the page's
		// Content-Security-Policy lets both through.
		first, err := chromedp.Run(bctx, chromedp.Evaluate[string](
			`(function(){var s=document.querySelector(".slide.active");var i=s.querySelector("img");`+
				`return s.querySelector("h1").textContent+"|"+(i?i.naturalWidth:0)})()`))
		if err != nil || first != "Welcome to Demo Company|800" {
			t.Fatalf("first slide: %q, %v", first, err)
		}
		waitFor("the second slide", 7*time.Second, func() bool { return attr("data-slide-id") == "coffee" })

		// An operator's change reaches the open page at its next poll.
		version := attr("data-content-version")
		mustStatus(t, s.call(t, admin, "PATCH", slides+"loyalty", `{"title":"Changed by the operator"}`), 200)
		waitFor("the changed content", 4*time.Second, func() bool { return attr("data-content-version") != version })

		// The two slides shown are in the operator API's impressions.
		var report struct {
			Data struct {
				Terminals []struct {
					LocationID string `json:"posLocationId"`
					TerminalID string `json:"terminalId"`
					Slides     []struct {
						SlideID     string `json:"slideId"`
						Impressions int    `json:"impressions"`
					} `json:"slides"`
				} `json:"terminals"`
			} `json:"data"`
		}
		var got []string
		waitFor("the impressions", 3*time.Second, func() bool {
			r := s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/demo-company/impressions", "")
			mustStatus(t, r, 200)
			if err := json.Unmarshal(r.Body, &report); err != nil {
				t.Fatal(err)
			}
			got = nil
			for _, term := range report.Data.Terminals {
				for _, sl := range term.Slides {
					got = append(got, term.LocationID+"/"+term.TerminalID+"/"+sl.SlideID)
				}
			}
			return strings.Join(got, " ") == "LOC123/TERM-05/coffee LOC123/TERM-05/welcome"
		})
	})
}
