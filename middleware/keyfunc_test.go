package middleware_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// captureDefault makes slog.Default() write to a buffer for the test.
func captureDefault(t *testing.T) *syncbuf.Buffer {
	l, buf := bufLogger()
	old := slog.Default()
	slog.SetDefault(l)
	t.Cleanup(func() { slog.SetDefault(old) })
	return buf
}

// A RateLimit or Bulkhead key function that panics is contained as every
// user hook is: the call is answered (counted under the key "", so still
// limited), the panic is reported with the tool, and nothing of it reaches
// the result.
func TestKeyFuncPanicIsContained(t *testing.T) {
	panics := func(*toolctx.Request) string { panic("key boom: 10.1.2.3") }
	open := make(chan struct{})
	close(open)
	for name, guard := range map[string]toolctx.Middleware{
		"ratelimit":       middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 1, Key: panics}),
		"ratelimit store": middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour), Burst: 1, Key: panics, Store: &toggleStore{}, StorePolicy: middleware.StorePolicy{Name: "k"}}),
		"bulkhead":        middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, Key: panics}),
		"bulkhead store":  middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1, Key: panics, Store: &brokenStore{healthy: true}, StorePolicy: middleware.StorePolicy{Name: "k"}}),
	} {
		t.Run(name, func(t *testing.T) {
			logs := captureDefault(t)
			h := guard(textTool("answer"))
			var res *toolctx.CallResult
			require.NotPanics(t, func() { res = h.CallTool(context.Background(), newReq("t")) })
			assert.False(t, res.Failed(), "the call runs, under the key \"\"")
			assert.Contains(t, logs.String(), "key function panicked", "the panic is reported")
			assert.Contains(t, logs.String(), "key boom", "with its value, on the server")
			assert.Contains(t, logs.String(), "tool=t")
			if name == "ratelimit" {
				res = h.CallTool(context.Background(), newReq("u"))
				require.True(t, res.Failed(), "calls whose key could not be made share one bucket: still limited")
				assert.Equal(t, errs.CodeRateLimited, toolctx.Classify(context.Background(), res, errs.Normalizer{}).Public.Code)
			}
		})
	}
}
