// Package readme tests the README: its shell blocks run, in order, against
// a fresh demo server, and the answers they print have the shapes the
// README shows. docs/readme-tests.md says how a README author marks
// blocks.
package readme

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/posgate/posgate/internal/pgtest"
)

// block is one fenced block of the README.
type block struct {
	line int    // where its fence opens (1-based)
	lang string // the fence's info string, first word
	text string
	// directive is the readme-test comment before it, if any.
	directive string
	// output is the fenced json or text block right after a shell block:
	// what it must print.
	output *block
}

var directiveRE = regexp.MustCompile(`^<!--\s*readme-test:\s*(.*?)\s*-->$`)

// parse reads the README's fenced blocks, the readme-test directives in
// front of them, and the standalone directives (as blocks of lang
// "directive").
func parse(readme string) ([]*block, error) {
	var out []*block
	lines := strings.Split(readme, "\n")
	pending := ""
	pendingLine := 0
	var prevShell *block
	blankSinceShell := true
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r")
		if m := directiveRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			if pending != "" {
				return nil, fmt.Errorf("README.md:%d: a readme-test directive follows another (line %d) with no block between", i+1, pendingLine)
			}
			if m[1] == "stop background" {
				out = append(out, &block{line: i + 1, lang: "directive", directive: m[1]})
			} else {
				pending, pendingLine = m[1], i+1
			}
			prevShell = nil
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(l), "```") {
			if strings.TrimSpace(l) != "" {
				prevShell = nil
			}
			continue
		}
		// A fence may be indented (in a list item): its lines lose the
		// fence's indentation.
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
		lang, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "```")), " ")
		b := &block{line: i + 1, lang: lang}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if i == len(lines) {
			return nil, fmt.Errorf("README.md:%d: the fence is never closed", b.line)
		}
		b.text = strings.Join(body, "\n") + "\n"
		switch {
		case (lang == "json" || lang == "text") && prevShell != nil && blankSinceShell && pending == "":
			prevShell.output = b
			prevShell = nil
			continue
		case lang == "sh" || lang == "bash":
			b.directive, pending = pending, ""
			out = append(out, b)
			prevShell = b
			continue
		case pending != "":
			return nil, fmt.Errorf("README.md:%d: directive %q stands before a %q block, which is never run", pendingLine, pending, lang)
		}
		prevShell = nil
	}
	if pending != "" {
		return nil, fmt.Errorf("README.md:%d: directive %q stands before no block", pendingLine, pending)
	}
	return out, nil
}

