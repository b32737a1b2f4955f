package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// conformanceEnv names the command that runs the official MCP conformance
// suite's CLI (as in examples/conformance's test). .ci/run sets it.
const conformanceEnv = "TOOLMW_CONFORMANCE_CLI"

// TestConformanceThroughProxy runs every server scenario of the official
// conformance suite against this repository's conformance server
// (examples/conformance, go-sdk, bare) directly, then through the proxy
// (streamable HTTP in front of the same server as its -upstream URL): every
// check that passes directly passes through the proxy.
func TestConformanceThroughProxy(t *testing.T) {
	cli := os.Getenv(conformanceEnv)
	if cli == "" {
		t.Skipf("%s is not set (.ci/run installs the suite and sets it)", conformanceEnv)
	}
	bin := filepath.Join(t.TempDir(), "conformance-server")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/toolmw/toolmw/examples/conformance").CombinedOutput()
	require.NoError(t, err, "go build examples/conformance:\n%s", out)
	upstream := startConformanceServer(t, bin)

	direct := runSuite(t, cli, upstream, "direct")
	proxyURL, _ := startHTTPProxy(t, "-upstream", upstream)
	through := runSuite(t, cli, proxyURL, "through the proxy")

	passed := 0
	for key, st := range direct {
		if st != "SUCCESS" {
			continue
		}
		passed++
		if got := through[key]; got != "SUCCESS" {
			t.Errorf("%s: SUCCESS directly, %q through the proxy", key, got)
		}
	}
	// examples/conformance's test: the bare go-sdk server passed 44 checks
	// with suite 0.1.16.
	require.GreaterOrEqual(t, passed, 44, "checks the server passes directly")
	if !t.Failed() {
		t.Logf("conformance: %d checks pass directly, and all of them through the proxy", passed)
	}
}

// startConformanceServer runs the conformance server on a free loopback
// port and returns its endpoint.
func startConformanceServer(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/mcp)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case url, ok := <-found:
		require.True(t, ok, "the conformance server exited before serving")
		return url
	case <-time.After(time.Minute):
		t.Fatal("the conformance server did not start within a minute")
		return ""
	}
}

// check is one check of one scenario, as the suite writes it.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// runSuite runs the suite against url; it returns each check's status,
// keyed by scenario and check id (numbered when repeated).
func runSuite(t *testing.T, cli, url, what string) map[string]string {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log, err := exec.CommandContext(ctx, cli, "server", "--suite", "all", "--url", url, "-o", out).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish in time (%s):\n%s", what, log)
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run %s: %v", cli, err)
	}
	files, err := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the suite wrote no results (%s):\n%s", what, log)
	sort.Strings(files)
	statuses := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var checks []check
		require.NoError(t, json.Unmarshal(b, &checks), "decode %s", f)
		scenario := strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "server-")
		if i := strings.Index(scenario, "-20"); i > 0 {
			scenario = scenario[:i]
		}
		seen := map[string]int{}
		for _, c := range checks {
			if c.Status == "INFO" {
				continue
			}
			key := scenario + "/" + c.ID
			if n := seen[c.ID]; n > 0 {
				key += "#" + string(rune('0'+n))
			}
			seen[c.ID]++
			statuses[key] = c.Status
			if c.Status == "FAILURE" {
				t.Logf("%s %s: FAILURE: %s", what, key, c.ErrorMessage)
			}
		}
	}
	return statuses
}
