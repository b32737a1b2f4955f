package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/internal/syncbuf"
)

// TestConfigErrorsNameTheLine: every mistake in the file is refused at
// start with its file and line.
func TestConfigErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"unknown key", "upstream:\n  comand: [x]\n", "proxy.yaml:2: field comand not found"},
		{"wrong type", "timeouts:\n  call: soon\n", "proxy.yaml:2: "},
		{"negative timeout", "tools:\n  deploy:\n    timeout: -1s\n", "proxy.yaml:3: tools.deploy.timeout must be positive"},
		{"empty scope", "tools:\n  deploy:\n    scopes: [ok, \"\"]\n", "proxy.yaml:3: tools.deploy.scopes: a scope is empty"},
		{"scope with a space", "tools:\n  deploy:\n    scopes: [\"deploy prod\"]\n", "proxy.yaml:3: tools.deploy.scopes: \"deploy prod\" has white space"},
		{"default scope with a space", "default_scopes: [\" read\"]\n", "proxy.yaml:1: default_scopes: \" read\" has white space"},
		{"bad rate", "tools:\n  search:\n    rate:\n      per_second: 0\n", "proxy.yaml:4: tools.search.rate.per_second must be positive"},
		{"both upstreams", "upstream:\n  command: [x]\n  url: http://127.0.0.1:1/mcp\n", "proxy.yaml:3: upstream: give command or url, not both"},
		{"bad url", "upstream:\n  url: ftp://x\n", "proxy.yaml:2: upstream.url must be an http"},
		{"bad otlp_logs", "audit:\n  sqlite: a.db\n  otlp_logs: 127.0.0.1:4318\n", "proxy.yaml:3: audit.otlp_logs must be an http"},
		{"bad transport", "upstream:\n  url: http://127.0.0.1:1/mcp\n  transport: grpc\n", "proxy.yaml:3: upstream.transport"},
		{"bad env name", "upstream:\n  env:\n    BAD-NAME: x\n", "proxy.yaml:3: upstream.env: \"BAD-NAME\" is not a variable name"},
		{"bad pass_env", "upstream:\n  pass_env:\n    - OK\n    - \"no good\"\n", "proxy.yaml:4: upstream.pass_env"},
		{"bad pattern", "scrub_secrets:\n  rules:\n    - name: x\n      pattern: \"(\"\n", "proxy.yaml:4: scrub_secrets.rules[0].pattern"},
		{"bad rule name", "scrub_secrets:\n  rules:\n    - name: a b\n      pattern: x\n", "proxy.yaml:3: scrub_secrets.rules[0].name"},
		{"token without env", "auth:\n  tokens:\n    - subject: alice\n", "proxy.yaml:3: auth.tokens[0]: token_env is missing"},
		{"token env empty", "auth:\n  tokens:\n    - subject: alice\n      token_env: TOOLMW_PROXY_TEST_UNSET_TOKEN\n", "proxy.yaml:4: auth.tokens[0]: $TOOLMW_PROXY_TEST_UNSET_TOKEN is empty"},
		{"bad origin", "http:\n  allowed_origins: [\"app.example\"]\n", "proxy.yaml:2: http.allowed_origins"},
		{"bad otlp", "telemetry:\n  otlp_endpoint: 127.0.0.1:4318\n", "proxy.yaml:2: telemetry.otlp_endpoint"},
		{"negative resume timeout", "bridge:\n  resume_timeout: -1s\n", "proxy.yaml:2: bridge.resume_timeout must be positive"},
		{"negative max_parked", "bridge:\n  max_parked: -1\n", "proxy.yaml:2: bridge.max_parked must be at least 1"},
		{"not yaml", "upstream: [\n", "proxy.yaml:"},
		{"json unknown key", "{\n  \"upstream\": {\n    \"cmd\": [\"x\"]\n  }\n}\n", "proxy.yaml:3: field cmd not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseConfig("proxy.yaml", []byte(c.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestConfigComplete: the documented example parses, and the flags
// override what they name.
func TestConfigComplete(t *testing.T) {
	t.Setenv("PROXY_TOKEN_ALICE", "t0ken")
	example, err := os.ReadFile("proxy.example.yaml")
	require.NoError(t, err)
	cfg, err := parseConfig("proxy.example.yaml", example)
	require.NoError(t, err)
	assert.Equal(t, []string{"npx", "-y", "@modelcontextprotocol/server-everything"}, cfg.Upstream.Command)
	assert.Equal(t, 10*time.Second, cfg.Tools["get-env"].Timeout)
	assert.Equal(t, []string{"admin"}, cfg.Tools["get-env"].Scopes)
	assert.Equal(t, 5.0, cfg.Tools["echo"].Rate.PerSecond)
	assert.Equal(t, "alice", cfg.Auth.Tokens[0].Subject)
	assert.Equal(t, time.Minute, cfg.Bridge.ResumeTimeout)
	assert.Equal(t, 1000, cfg.Bridge.MaxParked)

	f, err := parseFlags([]string{"-config", "proxy.example.yaml", "-audit-db", "other.db", "--", "my-server", "--flag"}, nil)
	require.NoError(t, err)
	merged, ac, err := settings(f)
	require.NoError(t, err)
	assert.Empty(t, ac.Postgres)
	assert.Equal(t, "other.db", ac.SQLite, "-audit-db overrides audit.sqlite")
	assert.Equal(t, []string{"my-server", "--flag"}, merged.Upstream.Command, "the command after -- overrides upstream.command")
	assert.Equal(t, time.Minute, merged.Timeouts.Call, "timeouts.call as the file says")
}

// TestConfigOTLPLogs: audit.otlp_logs in the file sends the rows over
// OTLP as -otlp-logs-endpoint does, and the flag, when given, wins.
func TestConfigOTLPLogs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "proxy.yaml")
	require.NoError(t, os.WriteFile(file, []byte("audit:\n  otlp_logs: http://127.0.0.1:4318\n"), 0o600))

	f, err := parseFlags([]string{"-config", file, "--", "my-server"}, nil)
	require.NoError(t, err)
	_, ac, err := settings(f)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:4318", ac.OTLPLogs, "audit.otlp_logs is the OTLP endpoint")

	f, err = parseFlags([]string{"-config", file, "-otlp-logs-endpoint", "http://127.0.0.1:4319", "--", "my-server"}, nil)
	require.NoError(t, err)
	_, ac, err = settings(f)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:4319", ac.OTLPLogs, "-otlp-logs-endpoint overrides audit.otlp_logs")
}

