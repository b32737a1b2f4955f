package middleware_test

import (
	"context"
	"fmt"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

func ExampleRetry() {
	attempts := 0
	fetch := func(context.Context, *toolctx.Request) *toolctx.CallResult {
		attempts++
		if attempts < 3 {
			return toolctx.ErrorResult(errs.Unavailable("the upstream is restarting"))
		}
		return toolctx.TextResult("fetched")
	}
	// fetch is idempotent: retry it when it is unavailable, 3 attempts at most.
	retry := middleware.Retry(middleware.RetryConfig{MaxAttempts: 3, InitialBackoff: time.Millisecond})
	h, _ := middleware.New(
		middleware.Normalize(errs.Normalizer{}),
		middleware.When(middleware.Tools("fetch"), retry),
	).ThenFunc(fetch)

	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "fetch"})
	fmt.Println(res.Content[0].(*toolctx.Text).Text, res.Notes())
	// Output:
	// fetched [{attempts 3}]
}
