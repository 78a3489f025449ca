// Package readme tests the README and the guides of docs/guides: each
// file's shell blocks run, in order, against a fresh demo server of its
// own, and the answers they print have the shapes the file shows.
// docs/readme-tests.md says how an author marks blocks.
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
	file    string // the file's name, relative to the repository's root
	section string // the ## heading it stands under ("" before the first)
	line    int    // where its fence opens (1-based)
	lang    string // the fence's info string, first word
	text    string
	// directive is the readme-test comment before it, if any.
	directive string
	// output is the fenced json or text block right after a shell block:
	// what it must print.
	output *block
}

var directiveRE = regexp.MustCompile(`^<!--\s*readme-test:\s*(.*?)\s*-->$`)

// parse reads the fenced blocks of the file name, the readme-test
// directives in front of them, and the standalone directives (as blocks of
// lang "directive").
func parse(name, text string) ([]*block, error) {
	var out []*block
	lines := strings.Split(text, "\n")
	section := ""
	pending := ""
	pendingLine := 0
	var prevShell *block
	blankSinceShell := true
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r")
		if strings.HasPrefix(l, "## ") {
			section = strings.TrimPrefix(l, "## ")
		}
		if m := directiveRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			if pending != "" {
				return nil, fmt.Errorf("%s:%d: a readme-test directive follows another (line %d) with no block between", name, i+1, pendingLine)
			}
			if m[1] == "stop background" {
				out = append(out, &block{file: name, section: section, line: i + 1, lang: "directive", directive: m[1]})
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
		b := &block{file: name, section: section, line: i + 1, lang: lang}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: the fence is never closed", name, b.line)
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
			return nil, fmt.Errorf("%s:%d: directive %q stands before a %q block, which is never run", name, pendingLine, pending, lang)
		}
		prevShell = nil
	}
	if pending != "" {
		return nil, fmt.Errorf("%s:%d: directive %q stands before no block", name, pendingLine, pending)
	}
	return out, nil
}

