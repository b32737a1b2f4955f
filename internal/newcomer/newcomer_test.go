package newcomer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds: generous, because CI compiles other packages on the same two
// cores while `go run` here may have to link a binary.
const (
	listenTimeout  = 10 * time.Minute // a background server, from start to listening
	commandTimeout = 5 * time.Minute  // a foreground command
	stopTimeout    = 2 * time.Minute  // a background server, from SIGINT to exit
	auditRetryFor  = time.Minute      // re-reading the audit log until its rows are there
)

// demoAddr is the address the README quotes; the test serves on a free
// port instead and rewrites it in commands and expected output.
const demoAddr = "127.0.0.1:8080"

const skipMarker = "<!-- newcomer: skip -->"

// TestNewcomer runs README.md from a fresh clone: the tour's console blocks
// in order, then the two commands at the top (the server started and
// stopped; the test command compared with .ci/run's, not run: it is the
// suite this test is part of). See the package doc for the convention.
func TestNewcomer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the newcomer test builds and runs the examples from a fresh clone")
	}
	for _, tool := range []string{"git", "bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: the newcomer test needs git, bash and go (%v)", tool, err)
		}
	}
	root := checkoutRoot(t)
	dir := freshCopy(t, root)

	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatalf("reading README.md: %v", err)
	}
	doc := parseReadme(t, string(readme))

	port := freePort(t)
	addr := "127.0.0.1:" + port
	env := commandEnv()

	var bg *background
	ran := 0
	for _, b := range doc.blocks {
		if b.skip {
			continue
		}
		for _, c := range b.commands {
			ran++
			c = c.rewrite(addr)
			if c.background {
				if bg != nil {
					t.Fatalf("README.md line %d: %q starts in the background while %q still runs: one at a time", c.line, c.cmd, bg.c.cmd)
				}
				bg = startBackground(t, dir, env, c, addr)
				continue
			}
			runForeground(t, dir, env, c, bg)
		}
	}
	if ran == 0 {
		t.Fatalf("README.md has no console block to run: the tour must have at least one (``` console with $ lines)")
	}
	if bg != nil {
		bg.stopAndCheck(t)
	}
	t.Logf("ran %d commands from %d console blocks; skipped %d block(s) marked %s%s",
		ran, len(doc.blocks)-len(doc.skipped), len(doc.skipped), skipMarker, doc.skippedLines())

	// The two commands: the server starts, listens and stops cleanly on
	// SIGINT (after the tour, so the tour saw a fresh working directory).
	srv := command{line: doc.serverLine, cmd: doc.serverCmd, background: true, anyOutput: true}.rewrite(addr)
	s := startBackground(t, dir, env, srv, addr)
	s.stopAndCheck(t)

	ci, err := os.ReadFile(filepath.Join(dir, ".ci", "run"))
	if err != nil {
		t.Fatalf("reading .ci/run: %v", err)
	}
	ciTest := ciTestCommand(t, string(ci))
	if doc.testCmd != ciTest {
		t.Errorf("README.md line %d says the tests are %q, but .ci/run runs %q: make them the same", doc.testLine, doc.testCmd, ciTest)
	}
}

// checkoutRoot is the root of the git work tree this package is in.
func checkoutRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not inside a git work tree (git rev-parse: %v): the newcomer test clones the checkout", err)
	}
	return strings.TrimSpace(string(out))
}

// freshCopy is a fresh clone of root's HEAD in a temp dir, or, when root
// has uncommitted changes, a copy of its tracked and untracked (not
// ignored) files, so that a developer tests what they are about to commit.
func freshCopy(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "toolmw")
	status, err := exec.Command("git", "-C", root, "status", "--porcelain").Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	if len(bytes.TrimSpace(status)) == 0 {
		head := gitOut(t, root, "rev-parse", "HEAD")
		mustRun(t, "git", "clone", "--quiet", "--no-checkout", root, dir)
		mustRun(t, "git", "-C", dir, "checkout", "--quiet", "--detach", head)
		t.Logf("testing a fresh git clone of %s at %s in %s", root, head, dir)
		return dir
	}
	files := gitOut(t, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	n := 0
	for _, name := range strings.Split(files, "\x00") {
		if name == "" {
			continue
		}
		src := filepath.Join(root, name)
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatalf("copying %s: %v", name, err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		copyFile(t, src, filepath.Join(dir, name), fi.Mode())
		n++
	}
	t.Logf("%s has uncommitted changes: testing a copy of its work tree (%d tracked and untracked files, not a git clone) in %s", root, n, dir)
	return dir
}

func gitOut(t *testing.T, root string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o755)
	}
	if err == nil {
		err = os.WriteFile(dst, b, mode.Perm())
	}
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// freePort is a port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// commandEnv is this process's environment, sharing its build and module
// caches with the commands: `go run` compiles only toolmw's own packages
// (their directory, the clone's, is part of their cache key); the
// dependencies come from the cache the suite's build filled.
func commandEnv() []string {
	env := os.Environ()
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		if out, err := exec.Command("go", "env", k).Output(); err == nil {
			env = append(env, k+"="+strings.TrimSpace(string(out)))
		}
	}
	return env
}

