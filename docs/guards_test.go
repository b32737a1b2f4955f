package docs_test

import (
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/redisstore"
)

// The guards in the order examples/chain uses them (docs/guards.md).
func Example_guards() {
	var (
		rows   audit.Emitter
		report middleware.DiagnosticsFunc
	)
	// doc:begin guards
	chain := middleware.New(
		audit.Interceptor(rows), // one row per call, notes included
		middleware.Diagnostics(report),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		// Guards, cheapest first: a refused call costs little and takes no token or slot.
		middleware.MaxArgBytes(64), // invalid_arguments
		middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"purge": {"admin"}}}), // permission_denied
		middleware.When(middleware.Tools("search"),
			middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(30 * time.Second), Burst: 2})), // rate_limited
		middleware.When(middleware.Tools("export"), middleware.Bulkhead(middleware.BulkheadConfig{Limit: 4})), // unavailable
		// Results: measured as sent, cached where read-only, scrubbed.
		middleware.MaxResultBytes(1024, middleware.ResultTruncate), // or ResultReject: result_too_large
		middleware.When(middleware.Tools("search"), middleware.Cache(middleware.CacheConfig{TTL: time.Minute})),
		middleware.ScrubSecrets(middleware.ScrubConfig{}),
		// Resilience: retry the idempotent fetch; each attempt has its own deadline.
		middleware.When(middleware.Tools("fetch"), middleware.Retry(middleware.RetryConfig{InitialBackoff: time.Millisecond})),
		middleware.When(middleware.Tools("export"), middleware.Timeout(time.Second)),
	)
	// doc:end guards
	_ = chain
}

// A guard in observe mode (docs/guards.md).
func Example_observe() {
	cfg := middleware.RateLimitConfig{Rate: rate.Every(time.Second), Burst: 60}
	// doc:begin observe
	limit := middleware.Observe(middleware.RateLimit(cfg)) // decides, notes would_reject, refuses nothing
	// doc:end observe
	_ = limit
}

// A rate limit shared by the replicas of a fleet (docs/fleet.md).
func Example_fleetRateLimit() {
	run := func() error {
		// doc:begin fleet
		st, err := redisstore.Open("redis://redis.internal:6379/0") // context deadlines on, no retries
		if err != nil {
			return err
		}
		defer st.Close()
		limit := middleware.RateLimit(middleware.RateLimitConfig{
			Rate: rate.Every(time.Second), Burst: 60,
			Store: st, StorePolicy: middleware.StorePolicy{Name: "calls"}, // Name: the same on every replica
		})
		// doc:end fleet
		_ = limit
		return nil
	}
	_ = run
}

// Rounds, inside the audit interceptor and outside Diagnostics (docs/mrtr.md).
func Example_rounds() {
	var (
		w        audit.Emitter
		report   middleware.DiagnosticsFunc
		stateKey = make([]byte, 32)
	)
	// doc:begin rounds
	chain := middleware.New(
		audit.Interceptor(w),
		middleware.Rounds(middleware.RoundsConfig{Key: stateKey}), // 16, 24 or 32 bytes, the same on every replica
		middleware.Diagnostics(report),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	)
	// doc:end rounds
	_ = chain
}
