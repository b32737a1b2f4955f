package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/toolmw/toolmw/serve"
)

// Config is the configuration file's schema (YAML, or JSON, which the same
// parser reads). Every field is optional; the command line's flags override
// the fields they name. doc.go shows a complete file.
type Config struct {
	// Upstream is the MCP server behind the proxy.
	Upstream UpstreamConfig `yaml:"upstream"`
	// Audit is the audit store: SQLite by default.
	Audit AuditConfig `yaml:"audit"`
	// Timeouts are the calls' deadlines.
	Timeouts TimeoutsConfig `yaml:"timeouts"`
	// Tools holds what applies to one tool, by its name.
	Tools map[string]ToolConfig `yaml:"tools"`
	// DefaultScopes are the scopes a caller needs for a tool Tools gives
	// none: empty admits every caller to those tools.
	DefaultScopes []string `yaml:"default_scopes"`
	// Scrub, when set, runs middleware.ScrubSecrets on every result the
	// upstream sends, its tool feedback included.
	Scrub *ScrubConfig `yaml:"scrub_secrets"`
	// Observe runs the guards (scopes, rate limits, scrub_secrets) in
	// observe mode (middleware.Observe), to roll them out: each decides as
	// usual and notes would_reject=<guard> on the audit row, but refuses,
	// changes and hides nothing (tools/list shows every tool).
	Observe bool `yaml:"observe"`
	// Auth is the bearer authentication of HTTP clients.
	Auth AuthConfig `yaml:"auth"`
	// HTTP configures the streamable HTTP server.
	HTTP HTTPConfig `yaml:"http"`
	// Telemetry is the OpenTelemetry export.
	Telemetry TelemetryConfig `yaml:"telemetry"`
	// Bridge bounds the calls an upstream below protocol 2026-07-28
	// asked a client on 2026-07-28 something in (bridge.go).
	Bridge BridgeConfig `yaml:"bridge"`
}

// BridgeConfig bounds the bridge from an upstream's requests to a client
// (sampling, elicitation, roots, protocol below 2026-07-28) to a client on
// 2026-07-28, which takes them in an input-required answer: the call
// waits, parked, until the client calls again with the answers.
type BridgeConfig struct {
	// ResumeTimeout is how long a parked call waits for its client to
	// call again; then the proxy cancels it upstream (the upstream's
	// request gets an error), and the state is unknown. Default 60s.
	ResumeTimeout time.Duration `yaml:"resume_timeout"`
	// MaxParked bounds the calls parked at once; a call that would be
	// one more is cancelled upstream and refused (unavailable). Default
	// 1000.
	MaxParked int `yaml:"max_parked"`
}

// UpstreamConfig says which MCP server the proxy forwards to: a command it
// starts over stdio, or a URL.
type UpstreamConfig struct {
	// Command is the program and its arguments, started over stdio (what
	// follows "--" on the command line).
	Command []string `yaml:"command"`
	// Dir is the command's working directory (default: the proxy's).
	Dir string `yaml:"dir"`
	// Env sets variables in the command's environment, which otherwise
	// holds PATH, HOME and the locale only.
	Env map[string]string `yaml:"env"`
	// PassEnv names variables of the proxy's own environment that the
	// command gets too.
	PassEnv []string `yaml:"pass_env"`
	// URL is a streamable HTTP (or, with Transport "sse", HTTP+SSE) MCP
	// endpoint (-upstream).
	URL string `yaml:"url"`
	// Transport is "streamable" (default) or "sse", for URL.
	Transport string `yaml:"transport"`
	// RestartMin and RestartMax bound the wait before the upstream is
	// started (or reconnected) again after it ended: it doubles from
	// RestartMin up to RestartMax, and starts again from RestartMin once
	// the upstream has run for a minute. Defaults 200ms and 30s.
	RestartMin time.Duration `yaml:"restart_min"`
	RestartMax time.Duration `yaml:"restart_max"`
	// PingInterval is how often the proxy pings the upstream; one that
	// does not answer within PingTimeout is taken for hung, and restarted.
	// Defaults 15s and 5s; a negative PingInterval turns pinging off.
	PingInterval time.Duration `yaml:"ping_interval"`
	PingTimeout  time.Duration `yaml:"ping_timeout"`
	// StartTimeout bounds the start and the MCP initialization of the
	// upstream. Default 2m (npx may download the package first).
	StartTimeout time.Duration `yaml:"start_timeout"`
}

