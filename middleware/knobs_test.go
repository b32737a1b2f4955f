package middleware_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// The rules of the package doc's "Knobs", one test each.

// panicText is the text of what f panics with ("" when it does not).
func panicText(f func()) (s string) {
	defer func() {
		switch v := recover().(type) {
		case nil:
		case error:
			s = v.Error()
		default:
			s = fmt.Sprint(v)
		}
	}()
	f()
	return ""
}

// A positional value has no default: nil, or a value out of range, panics
// at construction naming the constructor.
func TestKnobsPositionalMistakes(t *testing.T) {
	after := func(context.Context, middleware.CallInfo) {}
	for want, f := range map[string]func(){
		"middleware.After: the hook is nil":                          func() { middleware.After(nil) },
		"middleware.Diagnostics: the hook is nil":                    func() { middleware.Diagnostics(nil) },
		"middleware.When: the matcher is nil":                        func() { middleware.When(nil, middleware.Recover) },
		"middleware.When: the interceptor is nil":                    func() { middleware.When(middleware.Tools("a"), nil) },
		"middleware.Timeout: the duration must be positive":          func() { middleware.Timeout(0) },
		"middleware.Timeout: the duration must be positive, got -1s": func() { middleware.Timeout(-time.Second) },
		"middleware.MaxArgBytes: the limit must be positive":         func() { middleware.MaxArgBytes(0) },
	} {
		assert.True(t, strings.HasPrefix(panicText(f), want), "want a panic starting %q, got %q", want, panicText(f))
	}
	assert.NotPanics(t, func() { middleware.After(after) })

	_, err := middleware.New().Then(nil)
	assert.ErrorIs(t, err, toolctx.ErrNilHandler, "a constructor that returns an error returns it")
	assert.ErrorContains(t, err, "Chain.Then", "naming the constructor")
	_, err = middleware.New().ThenFunc(nil)
	assert.ErrorContains(t, err, "Chain.ThenFunc")
	assert.Contains(t, panicText(func() { middleware.New().Middleware()(nil) }), "Chain.Middleware",
		"a toolctx.Middleware cannot return an error: it panics, naming where")
}

// A nil Option, like a nil interceptor in a list, asks for nothing.
func TestKnobsNilOptionIsSkipped(t *testing.T) {
	var logged []string
	h, err := middleware.New(nil, middleware.After(func(_ context.Context, info middleware.CallInfo) {
		logged = append(logged, info.Details.Tool())
	}, nil), middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}, nil, nil), nil).
		ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	require.NoError(t, err)
	h.CallTool(context.Background(), &toolctx.Request{Tool: "t"})
	assert.Equal(t, []string{"t"}, logged, "the chain works, the nil parts are skipped")
}

// An option given a value it cannot use fails the constructor it is given
// to, naming both: the default is had by leaving the option out.
func TestKnobsOptionMistakes(t *testing.T) {
	after := func(context.Context, middleware.CallInfo) {}
	diag := func(context.Context, middleware.DiagnosticEvent) {}
	const want = ": WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()"
	assert.PanicsWithValue(t, "middleware.After"+want, func() { middleware.After(after, middleware.WithFallbackLogger(nil)) })
	assert.PanicsWithValue(t, "middleware.Diagnostics"+want, func() { middleware.Diagnostics(diag, middleware.WithFallbackLogger(nil)) })
	assert.NotPanics(t, func() { middleware.WithFallbackLogger(nil) }, "the option itself never fails: its constructor reports it")
}

// In a Config struct the zero value of a field is its default, a negative
// one a mistake; a required field says so and its zero is a mistake.
func TestKnobsConfigFields(t *testing.T) {
	assert.NotPanics(t, func() { middleware.Retry(middleware.RetryConfig{}) }, "the zero Config is the defaults")
	assert.NotPanics(t, func() { middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1}) }, "zero MaxWait is the default")
	for want, f := range map[string]func(){
		"middleware.Bulkhead: MaxWait must not be negative":     func() { middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, MaxWait: -1}) },
		"middleware.Retry: InitialBackoff must not be negative": func() { middleware.Retry(middleware.RetryConfig{InitialBackoff: -1}) },
		"middleware.RateLimit: Burst must not be negative":      func() { middleware.RateLimit(middleware.RateLimitConfig{Rate: 1, Burst: -1}) },
		"middleware.Cache: TTL must be positive":                func() { middleware.Cache(middleware.CacheConfig{}) },
		"middleware.ProgressTimeout: Idle must be positive":     func() { middleware.ProgressTimeout(middleware.ProgressTimeoutConfig{}) },
	} {
		assert.True(t, strings.HasPrefix(panicText(f), want), "want a panic starting %q, got %q", want, panicText(f))
	}
}
