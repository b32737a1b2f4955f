package otelmw_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

// counter returns the data points of the named Int64 sum.
func (tel *telemetry) counter(t testing.TB, name string) []metricdata.DataPoint[int64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm), "collect")
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				assert.Equal(t, "{call}", m.Unit)
				s, ok := m.Data.(metricdata.Sum[int64])
				require.True(t, ok, "an int64 sum, got %T", m.Data)
				assert.True(t, s.IsMonotonic, "a counter")
				return s.DataPoints
			}
		}
	}
	return nil
}

// toolmw.guard.would_reject counts, per guard and tool, the calls an
// observed guard would have stopped: not the ones it admitted.
func TestWouldRejectCounter(t *testing.T) {
	tel := newTelemetry(t)
	otel, err := otelmw.New(tel.options()...)
	require.NoError(t, err)
	limit := middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 1, Key: middleware.ToolKey})
	chain := middleware.New(otel, middleware.Observe(middleware.MaxArgBytes(4)), middleware.Observe(limit))
	h, err := chain.ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	require.NoError(t, err)

	call := func(tool, args string) {
		res := h.CallTool(context.Background(), &toolctx.Request{Tool: tool, Arguments: toolctx.RawArguments([]byte(args)), Transport: toolctx.TransportStdio})
		require.False(t, res.Failed(), "observe mode never rejects")
	}
	call("a", `{}`)        // admitted by both
	call("a", `{"x":1}`)   // too large; over the rate
	call("a", `{}`)        // over the rate
	call("b", `{"xy":12}`) // too large; b's first call
	call("b", `{}`)        // over the rate

	got := map[[2]string]int64{}
	for _, p := range tel.counter(t, "toolmw.guard.would_reject") {
		a := attrs(p.Attributes.ToSlice())
		assert.Equal(t, "tools/call", a["mcp.method.name"])
		got[[2]string{a["toolmw.guard"].(string), a["gen_ai.tool.name"].(string)}] = p.Value
	}
	assert.Equal(t, map[[2]string]int64{
		{"max_arg_bytes", "a"}: 1, {"rate_limit", "a"}: 2,
		{"max_arg_bytes", "b"}: 1, {"rate_limit", "b"}: 1,
	}, got)
}

// toolmw.cache.lookups counts, per tool, the calls middleware.Cache
// served from the cache and the ones it looked up and missed; a call
// Cache does not look up (another tool) is not counted.
func TestCacheLookupsCounter(t *testing.T) {
	tel := newTelemetry(t)
	otel, err := otelmw.New(tel.options()...)
	require.NoError(t, err)
	cache := middleware.When(middleware.Tools("forecast"), middleware.Cache(middleware.CacheConfig{TTL: time.Hour}))
	h, err := middleware.New(otel, cache).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	require.NoError(t, err)

	alice := &toolctx.Identity{Subject: "alice"}
	for _, c := range []struct{ tool, args string }{
		{"forecast", `{"city":"Oslo"}`}, // miss
		{"forecast", `{"city":"Oslo"}`}, // hit
		{"forecast", `{"city":"Oslo"}`}, // hit
		{"forecast", `{"city":"Rome"}`}, // miss
		{"other", `{}`},                 // not looked up
	} {
		res := h.CallTool(context.Background(), &toolctx.Request{Tool: c.tool, Arguments: toolctx.RawArguments([]byte(c.args)), Identity: alice, Transport: toolctx.TransportStdio})
		require.False(t, res.Failed(), "%s %s", c.tool, c.args)
	}

	got := map[[2]string]int64{}
	for _, p := range tel.counter(t, "toolmw.cache.lookups") {
		a := attrs(p.Attributes.ToSlice())
		assert.Equal(t, "tools/call", a["mcp.method.name"])
		got[[2]string{a["toolmw.cache.result"].(string), a["gen_ai.tool.name"].(string)}] = p.Value
	}
	assert.Equal(t, map[[2]string]int64{{"miss", "forecast"}: 2, {"hit", "forecast"}: 2}, got,
		"two misses and two hits of forecast, nothing for the tool Cache does not look up")
}