func TestParse(t *testing.T) {
	md := "x\n\n```sh\necho '{\"a\":1}'\n```\n\n```json\n{\"a\":1}\n```\n\n<!-- readme-test: skip (slow) -->\n```bash\nsleep 9\n```\n" +
		"```go\nfunc(){}\n```\n<!-- readme-test: stop background -->\n```sh\ntrue\n```\ntext\n```text\nnot an output\n```\n"
	bs, err := parse("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 4 || bs[0].output == nil || bs[0].output.text != "{\"a\":1}\n" || bs[1].directive != "skip (slow)" ||
		bs[2].lang != "directive" || bs[3].text != "true\n" || bs[3].output != nil {
		t.Fatalf("%+v", bs)
	}
	if _, err := parse("x.md", "<!-- readme-test: skip (x) -->\n```go\nx\n```\n"); err == nil {
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

// docFiles answers the files the test runs, relative to root: README.md,
// then docs/guides/*.md in name order.
func docFiles(t *testing.T, root string) []string {
	guides, err := filepath.Glob(filepath.Join(root, "docs", "guides", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, g := range guides {
		rel, _ := filepath.Rel(root, g)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// parseFile reads and parses one of docFiles.
func parseFile(t *testing.T, root, name string) []*block {
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parse(name, string(text))
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// kind splits a directive into its postgres prefix and the rest.
func kind(d string) (postgres bool, rest string) {
	if d == "postgres" || strings.HasPrefix(d, "postgres ") {
		return true, strings.TrimSpace(strings.TrimPrefix(d, "postgres"))
	}
	return false, d
}

var (
	// assignRE finds the shell variables a block sets: NAME=…, export
	// NAME, read NAME, for NAME in.
	assignRE = regexp.MustCompile(`(?m)(?:(?:^|[\s;(&|])([A-Za-z_][A-Za-z0-9_]*)=|\b(?:export|read(?:\s+-\S+)*|for)\s+([A-Za-z_][A-Za-z0-9_]*))`)
	// useRE finds the variables a block expands.
	useRE = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	// saleRE finds a block that records a sale or refund.
	saleRE = regexp.MustCompile(`/pos/[^/\s]+/transaction\b|posgate transaction refund`)
	// resetRE finds a block that starts the demo over.
	resetRE = regexp.MustCompile(`posgate demo reset|serve --demo --reset`)
	// pgStartRE finds the line that starts a throw-away PostgreSQL and
	// sets POSGATE_TEST_POSTGRES_DSN (not the one that stops it).
	pgStartRE = regexp.MustCompile(`\.ci/pg-start\b`)
)

// sets answers the variables text assigns.
func sets(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range assignRE.FindAllStringSubmatch(text, -1) {
		out[m[1]+m[2]] = true
	}
	for _, l := range strings.Split(text, "\n") {
		if pgStartRE.MatchString(l) && !strings.Contains(l, "--stop") {
			out[pgtest.EnvDSN] = true
		}
	}
	return out
}

// lastLine answers text's last line that is not blank, without its
// trailing comment.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n \t"), "\n")
	l := lines[len(lines)-1]
	if i := strings.Index(l, " #"); i >= 0 {
		l = l[:i]
	}
	return strings.TrimSpace(l)
}

// check answers what is wrong with a file's blocks before any runs: the
// traps a reader pasting them in order would fall into.
//   - A background block runs in the reader's own shell, so it must end
//     with & (else the shell is held and the next block never runs).
//   - A terminal block runs in a terminal of its own, which has none of
//     the variables the file's earlier blocks set.
//   - A postgres block sets every $POSGATE_… variable it uses itself: a
//     reader who sets the DSN in one terminal and starts the server in
//     another starts it on SQLite.
//   - The section of the first block that records a sale starts the demo
//     over first (posgate demo reset), so that running it again does not
//     answer 409.
func check(blocks []*block) []string {
	var errs []string
	earlier := map[string]bool{}
	resetIn := map[string]bool{} // sections holding a reset block so far
	saleSeen := false
	for _, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		pg, d := kind(b.directive)
		if b.lang == "directive" || strings.HasPrefix(d, "skip") || strings.HasPrefix(d, "postgres-setup") {
			continue
		}
		own := sets(b.text)
		switch {
		case strings.HasPrefix(d, "background"):
			if l := lastLine(b.text); !strings.HasSuffix(l, "&") || strings.HasSuffix(l, "&&") {
				errs = append(errs, where+": a background block runs in the reader's shell: end it with & so that the shell returns (a server the reader runs in a terminal of its own is a terminal block)")
			}
		case strings.HasPrefix(d, "terminal"):
			for _, m := range useRE.FindAllStringSubmatch(b.text, -1) {
				if earlier[m[1]] && !own[m[1]] {
					errs = append(errs, fmt.Sprintf("%s: a terminal block runs in a terminal of its own, which has no $%s (an earlier block sets it): run it in the reader's shell as a background block ending with &", where, m[1]))
				}
			}
		}
		if pg {
			for _, m := range useRE.FindAllStringSubmatch(b.text, -1) {
				if strings.HasPrefix(m[1], "POSGATE_") && !own[m[1]] {
					errs = append(errs, fmt.Sprintf("%s: a postgres block uses $%s without setting it: set it in the same block, so that it is set in the terminal that runs the command", where, m[1]))
				}
			}
		}
		if resetRE.MatchString(b.text) {
			resetIn[b.section] = true
		}
		if !saleSeen && saleRE.MatchString(b.text) {
			saleSeen = true
			if !resetIn[b.section] {
				errs = append(errs, fmt.Sprintf("%s: the first sale of the file: its section (%q) must first start the demo over with a posgate demo reset block, so that running it again does not answer 409", where, b.section))
			}
		}
		for v := range own {
			earlier[v] = true
		}
	}
	return errs
}

// TestDocRules checks the README and the guides against the rules of
// check, without running them (so also under -short).
func TestDocRules(t *testing.T) {
	root := repoRoot(t)
	for _, name := range docFiles(t, root) {
		for _, e := range check(parseFile(t, root, name)) {
			t.Error(e)
		}
	}
}

// TestCheck shows check refusing each trap, as blocks were once written.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		want     string // in the one error; "" for none
	}{
		{"receiver holds the shell", "```sh\nRECV=$(mktemp -d)\n```\n<!-- readme-test: background http://127.0.0.1:9000/ -->\n```sh\nSECRET=$SECRET go run \"$RECV/receiver.go\" > \"$RECV/events.log\"\n```\n", "end it with &"},
		{"receiver returns", "```sh\nRECV=$(mktemp -d)\n```\n<!-- readme-test: background http://127.0.0.1:9000/ -->\n```sh\nSECRET=$SECRET go run \"$RECV/receiver.go\" > \"$RECV/events.log\" &\n```\n", ""},
		{"a server in a terminal of its own", "<!-- readme-test: terminal -->\n```sh\ngo run ./cmd/posgate serve --demo\n```\n", ""},
		{"a terminal without the shell's variables", "```sh\nRECV=$(mktemp -d)\n```\n<!-- readme-test: terminal http://127.0.0.1:9000/ -->\n```sh\ngo run \"$RECV/receiver.go\"\n```\n", "has no $RECV"},
		{"the DSN set in another terminal", "<!-- readme-test: postgres-setup -->\n```sh\neval \"$(bash .ci/pg-start /tmp/posgate-pg)\"\n```\n<!-- readme-test: postgres terminal -->\n```sh\ngo run ./cmd/posgate serve --demo --database \"$POSGATE_TEST_POSTGRES_DSN\"\n```\n", "uses $POSGATE_TEST_POSTGRES_DSN without setting it"},
		{"the DSN set in the same terminal", "<!-- readme-test: postgres terminal -->\n```sh\neval \"$(bash .ci/pg-start /tmp/posgate-pg)\"\ngo run ./cmd/posgate serve --demo --database \"$POSGATE_TEST_POSTGRES_DSN\"\n```\n", ""},
		{"a checkout that cannot run twice", "## Checkout\n```sh\ncurl -d \"$SALE\" http://localhost:8080/pos/clover/transaction\n```\n", "posgate demo reset"},
		{"a reset in another section", "## Demo\n```sh\nposgate demo reset\n```\n## Checkout\n```sh\ncurl -d \"$SALE\" http://localhost:8080/pos/clover/transaction\n```\n", "posgate demo reset"},
		{"a checkout that starts over", "## Checkout\n```sh\nposgate demo reset\n```\n```sh\ncurl -d \"$SALE\" http://localhost:8080/pos/clover/transaction\n```\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs, err := parse("x.md", tc.md)
			if err != nil {
				t.Fatal(err)
			}
			errs := check(bs)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Fatalf("refused: %q", errs)
			case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0], tc.want)):
				t.Fatalf("want one error with %q, got %q", tc.want, errs)
			}
		})
	}
}