func TestParse(t *testing.T) {
	md := "x\n\n```sh\necho '{\"a\":1}'\n```\n\n```json\n{\"a\":1}\n```\n\n<!-- readme-test: skip (slow) -->\n```bash\nsleep 9\n```\n" +
		"```go\nfunc(){}\n```\n<!-- readme-test: stop background -->\n```sh\ntrue\n```\ntext\n```text\nnot an output\n```\n"
	bs, err := parse(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 4 || bs[0].output == nil || bs[0].output.text != "{\"a\":1}\n" || bs[1].directive != "skip (slow)" ||
		bs[2].lang != "directive" || bs[3].text != "true\n" || bs[3].output != nil {
		t.Fatalf("%+v", bs)
	}
	if _, err := parse("<!-- readme-test: skip (x) -->\n```go\nx\n```\n"); err == nil {
		t.Fatal("a directive before a go block")
	}
}

// --- shapes

// ellipsis stands for what differs between runs (ids, tokens, times) or
// is left out: in a string, any text; as an object's key ("…": "…"), any
// other keys; as an array's last element, any further elements.
const ellipsis = "…"

// matchString matches s against a pattern whose … stand for any text.
func matchString(pattern, s string) bool {
	parts := strings.Split(pattern, ellipsis)
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// sameShape reports where got differs from the README's want, "" when it
// does not.
func sameShape(want, got any, at string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %s", at, brief(got))
		}
		_, open := w[ellipsis]
		for k, wv := range w {
			if k == ellipsis {
				continue
			}
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s: %q is missing", at, k)
			}
			if d := sameShape(wv, gv, at+"."+k); d != "" {
				return d
			}
		}
		if !open {
			for k := range g {
				if _, ok := w[k]; !ok {
					return fmt.Sprintf("%s: %q is not in the README (add it, or \"…\": \"…\")", at, k)
				}
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s: want an array, got %s", at, brief(got))
		}
		n, open := len(w), false
		if n > 0 && w[n-1] == ellipsis {
			n, open = n-1, true
		}
		if len(g) < n || (!open && len(g) != n) {
			return fmt.Sprintf("%s: %d elements, the README shows %d", at, len(g), len(w))
		}
		for i := 0; i < n; i++ {
			if d := sameShape(w[i], g[i], fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
	case string:
		g, ok := got.(string)
		if !ok || !matchString(w, g) {
			return fmt.Sprintf("%s: got %s, the README shows %q", at, brief(got), w)
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("%s: got %s, the README shows %s", at, brief(got), brief(want))
		}
	}
	return ""
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}

// jsonValues splits text into its JSON values.
func jsonValues(text string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var out []any
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
}

// compare checks a block's output against the README's.
func compare(want *block, got string) string {
	switch want.lang {
	case "json":
		w, err := jsonValues(want.text)
		if err != nil {
			return fmt.Sprintf("the README's JSON (line %d) does not parse: %v", want.line, err)
		}
		g, err := jsonValues(got)
		if err != nil {
			return fmt.Sprintf("the output is not JSON: %v", err)
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%d JSON values, the README shows %d", len(g), len(w))
		}
		for i := range w {
			if d := sameShape(w[i], g[i], fmt.Sprintf("value %d", i+1)); d != "" {
				return d
			}
		}
	case "text":
		return compareText(want.text, got)
	}
	return ""
}

// compareText matches output lines against the README's: … within a line
// is any text, a line of … alone any number of lines; trailing spaces and
// carriage returns do not count.
func compareText(want, got string) string {
	clean := func(s string) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
			out = append(out, strings.TrimRight(l, " \r"))
		}
		return out
	}
	var match func(w, g []string) bool
	match = func(w, g []string) bool {
		if len(w) == 0 {
			return len(g) == 0
		}
		if strings.TrimSpace(w[0]) == ellipsis {
			for i := 0; i <= len(g); i++ {
				if match(w[1:], g[i:]) {
					return true
				}
			}
			return false
		}
		return len(g) > 0 && matchString(w[0], g[0]) && match(w[1:], g[1:])
	}
	if !match(clean(want), clean(got)) {
		return "the output's lines do not match the README's"
	}
	return ""
}

