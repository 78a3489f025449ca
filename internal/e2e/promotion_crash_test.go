package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/syncbuf"
)

// posgateBinary builds cmd/posgate once per test run, for the tests that
// need a process they can kill.
var posgateBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "posgate-e2e-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "posgate")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/posgate/posgate/cmd/posgate").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// process is a running `posgate serve --demo`.
type process struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
	// committing receives a value when the server logs that an import
	// has been read and is being committed.
	committing chan struct{}
	// applying receives a value when the server logs that a transaction
	// batch has been read and is being applied.
	applying chan struct{}
}

var bannerRE = regexp.MustCompile(`posgate demo is serving \S+ on (\S+) `)

// startProcess runs `posgate serve --demo` on database and waits until it
// serves.
func startProcess(t *testing.T, database string) *process {
	t.Helper()
	bin, err := posgateBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--demo", "--listen", "127.0.0.1:0", "--database", database, "--log-format", "json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), committing: make(chan struct{}, 10), applying: make(chan struct{}, 10)}
	var stderr syncbuf.Buffer
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			stderr.Write(append(sc.Bytes(), '\n'))
			if strings.Contains(sc.Text(), ` import: committing"`) { // promotions, products, categories
				p.committing <- struct{}{}
			}
			if strings.Contains(sc.Text(), `"msg":"transaction batch: applying"`) {
				p.applying <- struct{}{}
			}
		}
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := bannerRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	select {
	case addr := <-found:
		p.base = "http://" + addr
	case <-p.done:
		t.Fatalf("posgate exited: %s", stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("posgate did not start: %s", stderr.String())
	}
	return p
}

// kill sends SIGKILL and waits for the process to go.
func (p *process) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