// readme is what the test takes from README.md.
type readme struct {
	serverCmd, testCmd   string
	serverLine, testLine int
	blocks               []block
	skipped              []int // the opening line of each skipped block
}

func (r readme) skippedLines() string {
	if len(r.skipped) == 0 {
		return ""
	}
	s := make([]string, len(r.skipped))
	for i, l := range r.skipped {
		s[i] = strconv.Itoa(l)
	}
	return " (at README.md lines " + strings.Join(s, ", ") + ")"
}

type block struct {
	line     int
	skip     bool
	commands []command
}

// command is one "$ " line of a console block and the lines under it.
type command struct {
	line       int
	cmd        string
	background bool
	want       []string
	anyOutput  bool // the two commands' server: only its clean stop is checked
	wantExit   int
}

// rewrite replaces the README's demo address with addr and serves the
// demo server there.
func (c command) rewrite(addr string) command {
	c.cmd = strings.ReplaceAll(c.cmd, demoAddr, addr)
	want := make([]string, len(c.want))
	for i, w := range c.want {
		want[i] = strings.ReplaceAll(w, demoAddr, addr)
	}
	c.want = want
	if c.background && strings.HasPrefix(c.cmd, "go run ./examples/server") {
		c.cmd += " -addr " + addr
	}
	return c
}

var exitLine = regexp.MustCompile(`^\[exit status (\d+)\]$`)

// parseReadme finds the two commands (the first ```sh block) and the
// console blocks.
func parseReadme(t *testing.T, text string) readme {
	t.Helper()
	var r readme
	lines := strings.Split(text, "\n")
	sawSh := false
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") || fence == "```" {
			continue
		}
		lang := strings.TrimSpace(strings.TrimPrefix(fence, "```"))
		start := i
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("README.md line %d: the ``` block is not closed", start+1)
		}
		switch {
		case lang == "sh" && !sawSh:
			sawSh = true
			r.parseTwoCommands(t, start+2, body)
		case lang == "console":
			b := block{line: start + 1, skip: start > 0 && strings.TrimSpace(lines[start-1]) == skipMarker}
			if b.skip {
				r.skipped = append(r.skipped, b.line)
			}
			b.commands = parseConsole(t, start+2, body)
			r.blocks = append(r.blocks, b)
		}
	}
	if !sawSh {
		t.Fatalf("README.md has no ```sh block: its first one must hold the two commands (the demo server and the tests)")
	}
	return r
}

func (r *readme) parseTwoCommands(t *testing.T, first int, body []string) {
	t.Helper()
	var cmds []string
	var at []int
	for j, l := range body {
		if k := strings.Index(l, "#"); k >= 0 {
			l = l[:k]
		}
		if l = strings.TrimSpace(l); l != "" {
			cmds = append(cmds, l)
			at = append(at, first+j)
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("README.md line %d: the first ```sh block must hold two commands (the demo server, then the tests), has %d: %q", first-1, len(cmds), cmds)
	}
	if !strings.HasPrefix(cmds[0], "go run ") {
		t.Fatalf("README.md line %d: the first command should start the demo server with go run, is %q", at[0], cmds[0])
	}
	if !strings.HasPrefix(cmds[1], "go test ") {
		t.Fatalf("README.md line %d: the second command should run the tests with go test, is %q", at[1], cmds[1])
	}
	r.serverCmd, r.testCmd = cmds[0], cmds[1]
	r.serverLine, r.testLine = at[0], at[1]
}

func parseConsole(t *testing.T, first int, body []string) []command {
	t.Helper()
	var cmds []command
	for j, l := range body {
		if strings.HasPrefix(l, "$ ") {
			c := command{line: first + j, cmd: strings.TrimSpace(l[2:])}
			if strings.HasSuffix(c.cmd, " &") {
				c.background = true
				c.cmd = strings.TrimSpace(strings.TrimSuffix(c.cmd, " &"))
			}
			cmds = append(cmds, c)
			continue
		}
		if len(cmds) == 0 {
			if strings.TrimSpace(l) != "" {
				t.Fatalf("README.md line %d: a console block must start with a \"$ \" command line, starts with %q", first+j, l)
			}
			continue
		}
		c := &cmds[len(cmds)-1]
		c.want = append(c.want, strings.TrimRight(l, " \t"))
	}
	for i := range cmds {
		c := &cmds[i]
		// The blank lines between one command's output and the next "$ "
		// line separate them; they are not output.
		for len(c.want) > 0 && c.want[len(c.want)-1] == "" {
			c.want = c.want[:len(c.want)-1]
		}
		if n := len(c.want); n > 0 {
			if m := exitLine.FindStringSubmatch(c.want[n-1]); m != nil {
				c.wantExit, _ = strconv.Atoi(m[1])
				c.want = c.want[:n-1]
			}
		}
	}
	return cmds
}

// ciTestCommand is the one go test command .ci/run runs.
func ciTestCommand(t *testing.T, script string) string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(script, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "go test ") {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf(".ci/run should run one go test command, runs %d: %q", len(found), found)
	}
	return found[0]
}

