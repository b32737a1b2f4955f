package main

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/examples/server/stack"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// chain is the toolmw chain around every forwarded tools/call, outermost
// first: OpenTelemetry (when configured) and the calls in flight, the
// audit row, diagnostics, Normalize, Recover, then the guards (scopes, rate
// limits), ScrubSecrets (when configured) and each tool's deadline, next to
// the forwarding handler.
func chain(cfg *Config, w audit.Emitter, logger *slog.Logger, outer ...toolctx.Middleware) middleware.Chain {
	ms := append([]toolctx.Middleware(nil), outer...)
	ms = append(ms,
		audit.Interceptor(w, audit.WithFallbackLogger(logger)),
		middleware.Diagnostics(stack.Diagnostics(logger)),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	if p, ok := scopePolicy(cfg); ok {
		ms = append(ms, middleware.RequireScopes(p))
	}
	for _, name := range sortedTools(cfg) {
		if r := cfg.Tools[name].Rate; r != nil {
			ms = append(ms, middleware.When(middleware.Tools(name),
				middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Limit(r.PerSecond), Burst: r.Burst})))
		}
	}
	if cfg.Scrub != nil {
		ms = append(ms, middleware.ScrubSecrets(scrubConfig(cfg.Scrub)))
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

// auditLog is the open audit store and the asynchronous writer in front of
// it, with the local spool that absorbs the store's outages.
type auditLog struct {
	store  *sqlstore.Store
	w      *audit.Async
	where  string
	logger *slog.Logger
}

// openAudit opens the store the configuration names: PostgreSQL when a DSN
// is given (-audit-postgres, or the variable audit.postgres_env names),
// SQLite otherwise.
func openAudit(ctx context.Context, c AuditConfig, dsn string, logger *slog.Logger) (*auditLog, error) {
	var store *sqlstore.Store
	var where string
	var err error
	if dsn != "" {
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		store, err = sqlstore.OpenPostgres(octx, dsn, sqlstore.Config{Table: c.Table})
		if err != nil {
			return nil, fmt.Errorf("cannot open the PostgreSQL audit store: %v (fix -audit-postgres or audit.postgres_env, or audit.table)", err)
		}
		where = "PostgreSQL"
	} else {
		store, err = sqlstore.OpenSQLite(ctx, c.SQLite, sqlstore.Config{Table: c.Table})
		if err != nil {
			return nil, fmt.Errorf("cannot open the audit database %q: %v (pass -audit-db with a writable file path, or fix audit.table)", c.SQLite, err)
		}
		where = "SQLite " + c.SQLite
	}
	spoolDir := c.Spool
	if spoolDir == "" {
		spoolDir = "toolmw-audit.spool"
		if dsn == "" {
			spoolDir = strings.SplitN(c.SQLite, "?", 2)[0] + ".spool"
		}
	}
	spool, err := audit.OpenSpool(spoolDir, audit.SpoolConfig{FallbackLogger: logger})
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("%v (set audit.spool to a writable directory)", err)
	}
	w := audit.NewAsync(store, audit.AsyncConfig{Spool: spool, FallbackLogger: logger})
	return &auditLog{store: store, w: w, where: where, logger: logger}, nil
}

// Close flushes the writer's queue into the store, then closes the store.
func (a *auditLog) Close() {
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.w.Close(cctx); err != nil {
		a.logger.Error("audit writer did not flush in time", "err", err)
	}
	if err := a.store.Close(); err != nil {
		a.logger.Error("closing the audit store", "err", err)
	}
}