// TestUsageErrors: a command line that cannot work exits with status 2
// and one line that says what to do.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no upstream: put its command after --"},
		{[]string{"-upstream", "http://127.0.0.1:1/mcp", "--", "x"}, "not both"},
		{[]string{"-upstream", "127.0.0.1:1"}, "-upstream must be an http:// or https:// URL"},
		{[]string{"-config", "/nonexistent/proxy.yaml", "--", "x"}, "cannot read the configuration"},
		{[]string{"server"}, "put the upstream command after --"},
	} {
		stderr := &syncbuf.Buffer{}
		code := run(context.Background(), c.args, nil, stderr, stderr)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, stderr.String(), c.want, "%v", c.args)
	}
}

// TestUpstreamDoesNotStart: an upstream that cannot start is reported at
// once, with its error, and the proxy exits.
func TestUpstreamDoesNotStart(t *testing.T) {
	stderr := &syncbuf.Buffer{}
	code := run(context.Background(), []string{"-stdio", "-audit-db", filepath.Join(t.TempDir(), "a.db"), "--", "/nonexistent/server"}, nil, stderr, stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), `the upstream "/nonexistent/server" did not start`)
}

// TestSignalWhileStarting: SIGINT before the audit store and the upstream
// are up is a clean stop (exit 0), not a startup failure that names
// "context canceled". The context is cancelled before run starts.
func TestSignalWhileStarting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stderr := &syncbuf.Buffer{}
	code := run(ctx, []string{"-addr", "127.0.0.1:0", "-audit-db", filepath.Join(t.TempDir(), "a.db"), "--", "/nonexistent/server"}, nil, stderr, stderr)
	assert.Equal(t, 0, code, "a signal during startup is the stop asked for; stderr:\n%s", stderr.String())
	assert.NotContains(t, stderr.String(), "context canceled", "the cancelled start is not reported as a failure")
	assert.Contains(t, stderr.String(), "stopped while starting", "the operator is told why it stopped")
}

// TestUpstreamEnv: the command gets PATH, HOME and the locale, the
// variables pass_env names and those env sets; nothing else.
func TestUpstreamEnv(t *testing.T) {
	proxyEnv := map[string]string{"PATH": "/usr/bin", "HOME": "/home/op", "LANG": "C.UTF-8",
		"TOOLMW_AUDIT_POSTGRES": "postgres://op:pw@db/audit", "AWS_SECRET_ACCESS_KEY": "x", "GITHUB_TOKEN": "gh"}
	lookup := func(k string) (string, bool) { v, ok := proxyEnv[k]; return v, ok }
	env := upstreamEnv(UpstreamConfig{PassEnv: []string{"GITHUB_TOKEN", "UNSET"}, Env: map[string]string{"MODE": "ro", "HOME": "/srv"}}, lookup)
	assert.ElementsMatch(t, []string{"PATH=/usr/bin", "HOME=/srv", "LANG=C.UTF-8", "GITHUB_TOKEN=gh", "MODE=ro"}, env)
}
