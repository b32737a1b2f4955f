package main

import (
	"log/slog"
	"regexp"
	"sort"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/serve"
	"github.com/toolmw/toolmw/toolctx"
)

// chain is the toolmw chain around every forwarded tools/call, outermost
// first: OpenTelemetry (when configured) and the calls in flight, the
// audit row, diagnostics, Normalize, Recover, then the guards (scopes, rate
// limits), ScrubSecrets (when configured) and each tool's deadline, next to
// the forwarding handler. With observe: true the guards run in observe
// mode (middleware.Observe). access is the scope guard (nil without
// scopes), which tools/list follows (middleware.Visibility).
func chain(cfg *Config, w audit.Emitter, logger *slog.Logger, access toolctx.Middleware, outer ...toolctx.Middleware) middleware.Chain {
	ms := append([]toolctx.Middleware(nil), outer...)
	ms = append(ms, serve.Chain(w, serve.Diagnostics(logger), logger).Middleware())
	if access != nil {
		ms = append(ms, access)
	}
	for _, name := range sortedTools(cfg) {
		if r := cfg.Tools[name].Rate; r != nil {
			ms = append(ms, middleware.When(middleware.Tools(name),
				observed(cfg, middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Limit(r.PerSecond), Burst: r.Burst}))))
		}
	}
	if cfg.Scrub != nil {
		ms = append(ms, observed(cfg, middleware.ScrubSecrets(scrubConfig(cfg.Scrub))))
	}
	// Each tool's own deadline, and the default one for the others.
	var own []string
	for _, name := range sortedTools(cfg) {
		if d := cfg.Tools[name].Timeout; d > 0 {
			own = append(own, name)
			ms = append(ms, middleware.When(middleware.Tools(name), middleware.Timeout(d)))
		}
	}
	ms = append(ms, middleware.When(middleware.Not(middleware.Tools(own...)), middleware.Timeout(cfg.Timeouts.Call)))
	return middleware.New(ms...)
}

func sortedTools(cfg *Config) []string {
	names := make([]string, 0, len(cfg.Tools))
	for name := range cfg.Tools {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// observed is guard, in observe mode when the configuration says so.
func observed(cfg *Config, guard toolctx.Middleware) toolctx.Middleware {
	if cfg.Observe {
		return middleware.Observe(guard)
	}
	return guard
}

// accessGuard is the scope guard of the configuration's scopes (nil when
// it has none), observed when the configuration says so.
func accessGuard(cfg *Config) toolctx.Middleware {
	p, ok := scopePolicy(cfg)
	if !ok {
		return nil
	}
	return observed(cfg, middleware.RequireScopes(p))
}

// scopePolicy is the per-tool scope policy, if the configuration has one.
func scopePolicy(cfg *Config) (middleware.ScopePolicy, bool) {
	p := middleware.ScopePolicy{Tools: map[string][]string{}, Default: cfg.DefaultScopes}
	for name, t := range cfg.Tools {
		if len(t.Scopes) > 0 {
			p.Tools[name] = t.Scopes
		}
	}
	return p, len(p.Tools) > 0 || len(p.Default) > 0
}

// scrubConfig is middleware.ScrubConfig from the file's (patterns were
// compiled once by the validator).
func scrubConfig(c *ScrubConfig) middleware.ScrubConfig {
	out := middleware.ScrubConfig{NoDefaultRules: c.NoDefaultRules}
	for _, r := range c.Rules {
		out.Rules = append(out.Rules, middleware.ScrubRule{Name: r.Name, Pattern: regexp.MustCompile(r.Pattern), Hints: r.Hints})
	}
	return out
}
