package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/redisstore"
	"github.com/toolmw/toolmw/toolctx"
)

// This file is the demo's guards and, with -redis, their state on Redis for
// a fleet of replicas: a rate limit per caller on every tool
// (-rate-limit), a bulkhead on the slow tool (-bulkhead) and a cache of
// lookup_order's results (-cache-ttl). Each is off unless its flag is set.
// With -redis every replica that names the same Redis shares them: the
// limit, the slots and the cache hold across the fleet. When Redis is down
// or slower than -redis-timeout, each guard falls back to its in-process
// state for the call, the audit row notes store=fallback, and the cause is
// logged; nothing of it reaches the client.

type fleetConfig struct {
	redisURL     string
	redisTimeout time.Duration
	rateLimit    string // "N/DURATION"
	bulkhead     int
	cacheTTL     time.Duration

	calls int           // parsed from rateLimit
	per   time.Duration // parsed from rateLimit
}

func addFleetFlags(fs *flag.FlagSet, c *fleetConfig) {
	fs.StringVar(&c.redisURL, "redis", "", "Redis `URL` (redis://host:port/db) that keeps the guards' state for a fleet of replicas: -rate-limit, -bulkhead and -cache-ttl then hold across every replica that names it")
	fs.DurationVar(&c.redisTimeout, "redis-timeout", middleware.DefaultStoreTimeout, "how long a guard waits for Redis before it decides alone (in-process state, row note store=fallback)")
	fs.StringVar(&c.rateLimit, "rate-limit", "", "calls per caller, as `N/DURATION` (e.g. 60/1m: a burst of 60, then one a second); off when empty")
	fs.IntVar(&c.bulkhead, "bulkhead", 0, "the most calls of the slow tool in flight at once (`N`; others wait up to -slow-timeout); off when 0")
	fs.DurationVar(&c.cacheTTL, "cache-ttl", 0, "how long lookup_order's results are served from the cache, per caller; off when 0")
}

func (c *fleetConfig) check() error {
	if c.redisTimeout <= 0 {
		return usageError{fmt.Sprintf("-redis-timeout must be positive, not %v", c.redisTimeout)}
	}
	if c.bulkhead < 0 {
		return usageError{fmt.Sprintf("-bulkhead must not be negative, not %d", c.bulkhead)}
	}
	if c.cacheTTL < 0 {
		return usageError{fmt.Sprintf("-cache-ttl must not be negative, not %v", c.cacheTTL)}
	}
	if c.rateLimit != "" {
		n, d, ok := strings.Cut(c.rateLimit, "/")
		calls, err1 := strconv.Atoi(n)
		per, err2 := time.ParseDuration(d)
		if !ok || err1 != nil || err2 != nil || calls < 1 || per <= 0 {
			return usageError{fmt.Sprintf("-rate-limit must be N/DURATION with N at least 1 and a positive duration (e.g. 60/1m), not %q", c.rateLimit)}
		}
		c.calls, c.per = calls, per
	}
	return nil
}

// guards are the demo's guards, on st when it is not nil, in the order
// they run: the rate limit first (a rejected call takes no slot), then the
// bulkhead, then the cache. observe wraps the rate limit and the bulkhead
// (access.go: under -observe, middleware.Observe); the cache is no guard.
func (c *fleetConfig) guards(st *redisstore.Store, logger *slog.Logger, slowTimeout time.Duration, observe func(toolctx.Middleware) toolctx.Middleware) []toolctx.Middleware {
	policy := func(name string) middleware.StorePolicy {
		return middleware.StorePolicy{Name: name, Timeout: c.redisTimeout, OnError: storeDiagnostics(logger)}
	}
	var out []toolctx.Middleware
	if c.calls > 0 {
		cfg := middleware.RateLimitConfig{Rate: rate.Limit(float64(c.calls) / c.per.Seconds()), Burst: c.calls}
		if st != nil {
			cfg.Store, cfg.StorePolicy = st, policy("demo-rate")
		}
		out = append(out, observe(middleware.RateLimit(cfg)))
	}
	if c.bulkhead > 0 {
		cfg := middleware.BulkheadConfig{Limit: c.bulkhead, MaxWait: slowTimeout}
		if st != nil {
			cfg.Store, cfg.StorePolicy = st, policy("demo-slow")
		}
		out = append(out, middleware.When(middleware.Tools("slow"), observe(middleware.Bulkhead(cfg))))
	}
	if c.cacheTTL > 0 {
		cfg := middleware.CacheConfig{TTL: c.cacheTTL}
		if st != nil {
			cfg.Store, cfg.StorePolicy = st, policy("demo-orders")
		}
		out = append(out, middleware.When(middleware.Tools("lookup_order"), middleware.Cache(cfg)))
	}
	return out
}

// openRedis opens the guards' store when -redis is set (nil otherwise).
// It does not wait for Redis: the guards fall back until it answers.
func openRedis(c fleetConfig, logger *slog.Logger) (*redisstore.Store, error) {
	if c.redisURL == "" {
		return nil, nil
	}
	// go-redis logs each failed dial; during an outage that is every call,
	// and the guards already report each failure once.
	redis.SetLogger(redisLogger{logger})
	st, err := redisstore.Open(c.redisURL)
	if err != nil {
		return nil, fmt.Errorf("%v (fix -redis)", err)
	}
	return st, nil
}

// storeDiagnostics logs a guard's store failure (the raw error) at warn
// level: the call went on (or was refused as unavailable), and its row
// says so.
func storeDiagnostics(logger *slog.Logger) middleware.DiagnosticsFunc {
	return func(ctx context.Context, ev middleware.DiagnosticEvent) {
		logger.WarnContext(ctx, "guard store failed", "code", ev.Code, "err", errs.Describe(ev.Cause()), "call", ev.Details)
	}
}

// redisLogger sends go-redis's own log lines to the demo's logger at
// debug level.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.l.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}