// AuditConfig chooses the audit store.
type AuditConfig struct {
	// SQLite is the SQLite database's path (-audit-db). Default
	// toolmw-audit.db.
	SQLite string `yaml:"sqlite"`
	// PostgresEnv names the environment variable that holds the
	// PostgreSQL DSN, which then is the store (-audit-postgres passes the
	// DSN itself). A DSN holds a password: it does not belong in a file.
	PostgresEnv string `yaml:"postgres_env"`
	// Table is the audit table's name (default sqlstore.DefaultTable).
	Table string `yaml:"table"`
	// Spool is the directory where rows wait while the store is down
	// (default: the SQLite path + ".spool", or toolmw-audit.spool).
	Spool string `yaml:"spool"`
	// Durability is when a call is answered (-audit-durability): memory
	// (the default: once its row is queued) or disk (once it is fsync'd
	// in the spool). See docs/proxy.md for what each loses.
	Durability string `yaml:"durability"`
	// OTLPLogs is an OTLP/HTTP endpoint URL (-otlp-logs-endpoint) that
	// also gets every row as a log record, such as
	// http://127.0.0.1:4318 (the path defaults to /v1/logs); rows wait in
	// the spool directory + "-otlp" while it is down.
	OTLPLogs string `yaml:"otlp_logs"`
}

// TimeoutsConfig holds the calls' deadlines.
type TimeoutsConfig struct {
	// Call is every call's deadline, unless its tool has its own.
	// Default 60s.
	Call time.Duration `yaml:"call"`
}

// ToolConfig is what applies to the calls of one tool.
type ToolConfig struct {
	// Timeout replaces Timeouts.Call for this tool.
	Timeout time.Duration `yaml:"timeout"`
	// Scopes are what its caller must hold (middleware.RequireScopes).
	Scopes []string `yaml:"scopes"`
	// Rate limits its calls per caller (middleware.RateLimit).
	Rate *RateConfig `yaml:"rate"`
}

// RateConfig is a token bucket.
type RateConfig struct {
	// PerSecond is the average number of calls a second; required,
	// positive.
	PerSecond float64 `yaml:"per_second"`
	// Burst is how many calls may come at once (default 1).
	Burst int `yaml:"burst"`
}

// ScrubConfig configures middleware.ScrubSecrets.
type ScrubConfig struct {
	// Rules are searched after the default ones.
	Rules []ScrubRuleConfig `yaml:"rules"`
	// NoDefaultRules leaves the default rules out.
	NoDefaultRules bool `yaml:"no_default_rules"`
}

// ScrubRuleConfig is one middleware.ScrubRule.
type ScrubRuleConfig struct {
	Name    string   `yaml:"name"`
	Pattern string   `yaml:"pattern"`
	Hints   []string `yaml:"hints"`
}

// AuthConfig is the bearer authentication of HTTP clients. With no token,
// HTTP clients are not authenticated, which the proxy allows on a loopback
// address only.
type AuthConfig struct {
	Tokens []TokenConfig `yaml:"tokens"`
}

// TokenConfig is one bearer token and whom it stands for.
type TokenConfig struct {
	// Subject names the caller in audit rows.
	Subject string `yaml:"subject"`
	// Scopes are what the caller holds.
	Scopes []string `yaml:"scopes"`
	// TokenEnv names the proxy's environment variable that holds the
	// token (never the file: a token is a secret). The upstream never gets
	// it.
	TokenEnv string `yaml:"token_env"`
}

