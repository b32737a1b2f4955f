package middleware_test

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// A rate limit rolled out in observe mode: the calls over the limit still
// run, and their results say what the limit would have done.
func ExampleObserve() {
	limit := middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Minute), Burst: 2})
	tool, _ := middleware.New(middleware.Observe(limit)).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("done")
	})
	for i := 1; i <= 3; i++ {
		res := tool.CallTool(context.Background(), &toolctx.Request{Tool: "deploy", SessionID: "s1"})
		fmt.Println(i, res.Content[0].(*toolctx.Text).Text, res.Notes())
	}
	// Output:
	// 1 done []
	// 2 done []
	// 3 done [{would_reject rate_limit}]
}