// output collects a process's stdout and stderr in the order written.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) lines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return splitLines(o.buf.String())
}

func splitLines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), " \t\r"))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// bash is cmd run by bash in dir, in a process group of its own so that a
// signal reaches what it started (as Ctrl-C in a terminal does).
func bash(dir string, env []string, cmd string, out io.Writer) *exec.Cmd {
	c := exec.Command("bash", "-c", cmd)
	c.Dir, c.Env = dir, env
	c.Stdout, c.Stderr = out, out
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return c
}

func signalGroup(c *exec.Cmd, sig syscall.Signal) {
	if c.Process != nil {
		_ = syscall.Kill(-c.Process.Pid, sig)
	}
}

// waitFor waits for c to exit, up to d; past it, it kills c's group.
func waitFor(c *exec.Cmd, done <-chan error, d time.Duration) (error, bool) {
	select {
	case err := <-done:
		return err, true
	case <-time.After(d):
		signalGroup(c, syscall.SIGKILL)
		return <-done, false
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// runForeground runs c and checks its exit status and output; a read of
// the audit log is run again until it matches, while bg writes rows.
func runForeground(t *testing.T, dir string, env []string, c command, bg *background) {
	t.Helper()
	deadline := time.Now().Add(auditRetryFor)
	for attempt := 1; ; attempt++ {
		var out output
		p := bash(dir, env, c.cmd, &out)
		start := time.Now()
		if err := p.Start(); err != nil {
			t.Fatalf("README.md line %d: starting %q: %v", c.line, c.cmd, err)
		}
		done := make(chan error, 1)
		go func() { done <- p.Wait() }()
		err, exited := waitFor(p, done, commandTimeout)
		if !exited {
			t.Fatalf("README.md line %d: %q did not exit within %v (a server? end the line with \" &\")\n%s", c.line, c.cmd, commandTimeout, strings.Join(out.lines(), "\n"))
		}
		got := out.lines()
		code := exitCode(err)
		mismatch := ""
		if code != c.wantExit {
			mismatch = fmt.Sprintf("exit status %d, want %d (%v)", code, c.wantExit, err)
		} else if !match(c.want, got) {
			mismatch = "its output does not match README.md's"
		}
		if mismatch == "" {
			t.Logf("README.md line %d: $ %s (%d lines, %v, attempt %d): matches", c.line, c.cmd, len(got), time.Since(start).Round(time.Millisecond), attempt)
			return
		}
		if bg != nil && readsAudit(c.cmd) && time.Now().Before(deadline) {
			// The server writes its rows asynchronously: wait for them.
			time.Sleep(500 * time.Millisecond)
			continue
		}
		t.Fatalf("README.md line %d: $ %s: %s\n%s", c.line, c.cmd, mismatch, diff(c.want, got))
	}
}

func readsAudit(cmd string) bool { return strings.HasPrefix(cmd, "go run ./examples/audit") }

// background is a command started with " &".
type background struct {
	c    command
	p    *exec.Cmd
	out  *output
	done chan error
}

// startBackground starts c and waits until addr accepts connections.
func startBackground(t *testing.T, dir string, env []string, c command, addr string) *background {
	t.Helper()
	b := &background{c: c, out: &output{}, done: make(chan error, 1)}
	b.p = bash(dir, env, c.cmd, b.out)
	if err := b.p.Start(); err != nil {
		t.Fatalf("README.md line %d: starting %q: %v", c.line, c.cmd, err)
	}
	go func() { b.done <- b.p.Wait() }()
	t.Cleanup(func() { signalGroup(b.p, syscall.SIGKILL) }) // only if a check failed before its stop
	start := time.Now()
	deadline := start.Add(listenTimeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			t.Logf("README.md line %d: $ %s & : listening on %s after %v", c.line, c.cmd, addr, time.Since(start).Round(time.Millisecond))
			return b
		}
		select {
		case err := <-b.done:
			b.done <- err
			t.Fatalf("README.md line %d: %q exited (%v) before it listened on %s:\n%s", c.line, c.cmd, err, addr, strings.Join(b.out.lines(), "\n"))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("README.md line %d: %q did not listen on %s within %v:\n%s", c.line, c.cmd, addr, listenTimeout, strings.Join(b.out.lines(), "\n"))
		}
	}
}

// stopAndCheck sends SIGINT, as Ctrl-C does, and checks the exit status
// and the whole output.
func (b *background) stopAndCheck(t *testing.T) {
	t.Helper()
	signalGroup(b.p, syscall.SIGINT)
	err, exited := waitFor(b.p, b.done, stopTimeout)
	got := b.out.lines()
	if !exited {
		t.Fatalf("README.md line %d: %q did not exit within %v of SIGINT:\n%s", b.c.line, b.c.cmd, stopTimeout, strings.Join(got, "\n"))
	}
	if code := exitCode(err); code != 0 && !interruptedGoRun(b.c.cmd, code, got) {
		t.Fatalf("README.md line %d: %q exited with status %d after SIGINT, want 0 (%v):\n%s", b.c.line, b.c.cmd, code, err, strings.Join(got, "\n"))
	}
	if !b.c.anyOutput && !match(b.c.want, got) {
		t.Fatalf("README.md line %d: $ %s & (stopped with SIGINT): its output does not match README.md's\n%s", b.c.line, b.c.cmd, diff(b.c.want, got))
	}
	t.Logf("README.md line %d: %s stopped with SIGINT, exit status %d, %d lines of output (checked: %v)", b.c.line, b.c.cmd, exitCode(err), len(got), !b.c.anyOutput)
}

var goRunExit = regexp.MustCompile(`^exit status \d+$`)

// interruptedGoRun reports whether a go run that got SIGINT exited 1 only
// because it was interrupted: go run sets its status to 1 when an
// interrupt arrives (cmd/go/internal/work/exec.go, go1.26), and prints
// "exit status N" when the program itself exits non-zero.
func interruptedGoRun(cmd string, code int, out []string) bool {
	return strings.HasPrefix(cmd, "go run ") && code == 1 &&
		(len(out) == 0 || !goRunExit.MatchString(out[len(out)-1]))
}

const ellipsis = "…"

// match reports whether got matches want: an expected line that is only
// "…" matches any number of lines, and "…" in a line any run of
// characters.
func match(want, got []string) bool {
	memo := map[[2]int]bool{}
	var m func(i, j int) bool
	m = func(i, j int) bool {
		if i == len(want) {
			return j == len(got)
		}
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		var v bool
		if want[i] == ellipsis {
			v = m(i+1, j) || (j < len(got) && m(i, j+1))
		} else {
			v = j < len(got) && lineMatch(want[i], got[j]) && m(i+1, j+1)
		}
		memo[k] = v
		return v
	}
	return m(0, 0)
}

// lineMatch reports whether got matches want, in which "…" matches any
// run of characters.
func lineMatch(want, got string) bool {
	parts := strings.Split(want, ellipsis)
	if len(parts) == 1 {
		return want == got
	}
	if !strings.HasPrefix(got, parts[0]) {
		return false
	}
	got = got[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		k := strings.Index(got, p)
		if k < 0 {
			return false
		}
		got = got[k+len(p):]
	}
	return strings.HasSuffix(got, last)
}

// diff shows the first expected line that no line of got matches, with
// both texts.
func diff(want, got []string) string {
	var b strings.Builder
	// The longest prefix of want that matches some prefix of got.
	first := -1
	for i := range want {
		if !matchPrefix(want[:i+1], got) {
			first = i
			break
		}
	}
	if first >= 0 {
		fmt.Fprintf(&b, "first expected line that does not match: %q\n", want[first])
	} else {
		b.WriteString("every expected line matched; the command printed more than README.md quotes (end with a … line to allow it)\n")
	}
	b.WriteString("--- README.md expects:\n" + strings.Join(want, "\n") + "\n--- the command printed:\n" + strings.Join(got, "\n"))
	return b.String()
}

// matchPrefix reports whether want matches some prefix of got.
func matchPrefix(want, got []string) bool {
	for n := 0; n <= len(got); n++ {
		if match(want, got[:n]) {
			return true
		}
	}
	return false
}

// The test's own machinery, on a README of its own.
func TestMatch(t *testing.T) {
	got := []string{"listening at http://127.0.0.1:1234/mcp", "a", "b", "done written=3 dropped=0"}
	for _, tc := range []struct {
		want []string
		ok   bool
	}{
		{[]string{"listening at http://127.0.0.1:…/mcp", ellipsis, "done written=… dropped=0"}, true},
		{[]string{"listening at …", "a", "b", "done …"}, true},
		{[]string{"listening at …", "a", "done …"}, false},                        // a line missing
		{[]string{"listening at …", "a", "b"}, false},                             // more output than quoted
		{[]string{"listening at …", ellipsis}, true},                              // … matches the rest
		{[]string{"listening at …", "a", "b", "done written=… dropped=1"}, false}, // a changed figure
		{[]string{ellipsis, ellipsis, "done …"}, true},
	} {
		if g := match(tc.want, got); g != tc.ok {
			t.Errorf("match(%q) = %v, want %v", tc.want, g, tc.ok)
		}
	}
	if !match(nil, nil) || match(nil, []string{"x"}) {
		t.Error("no expected lines match only no output")
	}
	if lineMatch("a…b…c", "abc") != true || lineMatch("a…b", "ba") || !lineMatch("…", "") {
		t.Error("lineMatch: … is any run of characters, anchored at both ends")
	}
}

func TestParseReadme(t *testing.T) {
	text := strings.Join([]string{
		"# x",
		"```sh",
		"go run ./examples/server     # the server",
		"go test -race ./...          # the tests",
		"```",
		"```console",
		"$ go run ./examples/server &",
		"serving at http://127.0.0.1:8080/mcp",
		"…",
		"",
		"$ echo hi",
		"hi",
		"[exit status 3]",
		"```",
		skipMarker,
		"```console",
		"$ curl -s http://127.0.0.1:9464/metrics",
		"```",
	}, "\n")
	r := parseReadme(t, text)
	if r.serverCmd != "go run ./examples/server" || r.testCmd != "go test -race ./..." || r.serverLine != 3 || r.testLine != 4 {
		t.Fatalf("the two commands: %+v", r)
	}
	if len(r.blocks) != 2 || !r.blocks[1].skip || r.blocks[0].skip || len(r.skipped) != 1 || r.skipped[0] != 16 {
		t.Fatalf("blocks: %+v", r.blocks)
	}
	srv := r.blocks[0].commands[0].rewrite("127.0.0.1:5555")
	if !srv.background || srv.cmd != "go run ./examples/server -addr 127.0.0.1:5555" || srv.line != 7 ||
		strings.Join(srv.want, "|") != "serving at http://127.0.0.1:5555/mcp|…" {
		t.Fatalf("the background command: %+v", srv)
	}
	echo := r.blocks[0].commands[1]
	if echo.background || echo.cmd != "echo hi" || echo.wantExit != 3 || strings.Join(echo.want, "|") != "hi" {
		t.Fatalf("the foreground command: %+v", echo)
	}
	if got := ciTestCommand(t, "set -e\n# go test in a comment\ngo vet ./...\n  go test -race ./...\n"); got != "go test -race ./..." {
		t.Fatalf("ciTestCommand: %q", got)
	}
}

// TestRunCommands runs a foreground and a background command the way
// TestNewcomer does, with bash, and sees the background one stopped by
// SIGINT and its trap's output checked.
func TestRunCommands(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skipf("bash is not on PATH: %v", err)
	}
	dir := t.TempDir()
	port := freePort(t)
	addr := "127.0.0.1:" + port
	// A server in bash: a listener (python3 is not guaranteed, go is).
	srv := filepath.Join(dir, "srv.go")
	if err := os.WriteFile(srv, []byte(`package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
)

func main() {
	l, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("listening on", l.Addr())
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
	fmt.Fprintln(os.Stderr, "stopped: clean")
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := commandEnv()
	bg := startBackground(t, dir, env, command{line: 1, cmd: "go run srv.go " + addr, background: true,
		want: []string{"listening on " + addr, "stopped: …"}}, addr)
	runForeground(t, dir, env, command{line: 2, cmd: "echo one; echo two >&2; exit 4", want: []string{"one", "two"}, wantExit: 4}, bg)
	bg.stopAndCheck(t)
}