// HTTPConfig configures the streamable HTTP server.
type HTTPConfig struct {
	// AllowedOrigins are the Origin headers accepted besides the
	// loopback ones ("http://localhost:3000"); a request with any other
	// Origin is refused (the DNS-rebinding check the MCP specification
	// asks of HTTP servers).
	AllowedOrigins []string `yaml:"allowed_origins"`
	// AllowedHosts are the Host headers accepted besides the loopback ones
	// and the listen address's.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// SessionIdle closes a stateful session idle for this long (default
	// 5m).
	SessionIdle time.Duration `yaml:"session_idle"`
	// MaxSessions bounds the stateful sessions open at once (default
	// 1000).
	MaxSessions int `yaml:"max_sessions"`
}

// TelemetryConfig is the OpenTelemetry export.
type TelemetryConfig struct {
	// OTLPEndpoint sends the tool calls' spans over OTLP/HTTP
	// ("http://127.0.0.1:4318"). Empty: no OpenTelemetry.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
}

// Defaults of the fields the configuration leaves out.
const (
	defaultCallTimeout  = time.Minute
	defaultRestartMin   = 200 * time.Millisecond
	defaultRestartMax   = 30 * time.Second
	defaultPingInterval = 15 * time.Second
	defaultPingTimeout  = 5 * time.Second
	defaultStartTimeout = 2 * time.Minute
	defaultSessionIdle  = 5 * time.Minute
	defaultMaxSessions  = 1000
	defaultResume       = time.Minute
	defaultMaxParked    = 1000
)

// configError is a mistake in the configuration file: it names the file
// and the line.
type configError struct {
	file string
	line int
	msg  string
}

func (e *configError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.file, e.msg)
}

// loadConfig reads and checks the file at path.
func loadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the configuration: %v (pass -config with a readable YAML or JSON file)", err)
	}
	return parseConfig(path, b)
}

// yamlLine finds "line N:" in yaml.v3's messages.
var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// parseConfig decodes b (YAML or JSON) strictly, so that a misspelt key is
// an error, and checks every value; errors name the line.
func parseConfig(name string, b []byte) (*Config, error) {
	var cfg Config
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	}
	v := &validator{file: name, root: &root}
	v.check(&cfg)
	if v.err != nil {
		return nil, v.err
	}
	return &cfg, nil
}

// yamlError turns yaml.v3's error into a configError on its first line.
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &configError{file: name, line: line, msg: m[2]}
	}
	return &configError{file: name, msg: msg}
}

// validator checks a decoded Config and keeps its first mistake, with the
// line of the key at fault.
type validator struct {
	file string
	root *yaml.Node
	err  error
}

// failf records a mistake at the key path (keys of nested mappings; an
// int is an index in a sequence).
func (v *validator) failf(path []any, format string, args ...any) {
	if v.err == nil {
		v.err = &configError{file: v.file, line: lineOf(v.root, path), msg: fmt.Sprintf(format, args...)}
	}
}