// TestREADME runs README.md and each guide of docs/guides, each as a
// sub-test of its own: its shell blocks top to bottom, verbatim, in a copy
// of the repository, with `go install`'s posgate on PATH, in a network
// namespace of its own (so that the demo's localhost:8080 is free): each
// block must exit 0 (set -e -o pipefail), and a json or text block right
// after it holds the shape of what it prints. The directives of
// docs/readme-tests.md start servers in the background, stop them, and
// skip blocks, each with its reason, which the test logs. A guide runs
// against a fresh demo server that the test starts first, as the README's
// set-up does.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README and the guides run for minutes")
	}
	root := repoRoot(t)
	for _, name := range docFiles(t, root) {
		blocks := parseFile(t, root, name)
		t.Run(name, func(t *testing.T) {
			if errs := check(blocks); len(errs) > 0 {
				t.Fatal(strings.Join(errs, "\n"))
			}
			if name != "README.md" {
				runnable := false
				for _, b := range blocks {
					if _, d := kind(b.directive); b.lang != "directive" && !strings.HasPrefix(d, "skip") && !strings.HasPrefix(d, "postgres-setup") {
						runnable = true
					}
				}
				if !runnable {
					t.Skip("no block to run")
				}
				// The guide's reader has the README's set-up done: posgate
				// installed and a demo running in a terminal of its own.
				blocks = append([]*block{
					{file: name + " (set-up)", lang: "sh", text: "go install ./cmd/posgate\n"},
					{file: name + " (set-up)", lang: "sh", directive: "terminal", text: "posgate serve --demo\n"},
				}, blocks...)
			}
			runFile(t, root, blocks)
		})
	}
}

