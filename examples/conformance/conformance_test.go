package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// conformanceEnv names the command that runs the official MCP conformance
// suite's CLI (`conformance`, from @modelcontextprotocol/conformance, on
// Node 22). .ci/run installs it and always sets it.
const conformanceEnv = "TOOLMW_CONFORMANCE_CLI"

// check is one check of one scenario, as the suite writes it to checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestConformance runs every server scenario of the conformance suite
// ("--suite all") against this server on each SDK, bare and with toolmw's
// recommended chain, and fails on any check that toolmw makes worse: a
// SUCCESS that is not a SUCCESS with toolmw, or a FAILURE with toolmw that is
// not one without it.
func TestConformance(t *testing.T) {
	cli := os.Getenv(conformanceEnv)
	if cli == "" {
		t.Skipf("%s is not set (.ci/run installs the suite and sets it)", conformanceEnv)
	}
	// minPassed is how many checks each SDK's bare server passed when this
	// test was written (suite 0.1.16): fewer means the suite did not run
	// properly, or the server lost a feature.
	for sdk, minPassed := range map[string]int{sdkGo: 44, sdkMCPGo: 43} {
		t.Run(sdk, func(t *testing.T) { compare(t, cli, sdk, minPassed) })
	}
}

func compare(t *testing.T, cli, sdk string, minPassed int) {
	bare := runSuite(t, cli, sdk, false)
	with := runSuite(t, cli, sdk, true)

	passed := 0
	for key, st := range bare {
		if st == "SUCCESS" {
			passed++
		}
		got, ok := with[key]
		switch {
		case st == "SUCCESS" && got != "SUCCESS":
			t.Errorf("%s: SUCCESS without toolmw, %q with it", key, got)
		case !ok:
			t.Errorf("%s: reported without toolmw (%s), missing with it", key, st)
		}
	}
	for key, got := range with {
		if got == "FAILURE" && bare[key] != "FAILURE" {
			t.Errorf("%s: FAILURE with toolmw, %q without it", key, bare[key])
		}
	}
	require.GreaterOrEqual(t, passed, minPassed, "checks passed by the bare %s server", sdk)
	if !t.Failed() {
		t.Logf("conformance: %d checks pass bare; with toolmw, none regressed", passed)
	}
}

// runSuite serves the conformance server on 127.0.0.1 and runs the suite
// against it; it returns each check's status, keyed by scenario and check
// id (numbered when a scenario reports one id more than once).
func runSuite(t *testing.T, cli, sdk string, withToolmw bool) map[string]string {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, shutdown, err := handler(sdk, withToolmw, logger)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer func() {
		srv.CloseClientConnections()
		srv.Close()
		shutdown()
	}()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "server", "--suite", "all", "--url", srv.URL+"/mcp", "-o", out)
	log, err := cmd.CombinedOutput()
	// The CLI exits non-zero when a check fails; the comparison decides.
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish in time (toolmw=%v):\n%s", withToolmw, log)
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run %s: %v", cli, err)
	}
	files, err := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the suite wrote no results (toolmw=%v):\n%s", withToolmw, log)
	sort.Strings(files)
	statuses := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var checks []check
		require.NoError(t, json.Unmarshal(b, &checks), "decode %s", f)
		scenario := scenarioOf(filepath.Base(filepath.Dir(f)))
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
				t.Logf("toolmw=%v %s: FAILURE: %s", withToolmw, key, c.ErrorMessage)
			}
		}
	}
	return statuses
}

// scenarioOf returns the scenario of a result directory named
// "server-<scenario>-<timestamp>".
func scenarioOf(dir string) string {
	dir = strings.TrimPrefix(dir, "server-")
	if i := strings.Index(dir, "-20"); i > 0 { // the timestamp's year
		return dir[:i]
	}
	return dir
}