func TestShapes(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{`{"a":"x-…","b":[1,"…"]}`, `{"a":"x-12","b":[1,2,3]}`, true},
		{`{"a":"x-…"}`, `{"a":"y-12"}`, false},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1,"…":"…"}`, `{"a":1,"b":2}`, true},
		{`{"a":[1,2]}`, `{"a":[1]}`, false},
		{`{"a":null}`, `{"a":"x"}`, false},
		{`{"a":1.50}`, `{"a":1.5}`, false},
		{`{"a":"…"}`, `{"a":{"b":1}}`, false},
	} {
		if d := compare(&block{lang: "json", text: tc.want}, tc.got); (d == "") != tc.ok {
			t.Errorf("%s vs %s: %q", tc.want, tc.got, d)
		}
	}
	if d := compareText("HTTP/1.1 404 Not Found\n…\n\n{…}\n", "HTTP/1.1 404 Not Found\r\nA: b\r\nC: d\r\n\r\n{\"x\":1}\n"); d != "" {
		t.Error(d)
	}
	if d := compareText("a\nb\n", "a\nc\n"); d == "" {
		t.Error("a\\nb matched a\\nc")
	}
}

// --- running

// repoRoot is the module's root, where README.md is.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// copyRepo copies the repository's files (tracked and untracked, not
// ignored) into dir, so that the README's commands run in a checkout of
// their own: what they write (posgate-demo.db, downloads) stays there.
func copyRepo(t *testing.T, root, dir string) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the worktree, or not a file
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// pgProxy makes a TCP PostgreSQL DSN reachable from inside the network
// namespace the README runs in: a unix socket in a directory of its own
// forwards to the server, and the answer is the DSN through that socket.
func pgProxy(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("the PostgreSQL DSN: %v", err)
	}
	target := u.Host
	if _, _, err := net.SplitHostPort(target); err != nil {
		target = net.JoinHostPort(target, "5432")
	}
	dir, err := os.MkdirTemp("", "readme-pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL.5432"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				go io.Copy(s, c)
				io.Copy(c, s)
			}()
		}
	}()
	q := u.Query()
	q.Set("host", dir)
	q.Set("port", "5432")
	u.Host, u.RawQuery = "", q.Encode()
	return u.String()
}

// shell is one bash process that runs the README's blocks in turn, so
// that a variable one block sets (TOKEN=…) is there for the next.
type shell struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	mu     sync.Mutex
	stderr bytes.Buffer
}

const doneMarker = "__readme_test_block_done__"

type lockedBuffer struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (l lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func startShell(t *testing.T, dir string, env []string, isolated bool) *shell {
	args := []string{"bash", "--noprofile", "--norc"}
	if isolated {
		// A network namespace of its own: the README's localhost:8080 is
		// free whatever runs on this machine; a PID namespace, so that
		// whatever the README starts ends with the shell.
		args = []string{"unshare", "-rnpf", "--kill-child", "--mount-proc", "sh", "-c", "ip link set lo up && exec bash --noprofile --norc"}
	}
	sh := &shell{t: t, cmd: exec.Command(args[0], args[1:]...)}
	sh.cmd.Dir, sh.cmd.Env = dir, env
	// Pdeathsig: if the test dies, so does the shell (and, by
	// --kill-child, everything in its namespaces).
	sh.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var err error
	if sh.stdin, err = sh.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := sh.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sh.out = bufio.NewReader(stdout)
	sh.cmd.Stderr = lockedBuffer{&sh.mu, &sh.stderr}
	if err := sh.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sh.stdin.Close()
		done := make(chan struct{})
		go func() { sh.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-sh.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return sh
}

// takeStderr answers what the shell wrote to stderr since the last call.
func (sh *shell) takeStderr() string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s := sh.stderr.String()
	sh.stderr.Reset()
	return s
}

// run sends script and answers what it printed; ok is false when the
// shell exited (a command failed under set -e) or timed out.
func (sh *shell) run(script string, timeout time.Duration) (string, bool) {
	if _, err := io.WriteString(sh.stdin, script+"\nprintf '\\n%s\\n' "+doneMarker+"\n"); err != nil {
		return "", false
	}
	type result struct {
		out string
		ok  bool
	}
	ch := make(chan result, 1)
	go func() {
		var b strings.Builder
		for {
			line, err := sh.out.ReadString('\n')
			if strings.TrimSpace(line) == doneMarker {
				ch <- result{strings.TrimSuffix(b.String(), "\n"), true}
				return
			}
			b.WriteString(line)
			if err != nil {
				ch <- result{b.String(), false}
				return
			}
		}
	}()
	select {
	case r := <-ch:
		return r.out, r.ok
	case <-time.After(timeout):
		syscall.Kill(-sh.cmd.Process.Pid, syscall.SIGKILL)
		r := <-ch
		return r.out + "\n(timed out after " + timeout.String() + ")", false
	}
}

// goEnv answers go env's values of names.
func goEnv(t *testing.T, names ...string) []string {
	out, err := exec.Command("go", append([]string{"env"}, names...)...).Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n")
}

// TestREADME runs the README's shell blocks top to bottom, verbatim, in a
// copy of the repository, with `go install`'s posgate on PATH, in a
// network namespace of its own (so that the demo's localhost:8080 is free):
// each block must exit 0 (set -e -o pipefail), and a json or text block
// right after it holds the shape of what it prints. The directives of
// docs/readme-tests.md start servers in the background, stop them, and
// skip blocks, each with its reason, which the test logs.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README runs for minutes")
	}
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parse(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	isolated := exec.Command("unshare", "-rnpf", "--kill-child", "--mount-proc", "sh", "-c", "ip link set lo up").Run() == nil
	if !isolated {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:8080", time.Second); err == nil {
			c.Close()
			t.Skip("no network namespace here (unshare -rn), and 127.0.0.1:8080 is taken: the README's demo cannot listen")
		}
	}
	work := t.TempDir()
	dir := filepath.Join(work, "posgate")
	copyRepo(t, root, dir)
	home, bin := filepath.Join(work, "home"), filepath.Join(work, "bin")
	for _, d := range []string{home, bin} {
		os.MkdirAll(d, 0o755)
	}
	gv := goEnv(t, "GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT")
	env := []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "USER=readme", "LANG=C.UTF-8", "TERM=dumb",
		"PATH=" + bin + ":" + filepath.Join(gv[3], "bin") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"GOCACHE=" + gv[0], "GOMODCACHE=" + gv[1], "GOPATH=" + gv[2], "GOBIN=" + bin, "GOTOOLCHAIN=local",
		"GOPROXY=off", "GOFLAGS=-mod=readonly", "TMPDIR=" + work,
	}
	postgres := os.Getenv(pgtest.EnvDSN) != ""
	if postgres {
		dsn := pgtest.DSN(t)
		if isolated {
			dsn = pgProxy(t, dsn)
		}
		env = append(env, pgtest.EnvDSN+"="+dsn)
	}
	sh := startShell(t, dir, env, isolated)
	// Whatever the background blocks started ends with the test, even
	// when it fails early: in the namespaces it ends with the shell, and
	// without them each one's process group is killed here.
	bgPIDs := filepath.Join(work, "background-pids")
	t.Cleanup(func() {
		b, _ := os.ReadFile(bgPIDs)
		for _, f := range strings.Fields(string(b)) {
			var pid int
			if _, err := fmt.Sscan(f, &pid); err == nil && pid > 0 && !isolated {
				syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
	if out, ok := sh.run("set -m; READMETEST_BG=", time.Minute); !ok {
		t.Fatalf("the shell did not start: %s %s", out, sh.takeStderr())
	}
	for _, b := range blocks {
		where := fmt.Sprintf("README.md:%d", b.line)
		d := b.directive
		if d == "postgres" || strings.HasPrefix(d, "postgres ") {
			if !postgres {
				t.Logf("%s: skipped: %s is not set", where, pgtest.EnvDSN)
				continue
			}
			d = strings.TrimSpace(strings.TrimPrefix(d, "postgres"))
		}
		switch {
		case b.lang == "directive": // stop background
			out, ok := sh.run(stopBackground, 2*time.Minute)
			if !ok {
				t.Fatalf("%s: stopping the background servers: %s\n%s", where, out, sh.takeStderr())
			}
			continue
		case strings.HasPrefix(d, "skip"):
			if !strings.HasPrefix(d, "skip (") {
				t.Fatalf("%s: a skip needs its reason: <!-- readme-test: skip (why) -->", where)
			}
			t.Logf("%s: skipped %s", where, strings.TrimPrefix(d, "skip "))
			continue
		case strings.HasPrefix(d, "postgres-setup"):
			t.Logf("%s: not run: the test points %s at a fresh schema of its own server instead", where, pgtest.EnvDSN)
			continue
		case strings.HasPrefix(d, "background"):
			wait := strings.TrimSpace(strings.TrimPrefix(d, "background"))
			if wait == "" {
				wait = "http://localhost:8080/readyz"
			}
			log := filepath.Join(work, fmt.Sprintf("background-%d.log", b.line))
			// Wait until it answers; a background block that exits first
			// (a port taken, a bad flag) fails at once.
			script := fmt.Sprintf("(\n%s) >%q 2>&1 </dev/null &\nREADMETEST_PID=$!\nREADMETEST_BG=\"$READMETEST_BG $READMETEST_PID\"\n"+
				"echo $READMETEST_PID >>%q\n"+
				"for i in $(seq 600); do curl -sf -o /dev/null %q && break; kill -0 $READMETEST_PID 2>/dev/null || exit 1; sleep 0.5; done\n"+
				"curl -sf -o /dev/null %q || exit 1",
				b.text, log, bgPIDs, wait, wait)
			if out, ok := sh.run(script, 6*time.Minute); !ok {
				logText, _ := os.ReadFile(log)
				t.Fatalf("%s: the background block did not answer %s: %s\n%s\nits output:\n%s", where, wait, out, sh.takeStderr(), logText)
			}
			continue
		case d != "":
			t.Fatalf("%s: unknown directive %q (docs/readme-tests.md lists them)", where, d)
		}
		out, ok := sh.run("set -eo pipefail\n{\n"+b.text+"} </dev/null\nset +eo pipefail", 10*time.Minute)
		errOut := sh.takeStderr()
		if !ok {
			t.Fatalf("%s: the block failed:\n%s\noutput:\n%s\nstderr:\n%s", where, b.text, out, errOut)
		}
		if b.output != nil {
			if diff := compare(b.output, out); diff != "" {
				t.Errorf("%s: the output differs from README.md:%d: %s\nblock:\n%s\noutput:\n%s\nstderr:\n%s", where, b.output.line, diff, b.text, out, errOut)
			}
		}
	}
	sh.run(stopBackground, 2*time.Minute)
}

// stopBackground stops what the background blocks started: SIGTERM to
// each one's process group (set -m gave each its own), then a wait until
// no process of the group is left (go run's server drains after its
// parent is gone).
const stopBackground = `for p in $READMETEST_BG; do kill -TERM -- -$p 2>/dev/null || true; done
for p in $READMETEST_BG; do while kill -0 -- -$p 2>/dev/null; do sleep 0.2; done; done
wait; READMETEST_BG=`