// runFile runs one file's blocks in a shell of its own.
func runFile(t *testing.T, root string, blocks []*block) {
	isolated := exec.Command("unshare", "-rnpf", "--kill-child", "--mount-proc", "sh", "-c", "ip link set lo up").Run() == nil
	if !isolated {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:8080", time.Second); err == nil {
			c.Close()
			t.Skip("no network namespace here (unshare -rn), and 127.0.0.1:8080 is taken: the demo cannot listen")
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
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		pg, d := kind(b.directive)
		if pg && !postgres {
			t.Logf("%s: skipped: %s is not set", where, pgtest.EnvDSN)
			continue
		}
		text := b.text
		if pg {
			// The test's own PostgreSQL: POSGATE_TEST_POSTGRES_DSN is in
			// the shell's environment already, so the line that would
			// start a cluster and export its DSN does nothing.
			var lines []string
			for _, l := range strings.Split(text, "\n") {
				if pgStartRE.MatchString(l) && !strings.Contains(l, "--stop") {
					l = ": " + pgtest.EnvDSN + " is set by the test"
				}
				lines = append(lines, l)
			}
			text = strings.Join(lines, "\n")
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
		case strings.HasPrefix(d, "background"), strings.HasPrefix(d, "terminal"):
			wait := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(d, "background"), "terminal"))
			if wait == "" {
				wait = "http://localhost:8080/readyz"
			}
			log := filepath.Join(work, fmt.Sprintf("background-%d.log", b.line))
			// A terminal block runs in a subshell in the background; a
			// background block ends with & itself, and $! is what it
			// started. Wait until it answers; a block whose server exits
			// first (a port taken, a bad flag) fails at once.
			start := fmt.Sprintf("(\n%s) >%q 2>&1 </dev/null &\n", text, log)
			if strings.HasPrefix(d, "background") {
				start = fmt.Sprintf("{\n%s\n} >%q 2>&1 </dev/null\n", text, log)
			}
			script := start + "READMETEST_PID=$!\nREADMETEST_BG=\"$READMETEST_BG $READMETEST_PID\"\n" +
				fmt.Sprintf("echo $READMETEST_PID >>%q\n", bgPIDs) +
				fmt.Sprintf("for i in $(seq 600); do curl -sf -o /dev/null %q && break; kill -0 $READMETEST_PID 2>/dev/null || exit 1; sleep 0.5; done\n", wait) +
				fmt.Sprintf("curl -sf -o /dev/null %q || exit 1", wait)
			if out, ok := sh.run(script, 6*time.Minute); !ok {
				logText, _ := os.ReadFile(log)
				t.Fatalf("%s: the background block did not answer %s: %s\n%s\nits output:\n%s", where, wait, out, sh.takeStderr(), logText)
			}
			continue
		case d != "":
			t.Fatalf("%s: unknown directive %q (docs/readme-tests.md lists them)", where, d)
		}
		out, ok := sh.run("set -eo pipefail\n{\n"+text+"} </dev/null\nset +eo pipefail", 10*time.Minute)
		errOut := sh.takeStderr()
		if !ok {
			t.Fatalf("%s: the block failed:\n%s\noutput:\n%s\nstderr:\n%s", where, text, out, errOut)
		}
		if b.output != nil {
			if diff := compare(b.output, out); diff != "" {
				t.Errorf("%s: the output differs from %s:%d: %s\nblock:\n%s\noutput:\n%s\nstderr:\n%s", where, b.file, b.output.line, diff, text, out, errOut)
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
