package middleware_test

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

func ExampleRateLimit() {
	// search: 30 calls a minute per caller, 2 at once.
	limit := middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(2 * time.Second), Burst: 2})
	h, _ := middleware.New(
		middleware.Normalize(errs.Normalizer{}),
		middleware.When(middleware.Tools("search"), limit),
	).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("hits") })

	alice := &toolctx.Request{Tool: "search", Identity: &toolctx.Identity{Subject: "alice"}}
	for i := 0; i < 3; i++ {
		res := h.CallTool(context.Background(), alice)
		if res.IsError {
			_, hasRetry := res.Error.Detail["retry_after_ms"]
			fmt.Println(res.Error.Code, "retry_after_ms in detail:", hasRetry)
			continue
		}
		fmt.Println("ok")
	}
	bob := &toolctx.Request{Tool: "search", Identity: &toolctx.Identity{Subject: "bob"}}
	fmt.Println("bob:", h.CallTool(context.Background(), bob).IsError)
	// Output:
	// ok
	// ok
	// rate_limited retry_after_ms in detail: true
	// bob: false
}