func (p *process) token(t *testing.T, id, secret, scope string) string {
	t.Helper()
	resp, err := http.PostForm(p.base+"/connect/token", url.Values{"grant_type": {"client_credentials"}, "scope": {scope},
		"client_id": {id}, "client_secret": {secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr tokenResponse
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != 200 {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return tr.AccessToken
}

// stored returns how many promotions company crash has.
func (p *process) stored(t *testing.T, admin string) int {
	t.Helper()
	return p.count(t, admin, "promotions")
}

// count returns how many promotions, products or categories (kind)
// company crash has.
func (p *process) count(t *testing.T, admin, kind string) int {
	t.Helper()
	r, _ := http.NewRequest("GET", p.base+"/admin/v1/pos-systems/clover/companies/crash/"+kind+"?pageSize=1", nil)
	r.Header.Set("Authorization", "Bearer "+admin)
	resp, err := checkedClient(t).Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Page struct{ Total int } `json:"page"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != 200 {
		t.Fatalf("list %s: %d %v", kind, resp.StatusCode, err)
	}
	return page.Page.Total
}

// createCrashCompany creates company crash with locations CRASH-1 and
// CRASH-2.
func (p *process) createCrashCompany(t *testing.T, admin string) {
	t.Helper()
	for _, c := range [][2]string{
		{"/admin/v1/pos-systems/clover/companies", `{"posCompanyId":"crash"}`},
		{"/admin/v1/pos-systems/clover/locations", `{"posLocationId":"CRASH-1","posCompanyId":"crash"}`},
		{"/admin/v1/pos-systems/clover/locations", `{"posLocationId":"CRASH-2","posCompanyId":"crash"}`},
	} {
		r, _ := http.NewRequest("POST", p.base+c[0], strings.NewReader(c[1]))
		r.Header.Set("Authorization", "Bearer "+admin)
		r.Header.Set("Content-Type", "application/json")
		resp, err := checkedClient(t).Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("POST %s: %s", c[0], resp.Status)
		}
	}
}

// crashBody is an import of n valid promotions of company crash.
func crashBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"P%06d","name":"Promotion %d","locationIds":["CRASH-1","CRASH-2"],"categoryIds":["C1","C2"],`+
			`"productIds":["S1","S2","S3","S4","S%d"],"promotionValidities":[{"startDate":"2030-01-01T00:00:00Z","endDate":"2030-06-30T23:59:59Z"},`+
			`{"startDate":"2030-07-01T00:00:00Z","recurrence":{"daysOfWeek":["Saturday"],"startDate":"2030-07-06T08:00:00Z","endDate":"2030-07-06T12:00:00Z"}}],`+
			`"promotionResults":[{"promotionType":"Amount","value":1.5}]}`, i, i, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// importUntil posts body and kills the process: once afterBytes of it have
// been sent and wait has passed, or (atCommit) as soon as the server logs
// that it commits the import. It returns whether the answer came first.
func (p *process) importUntil(t *testing.T, path, tok string, body []byte, afterBytes int, wait time.Duration, atCommit bool) bool {
	t.Helper()
	pr, pw := io.Pipe()
	r, _ := http.NewRequest("POST", p.base+path, pr)
	r.Header.Set("Authorization", "Bearer "+tok)
	r.Header.Set("Content-Type", "application/json")
	answered := make(chan int, 1)
	go func() {
		resp, err := checkedClient(t).Do(r)
		if err != nil {
			answered <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	sent := make(chan struct{})
	go func() {
		pw.Write(body[:afterBytes]) // returns once the server has taken it
		close(sent)
		if afterBytes == len(body) {
			pw.Close()
		}
	}()
	var deadline <-chan time.Time
	committing := p.committing
	if !atCommit {
		committing = nil
	}
	for {
		select {
		case <-sent:
			if !atCommit {
				deadline = time.After(wait)
			}
			sent = nil
		case <-committing:
			p.kill()
			<-answered
			return false
		case status := <-answered:
			if status != 200 {
				t.Fatalf("the import was answered %d before the kill", status)
			}
			p.kill()
			return true
		case <-deadline:
			p.kill()
			pw.CloseWithError(io.ErrClosedPipe)
			<-answered
			return false
		}
	}
}

// TestPromotionImportCrash kills the server (SIGKILL) in the middle of a
// 100,000-item import, restarts it and checks that all of the import or
// none of it is stored, then that sending it again gives the counts that
// follow from that.
func TestPromotionImportCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds posgate and imports 100,000 promotions several times")
	}
	const n = 100_000
	body := crashBody(n)
	forEachStore(t, func(t *testing.T, dsn string) {
		database := dsn
		if !strings.HasPrefix(dsn, "postgres") {
			database = filepath.Join(t.TempDir(), "crash.db")
		}
		stored := func(p *process) int {
			t.Helper()
			return p.stored(t, p.token(t, "demo-admin", "demo-admin-secret", "admin"))
		}
		// Mid-upload: half of the body has arrived.
		p := startProcess(t, database)
		p.createCrashCompany(t, p.token(t, "demo-admin", "demo-admin-secret", "admin"))
		if p.importUntil(t, importPath("crash"), p.token(t, "demo-pos", "demo-pos-secret", "pos_integration"), body, len(body)/2, 500*time.Millisecond, false) {
			t.Fatal("an import without the second half of its body was answered")
		}
		p = startProcess(t, database)
		if got := stored(p); got != 0 {
			t.Fatalf("after a kill in mid-upload %d promotions are stored, want none", got)
		}

		// During the commit: the body has been read, the transaction runs.
		if p.importUntil(t, importPath("crash"), p.token(t, "demo-pos", "demo-pos-secret", "pos_integration"), body, len(body), 0, true) {
			t.Fatal("the import was answered before the kill at its commit")
		}
		p = startProcess(t, database)
		got := stored(p)
		if got != 0 && got != n {
			t.Fatalf("after a kill during the commit %d of %d promotions are stored: not all or nothing", got, n)
		}
		t.Logf("killed during the commit: %d stored", got)

		// Sending it again gives the counts that follow from what is
		// stored; once answered, the import survives a kill.
		tok := p.token(t, "demo-pos", "demo-pos-secret", "pos_integration")
		r, _ := http.NewRequest("POST", p.base+importPath("crash"), bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+tok)
		r.Header.Set("Content-Type", "application/json")
		resp, err := checkedClient(t).Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ Data importResult }
		err = json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("re-sent import: %d %v", resp.StatusCode, err)
		}
		checkResult(t, env.Data, importResult{Status: "Completed", CreatedCount: n - got, UpdatedCount: got})
		p.kill()
		p = startProcess(t, database)
		if got := stored(p); got != n {
			t.Fatalf("after the re-sent, answered import and a kill %d promotions are stored, want %d", got, n)
		}
	})
}

// TestProductImportCrash kills the server (SIGKILL) in the middle of a
// 100,000-product import, during the upload and during the commit, and
// checks that all of it or none is stored (docs/api.md §17.1).
func TestProductImportCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds posgate and imports 100,000 products several times")
	}
	const n = 100_000
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"productId":"SKU-%06d","productName":"Product %d","productCategoryId":"C%d","productCategory":"Category","manufacturer":"Maker","price":%d.99}`, i, i, i%50, i%100)
	}
	b.WriteString(`]}`)
	body := b.Bytes()
	forEachStore(t, func(t *testing.T, dsn string) {
		database := dsn
		if !strings.HasPrefix(dsn, "postgres") {
			database = filepath.Join(t.TempDir(), "crash.db")
		}
		stored := func(p *process) int {
			t.Helper()
			return p.count(t, p.token(t, "demo-admin", "demo-admin-secret", "admin"), "products")
		}
		path := productsPath("crash")
		p := startProcess(t, database)
		p.createCrashCompany(t, p.token(t, "demo-admin", "demo-admin-secret", "admin"))
		if p.importUntil(t, path, p.token(t, "demo-pos", "demo-pos-secret", "pos_integration"), body, len(body)/2, 500*time.Millisecond, false) {
			t.Fatal("an import without the second half of its body was answered")
		}
		p = startProcess(t, database)
		if got := stored(p); got != 0 {
			t.Fatalf("after a kill in mid-upload %d products are stored, want none", got)
		}
		if p.importUntil(t, path, p.token(t, "demo-pos", "demo-pos-secret", "pos_integration"), body, len(body), 0, true) {
			t.Fatal("the import was answered before the kill at its commit")
		}
		p = startProcess(t, database)
		got := stored(p)
		if got != 0 && got != n {
			t.Fatalf("after a kill during the commit %d of %d products are stored: not all or nothing", got, n)
		}
		t.Logf("killed during the commit: %d stored", got)
		tok := p.token(t, "demo-pos", "demo-pos-secret", "pos_integration")
		r, _ := http.NewRequest("POST", p.base+path, bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+tok)
		r.Header.Set("Content-Type", "application/json")
		resp, err := checkedClient(t).Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ Data importResult }
		err = json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("re-sent import: %d %v", resp.StatusCode, err)
		}
		// Every product names a category the company lacks: one warning each.
		if env.Data.Status != "Completed" || env.Data.CreatedCount != n-got || env.Data.UpdatedCount != got || len(env.Data.Warnings) != n {
			t.Fatalf("re-sent import: %s %d %d %d warnings", env.Data.Status, env.Data.CreatedCount, env.Data.UpdatedCount, len(env.Data.Warnings))
		}
		p.kill()
		p = startProcess(t, database)
		if got := stored(p); got != n {
			t.Fatalf("after the re-sent, answered import and a kill %d products are stored, want %d", got, n)
		}
	})
}