// lineOf returns the line of the deepest node of path found in root.
func lineOf(root *yaml.Node, path []any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		var next *yaml.Node
		switch k := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == k {
						line = n.Content[i].Line
						next = n.Content[i+1]
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k < len(n.Content) {
				next = n.Content[k]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// ruleName is what a scrub rule's name may be (middleware.ScrubRule).
var ruleName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// envName is what an environment variable's name may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (v *validator) check(c *Config) {
	u := &c.Upstream
	up := []any{"upstream"}
	if len(u.Command) > 0 && u.URL != "" {
		v.failf(append(up, "url"), "upstream: give command or url, not both")
	}
	if len(u.Command) > 0 && u.Command[0] == "" {
		v.failf(append(up, "command"), "upstream.command: the program's name is empty")
	}
	if u.URL != "" {
		if p, err := url.Parse(u.URL); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			v.failf(append(up, "url"), "upstream.url must be an http:// or https:// URL, not %q", u.URL)
		}
	}
	switch u.Transport {
	case "", "streamable", "sse":
	default:
		v.failf(append(up, "transport"), "upstream.transport must be \"streamable\" or \"sse\", not %q", u.Transport)
	}
	for k := range u.Env {
		if !envName.MatchString(k) {
			v.failf(append(up, "env", k), "upstream.env: %q is not a variable name", k)
		}
	}
	for i, k := range u.PassEnv {
		if !envName.MatchString(k) {
			v.failf(append(up, "pass_env", i), "upstream.pass_env: %q is not a variable name", k)
		}
	}
	for _, d := range []struct {
		key string
		d   time.Duration
	}{{"restart_min", u.RestartMin}, {"restart_max", u.RestartMax}, {"ping_timeout", u.PingTimeout}, {"start_timeout", u.StartTimeout}} {
		if d.d < 0 {
			v.failf(append(up, d.key), "upstream.%s must not be negative, not %v", d.key, d.d)
		}
	}
	if u.RestartMin > 0 && u.RestartMax > 0 && u.RestartMax < u.RestartMin {
		v.failf(append(up, "restart_max"), "upstream.restart_max (%v) must not be less than restart_min (%v)", u.RestartMax, u.RestartMin)
	}
	if c.Audit.PostgresEnv != "" && !envName.MatchString(c.Audit.PostgresEnv) {
		v.failf([]any{"audit", "postgres_env"}, "audit.postgres_env: %q is not a variable name", c.Audit.PostgresEnv)
	}
	if c.Audit.Durability != "" {
		if _, err := serve.ParseDurability(c.Audit.Durability); err != nil {
			v.failf([]any{"audit", "durability"}, "audit.durability: %v", err)
		}
	}
	if o := c.Audit.OTLPLogs; o != "" {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.failf([]any{"audit", "otlp_logs"}, "audit.otlp_logs must be an http:// or https:// URL such as http://127.0.0.1:4318, not %q", o)
		}
	}
	if c.Timeouts.Call < 0 {
		v.failf([]any{"timeouts", "call"}, "timeouts.call must be positive, not %v", c.Timeouts.Call)
	}
	for name, t := range c.Tools {
		at := []any{"tools", name}
		if name == "" {
			v.failf(at, "tools: a tool's name is empty")
		}
		if t.Timeout < 0 {
			v.failf(append(at, "timeout"), "tools.%s.timeout must be positive, not %v", name, t.Timeout)
		}
		for i, s := range t.Scopes {
			if s == "" {
				v.failf(append(at, "scopes", i), "tools.%s.scopes: a scope is empty", name)
			} else if strings.ContainsFunc(s, unicode.IsSpace) {
				v.failf(append(at, "scopes", i), "tools.%s.scopes: %q has white space, which no caller can hold (scopes are separated by spaces)", name, s)
			}
		}
		if r := t.Rate; r != nil {
			if !(r.PerSecond > 0) || math.IsInf(r.PerSecond, 0) {
				v.failf(append(at, "rate", "per_second"), "tools.%s.rate.per_second must be positive, not %v", name, r.PerSecond)
			}
			if r.Burst < 0 {
				v.failf(append(at, "rate", "burst"), "tools.%s.rate.burst must not be negative, not %d", name, r.Burst)
			}
		}
	}
	for i, s := range c.DefaultScopes {
		if s == "" {
			v.failf([]any{"default_scopes", i}, "default_scopes: a scope is empty")
		} else if strings.ContainsFunc(s, unicode.IsSpace) {
			v.failf([]any{"default_scopes", i}, "default_scopes: %q has white space, which no caller can hold (scopes are separated by spaces)", s)
		}
	}
	if c.Scrub != nil {
		for i, r := range c.Scrub.Rules {
			at := []any{"scrub_secrets", "rules", i}
			if !ruleName.MatchString(r.Name) {
				v.failf(append(at, "name"), "scrub_secrets.rules[%d].name must be letters, digits and underscores, not %q", i, r.Name)
			}
			if _, err := regexp.Compile(r.Pattern); err != nil || r.Pattern == "" {
				v.failf(append(at, "pattern"), "scrub_secrets.rules[%d].pattern is not a regular expression: %q", i, r.Pattern)
			}
		}
	}
	for i, t := range c.Auth.Tokens {
		at := []any{"auth", "tokens", i}
		if t.Subject == "" {
			v.failf(at, "auth.tokens[%d]: subject is missing", i)
		}
		switch {
		case t.TokenEnv == "":
			v.failf(at, "auth.tokens[%d]: token_env is missing (the variable that holds the token)", i)
		case !envName.MatchString(t.TokenEnv):
			v.failf(append(at, "token_env"), "auth.tokens[%d].token_env: %q is not a variable name", i, t.TokenEnv)
		case os.Getenv(t.TokenEnv) == "":
			v.failf(append(at, "token_env"), "auth.tokens[%d]: $%s is empty: set it to the token", i, t.TokenEnv)
		}
	}
	for i, o := range c.HTTP.AllowedOrigins {
		if p, err := url.Parse(o); err != nil || p.Scheme == "" || p.Host == "" || (p.Path != "" && p.Path != "/") {
			v.failf([]any{"http", "allowed_origins", i}, "http.allowed_origins: %q is not an origin such as https://app.example", o)
		}
	}
	if c.HTTP.SessionIdle < 0 {
		v.failf([]any{"http", "session_idle"}, "http.session_idle must be positive, not %v", c.HTTP.SessionIdle)
	}
	if c.Bridge.ResumeTimeout < 0 {
		v.failf([]any{"bridge", "resume_timeout"}, "bridge.resume_timeout must be positive, not %v", c.Bridge.ResumeTimeout)
	}
	if c.Bridge.MaxParked < 0 {
		v.failf([]any{"bridge", "max_parked"}, "bridge.max_parked must be at least 1, not %d", c.Bridge.MaxParked)
	}
	if c.HTTP.MaxSessions < 0 {
		v.failf([]any{"http", "max_sessions"}, "http.max_sessions must be at least 1, not %d", c.HTTP.MaxSessions)
	}
	if e := c.Telemetry.OTLPEndpoint; e != "" {
		if p, err := url.Parse(e); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			v.failf([]any{"telemetry", "otlp_endpoint"}, "telemetry.otlp_endpoint must be an http:// or https:// URL such as http://127.0.0.1:4318, not %q", e)
		}
	}
}

// withDefaults fills what the configuration left out.
func (c *Config) withDefaults() {
	u := &c.Upstream
	if u.Transport == "" {
		u.Transport = "streamable"
	}
	if u.RestartMin == 0 {
		u.RestartMin = defaultRestartMin
	}
	if u.RestartMax == 0 {
		u.RestartMax = max(defaultRestartMax, u.RestartMin)
	}
	if u.PingInterval == 0 {
		u.PingInterval = defaultPingInterval
	}
	if u.PingTimeout == 0 {
		u.PingTimeout = defaultPingTimeout
	}
	if u.StartTimeout == 0 {
		u.StartTimeout = defaultStartTimeout
	}
	if c.Timeouts.Call == 0 {
		c.Timeouts.Call = defaultCallTimeout
	}
	if c.HTTP.SessionIdle == 0 {
		c.HTTP.SessionIdle = defaultSessionIdle
	}
	if c.HTTP.MaxSessions == 0 {
		c.HTTP.MaxSessions = defaultMaxSessions
	}
	if c.Bridge.ResumeTimeout == 0 {
		c.Bridge.ResumeTimeout = defaultResume
	}
	if c.Bridge.MaxParked == 0 {
		c.Bridge.MaxParked = defaultMaxParked
	}
}
